"""What a standalone script's ``kill`` waits for before its op returns, as
the suite's ``kill`` verb does (``verbs._kill_now``): the actor not ALIVE
after ``ray.kill``, its process gone after a SIGKILL or an ``os._exit``.

These functions are copied into the scripts by their source
(``Verb.script_header``): they use only the standard library and Ray.
Without the wait the script's next op ran within a millisecond of the
fault, where the suite's ran once it had taken effect (torchrl 0.14.1's
``buffer-hang-under-thread``: the suite's hang took 1.009 s to confirm and
its collection thread was stuck at the teardown in 9 of 9 runs; the
script's returned in 1 ms and its thread was gone at the teardown's return
in 1 of 4 runs, 2026-11-27).
"""
from __future__ import annotations

import os
import time


def _kill_took_effect(effect, seconds, what):
    """Wait up to ``seconds`` for ``effect()``; what happened, or
    RuntimeError: the fault was not injected."""
    t0 = time.monotonic()
    while not effect():
        if time.monotonic() - t0 > seconds:
            raise RuntimeError(f"{what}: no effect within {seconds} s: the fault was not injected")
        time.sleep(0.05)
    return f"{what}: took effect in {time.monotonic() - t0:.2f} s"


def _actor_not_alive(handle):
    """True once the GCS no longer has the actor ALIVE."""
    from ray._private import state  # not ray.util.state: see _actor_pid

    return state.actors(actor_id=handle._actor_id.hex()).get("State") not in ("ALIVE", None)


def _pid_gone(pid):
    """True once process ``pid`` has ended (a zombie has: its parent, the
    raylet, has not reaped it yet)."""
    if not os.path.isdir("/proc"):  # macOS: signal 0 asks whether it exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
