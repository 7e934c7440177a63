"""The ``ares`` console command of the Python package (and ``python -m ares``): ``ares node``
starts a supervisor or a worker, exactly as the Rust binary's ``ares node`` does (same flags,
same library call); ``ares worker`` (``python -m ares worker --supervisor HOST:PORT``) is
``node --role worker``. A worker started here runs inside this Python interpreter, so it can
run users' functions (``map_blocks`` & co.) with the packages installed here, when its
config allows code (``cluster.allow_code: true``); it tells the supervisor so when it joins.

Python's own SIGINT handler is set aside while the node runs, so SIGINT and SIGTERM reach the
node's handlers: a supervisor fails its running tasks cleanly, a worker drains, and the
command exits 0.
"""

from __future__ import annotations

import argparse
import signal
import sys

from . import _ares


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ares", description="ares (Python package): start nodes")
    p.add_argument("--version", action="version", version=f"ares {_ares.__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    node = sub.add_parser("node", help="run a supervisor or worker node until SIGINT/SIGTERM")
    node.add_argument("--role", required=True, choices=["supervisor", "worker"])
    node.add_argument("--config", help="YAML config (see config/); defaults apply when omitted")
    node.add_argument("--supervisor", help="supervisor HOST:PORT for a worker (overrides cluster.supervisor)")
    node.add_argument("--ready-file", help='write {"rpc": "HOST:PORT", "web": ..., "role": ...} here once accepting connections')
    worker = sub.add_parser("worker", help="run a Python-capable worker node (node --role worker)")
    worker.add_argument("--config", help="YAML config (see config/); set cluster.allow_code: true to run users' functions")
    worker.add_argument("--supervisor", help="supervisor HOST:PORT (overrides cluster.supervisor)")
    worker.add_argument("--ready-file", help="write the node's addresses here once it has joined")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "worker":
        args.role = "worker"
    if args.command in ("node", "worker"):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            _ares.run_node(args.role, args.config, args.supervisor, args.ready_file)
        except RuntimeError as e:
            print(f"Error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
