"""Oracles on hand-made histories: each rule fails when broken, holds when kept."""
from conformance.history import History
from conformance.oracles import ORACLES, Run, judge
from conformance.scenario import Op, Scenario
from conformance.verdict import decide

RAY = "127.0.0.1:1/session_a"


def scenario(*ops, owner="user"):
    return Scenario("order", "local", owner, "t", tuple(ops))


def end(i, verb, target=None, status="ok", args=None, result=None, probe=None,
        error=None, duration=0.01):
    return {"phase": "end", "i": i, "op": Op(verb, target, args or {}).to_dict(),
            "status": status, "result": result or {}, "probe": {"ray": RAY, **(probe or {})},
            "error": error, "duration": duration}


def err(t="builtins.RuntimeError", m="boom"):
    return {"type": t, "message": m, "traceback": ""}


def run_of(records, owner="user", **kw):
    ops = [Op.from_dict(r["op"]) for r in records if r.get("phase") == "end"]
    recs = [{"phase": "setup", "ray": RAY, "owner": owner}, *records]
    kw.setdefault("exit_code", 0)
    return Run(scenario=scenario(*ops, owner=owner), history=History(recs),
               closed_errors=("impl.errors.ComponentClosedError",), **kw)


def actors(**by_comp):
    return {"actors": {c: {f"{c}-a": {"state": s}} for c, s in by_comp.items()}}


def test_a_clean_run_passes_every_oracle():
    run = run_of([
        end(0, "construct", "buffer", probe=actors(buffer="ALIVE"),
            result={"actors": [{"id": "buffer-a"}]}),
        end(1, "teardown", "buffer", result={"calls": [{"status": "ok", "error": None,
                                                         "duration": 0.1}]},
            probe=actors(buffer="DEAD")),
        {"phase": "final", "ray": RAY, "threads": [], "actors": {}, "job_actors": {},
         "actor_pids_alive": {}},
    ])
    assert judge(run) == {}
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


def test_expected_failure_that_does_not_raise_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"})
    assert "fails_clearly" in judge(run_of([r]))


def test_failed_construction_that_leaves_an_actor_fails():
    r = end(0, "construct", "collector", args={"fail": "unknown_env"}, status="raised",
            error=err("builtins.ValueError", "unknown env RlcNoSuchEnv-v0"),
            probe={"job_actors": {"x1": {"state": "ALIVE"}}})
    assert judge(run_of([r]))["fails_clearly"] == ["op 0 (construct collector) left actors behind: ['x1']"]


def test_signal_is_a_crash_and_check_failed_is_evidence():
    run = run_of([], signal=6, stderr="[C] actor_manager.cc:55: Check failed: it != end\n")
    verdict, violations = decide(run)
    assert verdict == "crash"
    assert any("Check failed" in v for v in violations["no_crash"])


def test_watchdog_timeout_is_a_hang():
    begin = {"phase": "begin", "i": 0, "op": Op("teardown", "evaluator").to_dict(), "deadline": 30}
    run = run_of([begin], stderr="Timeout (0:00:30)!\nThread 0x1 (most recent call first):\n",
                 exit_code=1)
    assert decide(run)[0] == "hang"


def test_interpreter_exit_that_never_finishes_is_a_hang():
    recs = [{"phase": "final", "ray": RAY, "threads": [], "actors": {}, "job_actors": {},
             "actor_pids_alive": {}}, {"phase": "exiting", "bound": 15.0}]
    run = run_of(recs, exit_code=1, stderr="Timeout (0:00:15)!\nThread 0x1 (most recent call first):\n")
    verdict, violations = decide(run)
    assert verdict == "hang"
    assert violations["no_hang"] == ["the interpreter exit did not finish within 15.0s"]


def test_leftover_process_and_thread_fail():
    final = {"phase": "final", "ray": RAY, "actors": {}, "job_actors": {},
             "actor_pids_alive": {},
             "threads": [{"name": "collector-bg", "module": "impl.collector"}]}
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
            end(1, "check_data", "buffer", result={"frames": 0, "at_least": 1})]
    assert "data_kept" in judge(run_of(recs))


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
    r = end(0, "peer", result={"exit_code": 0, "ops": [peer_op]})
    assert "peer_ok" in judge(run_of([r]))


def test_actor_left_alive_after_all_teardowns_fails():
    final = {"phase": "final", "ray": RAY, "threads": [], "actors": {},
             "actor_pids_alive": {}, "job_actors": {"z9": {"state": "ALIVE"}}}
    recs = [end(0, "construct", "buffer"), end(1, "teardown", "buffer", result={"calls": []}),
            final]
    assert "no_leftover_actor" in judge(run_of(recs))


def test_driver_killed_at_its_deadline_is_a_hang():
    run = run_of([], hung=True, exit_code=None, signal=9)
    assert decide(run)[0] == "hang"
    assert "no_hang" in judge(run)


def test_every_oracle_has_a_failing_case_here():
    import sys

    source = open(sys.modules[__name__].__file__).read()
    assert [name for name in ORACLES if f'"{name}"' not in source] == []
