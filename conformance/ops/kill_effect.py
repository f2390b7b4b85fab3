"""What a standalone script's ``kill`` waits for, as the suite's ``kill``
verb does (``verbs._live_target`` and ``verbs._kill_now``): before the
fault, the target ALIVE with a process; after it, the actor not ALIVE after
``ray.kill``, its process ended after a SIGKILL or an ``os._exit``.

These functions are copied into the scripts by their source
(``Verb.script_header``): they use only the standard library and Ray (the
script imports ``os``, ``time`` and ``ray``). Without the waits the
script's next op ran within a millisecond of the fault, where the suite's
ran once it had taken effect (torchrl 0.14.1's ``buffer-hang-under-thread``:
the suite's hang took 1.009 s to confirm and its collection thread was still
running at the teardown's return in 8 of 8 runs alone, 2026-11-27 23:03-23:06
UTC; the script's returned in 1 ms and its thread had ended at the
teardown's return in 1 of 4 runs).
"""
from __future__ import annotations

import os
import time


def _await_kill_effect(effect, seconds, what):
    """Wait up to ``seconds`` for ``effect()``; what happened, or
    RuntimeError: the fault was not injected."""
    t0 = time.monotonic()
    while not effect():
        if time.monotonic() - t0 > seconds:
            raise RuntimeError(f"{what}: no effect within {seconds} s: the fault was not injected")
        time.sleep(0.05)
    return f"{what}: took effect in {time.monotonic() - t0:.2f} s"


def _await_alive_pid(handle, seconds):
    """The pid of the actor's worker process once the GCS has it ALIVE with
    one (a starting actor's record says pid 0), waiting up to ``seconds``;
    RuntimeError if it never is: nothing to kill."""
    from ray._private import state  # not ray.util.state: see _actor_states

    aid = handle._actor_id.hex()
    t0 = time.monotonic()
    while True:
        record = state.actors(actor_id=aid)
        if record.get("State") == "ALIVE" and (record.get("Pid") or 0) > 1:
            return record["Pid"]
        if time.monotonic() - t0 > seconds:
            raise RuntimeError(f"actor {aid[:8]} not ALIVE with a process within {seconds} s "
                               f"({record.get('State')}, pid {record.get('Pid')}): nothing to kill")
        time.sleep(0.1)


def _actor_not_alive(handle):
    """True once the GCS no longer has the actor ALIVE."""
    from ray._private import state  # not ray.util.state: see _actor_states

    return state.actors(actor_id=handle._actor_id.hex()).get("State") not in ("ALIVE", None)


def _pid_gone(pid):
    """True once process ``pid`` has ended. On Linux a zombie has (its
    parent, the raylet, has not reaped it yet), as ``fixtures.procs.pid_alive``
    says; without /proc (macOS) signal 0 is all there is, and a zombie still
    answers it."""
    if not os.path.isdir("/proc"):
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
    except (FileNotFoundError, ProcessLookupError):  # reaped, also between open and read
        return True
