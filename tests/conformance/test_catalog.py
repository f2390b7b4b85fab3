"""The catalog as data: stable ids, JSON round trips, walks replayable and shrinkable."""
import json
import subprocess
import sys

import pytest

from conformance import catalog
from conformance.catalog.build import ALL
from conformance.catalog.quick_slots import LOCAL_ONLY_FAMILIES, QUICK_ON_LOCAL, quick_on
from conformance.catalog.walks import generate, walk_from_id
from conformance.repro.shrink import shrink
from conformance.ops.scenario import Op, Scenario


def test_every_scenario_round_trips_through_json_with_a_stable_id():
    for s in catalog.scenarios(("local", "multinode", "external"), "full"):
        again = Scenario.from_dict(json.loads(s.to_json()))
        assert again == s and again.id == s.id


def test_quick_profile_has_every_family_on_multinode_and_its_listed_local_slots():
    counts = catalog.counts()["quick"]
    assert set(counts) == set(catalog.FAMILIES)
    assert {f for f, c in counts.items() if not c.get("multinode")} == set(LOCAL_ONLY_FAMILIES), \
        counts
    assert all(counts[f].get("local") for f in LOCAL_ONLY_FAMILIES), counts
    local = catalog.scenarios(("local",), "quick")
    keys = {f"{s.family}/{s.owner}/{s.variant.split('~')[0]}" for s in local}
    assert keys == set(QUICK_ON_LOCAL), set(QUICK_ON_LOCAL) ^ keys  # no stale slot
    assert {s.owner for s in local} == {"user", "impl"}
    assert {kind for s in local for kind in s.kinds} == set(ALL)


def test_a_family_s_quick_scenario_is_quick_on_local_only_in_a_listed_slot():
    variant = "restart/{}/user/buffer>collector>evaluator"
    assert catalog.find(variant.format("multinode")).profiles == ("quick", "full")
    assert catalog.find(variant.format("local")).profiles == ("full",)  # no slot
    assert not quick_on("local", "restart", "user", "buffer>collector>evaluator")
    assert catalog.find("early_break/local/user/async-after-0").profiles == ("quick", "full")


def test_order_family_has_all_24_permutations_per_fixture_and_owner():
    orders = [s for s in catalog.scenarios(("local",), "full", families=["order"])
              if s.owner == "user" and "(" not in s.variant]
    assert len(orders) == 24
    assert len({tuple(str(o) for o in s.ops if o.verb in ("teardown", "ray_shutdown"))
                for s in orders}) == 24


def test_find_knows_every_id_and_any_walk_seed():
    s = catalog.scenarios(("multinode",), "quick")[5]
    assert catalog.find(s.id) == s
    assert catalog.find("walk/local/user/seed-123456").seed == 123456


def test_walks_replay_from_their_seed_and_end_with_teardown():
    a, b = generate(7, "local", "user"), generate(7, "local", "user")
    assert a == b and a != generate(8, "local", "user")
    walk = walk_from_id("walk/local/user/seed-7")
    built = {o.target for o in walk.ops if o.verb == "construct"}
    torn = {o.target for o in walk.ops if o.verb == "teardown"}
    assert built <= torn


def test_shrink_keeps_only_the_ops_the_failure_needs():
    ops = tuple(Op(*x) for x in [("construct", "buffer"), ("construct", "collector"),
                                 ("iterate", "collector"), ("ray_shutdown", None),
                                 ("teardown", "collector"), ("teardown", "buffer")])
    s = Scenario("walk", "local", "user", "seed-0", ops)

    def fails(c):  # the "bug": tearing the buffer down after ray.shutdown()
        verbs = [(o.verb, o.target) for o in c.ops]
        return ("construct", "buffer") in verbs and ("ray_shutdown", None) in verbs and \
            verbs.index(("ray_shutdown", None)) < verbs.index(("teardown", "buffer")) \
            if ("teardown", "buffer") in verbs else False

    small = shrink(s, fails)
    assert [str(o) for o in small.ops] == ["construct buffer", "ray_shutdown", "teardown buffer"]


def test_shrink_never_tries_a_build_left_running_without_its_join():
    """A candidate that is no scenario (a build left running, never joined) is
    not run: shrinking keeps the build with its join."""
    ops = (Op("construct", "buffer", {"thread": True, "wait": False}),
           Op("construct", "evaluator", {"thread": True, "wait": False}),
           Op("join_build", "buffer"), Op("join_build", "evaluator"), Op("teardown", "buffer"),
           Op("teardown", "evaluator"))
    tried = []

    def fails(c):  # the "bug": the buffer's build, whatever else ran
        tried.append(c)
        return any(o.verb == "construct" and o.target == "buffer" for o in c.ops)

    small = shrink(Scenario("built_in_thread", "local", "impl", "t", ops), fails)
    assert [str(o) for o in small.ops] == ["construct buffer(thread=True,wait=False)",
                                          "join_build buffer"]
    # every candidate run kept each build left running with its join
    assert all(("join_build buffer" in {str(o) for o in c.ops})
               == ("construct buffer(thread=True,wait=False)" in {str(o) for o in c.ops})
               for c in tried)


WALKS_AS_JSON = """
import json
from conformance.catalog.walks import FULL_SEEDS, walk
print(json.dumps([walk(seed, fx, owner).to_dict() for seed in (*FULL_SEEDS, 4242)
                  for fx in ("local", "multinode") for owner in ("user", "impl")]))
"""


def test_a_walk_id_names_the_same_ops_in_every_process():
    """Sets of strings iterate in an order PYTHONHASHSEED decides: a walk
    generated from one must be the same walk in every process (repro, shrink,
    known-failure entries and each xdist worker name it by id)."""
    import os
    import subprocess
    import sys

    from fixtures.rayenv import REPO_ROOT

    outs = set()
    for hashseed in ("0", "1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run([sys.executable, "-c", WALKS_AS_JSON], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        outs.add(done.stdout)
    assert len(outs) == 1


def test_without_an_eval_worker_each_family_runs_on_what_exists_and_says_so():
    """Component subsets: a scenario written for all three components runs
    with collector and buffer, its id marked; one about the eval worker does
    not exist; ids round-trip through find."""
    two = ("buffer", "collector")
    subset = catalog.scenarios(("local", "multinode"), "full", components=two)
    assert not any("evaluator" in s.kinds for s in subset)
    orders = [s.variant for s in subset if s.family == "order" and s.fixture == "local"
              and s.owner == "user"]
    assert sorted(orders) == sorted(
        [f"{'>'.join(p)}~no-evaluator" for p in __import__("itertools").permutations(
            ("collector", "buffer", "ray"))] + ["collector(shutdown_ray)>buffer~no-evaluator",
                                               "collector(shutdown_ray)>buffer(shutdown_ray)"
                                               "~no-evaluator",
                                               # the collector alone: no subset to mark
                                               "collector>ray(across-its-teardown-in-thread)",
                                               "collector>ray(across-its-teardown-in-main)",
                                               "collector>ray-bound-before-import"
                                               "(across-its-teardown-in-main)",
                                               "collector-helper-env>ray"
                                               "(across-its-teardown-in-main)"])
    marked = [s for s in subset if s.variant.endswith("~no-evaluator")]
    assert {s.family for s in marked} == {"early_break", "order", "restart", "killed", "exit",
                                          "defaults", "walk", "signals", "sweep", "env_helper",
                                          "built_in_thread"}
    for s in subset:
        assert catalog.find(s.id) == s
    quick_ids = {s.id for s in catalog.scenarios(("multinode",), "quick", components=two)}
    assert "order/multinode/user/ray>collector>buffer~no-evaluator" in quick_ids
    assert "named/multinode/user/peer-then-owner" not in quick_ids


def test_races_put_the_call_in_flight_on_purpose_with_the_slow_env():
    """Scenarios that race a teardown, ray.shutdown(), a kill or the exit
    against a call build their components on the slow env (a 64-frame batch
    takes 3.2 s), and an in-flight kill is armed for the op it must land in."""
    from conformance.catalog.build import SLOW_ENV

    assert SLOW_ENV["env_id"] == "conformance.envs:RlcSlowCartPole-v0"
    for sid in ("background/local/user/ray-shutdown-under-thread",
                "exit/multinode/impl/background-running",
                "killed/local/user/collector-sigkill-in-flight>teardown",
                "killed/multinode/impl/evaluator-ray_kill-in-flight>teardown"):
        s = catalog.find(sid)
        assert s.spec["env_id"] == SLOW_ENV["env_id"], sid
    kill = catalog.find("killed/local/user/collector-sigkill-in-flight>teardown")
    verbs = [o.verb for o in kill.ops]
    armed = verbs.index("kill")
    assert kill.ops[armed].args["during"] == verbs[armed + 1] == "iterate"
    assert verbs[armed + 2] == "kill_landed"


def test_every_signal_is_armed_for_a_slow_call_after_it_and_one_that_ends_the_program_last():
    import pytest

    from conformance.catalog.build import SLOW_ENV, op
    from conformance.ops.interrupts import check_interrupts

    def slow(s, k) -> bool:
        """The call the signal is armed for is slow: the slow env's, or one
        that waits on an actor hung or never scheduled before it."""
        return s.spec.get("env_id") == SLOW_ENV["env_id"] or any(
            (o.verb == "kill" and o.args.get("how") == "hang")
            or (o.verb == "construct" and o.args.get("infeasible") and o.args.get("ready") is False)
            for o in s.ops[:k])

    signalled = 0
    for s in catalog.scenarios(("local", "multinode"), "full"):
        check_interrupts(s.ops)
        for k, o in enumerate(s.ops):
            if o.verb == "interrupt":
                signalled += 1
                assert any(later.verb == o.args["during"] for later in s.ops[k + 1:]), s.id
                assert slow(s, k), s.id
    # 36 on the slow env; 8 in a teardown that waits on a hung buffer or on an
    # actor never scheduled (signals/*/*/collector-sigint-in-teardown-buffer-hung,
    # evaluator-never-scheduled-sigint-in-teardown)
    assert signalled == 44
    with pytest.raises(ValueError, match="must be the last op"):
        check_interrupts([op("interrupt", signal="SIGTERM", during="iterate"),
                          op("iterate", "collector"), op("teardown", "collector")])


def test_the_slow_env_is_slow_and_never_ends_an_episode():
    import time

    import gymnasium as gym

    env = gym.make("conformance.envs:RlcSlowCartPole-v0")
    env.reset(seed=0)
    t0 = time.monotonic()
    for _ in range(40):  # a random policy's CartPole episode ends after ~20 steps
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not (terminated or truncated)
    assert time.monotonic() - t0 >= 40 * 0.05


def test_defaults_scenarios_build_with_the_implementation_s_own_defaults():
    from conformance.adapter import Spec
    from conformance.adapters.reference import ReferenceAdapter

    s = catalog.find("defaults/multinode/user/all")
    assert s.spec == {"defaults": True}
    assert all(o.args.get("may_fail") and "place" not in o.args
               for o in s.ops if o.verb == "construct")
    spec = Spec.for_scenario(s)
    ref = ReferenceAdapter()
    assert ref.constructor_args(spec, "collector")[1] == {
        "frames_per_batch": 64, "total_frames": 512, "sync": False, "num_collectors": 2}
    assert ref.constructor_args(spec, "buffer") == ([], {"capacity": 100_000})
    assert "remote_configs" in ref.constructor_args(Spec(), "collector")[1]
    # the collector's behaviour left to its own defaults (minimal_build): only
    # frames_per_batch, the suite's actor options and bounds as always
    minimal = Spec.for_scenario(catalog.find("defaults/multinode/user/collector-minimal"))
    args, kwargs = ref.constructor_args(minimal, "collector")
    assert args[0] == "CartPole-v1" and "remote_configs" in kwargs
    assert not {"total_frames", "sync", "num_collectors"} & set(kwargs)


def test_without_a_buffer_each_family_runs_on_what_exists_and_says_so():
    """An implementation with no replay buffer (RLlib): the scenarios about
    the buffer do not exist, those that include it run without it (marked
    ``~no-buffer``), the collector and eval worker ones are unchanged."""
    from conformance.adapter import Adapter

    class NoBuffer(Adapter):
        features = frozenset({"evaluator"})

    assert NoBuffer().components == ("collector", "evaluator")
    assert Adapter().components == ("collector",)
    two = ("collector", "evaluator")
    subset = catalog.scenarios(("local", "multinode"), "full", components=two)
    assert not any("buffer" in s.components for s in subset)
    ids = {s.id for s in subset}
    assert "order/local/user/collector>evaluator>ray~no-buffer" in ids
    assert "killed/multinode/user/evaluator-sigkill>teardown~no-buffer" in ids
    assert "use_after_close/local/user/collector" in ids
    assert not any(s.family == "background" for s in subset)
    assert "early_break/local/user/buffer-mode-after-2" not in ids
    every = {s.id for s in catalog.scenarios(("local", "multinode"), "full")}
    unmarked = {s.id for s in subset if "~no-" not in s.variant}
    assert unmarked <= every  # nothing new: the same scenarios, minus the buffer
    for s in subset:
        assert catalog.find(s.id) == s


def test_a_scenario_list_maps_onto_an_implementation_without_an_eval_worker():
    from conformance.plugin import _for_components

    comps = ("buffer", "collector")
    ids = {s.id for s in catalog.scenarios(("local", "multinode"), "quick", components=comps)}
    listed = {"killed/local/user/buffer-sigkill>teardown",  # written for all three
              "order/multinode/user/collector>ray>buffer>evaluator",  # an order over them
              "use_after_close/local/user/evaluator",  # about the missing component
              "early_break/local/user/buffer-mode-after-2"}  # the same for every subset
    mapped, absent = _for_components(listed, ids, comps)
    assert mapped == {"killed/local/user/buffer-sigkill>teardown~no-evaluator",
                      "order/multinode/user/collector>ray>buffer~no-evaluator",
                      "early_break/local/user/buffer-mode-after-2"}
    assert absent == ["use_after_close/local/user/evaluator"]
    typo, _ = _for_components({"order/local/user/nope"}, ids, comps)
    assert typo == {"order/local/user/nope"}  # left as listed: the caller's usage error names it


def test_use_after_close_does_without_start():
    """``use(call=start)`` needs ``background`` only as an optional feature:
    an implementation without start() runs the scenario, that call recorded
    unsupported (RLlib's EnvRunnerGroup has no start())."""
    from conformance.ops.verbs import optional_feature_of

    s = catalog.find("use_after_close/local/user/collector")
    calls = {o.args["call"]: optional_feature_of(o) for o in s.ops if o.verb == "use"}
    assert calls == {"iterate": None, "start": "background"}
    assert "background" not in s.requires


def test_catalog_of_an_implementation_that_cannot_load_is_one_usage_error():
    done = subprocess.run([sys.executable, "-m", "conformance", "catalog", "--impl",
                           "no_such_module:Adapter", "--counts"], capture_output=True, text=True)
    assert done.returncode == 2, done
    assert done.stderr.startswith("catalog: adapter 'no_such_module:Adapter' failed to import")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_scenario_that_shortens_the_teardown_bound_needs_the_feature_and_is_judged_by_it():
    """``killed/*/*/<comp>-hang>teardown-within-1.5s``: the bound is the
    scenario's (``Spec.teardown_timeout``), only for an adapter that hands it
    to the implementation (feature ``teardown_timeout``), and the oracles'
    ``Run.teardown_bound`` is that bound, not the adapter's 10 s."""
    from conformance.adapters.reference import ReferenceAdapter
    from conformance.run.execute import teardown_bound_of

    short = [s for s in catalog.scenarios(("multinode",), "quick") if "teardown_timeout" in s.spec]
    assert {s.id for s in short} == {
        "killed/multinode/user/collector-hang>teardown-within-1.5s",
        "killed/multinode/user/evaluator-hang>teardown-within-1.5s",
        "killed/multinode/user/collector-healthy>teardown-within-0.5s",
        "killed/multinode/user/evaluator-never-scheduled>teardown-within-0.5s",
        "killed/multinode/user/buffer-hang>collector-teardown-within-0.5s"}
    assert all("teardown_timeout" in s.requires for s in short)
    adapter = ReferenceAdapter()
    assert "teardown_timeout" in adapter.features
    assert {s.id.rsplit("-", 1)[-1]: teardown_bound_of(s, adapter) for s in short} == {
        "1.5s": 1.5, "0.5s": 0.5}
    plain = catalog.find("killed/multinode/user/evaluator-hang>teardown")
    assert "teardown_timeout" not in plain.requires and teardown_bound_of(plain, adapter) == 10.0


def test_a_start_that_is_to_fail_still_needs_the_background_feature():
    """Without ``background`` there is no start() to refuse: RLlib's and
    Tianshou's full reports judged their AttributeError unclear in
    start-without-buffer (2026-11-27); the scenario is theirs to skip."""
    s = catalog.find("construction_failure/multinode/user/start-without-buffer")
    assert "background" in s.requires


def test_a_build_left_running_is_joined_before_anything_else_touches_its_component():
    """construct(thread=True, wait=False) only starts the build (the next builds
    run at once with it): a scenario that uses the component before join_build,
    or never joins it, is refused as data."""
    start = Op("construct", "buffer", {"thread": True, "wait": False})

    def scenario(*ops):
        return Scenario("built_in_thread", "local", "user", "t", ops)

    scenario(start, Op("join_build", "buffer"), Op("teardown", "buffer"))
    with pytest.raises(ValueError, match="buffer is still being built"):
        scenario(start, Op("teardown", "buffer"))
    with pytest.raises(ValueError, match=r"builds never joined: \['buffer'\]"):
        scenario(start)
    with pytest.raises(ValueError, match="buffer is still being built"):
        scenario(start, Op("construct", "collector", {"buffer": "buffer"}), Op("join_build", "buffer"))
    with pytest.raises(ValueError, match="no build of buffer left running"):
        scenario(Op("join_build", "buffer"))
    with pytest.raises(ValueError, match="wait=False needs thread=True"):
        scenario(Op("construct", "buffer", {"wait": False}), Op("join_build", "buffer"))
    at_once = catalog.find("built_in_thread/multinode/user/all-at-once")
    assert [str(o) for o in at_once.ops[:6]] == [
        "construct buffer(place=node_b,thread=True,wait=False)",
        "construct collector(place=node_a,sync=False,thread=True,wait=False)",
        "construct evaluator(thread=True,wait=False)",
        "join_build buffer", "join_build collector", "join_build evaluator"]
