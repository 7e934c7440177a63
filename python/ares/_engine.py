"""Where tensors are computed, and ``compute``.

With nothing configured, the first ``compute`` starts an embedded engine in this process: the
supervisor and workers of ``ares run``, as threads (see the native module's ``Engine`` for why
threads and not child processes). ``ARES_WORKERS`` and ``ARES_SLOTS`` size it (default: one
worker with one slot per CPU); ``ARES_CONFIG`` names a YAML config; ``ARES_DATA_ROOTS`` (paths
joined by ``os.pathsep``) the directories ``from_npy``/``from_zarr``/``to_npy`` may use
(default: the current directory). ``ar.connect(address)`` switches to a running cluster:
``http://`` or ``https://`` addresses use the web API, ``ares://HOST:PORT`` or ``HOST:PORT`` the
native protocol.
"""

from __future__ import annotations

import atexit
import html
import os
import sys
import threading
import time

from . import _ares
from ._tensor import Tensor

_lock = threading.RLock()
_engine = None
_upload_dir: str | None = None
# The dashboard of the cluster `connect` reached, shown beside the progress bar.
_dashboard: str | None = None
_roots: list[str] | None = None


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, not {value!r}") from None
    if n < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return n


def ensure_roots() -> list[str]:
    """Sets this process's data roots once: ``ARES_DATA_ROOTS`` or the current directory,
    then the spool directory of ``from_numpy``."""
    global _roots
    with _lock:
        if _roots is None:
            from ._numpy import spool_dir

            configured = os.environ.get("ARES_DATA_ROOTS")
            roots = configured.split(os.pathsep) if configured else [os.getcwd()]
            roots = [os.path.abspath(r) for r in roots if r] + [spool_dir()]
            _ares.set_data_roots(roots)
            _roots = roots
        return _roots


def upload_dir() -> str | None:
    return _upload_dir


def remote_engine():
    """The engine of ``ar.connect``, if one is current (never starts the embedded one)."""
    with _lock:
        return _engine if _engine is not None and _engine.kind != "embedded" else None


def start(workers: int | None = None, slots: int | None = None, config: str | None = None):
    """Starts (or restarts) the embedded engine with ``workers`` × ``slots``."""
    global _engine, _upload_dir
    workers = workers or _env_int("ARES_WORKERS", 1)
    slots = slots or _env_int("ARES_SLOTS", os.cpu_count() or 1)
    config = config or os.environ.get("ARES_CONFIG") or None
    with _lock:
        roots = ensure_roots()
        engine = _ares.Engine.embedded(workers, slots, config, roots)
        _close_locked()
        _engine, _upload_dir = engine, None
        return engine


def connect(address: str, token: str | None = None, secret: str | None = None,
            upload_dir: str | None = None, session: str | None = None, timeout: float = 10.0,
            ca_file: str | os.PathLike | None = None):
    """Computes on a running cluster from now on.

    ``http://HOST:PORT`` or ``https://HOST:PORT`` uses the web API with a bearer ``token``
    (default ``ARES_TOKEN``) in web session ``session`` (default ``"python"``);
    ``ares://HOST:PORT`` or ``HOST:PORT`` the native protocol, proving ``secret`` (default
    ``ARES_CLIENT_SECRET``, else ``ARES_CLUSTER_SECRET``). Over ``https://`` the supervisor's
    certificate is verified against ``SSL_CERT_FILE`` (a PEM bundle) if set, else the system's
    roots, plus the PEM file ``ca_file`` (its self-signed certificate or its CA); one that
    none of them vouches for raises ``ConnectionError`` ("certificate not trusted: pass
    --ca-file / ca_file= or set SSL_CERT_FILE"). There is no way to skip the check. An
    argument the chosen protocol has no use for is refused, not ignored: ``token``/``session``
    over ``ares://``, ``secret`` over ``http://``, ``ca_file`` anywhere but ``https://``.
    ``upload_dir`` is a directory this process and the cluster's workers share (inside their
    data roots), where ``from_numpy`` writes its arrays; without it, ``from_numpy`` uploads
    them.
    """
    global _engine, _upload_dir, _dashboard
    if ca_file is not None and not address.startswith("https://"):
        raise ValueError("connect: ca_file= is for an https:// supervisor (the CA that "
                         "signed its certificate), not " + address)
    if address.startswith(("http://", "https://")):
        if secret is not None:
            raise ValueError("connect: secret= is the native protocol's (ares://); over "
                             "http:// the web API takes token=")
        token = token if token is not None else (os.environ.get("ARES_TOKEN") or None)
        ca = os.fspath(ca_file) if ca_file is not None else None
        engine = _ares.Engine.http(address, token, session or "python", timeout, ca)
        dashboard = address.rstrip("/") + "/"
    else:
        if token is not None:
            raise ValueError("connect: token= is the web API's (http://); the native protocol "
                             "(ares://) proves secret=")
        if session is not None:
            raise ValueError("connect: session= names a web API session (http://); tasks sent "
                             "over the native protocol (ares://) are in the session 'default'")
        addr = address[len("ares://"):] if address.startswith("ares://") else address
        engine = _ares.Engine.native(addr, secret, timeout)
        # The web API listens apart from the native port: only the user knows where.
        dashboard = os.environ.get("ARES_DASHBOARD") or None
    if upload_dir is not None:
        upload_dir = os.path.abspath(upload_dir)
        ensure_roots()
        _ares.set_data_roots(_roots + [upload_dir])
    with _lock:
        _close_locked()
        _engine, _upload_dir = engine, upload_dir
        _dashboard = dashboard
    return engine


def dashboard_link() -> str | None:
    """The dashboard of the cluster ``ar.connect`` reached (its ``http(s)://`` address, or
    ``ARES_DASHBOARD`` for ``ares://``); None for the embedded engine."""
    with _lock:
        return _dashboard if _engine is not None and _engine.kind != "embedded" else None


def _close_locked():
    global _engine
    if _engine is not None:
        _engine.close()
        _engine = None


def close():
    """Disconnects, stopping the embedded engine if one runs (the next compute starts one)."""
    with _lock:
        _close_locked()


atexit.register(close)


def engine():
    """The current engine, starting the embedded one on first use."""
    with _lock:
        return _engine if _engine is not None else start()


# -- progress ---------------------------------------------------------------------------

_progress_default: bool | None = None


def set_progress(enabled: bool | None) -> None:
    """Shows a progress bar for jobs longer than half a second: True, False, or None (the
    default: on a terminal or in Jupyter; ``ARES_PROGRESS=0``/``1`` overrides)."""
    global _progress_default
    _progress_default = enabled


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython() if hasattr(shell, "get_ipython") else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _progress_enabled(flag) -> bool:
    if flag is not None:
        return bool(flag)
    if _progress_default is not None:
        return _progress_default
    env = os.environ.get("ARES_PROGRESS")
    if env in ("0", "1"):
        return env == "1"
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)()) or _in_jupyter()


class _Progress:
    """Called by the engine after each wait: draws tqdm's bar (``tqdm.auto``: a widget in
    Jupyter) or a one-line bar of its own, once the job has run half a second; connected to a
    cluster, a link to its dashboard first (a clickable one in Jupyter)."""

    DELAY = 0.5

    def __init__(self, dashboard: str | None = None):
        self.start = time.monotonic()
        self.bar = None
        self.plain = False
        self.dashboard = dashboard

    def _show_dashboard(self) -> None:
        url, self.dashboard = self.dashboard, None
        if _in_jupyter():
            try:
                from IPython.display import HTML, display

                href = html.escape(url, quote=True)
                display(HTML(f'ares dashboard: <a href="{href}" target="_blank">{href}</a>'))
                return
            except ImportError:
                pass
        sys.stderr.write(f"ares dashboard: {url}\n")
        sys.stderr.flush()

    def __call__(self, fraction: float, subtasks: int) -> None:
        if time.monotonic() - self.start < self.DELAY:
            return
        if self.dashboard:
            self._show_dashboard()
        if self.bar is None and not self.plain:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=1000, desc="ares", unit="‰", leave=False)
            except ImportError:
                self.plain = True
        if self.bar is not None:
            self.bar.n = int(fraction * 1000)
            self.bar.set_postfix_str(f"{subtasks} subtasks", refresh=False)
            self.bar.refresh()
        else:
            width = 30
            done = int(fraction * width)
            sys.stderr.write(f"\r[{'#' * done}{' ' * (width - done)}] {fraction * 100:5.1f}% "
                             f"{subtasks} subtasks {time.monotonic() - self.start:6.1f}s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.plain:
            sys.stderr.write("\r" + " " * 70 + "\r")
            sys.stderr.flush()


def _collect(value, out: list) -> None:
    """The tensors inside ``value`` (nested lists, tuples and dict values), in order."""
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, out)


def _rebuild(value, results):
    """``value`` with each tensor replaced by the next of ``results``."""
    if isinstance(value, Tensor):
        return next(results)
    if isinstance(value, list):
        return [_rebuild(v, results) for v in value]
    if isinstance(value, tuple):
        items = [_rebuild(v, results) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        return type(value)((k, _rebuild(v, results)) for k, v in value.items())
    return value


def compute(*values, progress=None):
    """Computes every tensor among ``values`` in one job, as ``dask.compute``: tensors inside
    lists, tuples and dicts too (``compute([a, b])`` gives ``([va, vb],)``); other values
    pass through. Returns a tuple with one entry per argument: NumPy arrays, Python scalars
    for 0-d results."""
    tensors: list[Tensor] = []
    for v in values:
        _collect(v, tensors)
    if not tensors:
        return tuple(values)
    eng = engine()
    _check_engine(tensors, eng)
    bar = _Progress(dashboard_link()) if _progress_enabled(progress) else None
    try:
        results = eng.run([t._handle for t in tensors], bar)
    finally:
        if bar is not None:
            bar.close()
    it = iter(results)
    return tuple(_rebuild(v, it) for v in values)


def persist(*values, progress=None):
    """Computes every tensor among ``values`` in one job and keeps the results on the engine's
    workers (those of ``ar.connect``'s cluster, or the embedded engine's), as
    ``dask.persist``: returns ``values`` with each tensor replaced by one reading its held
    result, so later computations start from there instead of recomputing it. The results
    are freed when the last tensor reading them is garbage-collected, and on ``ar.close()``.
    A tensor whose length depends on the data computes its chunk sizes first."""
    from ._numpy import _Upload

    tensors: list[Tensor] = []
    for v in values:
        _collect(v, tensors)
    if not tensors:
        return tuple(values)
    for t in tensors:
        if t._handle.length_from_data:
            t.compute_chunk_sizes()
    eng = engine()
    _check_engine(tensors, eng)
    bar = _Progress(dashboard_link()) if _progress_enabled(progress) else None
    try:
        handles, task = eng.persist([t._handle for t in tensors], bar)
    finally:
        if bar is not None:
            bar.close()
    held = frozenset({_Upload(eng, task)})
    it = iter([Tensor(h, held) for h in handles])
    return tuple(_rebuild(v, it) for v in values)


def _check_engine(tensors, eng) -> None:
    for t in tensors:
        for keep in t._keep:
            if getattr(keep, "engine", eng) is not eng:
                raise ValueError(
                    f"this tensor reads an array uploaded to {keep.engine!r}, which is no longer "
                    "the engine (ar.close or ar.connect since): build it again with from_numpy"
                )


def explain(*tensors: Tensor, limit: int = 50) -> str:
    """What ``ares explain`` prints for these tensors: prepared by the current engine's
    supervisor (embedded or ``ar.connect``-ed) for its live workers and slots with its
    ``task.default_config``, or planned here for 2 workers × 2 slots when no engine runs yet."""
    handles = [t._handle for t in tensors]
    with _lock:
        eng = _engine
    if eng is not None:
        return eng.explain(handles, limit)
    return _ares.explain(handles, 2, 2, limit)
