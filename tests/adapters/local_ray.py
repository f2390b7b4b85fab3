"""What the adapters' real tests share (their fixtures are in conftest.py):
the extra under test, the processes of our local Ray, an actor answers, its
GCS state, actors dead after a teardown."""
import importlib
import os

import psutil
import pytest
import ray

from fixtures.wait import poll


def import_extra(extra: str, module: str):
    """Import ``module`` of an extra implementation that lives in its own venv.
    Where RLC_EXTRAS names ``extra`` (ci/setup.sh installed it, as in .ci/run)
    a missing one fails the test module; elsewhere it skips."""
    if extra in os.environ.get("RLC_EXTRAS", "").split(","):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{extra} is not installed in this venv (build "
                               f".venv-{extra}: RLC_EXTRAS={extra} RLC_VENV=.venv-{extra} "
                               "bash ci/setup.sh)")


def ray_processes(tmp: str) -> list:
    """Live processes of our Ray: children of this process, or naming our temp dir."""
    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True)}
    for p in psutil.process_iter(["cmdline"]):
        if tmp in " ".join(p.info["cmdline"] or ()):
            found.setdefault(p.pid, p)
    found.pop(me.pid, None)
    alive = []
    for p in found.values():
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.Error:
            pass
    return alive


def temp_dir(prefix: str) -> str:
    return f"/tmp/{prefix}-{os.getpid()}"


def alive(handle, timeout=60.0) -> bool:
    try:
        ray.get(handle.__ray_ready__.remote(), timeout=timeout)
        return True
    except ray.exceptions.RayActorError:
        return False


def actor_state(handle) -> str:
    return ray._private.state.state.actor_table(handle._actor_id.hex())["State"]


def wait_dead(handles, bound: float, what: str) -> None:
    """ray.kill is asynchronous (a call sent right after it may still run): wait for DEAD."""
    states = poll(lambda: {actor_state(h) for h in handles}, lambda s: s <= {"DEAD"},
                  bound, interval=0.1)
    assert states <= {"DEAD"}, f"{what} actors after teardown: {states}"
