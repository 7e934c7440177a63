"""``python -m ares worker --supervisor HOST:PORT [--config F]``: a worker node inside this
interpreter (see ``ares.cli``)."""

import sys

from .cli import main

sys.exit(main())
