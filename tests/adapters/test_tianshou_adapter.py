"""Quick real checks of the Tianshou adapter on one local Ray (skipped without
Tianshou, e.g. in the main .venv: Tianshou 2.0.1 pins filelock 3.x and lives
in its own venv, ``RLC_EXTRAS=tianshou RLC_VENV=.venv-tianshou bash
ci/setup.sh``; where RLC_EXTRAS names tianshou a missing Tianshou fails them
instead).

A collector is built through the adapter (RayVectorEnv + Collector, or
AsyncCollector for async), iterated to total_frames and closed. Tianshou's
close() closes the envs and leaves their actors ALIVE (the finding in
ci/results/tianshou/README.md): the tests assert that as it is, so a Tianshou
that fixes it shows here, then kill the actors themselves. No Ray process may
outlive the module (tests/adapters/conftest.py).
"""
from importlib.metadata import version

import pytest
import ray

from conformance import catalog
from conformance.adapter import Spec
from conformance.adapters.tianshou import TianshouAdapter
from conformance.ops.targets import kind_of
from tests.adapters.local_ray import actor_state, alive, import_extra, temp_dir, wait_dead

import_extra("tianshou", "tianshou")

pytestmark = pytest.mark.timeout(240)

TMP = temp_dir("rlc-tianshou")
SPEC = Spec(frames_per_batch=16, total_frames=64, num_collectors=2)


@pytest.fixture(scope="module")
def adapter():
    return TianshouAdapter()


def test_features_components_and_catalog(adapter):
    assert adapter.features == {"sync", "async", "per_actor_envs", "endless"}
    assert adapter.components == ("collector",)
    assert adapter.package == "tianshou"
    assert adapter.versions() == {"tianshou": version("tianshou"), "numpy": version("numpy")}
    quick = catalog.scenarios(("local", "multinode"), "quick", components=adapter.components)
    ids = {s.id for s in quick}
    assert "order/multinode/user/ray>collector~no-buffer-evaluator" in ids
    assert "use_after_close/multinode/user/collector" in ids
    assert "construction_failure/local/impl/collector-one_unknown_env" in ids
    # a sweep's second generation is collector.2: still a collector
    assert {kind_of(op.target) for s in quick for op in s.ops if op.target} == {"collector"}
    skipped = {s.id: adapter.unsupported(s.requires) for s in quick if adapter.unsupported(s.requires)}
    assert skipped == {
        "construction_failure/multinode/user/collector-infeasible": ["actor_options"],
        "killed/multinode/user/collector-remove_node>teardown~no-buffer-evaluator": ["actor_options"],
        # a sweep's impl-owned generation asks shutdown_ray=True, which RayVectorEnv lacks,
        # as does a teardown after the user's restart on the implementation's runtime
        "sweep/multinode/impl/impl-then-user": ["shutdown_ray"],
        "restart/multinode/impl/collector(shutdown_ray)>~no-buffer-evaluator": ["shutdown_ray"],
        # RayVectorEnv.close() takes no bound: a bound the user shortens, or refuses
        "killed/multinode/user/collector-hang>teardown-within-1.5s~no-buffer-evaluator":
            ["teardown_timeout"],
        "construction_failure/multinode/user/collector-invalid-teardown_timeout":
            ["teardown_timeout"],
        "killed/multinode/user/collector-healthy>teardown-within-0.5s": ["teardown_timeout"],
        "env_helper/local/user/collector-slow-close>teardown-within-4s": ["teardown_timeout"],
        "env_helper/local/user/collector-slow-close>teardown-concurrent-within-4s":
            ["teardown_timeout"],
        # RayVectorEnv is no context manager: leaving a with block is skipped
        "with_block/multinode/user/collector": ["context_manager"],
        "with_block/multinode/impl/collector": ["context_manager"],
        # nor has it a coroutine teardown
        "async_teardown/multinode/user/collector": ["async_shutdown"],
        "async_teardown/multinode/user/collector-slow-close": ["async_shutdown"],
        "async_teardown/multinode/impl/collector": ["async_shutdown"],
        # nor does it take actor options (max_restarts)
        "killed/multinode/user/collector-max_restarts>teardown": ["actor_options"],
        # nor is it built with only frames_per_batch (minimal_build), or from a seed
        # the conformance adapter passes (seed: RayVectorEnv.seed() exists, not wired)
        "defaults/multinode/user/collector-minimal": ["minimal_build"],
        "seeded/multinode/user/collector-rebuilt": ["seed"],
    }
    # the weights family's four quick scenarios run without the feature (their weights
    # ops recorded unsupported), never skipped: in the count, not in skipped
    assert {i for i in ids if i.startswith("weights/")} == {
        "weights/multinode/user/forms-and-workers",
        "weights/multinode/user/collector-sigkill>weights",
        "weights/multinode/user/tdmodule-policy",
        "weights/multinode/user/function-policy"}
    # a collector of one actor; envs with a helper process (local only)
    assert {"early_break/multinode/user/sync-1-actor-after-2",
            "env_helper/local/user/all~no-buffer-evaluator"} <= ids
    # every bad constructor argument of its collector is quick (#27): 3 of them new
    assert {f"construction_failure/multinode/user/collector-invalid-{a}" for a in (
        "frames_per_batch", "total_frames", "num_collectors")} <= ids
    # #27: two more bad constructor arguments (a fractional frames_per_batch, one env id too
    # many) and two exhaustions on the implementation's own runtime
    # and the collector's coroutine teardown (async_shutdown), two owners, and a
    # collector with restartable actors; then its repr read (use_after_close, as ever),
    # an unknown env on the implementation's runtime, a minimal and a seeded build; a
    # TensorDictModule policy and a function policy (weights family: run, their
    # policy the adapter's own)
    # and an async collector broken after 2 batches; and one with a very slow
    # first actor, whose ready actor's batches must not wait for it; a healthy collector
    # torn down under half a second (teardown_timeout: skipped, above), and one whose env's
    # close() takes 1.5 s under a bound of 4 s, torn down once and by two threads at once
    # (skipped too); the collector built from a thread that ends, on the implementation's
    # runtime (local) and the user's (multinode), and the implementation's runtime
    # (multinode) ended through a ray.shutdown bound before the library's import, and the
    # user's ray.shutdown() from another thread while the main one tears the collector
    # down (three times: through ray.shutdown, a name bound before the import, and on
    # local with envs whose close() stops a helper process)
    assert len(quick) == 68


def _closed_with_actors_alive(adapter, collector, handles):
    """close() returns, closes the envs, and (Tianshou 2.0.1) kills no actor."""
    adapter.teardown("collector", collector)
    assert collector.env.is_closed
    assert {actor_state(h) for h in handles} == {"ALIVE"}
    for h in handles:  # the test's own cleanup: what close() did not do
        ray.kill(h)
    wait_dead(handles, adapter.teardown_bound, "collector")


#: sync also with one env id per actor (per_actor_envs): two builds cover the
#: three mappings, each build costs two actors that import torch and Tianshou
CASES = {"sync-per-actor-envs": SPEC.with_(sync=True, env_id=("CartPole-v1", "CartPole-v0")),
         "async": SPEC.with_(sync=False)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_collector_iterates_to_total_frames_then_closes(adapter, local_ray, case):
    from tianshou.data import AsyncCollector, Collector

    spec = CASES[case]
    collector = adapter.make_collector(spec)
    assert type(collector) is (Collector if spec.sync else AsyncCollector)
    assert collector.env.is_async is not spec.sync
    handles = adapter.actors("collector", collector)
    assert len(handles) == spec.num_collectors and all(alive(h) for h in handles)
    env_ids = [s.id for s in ray.get([h.get_env_attr.remote("spec") for h in handles])]
    assert env_ids == (list(spec.env_id) if isinstance(spec.env_id, tuple)
                       else [spec.env_id] * spec.num_collectors)
    batches = list(adapter.iterate(collector))
    assert batches == [spec.frames_per_batch] * (spec.total_frames // spec.frames_per_batch)
    _closed_with_actors_alive(adapter, collector, handles)
