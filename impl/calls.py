"""Ray calls that never start a Ray runtime.

Ray's public ``get``/``wait``/``kill``/``put``/``get_actor`` and actor method
``.remote()`` silently call ``ray.init()`` when Ray is not initialized: a
stale handle used after ``ray.shutdown()`` would start a new local runtime.
The functions here call the wrapped implementations directly, so a call made
after (or racing with) ``ray.shutdown()`` raises instead.
"""

from __future__ import annotations

import threading
from typing import Any

import ray


def _unwrapped(fn):
    return getattr(fn, "__wrapped__", fn)


_get = _unwrapped(ray.get)
_wait = _unwrapped(ray.wait)
_kill = _unwrapped(ray.kill)
_put = _unwrapped(ray.put)
_get_actor = _unwrapped(ray.get_actor)


def get(refs: Any, timeout: float | None = None) -> Any:
    return _get(refs, timeout=timeout)


def wait(refs: list, *, num_returns: int = 1, timeout: float | None = None):
    return _wait(refs, num_returns=num_returns, timeout=timeout)


def kill(handle: Any) -> None:
    _kill(handle, no_restart=True)


def put(value: Any) -> Any:
    return _put(value)


def get_actor(name: str, namespace: str | None = None) -> Any:
    return _get_actor(name, namespace=namespace)


def call(handle: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``handle.method.remote(*args, **kwargs)`` without auto-init."""
    bound = getattr(handle, method)
    submit = getattr(type(bound)._remote, "__wrapped__", None)
    if submit is None:
        return bound.remote(*args, **kwargs)
    return submit(bound, args=args, kwargs=kwargs)


def swallow(exc: BaseException) -> None:
    """Re-raise ``exc`` unless teardown may ignore it.

    Teardown ignores every error except a ``KeyboardInterrupt`` or a
    ``SystemExit`` raised in the main thread: a signal's (Ray's SIGTERM
    handler exits with 15, or 1 inside a blocking call). Not the
    ``SystemExit(0)`` Ray raises in a call blocked while another thread shuts
    the runtime down: measured with Ray 2.60.0 (2026-11-29), a ``ray.wait``
    in the main thread and ``ray.shutdown()`` from another one, 3 of 3 runs:
    ``SystemExit(0)`` with ``ray.is_initialized()`` already False. Re-raised,
    it made a teardown raise, and the user's program end, with status 0.
    """
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if isinstance(exc, SystemExit) and threading.current_thread() is threading.main_thread() \
            and not (exc.code == 0 and not ray.is_initialized()):
        raise exc
