"""Quick real checks of the RLlib adapter on one local Ray (skipped without
RLlib, e.g. in the main .venv: RLlib 2.60 pins gymnasium 1.2.2 and lives in
its own venv, ``RLC_EXTRAS=rllib RLC_VENV=.venv-rllib bash ci/setup.sh``;
where RLC_EXTRAS names rllib a missing RLlib fails them instead).

Each component is built through the adapter, used, and torn down; its
actors must be alive before and dead after. No Ray process may outlive the
module (tests/adapters/conftest.py).
"""
from importlib.metadata import version

import pytest

from conformance import catalog
from conformance.adapter import Spec
from conformance.adapters.rllib import RLlibAdapter
from tests.adapters.local_ray import alive, import_extra, temp_dir, wait_dead

import_extra("rllib", "ray.rllib")

pytestmark = pytest.mark.timeout(240)

TMP = temp_dir("rlc-rllib")
SPEC = Spec(frames_per_batch=16, total_frames=64, num_collectors=2, eval_max_steps=20)


@pytest.fixture(scope="module")
def adapter():
    return RLlibAdapter()


def _dead_after_teardown(adapter, component, obj, handles):
    adapter.teardown(component, obj)
    assert adapter.actors(component, obj) == []
    wait_dead(handles, adapter.teardown_bound, component)


def test_features_components_and_catalog(adapter):
    assert adapter.features == {"sync", "async", "evaluator", "ready_timeout", "actor_options",
                                "endless", "instances"}
    assert adapter.components == ("collector", "evaluator")
    assert adapter.package == "ray[rllib]"
    assert adapter.versions() == {"ray": version("ray"), "gymnasium": version("gymnasium"),
                                  "torch": version("torch")}
    quick = catalog.scenarios(("local", "multinode"), "quick", components=adapter.components)
    ids = {s.id for s in quick}
    assert "order/multinode/user/ray>collector>evaluator~no-buffer" in ids
    assert "use_after_close/local/user/evaluator" in ids
    assert not any(i.startswith("background/") or "/buffer" in i for i in ids)
    skipped = {s.id: adapter.unsupported(s.requires) for s in quick if adapter.unsupported(s.requires)}
    # sweep/*/impl/impl-then-user asks shutdown_ray=True, which RLlib lacks
    assert {tuple(v) for v in skipped.values()} == {("named_evaluator",), ("per_actor_envs",),
                                                    ("shutdown_ray",), ("teardown_timeout",),
                                                    ("context_manager",), ("async_shutdown",),
                                                    ("minimal_build",), ("seed",)}
    # an EnvRunnerGroup has no coroutine teardown: the collector's awaited one is skipped
    assert {i for i, why in skipped.items() if why == ["async_shutdown"]} == {
        "async_teardown/multinode/user/collector",
        "async_teardown/multinode/user/collector-slow-close",
        "async_teardown/multinode/impl/collector"}
    # an EnvRunnerGroup is no context manager: the collector's with block is skipped
    assert {i for i, why in skipped.items() if why == ["context_manager"]} == {
        "with_block/multinode/user/collector", "with_block/multinode/impl/collector"}
    # the weights family's four quick scenarios run without the feature (their weights
    # ops recorded unsupported), never skipped
    weights = {i for i in ids if i.startswith("weights/")}
    assert weights == {"weights/multinode/user/forms-and-workers",
                       "weights/multinode/user/collector-sigkill>weights",
                       "weights/multinode/user/tdmodule-policy",
                       "weights/multinode/user/function-policy"}
    assert "weights" not in adapter.features and not weights & set(skipped)
    # a collector of one actor; envs with a helper process (local only)
    assert {"early_break/multinode/user/sync-1-actor-after-2",
            "env_helper/local/user/all~no-buffer"} <= ids
    # every bad constructor argument of its components is quick (#27): 4 of them new
    assert {f"construction_failure/multinode/user/{v}" for v in (
        "collector-invalid-frames_per_batch", "collector-invalid-total_frames",
        "collector-invalid-num_collectors", "evaluator-infeasible")} <= ids
    # a teardown bound the user shortens, or gives negative (teardown_timeout: an
    # EnvRunnerGroup's stop() takes none), for its collector and its eval worker
    assert {i for i, why in skipped.items() if why == ["teardown_timeout"]} == {
        "killed/multinode/user/collector-hang>teardown-within-1.5s~no-buffer",
        "killed/multinode/user/evaluator-hang>teardown-within-1.5s~no-buffer",
        "construction_failure/multinode/user/collector-invalid-teardown_timeout",
        "construction_failure/multinode/user/evaluator-invalid-teardown_timeout",
        "killed/multinode/user/collector-healthy>teardown-within-0.5s",
        "env_helper/local/user/collector-slow-close>teardown-within-4s",
        "env_helper/local/user/collector-slow-close>teardown-concurrent-within-4s",
        "killed/multinode/user/evaluator-never-scheduled>teardown-within-0.5s"}
    # #27's call_arguments (4 of the eval worker's submit), two collector arguments (one
    # needs per_actor_envs), two exhaustions on the implementation's own runtime; two more
    # named-evaluator signals (need named_evaluator)
    # and the collector's coroutine teardown (async_shutdown: RLlib has none), two owners;
    # a second named worker of a taken name on the implementation's runtime (named_evaluator)
    # and a collector whose actors are restartable (max_restarts, an actor option)
    # then a collector built with only frames_per_batch (minimal_build) and one rebuilt
    # from its seed (seed), both skipped; a handle on a missing name, two owners
    # (named_evaluator); an unknown env on the implementation's runtime, and the eval
    # worker's peek while an evaluation runs, both run; the user's restart under a
    # teardown asked to end the implementation's runtime (shutdown_ray: skipped); a
    # TensorDictModule policy and a function policy (weights family: run, their
    # policy the adapter's own)
    # an async collector broken after 2 batches (run); the Ctrl-C'd named worker's
    # teardown on the implementation's runtime (named_evaluator: skipped)
    # and the eval worker torn down after the user's ray.shutdown() (run)
    # and an async collector with a very slow first actor (per_actor_envs: skipped)
    # and the eval worker built with its defaults on a busy cluster (run)
    # and a healthy collector torn down under a bound of half a second (teardown_timeout:
    # skipped), and one whose env's close() takes 1.5 s under a bound of 4 s, torn down
    # once and by two threads at once (skipped too); an eval worker whose actor is never
    # scheduled, torn down under half a second (skipped too), and one a Ctrl-C interrupts
    # in its teardown (run: RLlib's build of a never-scheduled eval runner hangs, as in
    # killed/*/user/evaluator-never-scheduled>teardown)
    # and the components built from threads that end, on the implementation's runtime
    # (local) and the user's (multinode), one after another and all at once
    # and the named worker's teardown a SIGTERM lands in (named_evaluator: skipped)
    # and a collector and an eval worker sharing the local node's CPUs (run)
    # and the implementation's runtime ended through a ray.shutdown bound before its
    # import, after builds from threads (multinode: run)
    # and the user's ray.shutdown() from another thread while the main one tears the
    # collector down, through ray.shutdown and through a name bound before the import, and
    # on local with envs whose close() stops a helper process (run)
    assert (len(quick), len(skipped)) == (105, 33)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_collector_iterates_to_total_frames_then_stops(adapter, local_ray, sync):
    spec = SPEC.with_(sync=sync)
    group = adapter.make_collector(spec)
    handles = adapter.actors("collector", group)
    assert len(handles) == spec.num_collectors and all(alive(h) for h in handles)
    batches = list(adapter.iterate(group))
    assert len(batches) == spec.total_frames // spec.frames_per_batch
    assert [sum(len(chunk) for chunk in b) for b in batches] == [spec.frames_per_batch] * 4
    _dead_after_teardown(adapter, "collector", group, handles)


def test_evaluator_submit_poll_teardown(adapter, local_ray):
    algo = adapter.make_evaluator(SPEC)
    handles = adapter.actors("evaluator", algo)
    assert len(handles) == 1 and alive(handles[0])  # its one evaluation env runner
    assert adapter.poll(algo, timeout=1) is None  # nothing submitted
    adapter.submit(algo, SPEC)
    result = adapter.poll(algo, timeout=60)
    assert result is not None and "env_runners" in result
    _dead_after_teardown(adapter, "evaluator", algo, handles)
