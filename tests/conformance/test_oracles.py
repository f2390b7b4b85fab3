"""Oracles on hand-made histories: each rule fails when broken, holds when kept."""
import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.ops.history import History, HistoryFile
from conformance.judge.oracles import ORACLES, Run
from conformance.judge.oracles import judge as _judge
from conformance.ops.scenario import Op, Scenario
from conformance.judge.verdict import decide as _decide, texts

RAY = "127.0.0.1:1/session_a/01000000"
#: the setup record's runtime_watch of a driver that watched the runtime during the ops
WATCH = {"calls": ["ray.init", "ray.shutdown"], "processes": "children of the driver every 0.25s"}
FINAL = {"phase": "final", "ray": RAY, "threads": [], "actors": {},
         "job_actors": {"actors": {}, "source": "gcs"}, "zombie_pids": {}}


def scenario(*ops, owner="user", spec=None):
    return Scenario("order", "local", owner, "t", tuple(ops), spec=dict(spec or {}))


def end(i, verb, target=None, status="ok", args=None, result=None, probe=None,
        error=None, duration=0.01):
    return {"phase": "end", "i": i, "op": Op(verb, target, args or {}).to_dict(),
            "status": status, "result": result or {},
            "probe": {"ray": RAY, "threads": [], **(probe or {})},
            "error": error, "duration": duration}


def err(t="builtins.RuntimeError", m="boom"):
    return {"type": t, "message": m, "traceback": ""}


def run_of(records, owner="user", complete=True, corrupt=(), spec=None, ray_at_setup=RAY, **kw):
    """A run of the ops whose records are given; ``complete`` adds the final
    probe (unless given) and the exit record, as a driver that got there."""
    ops = [Op.from_dict(r["op"]) for r in records if r.get("phase") in ("end", "begin")]
    recs = [{"phase": "setup", "ray": ray_at_setup, "owner": owner, "runtime_watch": WATCH},
            *records]
    if complete:
        if not any(r.get("phase") == "final" for r in recs):
            recs.append(dict(FINAL))
        recs.append({"phase": "exiting", "bound": 15.0})
    kw.setdefault("exit_code", 0)
    return Run(scenario=scenario(*ops, owner=owner, spec=spec),
               history=History(HistoryFile(records=recs, corrupt=list(corrupt)),
                               expected_ops=len(ops)),
               closed_errors=("impl.errors.ComponentClosedError",), **kw)


def judge(run):
    """The failing oracles with their violations' texts."""
    return texts(_judge(run).violations)


def unknown(run):
    """The oracles that could not answer, with why (texts)."""
    return texts(_judge(run).unknown)


def decide(run):
    """The verdict, and the texts of the violations and of the unknown findings."""
    d = _decide(run)
    return d.verdict, texts(d.violations), texts(d.unknown)


def actors(**by_comp):
    return {"actors": {c: {f"{c}-a": {"state": s}} for c, s in by_comp.items()}}


def test_a_clean_run_passes_every_oracle():
    run = run_of([
        end(0, "construct", "buffer", probe=actors(buffer="ALIVE"),
            result={"actors": [{"id": "buffer-a"}]}),
        end(1, "teardown", "buffer", result={"calls": [{"status": "ok", "error": None,
                                                         "duration": 0.1}]},
            probe=actors(buffer="DEAD")),
    ])
    assert _judge(run).violations == {} and _judge(run).unknown == {}
    assert decide(run)[0] == "pass"


def test_teardown_that_raises_fails():
    call = {"status": "raised", "error": err(), "duration": 0.1}
    run = run_of([end(0, "teardown", "buffer", status="raised", error=err(),
                      result={"calls": [call]})])
    assert "teardown_never_raises" in judge(run)


def test_teardown_over_its_bound_fails():
    call = {"status": "ok", "error": None, "duration": 12.0}
    run = run_of([end(0, "teardown", "buffer", result={"calls": [call]})])
    assert "teardown_within_bound" in judge(run)


def test_teardown_that_kills_another_component_fails():
    run = run_of([
        end(0, "construct", "buffer", probe=actors(buffer="ALIVE")),
        end(1, "construct", "collector", probe=actors(buffer="ALIVE", collector="ALIVE")),
        end(2, "teardown", "collector", result={"calls": []},
            probe=actors(buffer="DEAD", collector="DEAD")),
    ])
    assert "others_untouched" in judge(run)


def test_teardown_that_ends_another_components_actor_still_starting_fails():
    """An actor PENDING_CREATION in every earlier probe is judged too."""
    run = run_of([
        end(0, "construct", "collector", probe=actors(collector="PENDING_CREATION")),
        end(1, "construct", "buffer",
            probe=actors(collector="PENDING_CREATION", buffer="ALIVE")),
        end(2, "teardown", "buffer", result={"calls": []},
            probe=actors(collector="DEAD", buffer="DEAD")),
    ])
    assert judge(run)["others_untouched"] == [
        "op 2 (teardown buffer) ended collector actor collecto (DEAD; it was PENDING_CREATION)"]
    still = run_of([
        end(0, "construct", "collector", probe=actors(collector="PENDING_CREATION")),
        end(1, "construct", "buffer", probe=actors(collector="PENDING_CREATION")),
        end(2, "teardown", "buffer", result={"calls": []},
            probe=actors(collector="PENDING_CREATION")),
    ])
    assert "others_untouched" not in judge(still)


def test_another_actor_never_observed_before_a_teardown_that_ended_is_unknown():
    unseen = {"state": "unknown", "error": "GCS down"}
    run = run_of([
        end(0, "construct", "collector", probe={"actors": {"collector": {"collector-a": unseen}}}),
        end(1, "construct", "buffer", probe={"actors": {"collector": {"collector-a": unseen},
                                                        "buffer": {"buffer-a": {"state": "ALIVE"}}}}),
        end(2, "teardown", "buffer", result={"calls": []},
            probe=actors(collector="DEAD", buffer="DEAD")),
    ])
    verdict, violations, unknown_ = decide(run)
    assert verdict == "error" and "others_untouched" not in violations
    assert unknown_["others_untouched"] == [
        "op 2 (teardown buffer): collector actor collecto is DEAD after it, and its state "
        "before was never observed: whether this teardown ended it is unknown"]


def test_actor_alive_after_its_teardown_fails():
    run = run_of([end(0, "teardown", "buffer", result={"calls": []},
                      probe=actors(buffer="ALIVE"))])
    assert "own_actors_dead_after_teardown" in judge(run)


def test_user_ray_shut_down_by_a_component_fails_but_not_for_impl_owner():
    recs = [end(0, "teardown", "collector", result={"calls": []})]
    recs[0]["probe"]["ray"] = None
    assert "ray_not_shut_down_by_non_owner" in judge(run_of(recs))
    assert "ray_not_shut_down_by_non_owner" not in judge(run_of(recs, owner="impl"))


def test_restart_after_ray_shutdown_fails():
    r0 = end(0, "ray_shutdown")
    r0["probe"]["ray"] = None
    r1 = end(1, "teardown", "buffer", result={"calls": []})
    r1["probe"]["ray"] = "127.0.0.1:2/session_b"
    assert "no_ray_restart" in judge(run_of([r0, r1]))


def test_use_after_close_needs_a_clear_error():
    ok = end(0, "use", "buffer", args={"call": "sample"}, status="raised",
             error=err("impl.errors.ComponentClosedError", "RayReplayBuffer is closed"))
    attr = end(0, "use", "buffer", args={"call": "sample"}, status="raised",
               error=err("builtins.AttributeError", "'NoneType' has no attribute 'remote'"))
    silent = end(0, "use", "buffer", args={"call": "sample"})
    assert "use_after_close_clear_error" not in judge(run_of([ok]))
    assert "use_after_close_clear_error" in judge(run_of([attr]))
    assert "use_after_close_clear_error" in judge(run_of([silent]))


def test_a_repr_says_closed_after_the_teardown_and_never_before():
    def describe(i, text):
        return end(i, "describe", "buffer", result={"text": text})

    def closing(*reprs):
        return [end(0, "construct", "buffer"), describe(1, reprs[0]),
                end(2, "teardown", "buffer", result={"calls": []}), describe(3, reprs[1])]

    right = closing("RayReplayBuffer(capacity=100, shutdown_timeout=10, open)",
                    "RayReplayBuffer(capacity=100, closed after close())")
    assert "repr_names_state" not in judge(run_of(right))
    assert judge(run_of(closing("RayReplayBuffer(open)", "RayReplayBuffer(open)")))[
        "repr_names_state"] == ["op 3 (describe buffer): repr() of buffer after its teardown "
                                "returned does not say it is closed: 'RayReplayBuffer(open)'"]
    assert judge(run_of(closing("RayReplayBuffer(closed after None)", right[3]["result"]["text"])))[
        "repr_names_state"] == ["op 1 (describe buffer): repr() of buffer, open and never ended, "
                                "says it is closed: 'RayReplayBuffer(closed after None)'"]
    # after something else may have ended it (here the user's ray.shutdown()), an open
    # repr saying closed is not judged; neither is a repr without the convention
    shut = [end(0, "construct", "buffer"), end(1, "ray_shutdown"), describe(2, "closed")]
    assert "repr_names_state" not in judge(run_of(shut))
    # built again after its teardown: open again; a flag set false says nothing closed
    again = [*closing("RayReplayBuffer(open)", "RayReplayBuffer(closed after close())"),
             end(4, "construct", "buffer"), describe(5, "RayReplayBuffer(closed=False)")]
    assert "repr_names_state" not in judge(run_of(again))
    features = ReferenceAdapter.features - {"repr_names_state"}
    assert "repr_names_state" not in judge(run_of(
        closing("RayReplayBuffer(open)", "RayReplayBuffer(open)"), features=features))


def test_a_failed_constructor_leaves_ray_as_it_found_it():
    def failed(i, ray, verb="construct"):
        return end(i, verb, "collector", status="raised", args={"fail": "unknown_env"},
                   error=err("gymnasium.error.NameNotFound", "Environment `RlcNoSuchEnv` doesn't exist."),
                   probe={"ray": ray})

    def run(*records, **kw):
        return run_of(list(records), owner="impl", ray_at_setup=None, **kw)

    # Ray down before the first build: it must be down after its failure too
    assert "failed_build_leaves_ray_as_found" not in judge(run(failed(0, None)))
    assert judge(run(failed(0, RAY)))["failed_build_leaves_ray_as_found"] == [
        f"op 0 (construct collector) raised, and left running the Ray runtime it started for "
        f"the build ({RAY}): nothing but ray.shutdown() can end it now"]
    # up before (a component built on the runtime the implementation started): still up
    built = [end(0, "construct", "buffer", probe={"ray": RAY})]
    assert "failed_build_leaves_ray_as_found" not in judge(run(*built, failed(1, RAY)))
    assert judge(run(*built, failed(1, None)))["failed_build_leaves_ray_as_found"] == [
        f"op 1 (construct collector) raised, and ended the Ray runtime it found running ({RAY})"]
    # a probe that did not answer before it: unknown, never a pass; not judged without
    # the convention
    unseen = [end(0, "construct", "buffer", probe={"error": err("builtins.TimeoutError", "no answer")})]
    assert "failed_build_leaves_ray_as_found" not in judge(run(*unseen, failed(1, None)))
    assert unknown(run(*unseen, failed(1, None)))["failed_build_leaves_ray_as_found"] == [
        "op 1 (construct collector): raised, and Ray before or after it was not observed (a "
        "probe that did not answer): whether it left Ray as it found it is unknown"]
    features = ReferenceAdapter.features - {"leaves_ray_as_found"}
    assert "failed_build_leaves_ray_as_found" not in judge(run(failed(0, RAY), features=features))


def test_collectors_built_with_one_seed_yield_the_same_batches():
    def read(i, *digests):
        return end(i, "iterate", "collector", args={"batches": 2, "digest": True},
                   result={"batches": 2, "frames": 32, "sizes": [16, 16], "digests": list(digests)})

    def run(second, seed=7):
        return run_of([end(0, "construct", "collector"), read(1, "aa", "bb"),
                       end(2, "teardown", "collector", result={"calls": []}),
                       end(3, "construct", "collector"), second,
                       end(5, "teardown", "collector", result={"calls": []})],
                      spec={"seed": seed, "sync": True, "frames_per_batch": 16})

    assert "seeded_batches_repeat" not in judge(run(read(4, "aa", "bb")))
    assert judge(run(read(4, "aa", "cc")))["seeded_batches_repeat"] == [
        "op 4 (iterate collector): batch 2 differs from batch 2 of op 1 (iterate collector), a "
        "collector built with the same seed (7): the seed does not fix what it yields"]
    # no seed in the spec: nothing to repeat; a batch without a digest: unknown
    assert "seeded_batches_repeat" not in judge(run(read(4, "aa", "cc"), seed=None))
    assert unknown(run(read(4, "aa", None)))["seeded_batches_repeat"] == [
        "op 4 (iterate collector): a batch has no digest (not a TensorDict with observation, "
        "action, next observation and reward: verbs.digest_of)"]


def test_a_digest_reads_what_the_envs_and_the_policy_made():
    import torch
    from tensordict import TensorDict

    from conformance.ops.verbs import digest_of

    def batch(action):
        return TensorDict({"observation": torch.zeros(2, 4), "action": torch.tensor(action),
                           ("next", "observation"): torch.ones(2, 4),
                           ("next", "reward"): torch.ones(2, 1),
                           "collector": torch.tensor([7, 9])}, batch_size=[2])

    assert digest_of(batch([0, 1])) == digest_of(batch([0, 1]).set("collector", torch.tensor([1, 2])))
    assert digest_of(batch([0, 1])) != digest_of(batch([1, 1]))
    assert digest_of(batch([0, 1]).exclude(("next", "reward"))) is None
    assert digest_of([1, 2]) is None


def test_liveness_that_never_reports_death_fails():
    r = end(0, "check_alive", "buffer", args={"expect": False},
            result={"expect": False, "value": True, "elapsed": 5.1, "within": 5.0})
    assert "liveness_reports_death" in judge(run_of([r]))
    slow = end(0, "check_alive", "buffer", args={"expect": False},  # one call blocking 20 s
               result={"expect": False, "value": False, "elapsed": 20.0, "within": 5.0})
    assert judge(run_of([slow]))["liveness_reports_death"] == [
        "op 0 (check_alive buffer): is_alive() answered False only after 20.0s (bound 5.0s)"]


def alive_check(expect, answers, within=5.0, stays=0.0):
    """A check_alive record whose answers changed at these (seconds, value)."""
    reached = next((t for t, v in answers if v == expect), None)
    return end(0, "check_alive", "buffer", args={"expect": expect, "stays": stays},
               result={"expect": expect, "within": within, "stays": stays,
                       "value": answers[-1][1], "elapsed": answers[-1][0], "reached": reached,
                       "answers": [list(a) for a in answers], "calls": 10})


def test_liveness_over_time_true_now_false_within_and_for_good():
    assert "liveness_reports_death" not in judge(run_of([alive_check(True, [(0.01, True)])]))
    assert "liveness_reports_death" not in judge(run_of([
        alive_check(False, [(0.01, True), (1.2, False)], stays=3.0)]))
    # a healthy component's first answer counts: polling would hide a flapping one
    assert judge(run_of([alive_check(True, [(0.01, False), (0.3, True)])]))[
        "liveness_reports_death"] == ["op 0 (check_alive buffer): is_alive() answered False for "
                                      "a healthy component (its first answer, after 0.01s)"]
    # dead, then alive again: an actor Ray restarted (its state is gone)
    assert judge(run_of([alive_check(False, [(0.01, False), (1.6, True)], stays=3.0)]))[
        "liveness_reports_death"] == ["op 0 (check_alive buffer): is_alive() answered True again "
                                      "1.6s into the check, 1.59s after it answered False (it "
                                      "must stay False for 3.0s)"]


def test_errors_of_work_in_flight_must_surface_clearly_named_and_in_time():
    def call(status, error=None, duration=0.1, result=None, cause="env"):
        return end(0, "check_error", "collector", status=status, error=error,
                   duration=duration, result=result,
                   args={"call": "start", "cause": cause})

    from conformance.envs import FAILURE_TEXT  # the failing env's own words

    env_error = err("ray.exceptions.RayTaskError(RuntimeError)",
                    f"RlcFailingCartPole-v0: step 100 {FAILURE_TEXT}")
    wrapped = {**err("impl.errors.BackgroundWorkError", "background work stopped"),
               "causes": [{"type": "ray.exceptions.ActorDiedError", "message": "gone"}]}
    assert "errors_surface" not in judge(run_of([call("raised", env_error)]))
    assert "errors_surface" not in judge(run_of([call("raised", wrapped, cause="actor")]))
    silent = call("ok", result={"returned": 40, "elapsed": 5.02, "within": 5.0})
    assert judge(run_of([silent]))["errors_surface"] == [
        "op 0 (check_error collector) (env failure): returned 40 time(s) in 5.02s without "
        "raising: the error was not surfaced to the caller"]
    unnamed = call("raised", err("builtins.RuntimeError", "collecting in a background thread"))
    assert "names neither" in judge(run_of([unnamed]))["errors_surface"][0]
    late = call("raised", env_error, duration=9.0)
    assert judge(run_of([late]))["errors_surface"] == [
        "op 0 (check_error collector) (env failure) raised only after 9.00s (bound 5.0s)"]
    # an iterate whose batch had to fail is judged here, not by batch_counts
    swallowed = end(0, "iterate", "collector", args={"batches": 5, "cause": "env"},
                    result={"batches": 5, "frames": 320})
    assert set(judge(run_of([swallowed]))) == {"errors_surface"}


def test_a_call_that_overruns_its_own_timeout_fails():
    ok = end(0, "poll", "evaluator", args={"timeout": 3.0}, result={"ready": False},
             duration=3.01)
    late = end(0, "poll", "evaluator", args={"timeout": 0.5}, result={"ready": True},
               duration=2.5)
    assert "calls_within_timeout" not in judge(run_of([ok]))
    assert judge(run_of([late]))["calls_within_timeout"] == [
        "op 0 (poll evaluator) took 2.50s; its timeout is 0.5s"]


def _weights_run(sent_to_actor_1, refused=False, features=None):
    """A sync collector built with the policy module (action 0), sent the
    weights of action 1 (to every actor), then iterated: actor 1's rows show
    ``sent_to_actor_1``. ``refused``: a list form was refused in between."""
    read = {"batches": 1, "read_actions": True}
    sync = {"sync": True, "policy": "module"}
    refusal = [end(3, "weights", "collector", status="raised",
                   args={"form": "list", "fail": "invalid:weights"},
                   error=err("builtins.TypeError", "weights must be an nn.Module"))] \
        if refused else []
    return run_of([
        end(0, "construct", "collector", args=sync),
        end(1, "iterate", "collector", args=read, result={"actions": [[[0], [0]]]}),
        end(2, "weights", "collector", args={"form": "dict", "action": 1}), *refusal,
        end(3 + len(refusal), "iterate", "collector", args=read,
            result={"actions": [[[1], sent_to_actor_1]]}),
    ], features=features)


def test_weights_that_do_not_reach_every_actor_fail():
    assert "weights_take_effect" not in judge(_weights_run([1]))
    assert judge(_weights_run([0, 1]))["weights_take_effect"] == [
        "op 3 (iterate collector) batch 0, actor 1: actions "
        "[0, 1], expected only 1, the action of the weights it was sent last"]
    # a refused form changes nothing: the weights sent before still hold
    assert "weights_take_effect" not in judge(_weights_run([1], refused=True))
    assert "weights_take_effect" in judge(_weights_run([0], refused=True))
    # without the feature the collector runs the adapter's own policy: not judged
    assert "weights_take_effect" not in judge(_weights_run([0], features=frozenset({"sync"})))


def _read_actions(i, actions):
    return end(i, "iterate", "collector", args={"batches": 1, "read_actions": True},
               result={"actions": actions})


def test_a_collector_not_built_with_the_policy_module_says_so():
    """Before any weights are sent, a random policy (an adapter whose
    make_collector ignores Spec.policy) is named as what was expected."""
    run = run_of([end(0, "construct", "collector", args={"sync": True, "policy": "module"}),
                  _read_actions(1, [[[0, 1], [0]]])])
    assert judge(run)["weights_take_effect"] == [
        "op 1 (iterate collector) batch 0, actor 0: actions [0, 1], expected only 0, the "
        "action of the policy it was built with (policy=module)"]


def test_a_batch_not_of_one_row_per_actor_is_judged_only_where_every_actor_acts_alike():
    """A sync batch concatenated over the actors (one row) is no false alarm:
    with the same weights everywhere its row is judged; once the actors hold
    different ones, which one acted how is unknown, not a failure."""
    built = end(0, "construct", "collector", args={"sync": True, "policy": "module"})
    to_one = end(2, "weights", "collector", args={"form": "dict", "action": 1, "workers": 1})
    assert "weights_take_effect" not in judge(run_of([built, _read_actions(1, [[[0]]])]))
    assert judge(run_of([built, _read_actions(1, [[[0, 1]]])]))["weights_take_effect"] == [
        "op 1 (iterate collector) batch 0, row 0 of 1: actions [0, 1], expected only 0, the "
        "action of the policy it was built with (policy=module)"]
    run = run_of([built, _read_actions(1, [[[0]]]), to_one, _read_actions(3, [[[0, 1]]])])
    assert "weights_take_effect" not in judge(run)
    assert unknown(run)["weights_take_effect"] == [
        "op 3 (iterate collector): batch 0 has 1 row of actions for 2 actors (a sync batch "
        "of one row per actor is read): the actors hold different weights, and which one "
        "acted how is unknown"]
    # an iterate that recorded no actions at all is unknown, never a pass
    run = run_of([built, end(1, "iterate", "collector", args={"read_actions": True})])
    assert unknown(run)["weights_take_effect"] == [
        "op 1 (iterate collector): no actions were recorded: which weights collected its "
        "batches is unknown"]


def test_expected_failure_that_does_not_raise_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"})
    assert "fails_clearly" in judge(run_of([r]))


def test_failed_construction_that_leaves_an_actor_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised",
            error=err("builtins.ValueError", "unknown env RlcNoSuchEnv-v0"),
            probe={"job_actors": {"actors": {"x1": {"state": "ALIVE"}}, "source": "gcs"}})
    assert judge(run_of([r]))["fails_clearly"] == ["op 0 (construct collector) left actors behind: ['x1']"]


@pytest.mark.parametrize("error, clear", [
    (("impl.errors.ActorNotReadyError", "RayCollector: collector actor 0 (env 'RlcNoSuchEnv-v0') "
      "failed to start: gymnasium.error.NameNotFound: Environment `RlcNoSuchEnv` doesn't exist."), True),
    (("gymnasium.error.NameNotFound", "Environment `RlcNoSuchEnv` doesn't exist."), True),
    (("myfork.EnvError", "unknown env id RlcNoSuchEnv-v0"), True),
    # the reference's _cause mutated to the type's name, or to a traceback's first line
    (("impl.errors.ActorNotReadyError", "RayCollector: collector actor 0 (env 'RlcNoSuchEnv-v0') "
      "failed to start: RayTaskError"), False),
    (("impl.errors.ActorNotReadyError", "RayCollector: collector actor 0 (env 'RlcNoSuchEnv-v0') "
      "failed to start: ray::CollectorActor.__init__() (pid=4242, ip=127.0.0.1)"), False),
    # ... or to a traceback's source line (measured: _cause's text[-2])
    (("impl.errors.ActorNotReadyError", "RayCollector: collector actor 1 (env 'RlcNoSuchEnv-v0') "
      "failed to start:     raise error.NameNotFound("), False),
    (("gymnasium.error.NameNotFound", "`RlcNoSuchEnv`"), True),
    (("ray.exceptions.ActorDiedError", "The actor died unexpectedly before finishing this task."), False),
    (("gym.error.UnregisteredEnv", "No registered env with id: RlcNoSuchEnv-v0"), True),
    (("myfork.EnvError", "could not find env RlcNoSuchEnv-v0 in the registry"), True),
    # words on another line than the name: not said of the env
    (("myfork.BuildError", "collector for 'RlcNoSuchEnv-v0' failed\nlibfoo.so: no such file"), False),
])
def test_a_constructor_failing_on_an_unknown_env_must_say_it_does_not_exist(error, clear):
    r = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised", error=err(*error),
            probe={"job_actors": {"actors": {}, "source": "gcs"}})
    found = judge(run_of([r])).get("fails_clearly", [])
    if clear:
        assert found == []
    else:
        assert found == [f"op 0 (construct collector) raised {error[0]} without saying that env "
                         f"'RlcNoSuchEnv-v0' does not exist (the cause the user must fix): {error[1]}"]


def test_a_long_message_is_read_whole_and_a_chained_cause_is_not():
    """torchrl 0.14.1 raises Ray's ActorDiedError, whose message quotes the
    creation task's traceback with gymnasium's line in its middle (past the
    2000 characters the history kept before): the history keeps it whole. A
    cause only chained to the error (``raise ... from``) is not in its message."""
    from conformance.ops.history import describe_error

    gym = "gymnasium.error.NameNotFound: Environment `RlcNoSuchEnv` doesn't exist."
    died = RuntimeError("The actor died unexpectedly before finishing this task.\n" + "  frame\n" * 700 + gym
                        + "\nDuring handling of the above exception, another exception occurred:\n"
                        + "  frame\n" * 200 + "AttributeError: 'Collector' object has no attribute 'total_frames'")
    def judged(error):
        r = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised", error=error,
                probe={"job_actors": {"actors": {}, "source": "gcs"}})
        return judge(run_of([r]))

    error = describe_error(died)
    assert error["message"] == str(died)
    assert "fails_clearly" not in judged(error)
    cause = LookupError("Environment `RlcNoSuchEnv` doesn't exist.")
    wrapped = RuntimeError("building the collector failed")
    wrapped.__cause__ = cause  # raise ... from cause
    error = describe_error(wrapped)
    assert error["causes"][0]["type"] == "builtins.LookupError"
    assert judged(error)["fails_clearly"] == [
        "op 0 (construct collector) raised builtins.RuntimeError without saying that env "
        "'RlcNoSuchEnv-v0' does not exist (the cause the user must fix): building the collector failed"]


def test_signal_is_a_crash_and_check_failed_is_evidence():
    run = run_of([], signal=6, stderr="[C] actor_manager.cc:55: Check failed: it != end\n")
    verdict, violations, _ = decide(run)
    assert verdict == "crash"
    assert any("Check failed" in v for v in violations["no_crash"])


def test_watchdog_timeout_is_a_hang():
    begin = {"phase": "begin", "i": 0, "op": Op("teardown", "evaluator").to_dict(), "deadline": 30}
    run = run_of([begin], stderr="Timeout (0:00:30)!\nThread 0x1 (most recent call first):\n",
                 exit_code=1, complete=False)
    assert decide(run)[0] == "hang"


def test_interpreter_exit_that_never_finishes_is_a_hang():
    run = run_of([], exit_code=1, stderr="Timeout (0:00:15)!\nThread 0x1 (most recent call first):\n")
    verdict, violations, _ = decide(run)
    assert verdict == "hang"
    assert violations["no_hang"] == ["the interpreter exit did not finish within 15.0s"]


def test_leftover_process_and_thread_fail():
    final = {**FINAL, "threads": [{"name": "collector-bg", "module": "impl.collector"}]}
    recs = [end(0, "construct", "buffer"),
            end(1, "teardown", "buffer", result={"calls": []}), final]
    violations = judge(run_of(recs, leftover=[{"pid": 1, "name": "raylet"}]))
    assert "no_leftover_thread" in violations and "no_leftover_process" in violations


def test_stderr_traceback_from_driver_but_not_from_workers():
    worker = "(RayCollector pid=12) Traceback (most recent call last):\n"
    driver = "Exception ignored in: <function X.__del__>\n"
    assert "clean_stderr" not in judge(run_of([], stderr=worker))
    assert "clean_stderr" in judge(run_of([], stderr=driver))


def test_buffer_losing_frames_fails():
    recs = [end(0, "wait_frames", "buffer", result={"frames": 64}),
            end(1, "check_data", "buffer", result={"frames": 63, "at_least": 1})]
    assert judge(run_of(recs))["data_kept"] == [
        "op 1 (check_data buffer): buffer holds 63 frames; it held 64 at op 0 (wait_frames buffer)"]


def test_collector_alive_after_exhaustion_fails():
    r = end(0, "exhaust", "collector", probe=actors(collector="ALIVE"))
    assert "exhaustion_auto_shutdown" in judge(run_of([r]))


def test_name_still_registered_after_owner_teardown_fails():
    recs = [end(0, "construct", "evaluator", args={"named": True}),
            end(1, "teardown", "evaluator", result={"calls": []}),
            end(2, "check_name", result={"found": True})]
    assert "name_freed" in judge(run_of(recs))


PEER_OPS = [Op("construct", "evaluator", {"connect": True, "named": True}),
            Op("teardown", "evaluator")]


def peer_result(*records, exit_code=0, stderr="", complete=True, corrupt=()):
    """A ``peer`` op's result: the second driver's whole history (setup, the
    records given, and if ``complete`` its final probe and exit record)."""
    recs = [{"phase": "setup", "ray": RAY, "owner": "user", "runtime_watch": WATCH}, *records]
    if complete:
        recs += [dict(FINAL), {"phase": "exiting", "bound": 15.0}]
    return {"exit_code": exit_code, "timed_out": False, "stderr": stderr,
            "history": {"records": recs, "corrupt": list(corrupt), "torn": False,
                        "missing": False}}


def peer_run(*records, **kw):
    ops = [Op("construct", "evaluator", {"named": True}),
           Op("peer", None, {"ops": [o.to_dict() for o in PEER_OPS]})]
    recs = [end(0, "construct", "evaluator", args={"named": True},
                probe=actors(evaluator="ALIVE")),
            end(1, "peer", args={"ops": [o.to_dict() for o in PEER_OPS]},
                result=peer_result(*records, **kw))]
    assert [Op.from_dict(r["op"]) for r in recs] == ops
    return run_of(recs)


PEER_BUILT = end(0, "construct", "evaluator", args={"connect": True, "named": True},
                 probe=actors(evaluator="ALIVE"))


def peer_teardown(duration=0.1, status="ok", error=None, probe=None):
    call = {"status": status, "error": error, "duration": duration}
    return end(1, "teardown", "evaluator", status=status, error=error,
               result={"calls": [call]}, probe=probe or actors(evaluator="ALIVE"))


def test_a_clean_second_driver_passes():
    assert decide(peer_run(PEER_BUILT, peer_teardown()))[0] == "pass"


def test_the_second_driver_is_judged_by_the_same_oracles_as_the_first():
    """A 30 s teardown, a teardown that raises, one that ends the owner's
    actor, a Ray restart and a traceback on stderr, each in the second
    driver: each fails the oracle that judges it in the main driver."""
    slow = peer_run(PEER_BUILT, peer_teardown(duration=30.0))
    assert judge(slow) == {"teardown_within_bound": [
        "op 1 (peer): second driver: op 1 (teardown evaluator) took 30.00s (bound 10.0s)"]}
    assert decide(slow)[0] == "fail"
    raising = judge(peer_run(PEER_BUILT, peer_teardown(status="raised", error=err())))
    assert raising["teardown_never_raises"] == [
        "op 1 (peer): second driver: op 1 (teardown evaluator) raised builtins.RuntimeError: boom"]
    killing = judge(peer_run(PEER_BUILT, peer_teardown(probe=actors(evaluator="DEAD"))))
    assert killing["own_actors_dead_after_teardown"] == [
        "op 1 (peer): second driver: op 1 (teardown evaluator): a non-owning handle's "
        "teardown ended the owner's actor evaluato (DEAD)"]
    restarted = peer_teardown()
    restarted["probe"]["ray"] = "127.0.0.1:1/session_b/02000000"
    assert "no_ray_restart" in judge(peer_run(PEER_BUILT, restarted))
    noisy = peer_run(PEER_BUILT, peer_teardown(),
                     stderr="Traceback (most recent call last):\n  File x\nValueError: y\n")
    assert judge(noisy) == {"clean_stderr": [
        "op 1 (peer): second driver: stderr: Traceback (most recent call last):"]}


def test_a_second_driver_that_crashed_is_a_crash():
    crashed = peer_run(PEER_BUILT, {"phase": "begin", "i": 1, "deadline": 30,
                                    "op": Op("teardown", "evaluator").to_dict()},
                       exit_code=-11, complete=False)
    verdict, violations, _ = decide(crashed)
    assert verdict == "crash"
    assert violations["no_crash"] == [
        "op 1 (peer): second driver: driver killed by signal 11 in op 1 (teardown evaluator), "
        "op 2 of 2"]


def test_a_second_driver_that_could_not_build_fails_peer_ok():
    failed = end(0, "construct", "evaluator", args={"connect": True, "named": True},
                 status="raised", error=err("builtins.ValueError", "no such actor"))
    skipped = end(1, "teardown", "evaluator", status="skipped", result={"reason": "never built"})
    assert judge(peer_run(failed, skipped)) == {"peer_ok": [
        "op 1 (peer): the second driver's op 0 (construct evaluator) raised "
        "builtins.ValueError: no such actor"]}


def test_a_second_driver_the_harness_could_not_observe_is_an_error():
    torn = peer_run(PEER_BUILT, peer_teardown(), corrupt=[(3, "{not json")])
    verdict, _, unknown_ = decide(torn)
    assert verdict == "error"
    assert unknown_["peer_ok"] == [
        "op 1 (peer): the second driver's history line 3 is not a JSON record: '{not json'"]
    cut = peer_run(PEER_BUILT, complete=False)  # exit 0 after its first op's probe
    verdict, _, unknown_ = decide(cut)
    assert verdict == "error"
    assert unknown_["peer_ok"][0].startswith(
        "op 1 (peer): the second driver stopped in the harness, after op 0 of 2, in the "
        "harness's code; its history lacks the end records of ops 1 (of 2)")


def test_actor_left_alive_after_all_teardowns_fails():
    final = {**FINAL, "job_actors": {"actors": {"z9": {"state": "ALIVE"}}, "source": "gcs"}}
    recs = [end(0, "construct", "buffer"), end(1, "teardown", "buffer", result={"calls": []}),
            final]
    assert "no_leftover_actor" in judge(run_of(recs))
    assert "no_leftover_actor" in judge(run_of(recs, owner="impl"))  # both owners


def test_driver_killed_at_its_deadline_is_a_hang():
    begin = {"phase": "begin", "i": 0, "op": Op("iterate", "collector").to_dict(), "deadline": 90}
    run = run_of([begin], hung=True, exit_code=None, signal=9, complete=False)
    assert decide(run)[0] == "hang"
    assert "no_hang" in judge(run)


def test_every_oracle_has_a_failing_case_here():
    import sys

    source = open(sys.modules[__name__].__file__).read()
    assert [name for name in ORACLES if f'"{name}"' not in source] == []


#: every convention declared (conformance.judge.conventions), as the reference does
ALL = ReferenceAdapter.features


def iterated(result, args=None):
    return [end(0, "construct", "collector", args={"sync": False}),
            end(1, "iterate", "collector", args={"batches": 2, **(args or {})}, result=result)]


def test_a_batch_that_breaks_torchrls_layout_fails():
    bad = {"batches": 2, "frames": 128, "sizes": [64, 64], "steps": [
        {"batch": 1, "rows": 64, "faults": []},
        {"batch": 2, "rows": 64, "faults": ["done is not terminated | truncated: 3 of 64 rows"]}]}
    declared = run_of(iterated(bad), features=ALL)
    assert judge(declared)["batches_hold_steps"] == [
        "op 1 (iterate collector): batch 2 of 64 rows: done is not terminated | "
        "truncated: 3 of 64 rows"]
    empty = {**bad, "steps": [{"batch": 1, "rows": None, "faults": ["no next/done entry"]}]}
    assert judge(run_of(iterated(empty), features=ALL))["batches_hold_steps"] == [
        "op 1 (iterate collector): batch 1: no next/done entry"]
    unreadable = {**bad, "steps": [{"batch": 1, "unreadable": "TypeError: bfloat16"}]}
    assert unknown(run_of(iterated(unreadable), features=ALL))["batches_hold_steps"] == [
        "op 1 (iterate collector): batch 1 could not be read as env steps: TypeError: bfloat16"]


def test_every_batch_holds_frames_per_batch_and_the_last_of_a_budget_its_rest():
    doubled = {"batches": 2, "frames": 256, "sizes": [128, 128]}
    assert judge(run_of(iterated(doubled), features=ALL))["batch_sizes"] == [
        "op 1 (iterate collector): batch 1 holds 128 frames after 0; "
        "frames_per_batch is 64, total_frames 512",
        "op 1 (iterate collector): batch 2 holds 128 frames after 128; "
        "frames_per_batch is 64, total_frames 512"]
    # 100 frames in batches of 64: the second holds the 36 left; each build counts anew,
    # with its own total_frames
    rest = [end(0, "construct", "collector", args={"total_frames": 100}),
            end(1, "exhaust", "collector", result={"batches": 2, "frames": 100,
                                                   "sizes": [64, 36]},
                probe={"actors": {"collector": {}}}),
            end(2, "construct", "collector", args={"total_frames": 36}),  # built again: its own
            end(3, "iterate", "collector", args={"batches": 1},
                result={"batches": 1, "frames": 36, "sizes": [36]})]
    assert judge(run_of(rest, features=ALL)) == {}
    early = [end(0, "construct", "collector", args={"total_frames": 100}),
             end(1, "iterate", "collector", args={"batches": 1},
                 result={"batches": 1, "frames": 36, "sizes": [36]})]
    assert judge(run_of(early, features=ALL))["batch_sizes"] == [
        "op 1 (iterate collector): batch 1 holds 36 frames after 0; frames_per_batch is 64, "
        "total_frames 100"]
    # an actor killed meanwhile may cut a batch short: errors_surface judges that op
    killed = iterated({"batches": 2, "frames": 96, "sizes": [64, 32]}, args={"may_fail": True})
    assert judge(run_of(killed, features=ALL)) == {}


def test_a_batch_that_does_not_say_its_frames_is_unknown_but_in_buffer_mode():
    silent = {"batches": 1, "frames": None, "sizes": [None]}
    assert unknown(run_of(iterated(silent), features=ALL))["batch_sizes"] == [
        "op 1 (iterate collector): batch 1 does not say its frames (a TensorDict's numel, "
        "RLlib's episode chunks: verbs.frames_of)"]
    buffered = [end(0, "construct", "collector", args={"buffer": True}),
                end(1, "iterate", "collector", args={"batches": 1}, result=silent)]
    assert unknown(run_of(buffered, features=ALL)) == {}
    assert judge(run_of(buffered, features=ALL)) == {}


def _polled(episode, never_terminates=False, limit=500):
    return [end(0, "construct", "evaluator"), end(1, "submit", "evaluator"),
            end(2, "poll", "evaluator", args={"timeout": 30},
                result={"ready": True, "episode": episode, "episode_limit": limit,
                        "never_terminates": never_terminates})]


@pytest.mark.parametrize("episode, never, why", [
    ({"steps": 11, "return": 12.0}, False,
     "11 steps and a return of 12.0; every catalog env pays 1.0 a step, so the return is the "
     "steps"),
    ({"steps": 51, "return": 51.0}, False, "51 steps and a return of 51.0; it was asked for 1 "
                                           "to 50 whole steps"),
    ({"steps": 0, "return": 0.0}, False, "0 steps and a return of 0.0; it was asked for 1 to "
                                         "50 whole steps"),
    ({"steps": 48, "return": 48.0}, True, "48 steps and a return of 48.0; its env never "
                                          "terminates, so the episode runs the 50 steps asked "
                                          "for"),
    ({"steps": 10.5, "return": 10.5}, False, "10.5 steps and a return of 10.5; it was asked for "
                                             "1 to 50 whole steps"),
])
def test_an_evaluation_that_is_not_one_episode_of_its_env_fails(episode, never, why):
    run = run_of(_polled(episode, never_terminates=never), features=ALL)
    assert judge(run)["eval_episode_consistent"] == [
        f"op 2 (poll evaluator): the evaluation reports {why}"]


def test_one_episode_of_its_env_passes_and_an_unreadable_result_is_unknown():
    assert judge(run_of(_polled({"steps": 11, "return": 11.0}), features=ALL)) == {}
    assert judge(run_of(_polled({"steps": 50, "return": 50.0}, never_terminates=True),
                        features=ALL)) == {}
    # an env that never terminates is still truncated by its TimeLimit
    assert judge(run_of(_polled({"steps": 500, "return": 500.0}, never_terminates=True),
                        spec={"eval_max_steps": 600}, features=ALL)) == {}
    assert judge(run_of(_polled({"steps": 499, "return": 499.0}, never_terminates=True),
                        spec={"eval_max_steps": 600}, features=ALL))["eval_episode_consistent"] == [
        "op 2 (poll evaluator): the evaluation reports 499 steps and a return of 499.0; its env "
        "never terminates, so the episode runs the 500 steps of its TimeLimit"]
    unreadable = run_of(_polled({"unreadable": "Adapter.episode() cannot read a list: [1]"}),
                        features=ALL)
    assert unknown(unreadable)["eval_episode_consistent"] == [
        "op 2 (poll evaluator): the evaluation's result could not be read as an "
        "episode: Adapter.episode() cannot read a list: [1]"]


# -- every op is judged ------------------------------------------------------------

def test_an_implementation_call_that_raises_unexpectedly_fails():
    r = end(0, "iterate", "collector", status="raised", error=err(), args={"batches": 1})
    verdict, violations, _ = decide(run_of([r]))
    assert verdict == "fail"
    assert violations["calls_succeed"] == ["op 0 (iterate collector) raised builtins.RuntimeError: boom"]
    expected = end(0, "start", "collector", status="raised", error=err("builtins.ValueError"),
                   args={"fail": "no_buffer"})
    assert "calls_succeed" not in judge(run_of([expected]))  # the scenario expects it


def test_a_fault_the_harness_could_not_inject_is_an_error_not_a_pass():
    r = end(0, "kill", "collector", status="raised", args={"how": "sigkill"},
            error=err("conformance.ops.verbs.HarnessError", "pid 0 refused"))
    verdict, violations, unknown_ = decide(run_of([r]))
    assert verdict == "error" and violations == {}
    assert unknown_["harness_steps_succeed"] == [
        "op 0 (kill collector): the harness could not do it: conformance.ops.verbs.HarnessError: pid 0 refused"]


def test_a_harness_error_in_an_implementation_verb_is_an_error_not_a_fail():
    """An ``impl`` verb that raises the harness's HarnessError (a construct
    whose node's CPUs the harness could not read, ``Context.node_cpus``) did
    not observe the scenario as written: ``error``, and no ``calls_succeed``
    violation; another raise of the same verb stays the implementation's."""
    harness = end(0, "iterate", "collector", status="raised", args={"batches": 1},
                  error=err("conformance.ops.verbs.HarnessError", "CPUs unknown"))
    verdict, violations, unknown_ = decide(run_of([harness]))
    assert verdict == "error" and violations == {}
    assert unknown_["harness_steps_succeed"] == [
        "op 0 (iterate collector): the harness could not do it: "
        "conformance.ops.verbs.HarnessError: CPUs unknown"]
    raised = end(0, "iterate", "collector", status="raised", args={"batches": 1}, error=err())
    verdict, violations, _ = decide(run_of([raised]))
    assert verdict == "fail"
    assert violations["calls_succeed"] == ["op 0 (iterate collector) raised builtins.RuntimeError: boom"]


def test_a_collector_that_stops_early_fails_batch_counts():
    short = end(0, "iterate", "collector", args={"batches": 2}, result={"batches": 1, "frames": 64})
    assert "batch_counts" in judge(run_of([short]))
    exhausted = end(0, "exhaust", "collector", result={"batches": 7, "frames": 448},
                    probe=actors(collector="DEAD"))
    assert judge(run_of([exhausted]))["batch_counts"] == [
        "op 0 (exhaust collector): 7 batches until total_frames=512; 8 expected (frames_per_batch=64)",
        "op 0 (exhaust collector): 448 frames collected; total_frames is 512"]


def test_a_buffer_holding_more_than_its_collectors_budget_fails_batch_counts():
    def read(frames):
        return end(1, "check_data", "buffer", args={"at_least": 512, "at_most": 512},
                   result={"frames": frames, "at_least": 512})

    exhausted = end(0, "exhaust", "collector", result={"batches": 8, "frames": 512},
                    probe=actors(collector="DEAD"))
    assert "batch_counts" not in judge(run_of([exhausted, read(512)]))
    assert judge(run_of([exhausted, read(576)]))["batch_counts"] == [
        "op 1 (check_data buffer): the buffer holds 576 frames; the collector's budget "
        "(total_frames) is 512"]
    without = ReferenceAdapter.features - {"writes_within_budget"}
    assert "batch_counts" not in judge(run_of([exhausted, read(576)], features=without))


def test_a_thread_still_running_right_after_its_components_teardown_fails():
    thread = {"key": "T7", "name": "RayCollector", "module": "impl.component"}
    recs = [end(0, "construct", "collector"),
            end(1, "start", "collector", probe={"threads": [thread]}),
            end(2, "teardown", "collector", result={"calls": []}, probe={"threads": [thread]})]
    assert judge(run_of(recs))["threads_joined"] == [
        "op 2 (teardown collector): thread RayCollector (impl.component) of the collector still "
        "running right after its teardown returned"]


def test_the_thread_that_started_ray_is_the_runtimes_not_the_components():
    """built_in_thread: Ray started from a thread that ends is kept alive by a
    thread of the implementation's, the one that called ray.init (the runtime
    watch records it); the component's teardown need not join it (the runtime
    outlives it). Any other thread the build started is the component's."""
    keeper = {"key": "T3", "name": "impl-ray-keeper", "module": "impl.runtime"}
    sampler = {"key": "T4", "name": "buffer-sampler", "module": "impl.replay_buffer"}
    init = runtime(0, "ray.init", None, RAY, thread="impl-ray-keeper", key="T3")
    recs = [init, end(0, "construct", "buffer", probe={"ray": RAY, "threads": [keeper]}),
            end(1, "teardown", "buffer", result={"calls": []}, probe={"ray": RAY, "threads": [keeper]})]
    assert "threads_joined" not in judge(run_of(recs, owner="impl", ray_at_setup=None))
    # without the runtime watch's record of who started Ray, that thread is the buffer's
    assert judge(run_of(recs[1:]))["threads_joined"] == [
        "op 1 (teardown buffer): thread impl-ray-keeper (impl.runtime) of the buffer still "
        "running right after its teardown returned"]
    # another thread first seen after that build is the buffer's, whoever started Ray
    both = [init, end(0, "construct", "buffer", probe={"ray": RAY, "threads": [keeper, sampler]}),
            end(1, "teardown", "buffer", result={"calls": []},
                probe={"ray": RAY, "threads": [keeper, sampler]})]
    assert judge(run_of([*both, {**FINAL, "threads": [keeper, sampler]}], owner="impl",
                        ray_at_setup=None))["threads_joined"] == [
        "op 1 (teardown buffer): thread buffer-sampler (impl.replay_buffer) of the buffer still "
        "running right after its teardown returned"]
    # at the end the keeper may run as long as its runtime does, no longer
    kept = {**FINAL, "threads": [keeper]}
    assert "no_leftover_thread" not in judge(run_of([*recs, kept], owner="impl", ray_at_setup=None))
    ended = {**FINAL, "ray": None, "threads": [keeper]}
    assert judge(run_of([*recs, ended], owner="impl", ray_at_setup=None))["no_leftover_thread"] == [
        "thread impl-ray-keeper (impl.runtime) still running after teardown"]


# -- probes fail closed -------------------------------------------------------------

def test_an_actor_state_the_gcs_did_not_give_is_unknown_and_an_error():
    r = end(0, "teardown", "buffer", result={"calls": []},
            probe={"actors": {"buffer": {"b1": {"state": "unknown", "error": "GCS down"}}}})
    verdict, violations, unknown_ = decide(run_of([r]))
    assert verdict == "error" and "own_actors_dead_after_teardown" not in violations
    assert unknown_["own_actors_dead_after_teardown"] == [
        "op 0 (teardown buffer): state of buffer actor b1 unknown (GCS down)"]


def test_a_probe_that_raised_makes_its_rules_unknown():
    r = end(0, "exhaust", "collector", result={"batches": 8, "frames": 512})
    r["probe"] = {"error": err("fixtures.gcs.GcsUnreachable", "no answer")}
    verdict, _, unknown_ = decide(run_of([r]))
    assert verdict == "error"
    assert "the probe after op 0 (exhaust collector) raised fixtures.gcs.GcsUnreachable" in \
        unknown_["exhaustion_auto_shutdown"][0]


def test_an_unknown_job_actor_list_is_not_a_clean_one():
    final = {**FINAL, "job_actors": {"unknown": "GCS query for the job's actors failed: x"}}
    recs = [end(0, "construct", "buffer"), end(1, "teardown", "buffer", result={"calls": []}),
            final]
    assert unknown(run_of(recs))["no_leftover_actor"] == [
        "final probe: GCS query for the job's actors failed: x"]
    failed = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised",
                 error=err("builtins.ValueError", "unknown env RlcNoSuchEnv-v0"),
                 probe={"job_actors": {"unknown": "no answer"}})
    assert decide(run_of([failed]))[0] == "error"


def test_an_oracle_that_raises_is_unknown_not_a_pass(monkeypatch):
    import conformance.judge.oracles as oracles

    def broken(run):
        raise KeyError("x")

    monkeypatch.setitem(oracles.ORACLES, "data_kept", broken)
    run = run_of([end(0, "construct", "buffer")])
    assert decide(run)[0] == "error"
    assert unknown(run)["data_kept"] == ["the oracle raised KeyError: 'x'"]


# -- complete histories only ----------------------------------------------------------

def begin(i, verb, target=None, **args):
    return {"phase": "begin", "i": i, "op": Op(verb, target, args).to_dict(), "deadline": 90}


def test_exit_0_inside_an_op_is_a_crash_naming_where():
    recs = [end(0, "construct", "collector"), begin(1, "iterate", "collector"),
            ]
    run = run_of(recs, complete=False)
    run.scenario = scenario(Op("construct", "collector"), Op("iterate", "collector"),
                            Op("teardown", "collector"))
    verdict, violations, _ = decide(run)
    assert verdict == "crash"
    assert violations["no_crash"] == [
        "driver exited 0 in op 1 (iterate collector), op 2 of 3: the scenario stopped there"]


def test_exit_0_in_the_harness_is_an_error_not_a_pass():
    run = run_of([end(0, "construct", "buffer")], complete=False)
    verdict, violations, unknown_ = decide(run)
    assert verdict == "error" and violations == {}
    assert unknown_["harness"] == [
        "the driver exited 0 in the harness's final probe, outside the implementation's ops; "
        "the history lacks the final probe; the exit record"]


def test_a_probe_that_hangs_is_the_harness_s_error_not_a_hang():
    r = end(0, "teardown", "buffer", result={"calls": []})
    del r["probe"]  # the watchdog fired in the probe: its record was never written
    run = run_of([r], complete=False, exit_code=1,
                 stderr="Timeout (0:01:00)!\nThread 0x1 (most recent call first):\n")
    verdict, violations, unknown_ = decide(run)
    assert verdict == "error" and "no_hang" not in violations
    assert unknown_["harness"][0].startswith(
        "the driver passed a deadline in the harness's probe after op 0 of 1")


def test_a_corrupt_history_line_is_an_error_with_its_line_number():
    run = run_of([end(0, "construct", "buffer")], corrupt=[(3, '{"phase": "end", "i": 1')])
    verdict, _, unknown_ = decide(run)
    assert verdict == "error"
    assert unknown_["harness"] == ["history line 3 is not a JSON record: '{\"phase\": \"end\", \"i\": 1'"]


# -- one runtime identity -----------------------------------------------------------------

def test_a_constructor_that_restarts_or_shuts_down_a_running_ray_fails():
    new = "127.0.0.1:1/session_a/02000000"  # same session, a new job: a reconnect
    restart = end(0, "construct", "buffer", probe={"ray": new})
    assert judge(run_of([restart, {**FINAL, "ray": new}]))["no_ray_restart"] == [
        "op 0 (construct buffer) restarted Ray (127.0.0.1:1/session_a/02000000)"]
    stop = end(0, "construct", "buffer", probe={"ray": None})
    assert "ray_not_shut_down_by_non_owner" in judge(run_of([stop]))
    r = run_of([end(0, "construct", "buffer")], owner="impl")
    r.history.setup["ray"] = None  # the implementation starts Ray: allowed
    assert "no_ray_restart" not in judge(r)


def test_a_zombie_actor_is_a_leftover_process():
    recs = [end(0, "construct", "collector", result={"actors": [{"id": "c1"}]}),
            {**FINAL, "zombie_pids": {"c1": 4242}}]
    assert judge(run_of(recs))["no_leftover_process"] == [
        "collector actor c1: Ray reports it DEAD, its worker process (pid 4242) is still running"]


def test_a_failure_that_takes_too_long_fails_clearly():
    slow = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised",
               error=err("builtins.ValueError", "unknown env RlcNoSuchEnv-v0"), duration=30.0,
               probe={"job_actors": {"actors": {}, "source": "gcs"}})
    assert judge(run_of([slow]))["fails_clearly"] == [
        "op 0 (construct collector) took 30.00s to fail (bound 10.25s)"]


def test_the_user_s_restart_is_allowed_and_its_runtime_is_the_user_s_for_either_owner():
    new = "127.0.0.1:3/session_c/01000000"
    restart = end(0, "ray_restart", probe={"ray": new})
    ok = end(1, "teardown", "buffer", result={"calls": []}, probe={"ray": new})
    stopped = end(1, "teardown", "collector", args={"shutdown_ray": True},
                  result={"calls": []}, probe={"ray": None})
    for owner in ("user", "impl"):
        assert judge(run_of([restart, ok, {**FINAL, "ray": new}], owner=owner)) == {}
        assert judge(run_of([restart, stopped, {**FINAL, "ray": None}], owner=owner)) == {
            "ray_not_shut_down_by_non_owner": [
                "op 1 (teardown collector) shut down the user's Ray runtime"]}
    # a teardown that starts yet another runtime after the restart is still caught
    other = "127.0.0.1:4/session_d/01000000"
    again = end(1, "teardown", "buffer", result={"calls": []}, probe={"ray": other})
    assert judge(run_of([restart, again, {**FINAL, "ray": other}]))["no_ray_restart"] == [
        "op 1 (teardown buffer) restarted Ray (127.0.0.1:4/session_d/01000000)"]


def test_a_constructor_allowed_to_fail_passes_built_or_failing_clearly_but_not_unclearly():
    built = end(0, "construct", "collector", args={"may_fail": True})
    assert decide(run_of([built]))[0] == "pass"
    clear = end(0, "construct", "collector", args={"may_fail": True}, status="raised",
                error=err("impl.errors.ReadinessTimeout", "2 of 2 actor(s) not ready after 30 s"),
                duration=31.0, probe={"job_actors": {"actors": {}, "source": "gcs"}})
    assert decide(run_of([clear]))[0] == "pass"  # not a setup-error: the scenario allows it
    unclear = end(0, "construct", "collector", args={"may_fail": True}, status="raised",
                  error=err("builtins.KeyError", "'num_gpus'"),
                  probe={"job_actors": {"actors": {"x1": {"state": "ALIVE"}}, "source": "gcs"}})
    verdict, violations, _ = decide(run_of([unclear]))
    assert verdict == "fail" and violations["fails_clearly"] == [
        "op 0 (construct collector) raised an unclear builtins.KeyError: 'num_gpus'",
        "op 0 (construct collector) left actors behind: ['x1']"]
    # code that cannot be loaded refused nothing, also where a refusal is expected
    for how in ({"may_fail": True}, {"fail": "invalid:frames_per_batch"}):
        broken = end(0, "construct", "collector", args=how, status="raised",
                     error=err("builtins.SyntaxError", "non-default argument follows default "
                                                       "argument (collector.py, line 66)"),
                     probe={"job_actors": {"actors": {}, "source": "gcs"}})
        verdict, violations, _ = decide(run_of([broken]))
        assert verdict == "fail" and violations["fails_clearly"] == [
            "op 0 (construct collector) raised builtins.SyntaxError: the implementation's code "
            "could not be loaded, which is no answer to what it was given: non-default "
            "argument follows default argument (collector.py, line 66)"], how


def test_an_actor_alive_after_a_connected_driver_exited_fails_and_an_unread_cluster_is_unknown():
    left = {"actors": {"e1": {"state": "ALIVE", "class_name": "EvalActor", "detached": True}},
            "killed": [4242]}
    run = run_of([end(0, "construct", "evaluator")], after_exit=left)
    assert judge(run)["no_actor_outlives_driver"] == [
        "EvalActor actor e1 (detached) still ALIVE after the driver exited"]
    unread = run_of([end(0, "construct", "evaluator")],
                    after_exit={"unknown": "GCS query after the driver's exit failed: x"})
    assert decide(unread)[0] == "error"
    assert unknown(unread)["no_actor_outlives_driver"] == [
        "after the exit: GCS query after the driver's exit failed: x"]
    assert decide(run_of([end(0, "construct", "evaluator")], after_exit={"actors": {}}))[0] == "pass"


def reading(ray=RAY, state="ALIVE", cpu=1.5, total=2.0, held=0.5):
    """A release reading (``Context.release_reading``): one collector actor on node n1."""
    return {"ray": ray, "actors": {"collector-a": {"state": state, "node_id": "n1",
                                                   "required_resources": {"CPU": held}}},
            "resources": {"n1": {"available": {"CPU": cpu}, "total": {"CPU": total}}}}


def teardown_with(before, at, settled="DEAD", i=1):
    return end(i, "teardown", "collector", result={"calls": []},
               probe={"before": before, "at_return": at, **actors(collector=settled)})


def test_actors_alive_when_the_teardown_returned_fail_even_if_dead_after_the_wait():
    built = end(0, "construct", "collector", probe=actors(collector="ALIVE"))
    late = teardown_with(reading(), reading(cpu=2.0))
    assert judge(run_of([built, late]))["own_actors_dead_after_teardown"] == [
        "op 1 (teardown collector): actor collecto still ALIVE when its teardown returned"]
    assert judge(run_of([built, teardown_with(reading(), reading(state="DEAD", cpu=2.0))])) == {}
    # begun on another runtime (the user restarted Ray): Ray ends them, judged after the wait
    other = "127.0.0.1:9/session_z/02000000"
    assert judge(run_of([built, teardown_with(reading(ray=other), reading(ray=other))])) == {}
    # an actor the harness killed is judged after the wait (a removed node's: the GCS lags)
    kill = end(1, "kill", "collector", result={"how": "sigkill",
                                               "actor": {"id": "collector-a"}})
    assert judge(run_of([built, kill, teardown_with(reading(), reading(cpu=2.0), i=2)])) == {}
    # a hung one lives on until its teardown ends it: judged at return
    hang = end(1, "kill", "collector", result={"how": "hang", "actor": {"id": "collector-a"}})
    assert "own_actors_dead_after_teardown" in judge(
        run_of([built, hang, teardown_with(reading(), reading(cpu=2.0), i=2)]))


def concurrent_teardown(*states, threads=(), i=1):
    """A teardown op of two concurrent calls, each with its reading at its
    return (``verbs.teardown``): the collector's actor in ``states[k]``."""
    calls = [{"status": "ok", "error": None, "duration": 0.05, "thread": f"rlc-teardown-{k}",
              "at_return": {"ray": RAY, "threads": list(threads),
                            "actors": {"collector-a": {"state": st, "node_id": "n1"}}}}
             for k, st in enumerate(states)]
    return end(i, "teardown", "collector", args={"concurrent": len(states)},
               result={"calls": calls},
               probe={"before": reading(), "at_return": reading(state="DEAD", cpu=2.0),
                      **actors(collector="DEAD")})


def test_a_concurrent_teardown_call_that_returns_before_the_actors_died_fails():
    built = end(0, "construct", "collector", probe=actors(collector="ALIVE"))
    early = concurrent_teardown("ALIVE", "DEAD")
    assert judge(run_of([built, early]))["own_actors_dead_after_teardown"] == [
        "op 1 (teardown collector): actor collecto still ALIVE when its call in "
        "rlc-teardown-0 returned (another thread's call was still tearing it down)"]
    assert judge(run_of([built, concurrent_teardown("DEAD", "DEAD")])) == {}
    # still ALIVE once both calls returned: the op's finding, not each call's again
    stuck = concurrent_teardown("ALIVE", "ALIVE")
    stuck["probe"]["at_return"] = reading(cpu=2.0)
    assert judge(run_of([built, stuck]))["own_actors_dead_after_teardown"] == [
        "op 1 (teardown collector): actor collecto still ALIVE when its teardown returned"]
    # a call whose reading failed cannot be judged: unknown, never a pass
    failed = concurrent_teardown("DEAD", "DEAD")
    failed["result"]["calls"][1]["at_return"] = {"error": err("builtins.TimeoutError", "GCS")}
    run = run_of([built, failed])
    assert decide(run)[0] == "error"
    assert unknown(run)["own_actors_dead_after_teardown"] == [
        "op 1 (teardown collector): the reading at the return of its call 1 (rlc-teardown-1) "
        "raised builtins.TimeoutError: GCS"]
    # nor can a concurrent call that returned without a reading
    missing = concurrent_teardown("DEAD", "DEAD")
    del missing["result"]["calls"][0]["at_return"]
    run = run_of([built, missing])
    assert decide(run)[0] == "error"
    assert unknown(run)["own_actors_dead_after_teardown"] == [
        "op 1 (teardown collector): its call 0 (rlc-teardown-0) returned with no reading at "
        "its return"]


def test_a_thread_still_running_when_one_concurrent_teardown_call_returned_fails():
    thread = {"key": "t1", "name": "collector-loop", "module": "impl.collector"}
    started = end(0, "start", "collector", probe={"threads": [thread]})
    early = concurrent_teardown("DEAD", "DEAD", threads=[thread])
    early["result"]["calls"][1]["at_return"]["threads"] = []
    assert judge(run_of([started, early]))["threads_joined"] == [
        "op 1 (teardown collector): thread collector-loop (impl.collector) of the collector "
        "still running when its call in rlc-teardown-0 returned (another thread's call was "
        "still tearing it down)"]


def test_resources_not_back_when_the_teardown_returned_fail():
    built = end(0, "construct", "collector", probe=actors(collector="ALIVE"))
    held = teardown_with(reading(), reading(state="DEAD"))
    assert judge(run_of([built, held]))["resources_released_at_teardown"] == [
        "op 1 (teardown collector): CPU 0.5 held by its actors on node n1 not back in "
        "ray.available_resources() when it returned: 1.5 available, 2 expected"]
    freed = teardown_with(reading(), reading(state="DEAD", cpu=2.0))
    assert judge(run_of([built, freed])) == {}
    # a view read before the teardown that did not show the actor's CPU taken yet
    # (it lags an actor's start): what was free then counts at most total - held
    stale = teardown_with(reading(cpu=2.0), reading(state="DEAD", cpu=1.5))
    assert "resources_released_at_teardown" in judge(run_of([built, stale]))
    # a node the harness removed: its view is stale, what it held is gone with it
    kill = end(1, "kill", "collector", result={"how": "remove_node",
                                               "actor": {"id": "x", "node_id": "n1"}})
    assert judge(run_of([built, kill, teardown_with(reading(), reading(state="DEAD"), i=2)])) \
        == {}
    # another job's actor that started on the node meanwhile took 0.25 CPU:
    # not the teardown's to give back; the same shortfall with nobody else
    # taking it there (or the others' query failing) stays a failure
    def others(reading_, **actors_):
        return {**reading_, "others": {"actors": {
            aid: {"node": node, "resources": need} for aid, (node, need) in actors_.items()}}}
    cpu = {"CPU": 0.25}
    before = others(reading(), old=("n1", cpu))
    shared = teardown_with(before, others(reading(state="DEAD", cpu=1.75),
                                          old=("n1", cpu), new=("n1", cpu)))
    assert judge(run_of([built, shared])) == {}
    elsewhere = teardown_with(before, others(reading(state="DEAD", cpu=1.75),
                                             old=("n1", cpu), new=("n2", cpu)))
    assert judge(run_of([built, elsewhere]))["resources_released_at_teardown"] == [
        "op 1 (teardown collector): CPU 0.5 held by its actors on node n1 not back in "
        "ray.available_resources() when it returned: 1.75 available, 2 expected"]
    unread = teardown_with(before, {**reading(state="DEAD", cpu=1.75), "others": {"error": "x"}})
    assert "resources_released_at_teardown" in judge(run_of([built, unread]))
    # one pending without a worker may hold a lease on any node that can host it,
    # pending before or not; one no node can host never does
    for was in ({}, {"new": ("*", cpu)}):
        pending = teardown_with(others(reading(), **was),
                                others(reading(state="DEAD", cpu=1.75), new=("*", cpu)))
        assert judge(run_of([built, pending])) == {}
    infeasible = teardown_with(others(reading()), others(
        reading(state="DEAD", cpu=1.75), new=("*", {"CPU": 0.25, "rlc_infeasible": 1.0})))
    assert "resources_released_at_teardown" in judge(run_of([built, infeasible]))
    # a reading that failed is unknown, never fine
    broken = teardown_with({"error": err("fixtures.gcs.GcsUnreachable", "x")},
                           reading(state="DEAD", cpu=2.0))
    assert unknown(run_of([built, broken]))["resources_released_at_teardown"] == [
        "op 1 (teardown collector): the reading before it raised fixtures.gcs.GcsUnreachable: x"]


def test_an_owned_runtime_asked_to_end_must_be_gone_after_its_last_holder():
    ops = [end(0, "construct", "buffer"), end(1, "construct", "collector"),
           end(2, "teardown", "collector", args={"shutdown_ray": True}, result={"calls": []})]
    why = ("op 3 (teardown buffer) released the last hold on the Ray runtime the "
           "implementation started, which op 2 (teardown collector) asked to end "
           "(shutdown_ray=True)")
    up = end(3, "teardown", "buffer", result={"calls": []})
    assert judge(run_of([*ops, up], owner="impl"))["owned_runtime_ended"] == [
        f"{why}, and Ray is still up ({RAY})"]
    left = {"identity": RAY, "processes_left": [{"pid": 4242, "name": "raylet"}],
            "job": {"id": "01000000", "dead": False,
                    "live_actors": {"b1": {"state": "ALIVE", "class_name": "X"}}}}
    gone = end(3, "teardown", "buffer", result={"calls": []},
               probe={"ray": None, "runtime_end": left})
    assert judge(run_of([*ops, gone, {**FINAL, "ray": None}], owner="impl"))[
        "owned_runtime_ended"] == [
        f"{why}: its process 4242 (raylet) still runs after it returned",
        f"{why}: its job 01000000 is not dead after it returned",
        f"{why}: its job's actor b1 (X) still ALIVE"]
    clean = end(3, "teardown", "buffer", result={"calls": []}, probe={
        "ray": None, "runtime_end": {"identity": RAY, "processes_left": []}})
    assert judge(run_of([*ops, clean, {**FINAL, "ray": None}], owner="impl")) == {}
    # the user's runtime is never the implementation's to end
    assert "owned_runtime_ended" not in judge(run_of([*ops, up], owner="user"))


def test_the_users_ray_shutdown_must_end_the_drivers_connection():
    """An implementation that wraps ray.shutdown (the reference does, to stop its
    threads first) and loses the call: Ray still up after it is user_shutdown_ends_ray's."""
    ops = [end(0, "construct", "buffer")]
    still_up = end(1, "ray_shutdown", result={})  # the probe after it: still connected
    assert judge(run_of([*ops, still_up, end(2, "teardown", "buffer")]))["user_shutdown_ends_ray"] == [
        f"op 1 (ray_shutdown): Ray is still initialized after the user's ray.shutdown() "
        f"returned, connected to the runtime it had ({RAY}): the call did not shut it down"]
    down = end(1, "ray_shutdown", result={}, probe={"ray": None})
    assert "user_shutdown_ends_ray" not in judge(run_of([*ops, down, end(2, "teardown", "buffer",
                                                                         probe={"ray": None})]))
    # shut down, then a thread of the implementation started another: no_ray_restart's
    other = "127.0.0.1:1/session_a/02000000"
    restarted = end(1, "ray_shutdown", result={}, probe={"ray": other})
    judged = judge(run_of([*ops, restarted, end(2, "teardown", "buffer", probe={"ray": other})]))
    assert "user_shutdown_ends_ray" not in judged and "no_ray_restart" in judged


def test_an_owned_runtime_no_teardown_asked_to_end_is_still_up_after_its_last_holder():
    ops = [end(0, "construct", "buffer"), end(1, "construct", "collector"),
           end(2, "teardown", "collector", result={"calls": []})]
    down = end(3, "teardown", "buffer", result={"calls": []}, probe={"ray": None})
    assert judge(run_of([*ops, down, {**FINAL, "ray": None}], owner="impl"))[
        "owned_runtime_kept"] == [
        "op 3 (teardown buffer) released the last hold on the Ray runtime the implementation "
        "started, and Ray is not initialized any more, though no teardown asked to end it "
        "(shutdown_ray=True)"]
    up = end(3, "teardown", "buffer", result={"calls": []})
    assert judge(run_of([*ops, up], owner="impl")) == {}
    # a holder left: not yet its runtime's last teardown
    assert "owned_runtime_kept" not in judge(run_of(
        [*ops, end(3, "construct", "evaluator"), {**down, "i": 4}], owner="impl"))
    # asked, by any teardown: owned_runtime_ended's, not this rule's
    asked = end(2, "teardown", "collector", args={"shutdown_ray": True}, result={"calls": []})
    assert "owned_runtime_kept" not in judge(run_of([*ops[:2], asked, down], owner="impl"))
    # the user's own ray.shutdown() ends it: not the implementation's doing
    user = end(2, "ray_shutdown", result={})
    assert "owned_runtime_kept" not in judge(run_of([*ops[:2], user, down], owner="impl"))
    # without the convention it is not checked
    assert "owned_runtime_kept" not in judge(run_of(
        [*ops, down, {**FINAL, "ray": None}], owner="impl", features=frozenset()))


# -- signals the harness sends the driver (interrupt) -------------------------------------

def sent(i, signal="SIGINT", ends=False):
    return {"phase": "signal", "i": i, "signal": signal, "after": 0.5, "ends_program": ends}


def interrupted(i, verb, target=None, status="interrupted", signal="SIGINT",
                raised="builtins.KeyboardInterrupt", **info):
    """The end record of an op the harness's signal was sent into."""
    r = end(i, verb, target, status=status,
            error=err(raised, "") if status in ("interrupted", "raised") else None)
    r["interrupt"] = {"signal": signal, "after": 0.5, "ends_program": False, "sent": True,
                      "in_op": True if signal == "SIGINT" else None,
                      "handler": "harness" if signal == "SIGINT" else None,
                      "returned_after": 0.2, **info}
    return r


def test_an_interrupt_that_comes_out_promptly_passes():
    run = run_of([sent(0), interrupted(0, "poll", "evaluator")])
    assert decide(run) == ("pass", {}, {})


def test_an_interrupt_swallowed_late_or_turned_into_another_error_fails():
    swallowed = interrupted(0, "poll", "evaluator", status="ok", returned_after=2.01)
    assert judge(run_of([sent(0), swallowed]))["interrupt_prompt"] == [
        "op 0 (poll evaluator): the SIGINT sent 0.5s into it raised KeyboardInterrupt inside "
        "it, and the op returned normally 2.01s after the signal: no KeyboardInterrupt came "
        "out (swallowed)"]
    # a SIGTERM whose handler (Ray's sys.exit) ran inside the op: the SystemExit swallowed
    term = interrupted(0, "teardown", "evaluator", status="ok", signal="SIGTERM", in_op=True,
                       returned_after=0.53)
    assert judge(run_of([sent(0, "SIGTERM"), term]))["interrupt_prompt"] == [
        "op 0 (teardown evaluator): the SIGTERM sent 0.5s into it raised SystemExit inside "
        "it, and the op returned normally 0.53s after the signal: no SystemExit came out "
        "(swallowed)"]
    # ... unless Python itself dropped it: the handler ran in a finalizer
    dropped = interrupted(0, "teardown", "evaluator", status="ok", signal="SIGTERM", in_op=True,
                          dropped="Exception ignored in: <function ActorHandle.__del__>")
    verdict, violations, unknown_ = decide(run_of([sent(0, "SIGTERM"), dropped]))
    assert verdict == "error" and violations == {}
    assert unknown_["interrupt_prompt"] == [
        "op 0 (teardown evaluator): the SIGTERM's handler ran inside it, in code where Python "
        "discards its SystemExit (Exception ignored in: <function ActorHandle.__del__>): not "
        "the implementation's doing"]
    late = interrupted(0, "iterate", "collector", returned_after=3.5)
    assert judge(run_of([sent(0), late]))["interrupt_prompt"] == [
        "op 0 (iterate collector): KeyboardInterrupt came out 3.50s after the SIGINT "
        "(bound 2.0s)"]
    other = interrupted(0, "teardown", "evaluator", status="raised",
                        raised="builtins.RuntimeError")
    verdict, violations, _ = decide(run_of([sent(0), other]))
    assert verdict == "fail" and violations["interrupt_prompt"] == [
        "op 0 (teardown evaluator): the SIGINT came out as builtins.RuntimeError:  (a user's "
        "`except KeyboardInterrupt` misses it)"]


def test_a_signal_that_did_not_land_inside_its_op_is_an_error_never_a_pass():
    cases = {
        "not sent": interrupted(0, "poll", "evaluator", status="ok", sent=False, in_op=None,
                                not_sent="op 0 (poll) returned 0.100s in, before the signal "
                                         "was due at 0.5s"),
        "after the op": interrupted(0, "poll", "evaluator", status="ok", in_op=False,
                                    handled_after=0.3),
        "never handled": interrupted(0, "poll", "evaluator", status="ok", in_op=None),
    }
    for why, r in cases.items():
        verdict, violations, unknown_ = decide(run_of([r]))
        assert verdict == "error" and violations == {}, why
        assert unknown_["interrupt_prompt"][0].endswith("the race did not happen"), why
    # what the run saw from that op on is not judged: it is not the scenario as written
    dead = end(1, "teardown", "evaluator", result={"calls": []}, probe=actors(evaluator="ALIVE"))
    verdict, violations, unknown_ = decide(run_of([cases["not sent"], dead]))
    assert verdict == "error" and violations == {}
    assert "own_actors_dead_after_teardown" in unknown_


def test_sigterm_ends_the_program_without_a_crash_unless_the_op_never_let_it_out():
    last = interrupted(0, "iterate", "collector", signal="SIGTERM", raised="builtins.SystemExit",
                       ends_program=True)
    ended = {"phase": "exiting", "bound": 15.0, "uncaught": "builtins.SystemExit",
             "skipped_probes_from": 0}
    del last["probe"]
    for how in ({"exit_code": 15}, {"exit_code": 1}, {"exit_code": None, "signal": 15},
                {"exit_code": None, "signal": 6}):
        run = run_of([sent(0, "SIGTERM", ends=True), last, ended], complete=False, **how)
        assert decide(run) == ("pass", {}, {}), how
    # Ray's abort 3 s after the signal, the op still running: not a crash, not prompt
    stuck = run_of([begin(0, "iterate", "collector"), sent(0, "SIGTERM", ends=True)],
                   complete=False, exit_code=None, signal=6)
    verdict, violations, _ = decide(stuck)
    assert verdict == "fail" and "no_crash" not in violations
    assert violations["interrupt_prompt"] == [
        "op 0 (iterate collector): still running when Ray aborted the driver (SIGABRT, 3 s "
        "after the SIGTERM): no SystemExit came out of it"]
    # any other end after it is still a crash
    segv = run_of([sent(0, "SIGTERM", ends=True), last, ended], complete=False,
                  exit_code=None, signal=11)
    assert decide(segv)[0] == "crash"


def test_an_uncaught_interrupt_exits_1_with_its_traceback_and_nothing_else_is_excused():
    last = interrupted(0, "poll", "evaluator", ends_program=True)
    ended = {"phase": "exiting", "bound": 15.0, "uncaught": "builtins.KeyboardInterrupt"}
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nKeyboardInterrupt\n"
    recs = [sent(0, ends=True), last, dict(FINAL), ended]
    assert decide(run_of(recs, complete=False, exit_code=1, stderr=tb)) == ("pass", {}, {})
    # the same exit without the program ending with the interrupt is a crash
    verdict, violations, _ = decide(run_of([sent(0, ends=True), last], exit_code=1, stderr=tb))
    assert verdict == "crash" and "clean_stderr" in violations
    # another traceback is still one
    other = tb.replace("KeyboardInterrupt", "RuntimeError: boom")
    assert judge(run_of(recs, complete=False, exit_code=1, stderr=other))["clean_stderr"] == [
        "stderr: Traceback (most recent call last):"]


# -- the runtime, watched during each op ---------------------------------------------------

OTHER = "127.0.0.1:5/session_x/01000000"


def runtime(i, call, before, after, by=None, last=None, t0=1.4, thread="MainThread", key=None):
    return {"phase": "runtime", "i": i, "last": i if last is None else last, "call": call,
            "by": by, "before": before, "after": after, "thread": thread, "t0": t0, "t": t0 + 1,
            **({"thread_key": key} if key else {})}


def test_a_runtime_started_and_shut_down_within_one_op_fails_no_ray_restart():
    recs = [end(0, "ray_shutdown", probe={"ray": None}),
            runtime(1, "ray.init", None, OTHER), runtime(1, "ray.shutdown", OTHER, None, t0=3.0),
            end(1, "teardown", "buffer", result={"calls": []}, probe={"ray": None}),
            {**FINAL, "ray": None}]
    run = run_of(recs)
    run.history.begins[1] = {**begin(1, "teardown", "buffer"), "t": 1.0}  # when the op began
    assert judge(run) == {"no_ray_restart": [
        "op 1 (teardown buffer): ray.init() from thread MainThread 0.40s into it started a Ray "
        "runtime (127.0.0.1:5/session_x/01000000), which the same op shut down again: the "
        "probe after it saw no change"]}


def test_one_start_by_a_constructor_without_a_runtime_and_the_user_s_own_are_allowed():
    first = [runtime(0, "ray.init", None, OTHER),
             end(0, "construct", "buffer", probe={"ray": OTHER})]
    run = run_of([*first, {**FINAL, "ray": OTHER}], owner="impl")
    run.history.setup["ray"] = None
    assert decide(run) == ("pass", {}, {})
    twice = [runtime(0, "ray.init", None, RAY), runtime(0, "ray.shutdown", RAY, None), *first]
    run = run_of([*twice, {**FINAL, "ray": OTHER}], owner="impl")
    run.history.setup["ray"] = None
    assert judge(run)["no_ray_restart"] == [
        "op 0 (construct buffer): ray.init() from thread MainThread started a Ray runtime "
        "(127.0.0.1:5/session_x/01000000)"]
    user = [runtime(0, "ray.shutdown", RAY, None, by="user"),
            runtime(0, "ray.init", None, OTHER, by="user"),
            end(0, "ray_restart", probe={"ray": OTHER})]
    assert decide(run_of([*user, {**FINAL, "ray": OTHER}])) == ("pass", {}, {})


def test_a_driver_that_lost_its_gcs_after_a_build_in_an_ending_thread_says_why():
    gcs = ("[2026-11-29 00:21:41,413 E 7481 7683] rpc_client.h:204: Failed to connect to GCS "
           "within 60 seconds. GCS may have been killed.\n")
    built = end(0, "construct", "buffer", args={"thread": True})
    crashed = run_of([built], complete=False, exit_code=1, stderr=gcs)
    assert judge(crashed)["no_crash"][1] == (
        "stderr: Failed to connect to GCS within 60 seconds (a "
        "component was built from a thread that then ended: Ray's GCS and raylet die with the "
        "thread that started them, Linux's PR_SET_PDEATHSIG; start Ray from a thread that "
        "outlives the runtime)")
    # the same line in a run that did not crash is no finding
    assert "no_crash" not in judge(run_of([built], stderr=gcs))


def test_a_build_left_running_may_start_ray_until_it_is_joined():
    """construct(thread=True, wait=False) starts a build that runs on beside the
    next ops: its constructor, finding Ray down, may start it during any of
    them up to its join_build, and no later op may."""
    start = end(0, "construct", "buffer", args={"thread": True, "wait": False}, probe={"ray": None})
    joined = [runtime(1, "ray.init", None, OTHER, thread="impl-ray-keeper"),
              end(1, "join_build", "buffer", probe={"ray": OTHER})]
    run = run_of([start, *joined, {**FINAL, "ray": OTHER}], owner="impl", ray_at_setup=None)
    assert "no_ray_restart" not in judge(run)
    # the build's ray.init() landed as the next op began: that op's probe before it
    # already saw the runtime (torchrl 0.14.1's buffer, 2026-11-29): still the build's
    seen_early = [end(1, "construct", "evaluator", args={"thread": True, "wait": False},
                      probe={"ray": OTHER}),
                  runtime(2, "ray.init", None, OTHER, thread="rlc-user-build-buffer"),
                  end(2, "join_build", "buffer", probe={"ray": OTHER}),
                  end(3, "join_build", "evaluator", probe={"ray": OTHER})]
    run = run_of([start, *seen_early, {**FINAL, "ray": OTHER}], owner="impl", ray_at_setup=None)
    assert "no_ray_restart" not in judge(run)
    # one start while the builds run, not two; and never a restart of a runtime that ran
    twice = [runtime(1, "ray.init", None, RAY, thread="rlc-user-build-buffer"),
             runtime(1, "ray.shutdown", RAY, None, thread="rlc-user-build-buffer", t0=2.0),
             end(1, "construct", "evaluator", args={"thread": True, "wait": False}, probe={"ray": None}),
             runtime(2, "ray.init", None, OTHER, thread="rlc-user-build-evaluator"),
             end(2, "join_build", "buffer", probe={"ray": OTHER}),
             end(3, "join_build", "evaluator", probe={"ray": OTHER})]
    run = run_of([start, *twice, {**FINAL, "ray": OTHER}], owner="impl", ray_at_setup=None)
    assert judge(run)["no_ray_restart"] == [
        "op 2 (join_build buffer): ray.init() from thread rlc-user-build-evaluator started a Ray "
        "runtime (127.0.0.1:5/session_x/01000000)"]
    restarted = [end(1, "join_build", "buffer", probe={"ray": OTHER})]
    run = run_of([{**start, "probe": {"ray": RAY}}, *restarted, {**FINAL, "ray": OTHER}],
                 owner="impl", ray_at_setup=None)
    assert judge(run)["no_ray_restart"] == [
        "op 1 (join_build buffer) restarted Ray (127.0.0.1:5/session_x/01000000)"]
    late = [end(1, "join_build", "buffer", probe={"ray": None}),
            runtime(2, "ray.init", None, OTHER, thread="impl-ray-keeper"),
            end(2, "use", "buffer", probe={"ray": OTHER})]
    run = run_of([start, *late, {**FINAL, "ray": OTHER}], owner="impl", ray_at_setup=None)
    assert judge(run)["no_ray_restart"] == [
        "op 2 (use buffer): ray.init() from thread impl-ray-keeper started a Ray runtime "
        "(127.0.0.1:5/session_x/01000000)"]


def test_a_runtime_process_started_around_ray_init_or_between_ops_fails_too():
    gcs = {"phase": "runtime", "i": 0, "last": 0, "process": "gcs_server", "pid": 77,
           "session": "session_y", "change": "appeared", "thread": "rlc-runtime-watch"}
    recs = [gcs, end(0, "teardown", "buffer", result={"calls": []})]
    assert judge(run_of(recs))["no_ray_restart"] == [
        "op 0 (teardown buffer): a GCS process (pid 77), with no ray.init() call, started a "
        "Ray runtime (a local runtime, session_y)"]
    between = runtime(None, "ray.init", None, OTHER, last=0, thread="RayCollector")
    recs = [end(0, "ray_shutdown", probe={"ray": None}), between,
            end(1, "teardown", "buffer", result={"calls": []}, probe={"ray": OTHER}),
            {**FINAL, "ray": OTHER}]
    assert judge(run_of(recs))["no_ray_restart"] == [
        "op 0 (ray_shutdown): after it returned, ray.init() from thread RayCollector started a "
        "Ray runtime (127.0.0.1:5/session_x/01000000)"]


def test_the_user_s_runtime_shut_down_inside_an_op_fails_even_if_one_is_up_after_it():
    recs = [runtime(0, "ray.shutdown", RAY, None), runtime(0, "ray.init", None, OTHER),
            end(0, "teardown", "collector", result={"calls": []}, probe={"ray": OTHER})]
    violations = judge(run_of(recs))
    assert violations["ray_not_shut_down_by_non_owner"] == [
        "op 0 (teardown collector): ray.shutdown() from thread MainThread shut down the user's "
        "Ray runtime (127.0.0.1:1/session_a/01000000)"]
    assert "no_ray_restart" in violations


def _gcs_gone(i, t=12.0, connected=True, session="session_a", last=None):
    return {"phase": "runtime", "i": i, "last": i if last is None else last,
            "process": "gcs_server", "pid": 77, "session": session, "change": "gone",
            "thread": "rlc-runtime-watch", "t": t, "connected": connected}


#: a runtime the implementation started at op 0 (its keeper thread's ray.init)
IMPL_STARTED = [runtime(0, "ray.init", None, RAY, thread="impl-ray-keeper"),
                end(0, "construct", "collector")]
LOST = ("the end of its GCS process (pid 77), with no ray.shutdown() call, ended the runtime "
        "the implementation started (a local runtime, session_a), the driver still connected "
        "to it (ray.is_initialized() True): Ray calls after it block on a GCS that is gone")


def test_the_implementation_s_runtime_lost_under_the_driver_fails_owned_runtime_not_lost():
    """The GCS of a runtime the implementation started goes with no ray.shutdown()
    (its starting thread ended), the driver still connected: the harness's next
    reading blocks and the run ends as the harness's failure; the finding, at the op
    the GCS went in, stands: the verdict is fail, not error."""
    from conformance.ops.history import HARNESS_EXIT_CODE

    stuck = {"phase": "harness-error", "error": {
        "type": "fixtures.harness_threads.Unanswered",
        "message": "rlc-node-resources: no answer within 15 s"}}
    run = run_of([*IMPL_STARTED, _gcs_gone(1), end(1, "iterate", "collector"), stuck],
                 owner="impl", ray_at_setup=None, complete=False, exit_code=HARNESS_EXIT_CODE)
    verdict, violations, unknowns = decide(run)
    assert verdict == "fail" and "harness" in unknowns
    assert violations["owned_runtime_not_lost"] == [f"op 1 (iterate collector): {LOST}"]
    # between two ops: after the one before returned
    recs = [*IMPL_STARTED, _gcs_gone(None, last=0), end(1, "iterate", "collector")]
    assert judge(run_of(recs, owner="impl", ray_at_setup=None))["owned_runtime_not_lost"] == [
        f"op 0 (construct collector): after it returned, {LOST}"]


def test_only_a_ray_shutdown_begun_before_the_gcs_went_explains_its_end():
    """Its own ray.shutdown() (begun before) ends it: no finding. One that raised
    and left the driver connected (Ray 2.50.1 has no wait_for_processes: TypeError),
    or one begun after the GCS had gone (the user's restart of a dead runtime),
    explains nothing. One still running when the watch stopped explains it; one
    whose runtime could not be read leaves it unknown."""
    def judged(*recs):
        run = run_of([*IMPL_STARTED, *recs], owner="impl", ray_at_setup=None)
        return judge(run).get("owned_runtime_not_lost"), unknown(run).get("owned_runtime_not_lost")

    shut = runtime(1, "ray.shutdown", RAY, None, thread="MainThread", t0=11.5)
    down = end(1, "teardown", "collector", probe={"ray": None})
    assert judged(_gcs_gone(1), shut, down, {**FINAL, "ray": None}) == (None, None)
    refused = {**shut, "after": RAY, "error": "builtins.TypeError"}
    assert judged(_gcs_gone(1), refused, end(1, "teardown", "collector"))[0] == [
        f"op 1 (teardown collector): {LOST}"]
    late = runtime(2, "ray.shutdown", RAY, None, by="user", t0=13.0)
    assert judged(_gcs_gone(1), end(1, "iterate", "collector"), late,
                  end(2, "ray_shutdown", probe={"ray": None}), {**FINAL, "ray": None})[0] == [
        f"op 1 (iterate collector): {LOST}"]
    running = {**shut, "after": None, "unfinished": True}
    assert judged(_gcs_gone(1), running, end(1, "teardown", "collector")) == (None, None)
    unreadable = {**shut, "before": "unreadable: AttributeError"}
    found, unsure = judged(_gcs_gone(1), unreadable, down, {**FINAL, "ray": None})
    assert found is None and unsure == [
        "op 1 (teardown collector): the end of its GCS process (pid 77), with no ray.shutdown() "
        "call, ended the runtime the implementation started (a local runtime, session_a), or a "
        "ray.shutdown() begun before it whose runtime could not be read did"]


def test_a_call_still_running_when_the_watch_stopped_hides_no_runtime_change_of_the_others():
    """An unfinished ray.shutdown() of the implementation's runtime explains its GCS
    going for owned_runtime_not_lost only; an unfinished ray.init() explains no GCS
    appearing (no_ray_restart still sees it), and an unfinished ray.shutdown() by the
    implementation still ends the user's runtime (ray_not_shut_down_by_non_owner)."""
    appeared = {**_gcs_gone(1, session="session_y"), "change": "appeared"}
    init = {**runtime(1, "ray.init", None, None, thread="impl-bg", t0=4.0), "unfinished": True}
    recs = [end(0, "construct", "buffer"), appeared, init, end(1, "teardown", "buffer")]
    assert judge(run_of(recs))["no_ray_restart"] == [
        "op 1 (teardown buffer): a GCS process (pid 77), with no ray.init() call, started a "
        "Ray runtime (a local runtime, session_y)"]
    shut = {**runtime(1, "ray.shutdown", RAY, None, thread="impl-bg", t0=4.0), "unfinished": True}
    recs = [end(0, "construct", "buffer"), shut, _gcs_gone(1), end(1, "teardown", "buffer")]
    assert "ray_not_shut_down_by_non_owner" in judge(run_of(recs))


def test_a_gcs_gone_after_the_driver_left_it_or_of_the_user_s_runtime_is_not_owned_runtime_not_lost():
    # the driver no longer connected when the GCS went (a path around the watched name)
    recs = [*IMPL_STARTED, _gcs_gone(1, connected=False), end(1, "iterate", "collector")]
    assert "owned_runtime_not_lost" not in judge(run_of(recs, owner="impl", ray_at_setup=None))
    # the watch could not read whether it was still connected: unknown, neither pass nor fail
    run = run_of([*IMPL_STARTED, _gcs_gone(1, connected=None), end(1, "iterate", "collector")],
                 owner="impl", ray_at_setup=None)
    assert "owned_runtime_not_lost" not in judge(run)
    assert unknown(run)["owned_runtime_not_lost"] == [
        "op 1 (iterate collector): the end of its GCS process (pid 77), with no ray.shutdown() "
        "call, ended the runtime the implementation started (a local runtime, session_a); "
        "whether the driver was still connected to it is not known"]
    # the user's runtime: the one the user started (owner user), or restarted
    recs = [end(0, "construct", "collector"), _gcs_gone(1), end(1, "iterate", "collector")]
    judged = judge(run_of(recs))
    assert "owned_runtime_not_lost" not in judged and "ray_not_shut_down_by_non_owner" in judged
    restart = [runtime(1, "ray.shutdown", RAY, None, by="user", t0=5.0),
               runtime(1, "ray.init", None, OTHER, by="user", t0=6.0),
               end(1, "ray_restart", probe={"ray": OTHER}),
               _gcs_gone(2, session="session_x"), end(2, "teardown", "collector",
                                                      probe={"ray": OTHER})]
    judged = judge(run_of([*IMPL_STARTED, *restart, {**FINAL, "ray": OTHER}], owner="impl",
                          ray_at_setup=None))
    assert "owned_runtime_not_lost" not in judged and "ray_not_shut_down_by_non_owner" in judged


def test_owned_runtime_not_lost_is_unknown_where_the_driver_s_processes_were_not_watched():
    run = run_of([*IMPL_STARTED, end(1, "iterate", "collector")], owner="impl", ray_at_setup=None)
    run.history.setup["runtime_watch"] = {**WATCH, "processes": "not watched: [Errno 2] no /proc"}
    assert unknown(run)["owned_runtime_not_lost"] == [
        "the driver's GCS processes were not watched: [Errno 2] no /proc: whether a runtime the "
        "implementation started died under it is not known"]


def test_a_runtime_not_watched_during_the_ops_is_unknown():
    run = run_of([end(0, "construct", "buffer")])
    del run.history.setup["runtime_watch"]
    assert decide(run)[0] == "error"
    assert unknown(run)["no_ray_restart"] == [
        "the driver did not watch the Ray runtime during the ops (its setup record has no "
        "runtime_watch)"]


# -- several instances of a component (targets such as collector.2) -----------------

def test_a_teardown_that_ends_another_instance_of_its_kind_fails_naming_it():
    run = run_of([
        end(0, "construct", "collector", probe=actors(collector="ALIVE")),
        end(1, "construct", "collector.2",
            probe=actors(**{"collector": "ALIVE", "collector.2": "ALIVE"})),
        end(2, "teardown", "collector", result={"calls": []},
            probe=actors(**{"collector": "DEAD", "collector.2": "DEAD"})),
    ])
    assert judge(run)["others_untouched"] == [
        "op 2 (teardown collector) ended collector.2 actor collecto (DEAD; it was ALIVE)"]


def test_an_exhaustion_that_ends_another_instance_fails_and_ray_shutdown_hits_them_all():
    recs = [end(0, "construct", "collector", probe=actors(collector="ALIVE")),
            end(1, "construct", "collector.2",
                probe=actors(**{"collector": "ALIVE", "collector.2": "ALIVE"})),
            end(2, "exhaust", "collector",
                probe=actors(**{"collector": "DEAD", "collector.2": "DEAD"}))]
    assert "others_untouched" in judge(run_of(recs))
    # after the user's ray.shutdown() every instance's actors may be gone
    recs[2] = end(2, "ray_shutdown")
    recs.append(end(3, "teardown", "collector", result={"calls": []},
                    probe=actors(**{"collector": "DEAD", "collector.2": "DEAD"})))
    assert "others_untouched" not in judge(run_of(recs))


def test_each_buffer_instance_keeps_its_own_frames():
    recs = [end(0, "check_data", "buffer", result={"frames": 64, "at_least": 1}),
            end(1, "check_data", "buffer.2", result={"frames": 32, "at_least": 1}),
            end(2, "teardown", "buffer", result={"calls": []}),
            end(3, "check_data", "buffer.2", result={"frames": 0, "at_least": 1})]
    assert judge(run_of(recs))["data_kept"] == [
        "op 3 (check_data buffer.2): buffer.2 holds 0 frames; it held 32 at op 1 "
        "(check_data buffer.2)"]
    recs[3] = end(3, "check_data", "buffer.2", result={"frames": 40, "at_least": 1})
    assert "data_kept" not in judge(run_of(recs))  # buffer's own frames are not buffer.2's


def test_a_writer_whose_writes_stop_landing_fails_data_kept_naming_it_and_the_suspect():
    writes = {"buffer": "buffer", "from": 96, "frames": 96, "more": 16, "timeout": 20.0}
    recs = [end(0, "construct", "buffer"),
            end(1, "construct", "collector", args={"buffer": True}),
            end(2, "construct", "collector.2", args={"buffer": True}),
            end(3, "teardown", "collector", result={"calls": []}),
            end(4, "check_writes", "collector.2", result=writes)]
    assert judge(run_of(recs))["data_kept"] == [
        "op 4 (check_writes collector.2): the writes of collector.2 no longer land in buffer, "
        "after op 3 (teardown collector): it grew by 0 of 16 frames in 20.0 s"]
    recs[4] = end(4, "check_writes", "collector.2", result={**writes, "frames": 112})
    assert "data_kept" not in judge(run_of(recs))
    # a check that raised is an unreadable buffer, judged here (not calls_succeed)
    recs[4] = end(4, "check_writes", "collector.2", status="raised", error=err())
    found = judge(run_of(recs))
    assert "data_kept" in found and "calls_succeed" not in found


def test_sampled_rows_that_no_write_filled_fail_data_kept_and_unreadable_ones_are_unknown():
    from conformance.ops.samples import sampled_rows

    import numpy as np
    import torch
    from tensordict import TensorDict

    def batch(reward):  # two rows: the first written by a CartPole step, the second never
        return TensorDict({"observation": torch.tensor([[0.01, 0.0, 0.02, 0.0], [0.0] * 4]),
                           ("next", "observation"): torch.zeros(2, 4),
                           ("next", "reward"): torch.tensor([[1.0], reward]),
                           "index": torch.tensor([3, 7])}, batch_size=[2])

    read = sampled_rows(batch([0.0]))
    assert read == {"rows": 2, "unwritten": 1,
                    "keys": ["observation", "next/observation", "next/reward"]}
    assert sampled_rows(batch([1.0]))["unwritten"] == 0  # a driver's row: zeros, reward 1
    # a whole batch in each slot: rows of another shape than any write's
    wide = sampled_rows({"observation": np.ones((3, 64, 4)), "next": {"reward": np.ones((3, 1))}})
    assert wide["observation_row"] == [64, 4]
    recs = [end(0, "construct", "buffer"), end(1, "sample", "buffer", result={"numel": 3, **wide})]
    assert judge(run_of(recs))["data_kept"] == [
        "op 1 (sample buffer): the rows sample() returned have observations of shape [64, 4] "
        "each, where every row written had one of [4] (CartPole's): they are not the rows written"]
    # a mapping of arrays, nested as the TensorDict is
    assert sampled_rows({"observation": np.zeros((3, 4)),
                         "next": {"reward": np.ones((3, 1))}})["unwritten"] == 0
    assert "rows_unreadable" in sampled_rows([1, 2, 3])
    # every row written has a reward: rows without one lost what was written
    assert sampled_rows({"observation": np.zeros((3, 4))}) == {
        "entry_missing": "next/reward", "keys": ["observation"]}
    assert sampled_rows(TensorDict({"observation": torch.zeros(3, 4)}, batch_size=[3])) == {
        "entry_missing": "next/reward", "keys": ["observation"]}
    # a reading that cannot convert the rows says why; it never raises into the op
    odd = sampled_rows({"observation": np.zeros((3, 4)),
                        "next": {"reward": torch.ones(3, 1, dtype=torch.bfloat16)}})
    assert odd["rows_unreadable"].startswith("TypeError: ")

    recs = [end(0, "construct", "buffer"), end(1, "sample", "buffer", result={"numel": 2, **read})]
    assert judge(run_of(recs))["data_kept"] == [
        "op 1 (sample buffer): 1 of the 2 rows sample() returned were never written "
        "(observation, next/observation, next/reward all zero: no CartPole step and no "
        "extend() writes such a row; a slot of the storage no write filled)"]
    recs[1] = end(1, "sample", "buffer", result={"numel": 2, **sampled_rows(batch([1.0]))})
    assert "data_kept" not in judge(run_of(recs))
    recs[1] = end(1, "sample", "buffer", result={"numel": 3, **sampled_rows(
        {"observation": np.zeros((3, 4))})})
    assert judge(run_of(recs))["data_kept"] == [
        "op 1 (sample buffer): the rows sample() returned have no 'next/reward' entry, which "
        "every row written had (keys: observation): what was written is lost, or the "
        "adapter's sample() does not convert the buffer's rows (conformance/adapter.py)"]
    recs[1] = end(1, "sample", "buffer", result={"numel": None, **sampled_rows([1, 2])})
    run = run_of(recs)
    assert decide(run)[0] == "error"
    assert unknown(run)["data_kept"] == [
        "op 1 (sample buffer): its rows could not be read: sample() returned a builtins.list, "
        "not a TensorDict or a mapping (the adapter's sample() returns a TensorDict or a "
        "mapping of arrays, conformance/adapter.py)"]


def test_a_second_name_is_judged_apart_and_a_taken_name_owns_nothing():
    recs = [end(0, "construct", "evaluator", args={"named": True}),
            end(1, "construct", "evaluator.2", args={"named": "2"}),
            end(2, "teardown", "evaluator", result={"calls": []}),
            end(3, "check_name", args={"named": "2"}, result={"found": False, "name": "n-2"})]
    assert judge(run_of(recs))["name_freed"] == [
        "op 3 (check_name): the named eval worker 'n-2' is gone before its owner's teardown"]
    # a second worker built with the taken name (it should have failed) owns
    # nothing: its teardown leaves the name to the first one
    recs = [end(0, "construct", "evaluator", args={"named": True}),
            end(1, "construct", "evaluator.2", args={"named": True, "fail": "name_taken"}),
            end(2, "teardown", "evaluator.2", result={"calls": []}),
            end(3, "check_name", result={"found": False, "name": "n"})]
    assert "name_freed" in judge(run_of(recs))


def test_what_one_generation_left_before_the_next_is_a_leftover():
    clean = {"job_actors": {"actors": {"z9": {"state": "ALIVE", "class_name": "CollectorActor"}},
                            "source": "gcs"},
             "threads": [{"name": "RayCollector", "module": "impl.collector"}]}
    recs = [end(0, "construct", "collector"), end(1, "teardown", "collector", result={"calls": []}),
            end(2, "check_clean", result=clean), end(3, "construct", "collector.2"),
            end(4, "teardown", "collector.2", result={"calls": []})]
    found = judge(run_of(recs))
    assert found["no_leftover_actor"] == ["op 2 (check_clean): actor z9 (CollectorActor) still ALIVE"]
    assert found["no_leftover_thread"] == [
        "op 2 (check_clean): thread RayCollector (impl.collector) still running after teardown"]
    # taken with a component still open, the reading is not judged
    recs.insert(0, end(0, "construct", "buffer"))
    recs = [{**r, "i": k} for k, r in enumerate(recs)]
    found = judge(run_of(recs))
    assert "no_leftover_actor" not in found and "no_leftover_thread" not in found


def test_an_instance_s_own_total_frames_is_what_its_exhaustion_must_reach():
    r = end(1, "exhaust", "collector.2", result={"batches": 8, "frames": 512},
            probe=actors(**{"collector.2": "DEAD"}))
    built = end(0, "construct", "collector.2", args={"total_frames": 128})
    assert judge(run_of([built, r]))["batch_counts"] == [
        "op 1 (exhaust collector.2): 8 batches until total_frames=128; 2 expected "
        "(frames_per_batch=64)", "op 1 (exhaust collector.2): 512 frames collected; "
        "total_frames is 128"]
    r = end(1, "exhaust", "collector.2", probe=actors(**{"collector.2": "ALIVE"}),
            result={"batches": 2, "frames": 128})
    assert judge(run_of([built, r]))["exhaustion_auto_shutdown"] == [
        "op 1 (exhaust collector.2): collector.2 actor collecto still ALIVE after exhaustion"]


def test_an_unraised_background_error_is_logged_once_by_the_first_teardown():
    from conformance.catalog.build import FAILING_ENV

    spec = dict(FAILING_ENV)
    failure = "RayCollector.shutdown(): the background work had stopped with an error no call " \
              "raised: RuntimeError: RlcFailingCartPole-v0: step 100 fails on purpose"

    def log(i, level="ERROR", message=failure):
        return {"phase": "log", "i": i, "after": i, "level": level, "logger": "impl.collector",
                "message": message}

    env_error = err("impl.errors.BackgroundWorkError", "RayCollector.start(): RuntimeError: "
                    "RlcFailingCartPole-v0: step 100 fails on purpose")

    def ops(*logs, raised=False, error=env_error, reached=0.1):
        dead = end(2, "check_alive", "collector", args={"expect": False},
                   result={"reached": reached})
        return [end(0, "start", "collector"),
                end(1, "check_error", "collector", status="raised", args={"call": "start"},
                    error=error)
                if raised else end(1, "check_alive", "collector", args={"expect": False},
                                   result={"reached": None}),
                dead, end(3, "teardown", "collector", result={"calls": []}), *logs]

    assert "unraised_error_logged" not in judge(run_of(ops(log(3)), spec=spec))
    assert judge(run_of(ops(), spec=spec))["unraised_error_logged"] == [
        "op 3 (teardown collector): the error that stopped start()'s work (the env's failure) "
        "was raised by no call, and this teardown did not log it at ERROR: the user never hears "
        "of it"]
    # a WARNING when the thread stopped is not the teardown's ERROR
    assert "unraised_error_logged" in judge(run_of(ops(log(1, "WARNING")), spec=spec))
    assert judge(run_of(ops(log(3), log(3)), spec=spec))["unraised_error_logged"] == [
        "op 3 (teardown collector): the unraised background error was logged at ERROR 2 times "
        "by the teardowns, not once"]
    assert "unraised_error_logged" not in judge(run_of(ops(raised=True), spec=spec))
    # is_alive() never said False before the teardown: not known to have failed
    assert "unraised_error_logged" not in judge(run_of(ops(reached=None), spec=spec))
    # a call raised, but not the env's failure: the user never saw it
    unclear = err("builtins.RuntimeError", "collecting in a background thread")
    assert "unraised_error_logged" in judge(run_of(ops(raised=True, error=unclear), spec=spec))
    assert "unraised_error_logged" not in judge(run_of(ops(log(3), raised=True, error=unclear),
                                                       spec=spec))
    assert judge(run_of(ops(log(3), raised=True), spec=spec))["unraised_error_logged"] == [
        "op 3 (teardown collector): logged at ERROR the background error op 1 (check_error) had "
        "raised to the user already: " + failure[:200]]


def test_a_run_where_nothing_failed_logs_no_error():
    healthy = [end(0, "construct", "collector"), end(1, "teardown", "collector", result={"calls": []}),
               {"phase": "log", "i": 1, "after": 1, "level": "ERROR", "logger": "impl.collector",
                "message": "no call raised: NoneType: None"}]
    assert judge(run_of(healthy))["unraised_error_logged"] == [
        "op 1 (teardown collector): logged at ERROR (impl.collector: no call raised: NoneType: "
        "None) in a run where nothing failed"]
    warned = [*healthy[:2], {**healthy[2], "level": "WARNING"}]
    assert "unraised_error_logged" not in judge(run_of(warned))
    killed = [end(0, "construct", "collector"), end(1, "kill", "collector"),
              end(2, "teardown", "collector", result={"calls": []}), {**healthy[2], "i": 2}]
    assert "unraised_error_logged" not in judge(run_of(killed))
    never_scheduled = [end(0, "construct", "collector", args={"infeasible": True, "ready": False}),
                       *healthy[1:]]
    assert "unraised_error_logged" not in judge(run_of(never_scheduled))


def test_a_healthy_run_logs_no_warning():
    def warning(i, message="background thread did not stop in time"):
        return {"phase": "log", "i": i, "after": i, "level": "WARNING", "logger": "impl.component",
                "message": message}

    built = [end(0, "construct", "buffer"), end(1, "construct", "collector"),
             end(2, "start", "collector")]
    plain = [*built, end(3, "teardown", "collector", result={"calls": []}),
             end(4, "teardown", "buffer", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of(plain))
    assert judge(run_of([*plain, warning(3)]))["quiet_when_healthy"] == [
        "op 3 (teardown collector): logged a WARNING (impl.component: background thread did not "
        "stop in time) in a run where nothing failed and nothing was refused"]
    # an ERROR is unraised_error_logged's, not this oracle's
    assert "quiet_when_healthy" not in judge(run_of([*plain, {**warning(3), "level": "ERROR"}]))
    # what may rightly warn: shutdown_ray asked (ignored on the user's runtime), the
    # buffer closed under the thread still writing into it, a kill
    asked = [*built, end(3, "teardown", "collector", args={"shutdown_ray": True},
                         result={"calls": []}), end(4, "teardown", "buffer", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of([*asked, warning(3)]))
    under = [*built, end(3, "teardown", "buffer", result={"calls": []}),
             end(4, "teardown", "collector", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of([*under, warning(4)]))
    killed = [*built, end(3, "kill", "collector"),
              end(4, "teardown", "collector", result={"calls": []}),
              end(5, "teardown", "buffer", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of([*killed, warning(4)]))
    # the user's ray.shutdown() before the teardowns ends a program normally: an
    # unnamed eval worker's teardown then has nothing to warn about; a named one's
    # detached actor, or a started collector's thread, may rightly warn
    ended = [end(0, "construct", "evaluator"), end(1, "ray_shutdown"),
             end(2, "teardown", "evaluator", result={"calls": []})]
    assert judge(run_of([*ended, warning(2, "Ray is gone")]))["quiet_when_healthy"] == [
        "op 2 (teardown evaluator): logged a WARNING (impl.component: Ray is gone) in a run "
        "where nothing failed and nothing was refused"]
    named = [end(0, "construct", "evaluator", args={"named": True}), *ended[1:]]
    assert "quiet_when_healthy" not in judge(run_of([*named, warning(2, "Ray is gone")]))
    started = [*built, end(3, "ray_shutdown"), end(4, "teardown", "collector", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of([*started, warning(4)]))
    # nor after an evaluation left pending, or on the implementation's own runtime
    pending = [end(0, "construct", "evaluator"), end(1, "submit", "evaluator"),
               end(2, "ray_shutdown"), end(3, "teardown", "evaluator", result={"calls": []})]
    assert "quiet_when_healthy" not in judge(run_of([*pending, warning(3, "lost")]))
    # a poll that returned None leaves it pending; one that returned the result does not
    def polled(ready):
        return [*pending[:2], end(2, "poll", "evaluator", args={"timeout": 0},
                                  result={"ready": ready}),
                end(3, "ray_shutdown"), end(4, "teardown", "evaluator", result={"calls": []}),
                warning(4, "lost")]
    assert "quiet_when_healthy" not in judge(run_of(polled(False)))
    assert "quiet_when_healthy" in judge(run_of(polled(True)))
    assert "quiet_when_healthy" not in judge(run_of([*ended, warning(2, "Ray is gone")],
                                                    owner="impl"))
    # a call after teardown that raised the closed error is the contract's outcome;
    # one that raised anything else is use_after_close_clear_error's, not judged here
    def used(error):
        return [end(0, "construct", "buffer"), end(1, "ray_shutdown"),
                end(2, "use", "buffer", args={"call": "sample"}, status="raised", error=error),
                end(3, "teardown", "buffer", result={"calls": []}), warning(2, "ignored")]
    closed = err("impl.errors.ComponentClosedError", "RayReplayBuffer is closed")
    assert judge(run_of(used(closed)))["quiet_when_healthy"] == [
        "op 2 (use buffer): logged a WARNING (impl.component: ignored) in a run where nothing "
        "failed and nothing was refused"]
    assert "quiet_when_healthy" not in judge(run_of(used(err("builtins.AttributeError", "x"))))


def test_a_poll_that_returns_none_has_waited_its_timeout_while_an_evaluation_is_pending():
    def poll(i, ready, duration, timeout=30):
        return end(i, "poll", "evaluator", args={"timeout": timeout}, result={"ready": ready},
                   duration=duration)

    submit = end(0, "submit", "evaluator")
    assert judge(run_of([submit, poll(1, False, 0.02)]))["poll_waits_its_timeout"] == [
        "op 1 (poll evaluator) returned None after 0.02s of its 30s timeout, with the "
        "evaluation of op 0 pending: it did not wait for the result"]
    # waited its timeout; a peek; the result returned; nothing submitted; a kill before
    assert "poll_waits_its_timeout" not in judge(run_of([submit, poll(1, False, 30.01)]))
    assert "poll_waits_its_timeout" not in judge(run_of([submit, poll(1, False, 0.001, 0)]))
    assert "poll_waits_its_timeout" not in judge(run_of(
        [submit, poll(1, True, 0.4), poll(2, False, 0.01)]))
    assert "poll_waits_its_timeout" not in judge(run_of([poll(0, False, 0.01)]))
    assert "poll_waits_its_timeout" not in judge(run_of(
        [submit, end(1, "kill", "evaluator", args={"how": "sigkill"}), poll(2, False, 0.01)]))


def test_background_work_a_teardown_ended_may_log_its_error():
    """background/*/*/buffer-closed-under-thread: the buffer closed under the
    thread ends its work, no op failing; the reference logs that at ERROR."""
    ops = [end(0, "construct", "buffer"), end(1, "construct", "collector"),
           end(2, "start", "collector"), end(3, "teardown", "buffer", result={"calls": []}),
           end(4, "teardown", "collector", result={"calls": []}),
           {"phase": "log", "i": 4, "after": 4, "level": "ERROR", "logger": "impl.collector",
            "message": "the background work had stopped with an error no call raised"}]
    assert "unraised_error_logged" not in judge(run_of(ops))


def test_a_with_block_must_let_its_bodys_error_out():
    def leave(body_error):
        call = {"status": "ok", "error": None, "duration": 0.1, "thread": "MainThread",
                **({"body_error": body_error} if body_error else {})}
        return [end(0, "construct", "buffer"),
                end(1, "teardown", "buffer", args={"via": "with", "body_raises": True},
                    result={"calls": [call]})]

    assert judge(run_of(leave("swallowed")))["with_block_error_comes_out"] == [
        "op 1 (teardown buffer): leaving the with block swallowed the error its body raised "
        "(__exit__ returned a true value): the user's own error never came out"]
    assert "with_block_error_comes_out" not in judge(run_of(leave("came out")))
    assert "teardown_never_raises" not in judge(run_of(leave("swallowed")))


def test_an_evaluations_result_is_returned_once():
    def poll(i, ready):
        return end(i, "poll", "evaluator", args={"timeout": 0}, result={"ready": ready})

    submit = end(0, "submit", "evaluator")
    assert judge(run_of([submit, poll(1, True), poll(2, True)]))[
        "poll_returns_each_result_once"] == [
        "op 2 (poll evaluator) returned a result again: op 1 had returned the evaluation's "
        "result, and nothing was submitted since"]
    assert "poll_returns_each_result_once" not in judge(run_of([submit, poll(1, True), poll(2, False)]))
    assert "poll_returns_each_result_once" not in judge(run_of(
        [submit, poll(1, True), end(2, "submit", "evaluator"), poll(3, True)]))


def test_a_with_blocks_own_error_is_a_failure_the_run_may_log():
    """with_block/*/*/<component>-body-raises: the user's error passes through
    __exit__; logging it at ERROR there is not an error in a healthy run."""
    ops = [end(0, "construct", "buffer"),
           end(1, "teardown", "buffer", args={"via": "with", "body_raises": True},
               result={"calls": []}),
           {"phase": "log", "i": 1, "after": 1, "level": "ERROR", "logger": "impl.replay_buffer",
            "message": "the with block raised: UserBlockError"}]
    assert "unraised_error_logged" not in judge(run_of(ops))


def test_a_poll_a_signal_was_sent_into_is_left_to_interrupt_prompt():
    submit = end(0, "submit", "evaluator")
    poll = {**end(1, "poll", "evaluator", args={"timeout": 30}, result={"ready": False},
                  duration=0.3), "interrupt": {"signal": "SIGINT", "landed": True}}
    assert "poll_waits_its_timeout" not in judge(run_of([submit, poll]))


def test_a_component_left_to_its_defaults_is_what_its_implementation_documents():
    def built(i, comp, *resources):
        created = [{"id": f"{comp}-{n}", "state": "ALIVE", "required_resources": r}
                   for n, r in enumerate(resources)]
        return end(i, "construct", comp, args={"may_fail": True}, probe={"created": created})

    def failed(i, comp):
        return end(i, "construct", comp, status="raised", args={"may_fail": True},
                   error=err("builtins.ValueError", "The quantity of resource num_cpus cannot be negative"))

    documented = ReferenceAdapter.documented_defaults

    def run(*records, spec=None, **kw):
        return run_of(list(records), spec=spec or {"defaults": True},
                      documented_defaults=documented, **kw)

    assert "defaults_as_documented" not in judge(run(
        built(0, "buffer", {}), built(1, "collector", {"CPU": 1.0}, {"CPU": 1.0}),
        built(2, "evaluator", {"CPU": 1.0, "GPU": 0.0})))
    assert judge(run(built(0, "buffer", {"CPU": 1.0})))["defaults_as_documented"] == [
        "op 0 (construct buffer): buffer actor buffer-0, built with its defaults, holds "
        "{'CPU': 1.0}; documented: nothing"]
    assert judge(run(built(0, "collector", {"CPU": 1.0}, {"CPU": 2.0})))[
        "defaults_as_documented"] == [
        "op 0 (construct collector): collector actor collecto, built with its defaults, "
        "holds {'CPU': 2.0}; documented: {'CPU': 1.0}"]
    # a default build that raised although its documented resources fit the fixture
    # (local: 2 CPUs) and nothing else was built; not when another component holds CPUs
    assert judge(run(failed(0, "buffer")))["defaults_as_documented"] == [
        "op 0 (construct buffer): built with its defaults, it refused them, builtins.ValueError: The "
        "quantity of resource num_cpus cannot be negative, though its documented resources "
        "(nothing for each of 1 actor(s)) fit the local fixture, nothing else built"]
    assert "defaults_as_documented" not in judge(run(
        built(0, "collector", {"CPU": 1.0}, {"CPU": 1.0}), failed(1, "evaluator")))
    # a default build that did not start (not an argument refused): the family's may_fail
    timeout = end(0, "construct", "evaluator", status="raised", args={"may_fail": True},
                  error=err("impl.errors.ReadinessTimeout", "not ready within 30 s"))
    assert "defaults_as_documented" not in judge(run(timeout))
    # a build whose actors were not observed: unknown, never a pass
    assert unknown(run(built(0, "buffer")))["defaults_as_documented"] == [
        "op 0 (construct buffer): no actor of the buffer was observed: what it holds, and how "
        "many it started, is unknown"]
    # a minimal collector starts the documented number of actors (one)
    minimal = {"minimal_build": True}
    assert "defaults_as_documented" not in judge(run(built(0, "collector", {"CPU": 0.25}),
                                                     spec=minimal))
    assert judge(run(built(0, "collector", {"CPU": 0.25}, {"CPU": 0.25}), spec=minimal))[
        "defaults_as_documented"] == [
        "op 0 (construct collector): a collector built with neither num_collectors nor a list "
        "of env ids started 2 actors; documented: 1"]
    # declared without the values: unknown, never a pass; undeclared: not checked
    assert unknown(run_of([built(0, "buffer", {})], spec={"defaults": True}))[
        "defaults_as_documented"] == [
        "op 0 (construct buffer): the adapter documents no defaults of a buffer "
        "(Adapter.documented_defaults)"]
    features = ReferenceAdapter.features - {"documented_defaults"}
    assert "defaults_as_documented" not in judge(run(built(0, "buffer", {"CPU": 1.0}),
                                                     features=features))


def test_on_a_busy_cluster_a_default_build_gives_up_at_its_documented_ready_bound():
    """defaults/*/user/<component>-cluster-busy: the harness holds every CPU
    (occupy); a default build whose actors need one waits its documented 30 s."""
    occupy = end(0, "occupy", result={"occupiers": ["occ1"]})
    vacate = end(2, "vacate", result={"seconds": 0.01})

    def build(comp, status="raised", duration=30.05, i=1):
        return end(i, "construct", comp, status=status, args={"may_fail": True},
                   duration=duration, error=err("impl.errors.ReadinessTimeout", "not ready")
                   if status == "raised" else None,
                   probe={"created": [{"id": "a1", "state": "ALIVE", "required_resources": {}}],
                          "job_actors": {"actors": {"occ1": {"state": "ALIVE"}}}})

    def run(*records, documented=ReferenceAdapter.documented_defaults):
        return run_of(list(records), spec={"defaults": True}, documented_defaults=documented)

    assert "ready_bound_as_documented" not in judge(run(occupy, build("evaluator"), vacate))
    assert judge(run(occupy, build("evaluator", duration=12.0), vacate))[
        "ready_bound_as_documented"] == [
        "op 1 (construct evaluator): on a cluster with no CPU free, it gave up in 12.00s, "
        "before its documented ready bound 30.0s: impl.errors.ReadinessTimeout: not ready"]
    assert judge(run(occupy, build("collector", duration=31.0), vacate))[
        "ready_bound_as_documented"] == [
        "op 1 (construct collector): on a cluster with no CPU free, it took 31.00s to give up, "
        "past its documented ready bound 30.0s (+0.9s): impl.errors.ReadinessTimeout: not ready"]
    # one that did not wait for its actors at all
    assert judge(run(occupy, build("collector", "ok", 0.05), vacate))[
        "ready_bound_as_documented"] == [
        "op 1 (construct collector): returned in 0.05s on a cluster with no CPU free, its actors "
        "documented to need {'CPU': 1.0}: it did not wait the documented 30.0s for them to start"]
    # a buffer documented to need no CPU builds there; one that failed did not
    assert "ready_bound_as_documented" not in judge(run(occupy, build("buffer", "ok", 1.0), vacate))
    assert judge(run(occupy, build("buffer", duration=30.5), vacate))[
        "ready_bound_as_documented"] == [
        "op 1 (construct buffer): documented to need no CPU (nothing), it failed to build on "
        "a cluster with no CPU free: impl.errors.ReadinessTimeout: not ready"]
    # only while the cluster is busy: after vacate, or without occupy, not judged
    assert "ready_bound_as_documented" not in judge(run(build("evaluator", duration=1.0)))
    assert "ready_bound_as_documented" not in judge(run(
        occupy, end(1, "vacate"), build("evaluator", duration=1.0, i=2)))
    # no documented bound: unknown, never a pass
    bare = {k: {"actor_resources": v["actor_resources"]}
            for k, v in ReferenceAdapter.documented_defaults.items()}
    assert unknown(run(occupy, build("evaluator"), vacate, documented=bare))[
        "ready_bound_as_documented"] == [
        "op 1 (construct evaluator): the adapter documents no ready bound for the evaluator "
        "(Adapter.documented_defaults ready_timeout)"]
    # the harness's occupier is no actor the failed build left behind
    assert "fails_clearly" not in judge(run(occupy, build("evaluator"), vacate))
    stray = build("evaluator")
    stray["probe"]["job_actors"]["actors"]["left"] = {"state": "PENDING_CREATION"}
    assert judge(run(occupy, stray, vacate))["fails_clearly"] == [
        "op 1 (construct evaluator) left actors behind: ['left']"]
    # and no actor left at the end: the occupier is the harness's, the stray one is not
    final = {**FINAL, "job_actors": {"actors": {"occ1": {"state": "ALIVE"}}, "source": "gcs"}}
    assert "no_leftover_actor" not in judge(run(occupy, build("buffer", "ok", 1.0), vacate,
                                                 end(3, "teardown", "buffer"), final))
    final["job_actors"]["actors"]["left"] = {"state": "ALIVE", "class_name": "X"}
    assert judge(run(occupy, build("buffer", "ok", 1.0), vacate, end(3, "teardown", "buffer"),
                     final))["no_leftover_actor"] == ["actor left (X) still ALIVE"]
    # a default build's readiness failure is bounded by its documented bound, not the spec's
    assert "fails_clearly" not in judge(run(occupy, build("evaluator", duration=40.0), vacate))


def test_a_healthy_teardown_is_prompt():
    def torn(i, *durations):
        return end(i, "teardown", "collector", result={"calls": [
            {"status": "ok", "error": None, "duration": d} for d in durations]})

    built = end(0, "construct", "collector")
    assert "teardown_prompt_when_healthy" not in judge(run_of([built, torn(1, 0.2)]))
    # two concurrent calls: the second waited out its bound for the first's end
    assert judge(run_of([built, torn(1, 0.2, 9.9)]))["teardown_prompt_when_healthy"] == [
        "op 1 (teardown collector): call 2 took 9.90s in a healthy run (nothing hung, dead or "
        "failed; prompt: 1.5s)"]
    # past the bound: teardown_within_bound's alone; a fault in the run: not judged
    assert set(judge(run_of([built, torn(1, 30.0)]))) == {"teardown_within_bound"}
    hung = end(1, "kill", "collector", args={"how": "hang"})
    assert "teardown_prompt_when_healthy" not in judge(run_of([built, hung, torn(2, 2.1)]))
    features = ReferenceAdapter.features - {"prompt_teardown"}
    assert "teardown_prompt_when_healthy" not in judge(run_of([built, torn(1, 2.1)],
                                                              features=features))


def test_a_ready_actors_batches_are_not_held_back_by_a_slow_one():
    def iterated(times, status="ok"):
        return [end(0, "construct", "collector", args={"sync": False, "per_actor_envs": "slow"}),
                end(1, "iterate", "collector", args={"batches": 4, "within": 4.0}, status=status,
                    result={"batches": len(times), "sizes": [64] * len(times), "times": times})]

    # start-up before the first batch is not counted
    assert "ready_batches_not_held_back" not in judge(run_of(iterated([9.0, 9.1, 9.2, 9.3])))
    assert judge(run_of(iterated([0.4, 13.2, 13.3, 26.1])))["ready_batches_not_held_back"] == [
        "op 1 (iterate collector) took 25.70s from the first of 4 batches to the last, beside a "
        "slow actor; the ready actor's come within 4s (first ready, first served: asked again "
        "at once)"]
    # fewer batches than asked: unknown, never a pass; without `within`: not judged
    assert unknown(run_of(iterated([0.4, 0.5])))["ready_batches_not_held_back"] == [
        "op 1 (iterate collector): 2 of the 4 batches asked came (with their times): whether a "
        "slow actor held them back is unknown"]
    plain = iterated([0.4, 13.2, 13.3, 26.1])
    plain[1]["op"]["args"].pop("within")
    assert "ready_batches_not_held_back" not in judge(run_of(plain))


def test_an_actors_own_slow_env_makes_a_run_unhealthy():
    """A collector whose first actor steps a slow env (``construct(per_actor_envs=
    <env id>)``) waits for that actor's batch at its teardown: the run is not a
    healthy one, so neither the prompt teardown nor the quiet log is asked of it;
    with both actors on CartPole it is."""
    def run(per_actor_envs):
        return run_of([end(0, "construct", "collector", args={"per_actor_envs": per_actor_envs}),
                       end(1, "teardown", "collector", result={"calls": [
                           {"status": "ok", "error": None, "duration": 2.1}]})])

    slow = "conformance.envs:RlcVerySlowCartPole-v0"
    assert "teardown_prompt_when_healthy" not in judge(run(slow))
    assert "teardown_prompt_when_healthy" in judge(run("CartPole-v1"))
    assert "teardown_prompt_when_healthy" in judge(run(True))
