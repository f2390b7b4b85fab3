"""Findings as data: an oracle's finding carries its op and its history time,
and the verdict, the report and the summary read those fields."""
from conformance.catalog import find
from conformance.run.execute import result_entry
from conformance.judge.findings import Finding, at, by_time, in_run, unknown_at
from conformance.ops.history import History, HistoryFile
from conformance.judge.oracles import ORACLES, Run, judge
from conformance.ops.scenario import Op, Scenario
from conformance.reports.summary import first_violation
from conformance.judge.verdict import decide, texts

RAY = "127.0.0.1:1/session_a/01000000"
FINAL = {"phase": "final", "ray": RAY, "threads": [], "actors": {},
         "job_actors": {"actors": {}, "source": "gcs"}, "zombie_pids": {}}


def end(i, t, verb, target=None, status="ok", args=None, result=None, error=None,
        probe=None):
    return {"phase": "end", "i": i, "t": t, "op": Op(verb, target, args or {}).to_dict(),
            "status": status, "result": result or {},
            "probe": {"ray": RAY, "threads": [], **(probe or {})}, "error": error,
            "duration": 0.01}


BUFFER_DEAD = {"actors": {"buffer": {"b1": {"state": "DEAD"}}}}


def run_of(records, stderr=""):
    ops = tuple(Op.from_dict(r["op"]) for r in records if r.get("phase") == "end")
    recs = [{"phase": "setup", "t": 0.5, "ray": RAY, "owner": "user",
             "runtime_watch": {"calls": ["ray.init", "ray.shutdown"]}}, *records,
            {**FINAL, "t": 30.0}, {"phase": "exiting", "t": 31.0, "bound": 15.0}]
    return Run(scenario=Scenario("order", "local", "user", "t", ops),
               history=History(HistoryFile(records=recs), expected_ops=len(ops)),
               exit_code=0, stderr=stderr, closed_errors=("impl.errors.ComponentClosedError",))


def err(t="builtins.RuntimeError", m="boom"):
    return {"type": t, "message": m, "traceback": ""}


SLOW_TEARDOWN = {"calls": [{"status": "ok", "error": None, "duration": 12.0}]}


def op4_slow_teardown_then_op5_raises():
    """Op 4's teardown passes its bound (``teardown_within_bound``), then op 5
    raises (``calls_succeed``, a name that sorts first)."""
    return run_of([
        end(0, 1.0, "construct", "buffer"), end(1, 2.0, "construct", "collector"),
        end(2, 3.0, "iterate", "collector", args={"batches": 1}, result={"batches": 1}),
        end(3, 3.5, "wait_frames", "buffer", result={"frames": 64}),
        end(4, 16.0, "teardown", "buffer", result=SLOW_TEARDOWN, probe=BUFFER_DEAD),
        end(5, 17.0, "iterate", "collector", status="raised", error=err(),
            args={"batches": 1})])


def test_a_finding_names_its_op_and_its_history_time():
    found = judge(op4_slow_teardown_then_op5_raises())
    assert found.violations["teardown_within_bound"] == [
        Finding(4, 16.0, "op 4 (teardown buffer) took 12.00s (bound 10.0s)")]
    assert found.violations["calls_succeed"] == [
        Finding(5, 17.0, "op 5 (iterate collector) raised builtins.RuntimeError: boom")]


def test_the_first_violation_is_the_earliest_in_time_not_the_first_oracle_by_name():
    """#29.10: it blamed op 5 (calls_succeed, first by name) when op 4 was the cause."""
    run = op4_slow_teardown_then_op5_raises()
    scenario = run.scenario
    entry = result_entry(scenario, "x", run, decide(run), 1.0)
    assert entry["verdict"] == "fail"
    assert entry["oracles"] == ["calls_succeed", "teardown_within_bound"]
    assert first_violation(entry) == \
        "[teardown_within_bound] op 4 (teardown buffer) took 12.00s (bound 10.0s)"
    # the report's findings: structured, earliest first
    assert [(f["oracle"], f["op"], f["time"], f["unknown"]) for f in entry["findings"]] == [
        ("teardown_within_bound", 4, 16.0, False), ("calls_succeed", 5, 17.0, False)]
    # and the human-readable evidence is as before, per oracle
    assert entry["evidence"]["violations"] == {
        "calls_succeed": ["op 5 (iterate collector) raised builtins.RuntimeError: boom"],
        "teardown_within_bound": ["op 4 (teardown buffer) took 12.00s (bound 10.0s)"]}


def test_the_split_at_a_failed_harness_step_reads_the_op_field():
    """A violation before the failed harness step stands; one at or after it,
    or about no op, is unknown (the run is not the scenario as written)."""
    run = run_of([
        end(0, 1.0, "construct", "buffer"),
        end(1, 14.0, "teardown", "buffer", result=SLOW_TEARDOWN, probe=BUFFER_DEAD),
        end(2, 15.0, "kill", "collector", status="raised", args={"how": "sigkill"},
            error=err("conformance.ops.verbs.HarnessError", "no live target")),
        end(3, 16.0, "iterate", "collector", status="raised", error=err(),
            args={"batches": 1})], stderr="Traceback (most recent call last):\n")
    d = decide(run)
    assert d.verdict == "fail"
    assert texts(d.violations) == {
        "teardown_within_bound": ["op 1 (teardown buffer) took 12.00s (bound 10.0s)"]}
    assert texts(d.unknown)["calls_succeed"] == [
        "op 3 (iterate collector) raised builtins.RuntimeError: boom (seen after the harness "
        "failed at op 2: not judged)"]
    assert texts(d.unknown)["clean_stderr"] == [
        "stderr: Traceback (most recent call last): (seen after the harness failed at op 2: "
        "not judged)"]
    moved = d.unknown["calls_succeed"][0]
    assert (moved.op, moved.time, moved.unknown) == (3, 16.0, True)


def test_the_helpers_write_the_label_and_the_fields():
    r = end(3, 9.5, "check_data", "buffer")
    assert at(r, "raised X") == Finding(3, 9.5, "op 3 (check_data buffer) raised X")
    assert at(r, ": holds 0") == Finding(3, 9.5, "op 3 (check_data buffer): holds 0")
    assert unknown_at(r, ": not observed").unknown
    assert in_run("stderr: x") == Finding(None, None, "stderr: x")
    late, early, untimed = in_run("c", 9.0, 2), in_run("a", 1.0, 5), in_run("z")
    assert by_time([("o", untimed), ("o", late), ("o", early)]) == [
        ("o", early), ("o", late), ("o", untimed)]


def test_an_oracle_that_returns_text_instead_of_findings_is_unknown(monkeypatch):
    import conformance.judge.oracles as oracles

    monkeypatch.setitem(oracles.ORACLES, "data_kept", lambda run: ["op 0 (x) broke"])
    run = run_of([end(0, 1.0, "construct", "buffer")])
    d = decide(run)
    assert d.verdict == "error"
    assert texts(d.unknown)["data_kept"][0].startswith("the oracle raised TypeError: it returned "
                                                       "str 'op 0 (x) broke'")


def test_every_oracle_is_written_with_findings():
    """A clean run of a catalog scenario: every oracle answers a list of findings."""
    scenario = find("order/local/user/collector>buffer>evaluator>ray")
    recs = [end(i, float(i + 1), op.verb, op.target, args=op.args)
            for i, op in enumerate(scenario.ops)]
    run = run_of(recs)
    run.scenario = scenario
    for name, oracle in ORACLES.items():
        found = oracle(run)
        assert all(isinstance(f, Finding) for f in found), (name, found)
