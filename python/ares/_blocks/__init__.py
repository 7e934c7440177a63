"""User functions on blocks: ``map_blocks``, ``blockwise``, ``map_overlap``,
``apply_gufunc`` and ``reduction``, with dask's signatures.

Each builds on one core op, ``map_blocks`` (``_core``): the function, wrapped with its keyword
arguments and constant arguments, travels as cloudpickle bytes held once in the task's graph;
the engine calls it on one block of each input (NumPy arrays) and checks that the block it
returns has the declared shape and dtype. Output dtypes are declared (``dtype=``, ``meta=``)
or found by calling the function on zero-size blocks, as dask's ``meta``. One file per API:
``map_blocks.py`` (and ``blockwise``), ``overlap.py``, ``reduction.py``, ``gufunc.py``.
"""

from ._core import _load
from .gufunc import apply_gufunc
from .map_blocks import blockwise, map_blocks
from .overlap import map_overlap
from .reduction import reduction

__all__ = ["apply_gufunc", "blockwise", "map_blocks", "map_overlap", "reduction", "_load"]
