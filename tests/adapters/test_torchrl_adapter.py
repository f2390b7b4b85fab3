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
from importlib.metadata import version

import pytest

if "torchrl" in os.environ.get("RLC_EXTRAS", "").split(","):
    import torchrl  # noqa: F401  ci/setup.sh installed the extra: must not skip
else:
    pytest.importorskip("torchrl")
import ray  # noqa: E402

from conformance.adapter import CONVENTIONS, Spec  # noqa: E402
from conformance.adapters.torchrl import TorchRLAdapter  # noqa: E402
from conformance.ops.verbs import _batch  # noqa: E402
from tests.adapters.local_ray import alive as _alive, temp_dir, wait_dead  # noqa: E402

pytestmark = pytest.mark.timeout(180)

TMP = temp_dir("rlc-trl")
SPEC = Spec(frames_per_batch=16, total_frames=100_000, num_collectors=2, buffer_capacity=1000,
            eval_max_steps=20)


@pytest.fixture(scope="module")
def adapter():
    return TorchRLAdapter()


def _dead_after_teardown(adapter, component, obj, handles, features):
    adapter.teardown(component, obj)
    assert adapter.actors(component, obj) == []
    if not ray.is_initialized():  # torchrl's teardown shut Ray down (0.10.x collector)
        assert component == "collector" and adapter.collector_shutdown_stops_ray
        return
    wait_dead(handles, adapter.teardown_bound, component)


def test_features_match_installed_torchrl(adapter):
    from torchrl.collectors.distributed import RayCollector

    tv = tuple(int(x) for x in version("torchrl").split(".")[:2])
    f = adapter.features
    assert {"sync", "async", "buffer_mode"} <= f
    assert not f & {"liveness", "ready_timeout"}
    # every convention but the eleven not measured against torchrl yet (a batch's
    # steps, an evaluation's episode, its own runtime kept, its logs, its warnings,
    # a list of env ids of the wrong length, its repr, Ray after a failed build, the
    # frames its buffer-mode collector writes past the budget, its default actor
    # resources, its healthy teardown times: docs/adapter-contract.md),
    # declared so that what torchrl does with it is judged
    assert set(CONVENTIONS) - f == {"transition_batches", "eval_episode", "keeps_own_runtime",
                                    "logs_unraised_errors", "quiet_when_healthy",
                                    "num_collectors", "repr_names_state", "leaves_ray_as_found",
                                    "writes_within_budget", "documented_defaults",
                                    "prompt_teardown"}
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


def test_explicit_random_policy_where_torchrl_s_default_fails(adapter):
    """torchrl 0.11-0.13 cannot build a collector with policy=None: the adapter
    builds with an explicit random policy there, except in the `defaults`
    scenarios, which record that finding."""
    from tensordict import TensorDict
    import torch

    from conformance.adapters.torchrl import explicit_random_policy

    tv = tuple(int(x) for x in version("torchrl").split(".")[:2])
    assert adapter.policy_none_fails == ((0, 11) <= tv < (0, 14))
    assert adapter._explicit_policy(SPEC) == adapter.policy_none_fails
    assert not adapter._explicit_policy(SPEC.with_(defaults=True))
    policy = explicit_random_policy("CartPole-v1")
    out = policy(TensorDict({"observation": torch.zeros(64, 4)}, batch_size=[64]))["action"]
    assert out.shape == (64, 2) and bool((out.sum(-1) == 1).all())  # one-hot, CartPole's spec
    assert out[:, 0].sum() not in (0, 64)  # random: both actions drawn
    assert explicit_random_policy("RlcNoSuchEnv-v0") is None  # torchrl reports that env itself
