"""Oracles on hand-made histories: each rule fails when broken, holds when kept."""
from conformance.history import History, HistoryFile
from conformance.oracles import ORACLES, Run
from conformance.oracles import judge as _judge
from conformance.scenario import Op, Scenario
from conformance.verdict import decide as _decide, texts

RAY = "127.0.0.1:1/session_a/01000000"
FINAL = {"phase": "final", "ray": RAY, "threads": [], "actors": {},
         "job_actors": {"actors": {}, "source": "gcs"}, "zombie_pids": {}}


def scenario(*ops, owner="user"):
    return Scenario("order", "local", owner, "t", tuple(ops))


def end(i, verb, target=None, status="ok", args=None, result=None, probe=None,
        error=None, duration=0.01):
    return {"phase": "end", "i": i, "op": Op(verb, target, args or {}).to_dict(),
            "status": status, "result": result or {},
            "probe": {"ray": RAY, "threads": [], **(probe or {})},
            "error": error, "duration": duration}


def err(t="builtins.RuntimeError", m="boom"):
    return {"type": t, "message": m, "traceback": ""}


def run_of(records, owner="user", complete=True, corrupt=(), **kw):
    """A run of the ops whose records are given; ``complete`` adds the final
    probe (unless given) and the exit record, as a driver that got there."""
    ops = [Op.from_dict(r["op"]) for r in records if r.get("phase") in ("end", "begin")]
    recs = [{"phase": "setup", "ray": RAY, "owner": owner}, *records]
    if complete:
        if not any(r.get("phase") == "final" for r in recs):
            recs.append(dict(FINAL))
        recs.append({"phase": "exiting", "bound": 15.0})
    kw.setdefault("exit_code", 0)
    return Run(scenario=scenario(*ops, owner=owner),
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


def test_liveness_that_never_reports_death_fails():
    r = end(0, "check_alive", "buffer", args={"expect": False},
            result={"expect": False, "value": True, "elapsed": 5.1, "within": 5.0})
    assert "liveness_reports_death" in judge(run_of([r]))
    slow = end(0, "check_alive", "buffer", args={"expect": False},  # one call blocking 20 s
               result={"expect": False, "value": False, "elapsed": 20.0, "within": 5.0})
    assert judge(run_of([slow]))["liveness_reports_death"] == [
        "op 0 (check_alive buffer): is_alive() answered False only after 20.0s (bound 5.0s)"]


def test_expected_failure_that_does_not_raise_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"})
    assert "fails_clearly" in judge(run_of([r]))


def test_failed_construction_that_leaves_an_actor_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised",
            error=err("builtins.ValueError", "unknown env RlcNoSuchEnv-v0"),
            probe={"job_actors": {"actors": {"x1": {"state": "ALIVE"}}, "source": "gcs"}})
    assert judge(run_of([r]))["fails_clearly"] == ["op 0 (construct collector) left actors behind: ['x1']"]


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


def test_failing_second_driver_fails():
    peer_op = end(1, "teardown", "evaluator", status="raised", error=err())
    r = end(0, "peer", result={"exit_code": 0, "ops": [peer_op], "missing": []})
    assert "peer_ok" in judge(run_of([r]))


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
            error=err("conformance.verbs.HarnessError", "pid 0 refused"))
    verdict, violations, unknown_ = decide(run_of([r]))
    assert verdict == "error" and violations == {}
    assert unknown_["harness_steps_succeed"] == [
        "op 0 (kill collector): the harness could not do it: conformance.verbs.HarnessError: pid 0 refused"]


def test_a_collector_that_stops_early_fails_batch_counts():
    short = end(0, "iterate", "collector", args={"batches": 2}, result={"batches": 1, "frames": 64})
    assert "batch_counts" in judge(run_of([short]))
    exhausted = end(0, "exhaust", "collector", result={"batches": 7, "frames": 448},
                    probe=actors(collector="DEAD"))
    assert judge(run_of([exhausted]))["batch_counts"] == [
        "op 0 (exhaust collector): 7 batches until total_frames=512; 8 expected (frames_per_batch=64)",
        "op 0 (exhaust collector): 448 frames collected; total_frames is 512"]


def test_a_thread_still_running_right_after_its_components_teardown_fails():
    thread = {"ident": 7, "name": "RayCollector", "module": "impl.component"}
    recs = [end(0, "construct", "collector"),
            end(1, "start", "collector", probe={"threads": [thread]}),
            end(2, "teardown", "collector", result={"calls": []}, probe={"threads": [thread]})]
    assert judge(run_of(recs))["threads_joined"] == [
        "op 2 (teardown collector): thread RayCollector (impl.component) of the collector still "
        "running right after its teardown returned"]


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
                 error=err("builtins.ValueError", "unknown env"),
                 probe={"job_actors": {"unknown": "no answer"}})
    assert decide(run_of([failed]))[0] == "error"


def test_an_oracle_that_raises_is_unknown_not_a_pass(monkeypatch):
    import conformance.oracles as oracles

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
               error=err("builtins.ValueError", "unknown env"), duration=30.0,
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
