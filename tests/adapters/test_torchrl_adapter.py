"""Quick real checks of the torchrl adapter on one local Ray (skipped without
torchrl, unless RLC_EXTRAS names torchrl as in .ci/run: then a missing torchrl fails).

Each component is built through the adapter, used once, and torn down; its
actors must be alive before and dead after. Ray is started here (address
"local", private temp dir) and shut down at the end of the module; with a
torchrl whose collector.shutdown() calls ray.shutdown() (0.10.x) the next
test starts it again. No Ray process may outlive the module.
"""
import inspect
import os
import shutil
import time
from importlib.metadata import version
from pathlib import Path

import pytest

if "torchrl" in os.environ.get("RLC_EXTRAS", "").split(","):
    import torchrl  # noqa: F401  ci/setup.sh installed the extra: must not skip
else:
    pytest.importorskip("torchrl")
import psutil  # noqa: E402
import ray  # noqa: E402

from conformance.adapter import Spec  # noqa: E402
from conformance.adapters.torchrl import TorchRLAdapter  # noqa: E402
from conformance.verbs import _batch  # noqa: E402

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[2]
TMP = f"/tmp/rlc-trl-{os.getpid()}"
SPEC = Spec(frames_per_batch=16, total_frames=100_000, num_collectors=2, buffer_capacity=1000,
            eval_max_steps=20)


def _ray_processes() -> list:
    """Live processes of our Ray: children of this process, or naming our temp dir."""
    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True)}
    for p in psutil.process_iter(["cmdline"]):
        if TMP in " ".join(p.info["cmdline"] or ()):
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


@pytest.fixture(scope="module")
def adapter():
    return TorchRLAdapter()


@pytest.fixture(scope="module")
def ray_env():
    """Env for Ray (this process and its workers); at the end, no Ray left."""
    assert not ray.is_initialized()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        mp.setenv("RAY_AUTH_MODE", "disabled")
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        mp.setenv("RAY_TMPDIR", TMP)
        mp.delenv("RAY_ADDRESS", raising=False)
        mp.setenv("PYTHONPATH", os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
        yield
        ray.shutdown()
    deadline = time.monotonic() + 15
    while _ray_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _ray_processes()
    for p in left:  # ours: started by this process
        p.kill()
    shutil.rmtree(TMP, ignore_errors=True)
    assert not left, f"Ray processes left behind: {[(p.pid, p.name()) for p in left]}"


@pytest.fixture
def local_ray(ray_env):
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, _temp_dir=TMP)


def _alive(handle, timeout=60.0) -> bool:
    try:
        ray.get(handle.__ray_ready__.remote(), timeout=timeout)
        return True
    except ray.exceptions.RayActorError:
        return False


def _state(handle) -> str:
    return ray._private.state.state.actor_table(handle._actor_id.hex())["State"]


def _dead_after_teardown(adapter, component, obj, handles, features):
    adapter.teardown(component, obj)
    assert adapter.actors(component, obj) == []
    if not ray.is_initialized():  # torchrl's teardown shut Ray down (0.10.x collector)
        assert component == "collector" and adapter.collector_shutdown_stops_ray
        return
    # ray.kill is asynchronous (a call sent right after it may still run): wait for DEAD.
    states = lambda: {_state(h) for h in handles}  # noqa: E731
    deadline = time.monotonic() + adapter.teardown_bound
    while states() - {"DEAD"} and time.monotonic() < deadline:
        time.sleep(0.1)
    assert states() <= {"DEAD"}, f"{component} actors after teardown: {states()}"


def test_features_match_installed_torchrl(adapter):
    from torchrl.collectors.distributed import RayCollector

    tv = tuple(int(x) for x in version("torchrl").split(".")[:2])
    f = adapter.features
    assert {"sync", "async", "buffer_mode"} <= f
    assert not f & {"liveness", "ready_timeout"}
    # start() and a Ray-stopping shutdown exist in every version (0.10's start()
    # schedules an asyncio task; its shutdown() always stops Ray)
    assert {"shutdown_ray", "background"} <= f
    assert adapter.collector_shutdown_stops_ray == (tv < (0, 11))
    assert adapter.collector_shutdown_stops_ray == (
        "shutdown_ray" not in inspect.signature(RayCollector.shutdown).parameters)
    assert ("evaluator" in f) == ("named_evaluator" in f) == (tv >= (0, 12))
    assert adapter.components == (("buffer", "collector", "evaluator") if tv >= (0, 12)
                                  else ("buffer", "collector"))
    assert adapter.versions() == {"torchrl": version("torchrl"), "tensordict": version("tensordict")}
    assert adapter.teardown_bound == 10.0 and adapter.closed_errors == ()


def test_collector_iterate_actors_teardown(adapter, local_ray):
    collector = adapter.make_collector(SPEC)
    handles = adapter.actors("collector", collector)
    assert len(handles) == SPEC.num_collectors
    assert all(_alive(h) for h in handles)
    batch = next(iter(adapter.iterate(collector)))
    assert batch.numel() == SPEC.frames_per_batch  # async: one collector's batch
    _dead_after_teardown(adapter, "collector", collector, handles, adapter.features)


def test_buffer_extend_len_teardown(adapter, local_ray):
    buffer = adapter.make_buffer(SPEC)
    handles = adapter.actors("buffer", buffer)
    assert len(handles) == 1 and _alive(handles[0])
    adapter.extend(buffer, _batch(8))
    assert adapter.buffer_len(buffer) == 8
    assert adapter.sample(buffer, 4).numel() == 4
    _dead_after_teardown(adapter, "buffer", buffer, handles, adapter.features)


def test_collector_writes_into_buffer(adapter, local_ray):
    spec = SPEC.with_(num_collectors=1)
    buffer = adapter.make_buffer(spec)
    collector = adapter.make_collector(spec, buffer)
    assert next(iter(adapter.iterate(collector))) is None  # data went to the buffer
    assert adapter.buffer_len(buffer) >= spec.frames_per_batch
    order = ["collector", "buffer"]
    if adapter.collector_shutdown_stops_ray:
        # 0.10.x: collector.shutdown() calls ray.shutdown(), and a later buffer.close()
        # aborts the process (seed 000): close the buffer first here.
        order.reverse()
    objs = {"collector": collector, "buffer": buffer}
    for component in order:
        handles = adapter.actors(component, objs[component])
        _dead_after_teardown(adapter, component, objs[component], handles, adapter.features)


def test_named_evaluator_submit_poll_connect_teardown(adapter, local_ray):
    if "evaluator" not in adapter.features:
        pytest.skip(f"torchrl {version('torchrl')} has no RayEvalWorker")
    spec = SPEC.with_(actor_name=f"rlc-trl-eval-{os.getpid()}")
    evaluator = adapter.make_evaluator(spec)
    handles = adapter.actors("evaluator", evaluator)
    assert len(handles) == 1 and _alive(handles[0])
    peer = adapter.connect_evaluator(spec)
    assert adapter.actors("evaluator", peer)[0]._actor_id == handles[0]._actor_id
    adapter.submit(evaluator, spec)
    result = adapter.poll(evaluator, timeout=60)
    assert result is not None and "reward" in result
    _dead_after_teardown(adapter, "evaluator", evaluator, handles, adapter.features)
