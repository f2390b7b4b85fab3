"""Coverage counts tell a missing feature from a component that was never
built: both are ops not done, for different reasons, and a report that mixed
them would blame an implementation's feature list for a failed constructor."""
from conformance.catalog import find
from conformance.run.execute import result_entry
from conformance.ops.history import History
from conformance.judge.oracles import Run
from conformance.reports.claims import coverage_line
from conformance.reports.report import coverage
from conformance.judge.verdict import Decision


def end(i, op, status, result=None):
    return {"phase": "end", "i": i, "op": op.to_dict(), "status": status,
            "result": result or {}, "duration": 0.0}


def test_ops_on_a_component_never_built_are_counted_apart_from_unsupported_ones():
    # the defaults family's eval worker may fail to construct with its defaults
    failed_construct = find("defaults/local/user/evaluator")
    ops = failed_construct.ops
    records = [end(0, ops[0], "raised", {"reason": "allowed: may_fail"})] + [
        end(i, op, "skipped", {"reason": "no evaluator: never built"})
        for i, op in enumerate(ops[1:], 1)]
    entry = result_entry(failed_construct, "x", Run(failed_construct, History(records)),
                         Decision("pass", {}, {}), 1.0)
    assert entry["unsupported"] == []
    assert entry["not_built"] == [
        "op 1 submit evaluator: skipped: no evaluator: never built",
        "op 2 poll evaluator: skipped: no evaluator: never built",
        "op 3 poll evaluator: skipped: no evaluator: never built",
        "op 4 poll evaluator: skipped: no evaluator: never built",
        "op 5 teardown evaluator: skipped: no evaluator: never built"]

    # a killed buffer on an implementation without is_alive(): check_alive unsupported
    no_liveness = find("killed/local/user/buffer-sigkill>teardown")
    records = [end(i, op, "unsupported" if op.verb == "check_alive" else "ok",
                   {"reason": "x does not support liveness",
                    "not_checked": ["liveness_reports_death"]}
                   if op.verb == "check_alive" else None)
               for i, op in enumerate(no_liveness.ops)]
    other = result_entry(no_liveness, "x", Run(no_liveness, History(records)),
                         Decision("pass", {}, {}), 1.0)
    assert other["unsupported"] == ["op 5 check_alive buffer: unsupported: "
                                    "x does not support liveness",
                                    "op 7 check_alive buffer: unsupported: "
                                    "x does not support liveness"]
    assert other["not_built"] == [] and other["not_checked"] == ["liveness_reports_death"]

    cov = coverage([entry, other])
    assert (cov["ops_unsupported"], cov["ops_not_built"]) == (2, 5)
    doc = {"impl": "x", "scenarios": [entry, other], "summary": {"pass": 2}}
    assert coverage_line(doc) == (
        "2 of 2 scenarios run to a verdict, 0 skipped; operations never run: 2 unsupported, "
        "5 on a component never built (a constructor the scenario lets fail, failed); "
        "oracles not checked: liveness_reports_death (1)")
    assert other["unsupported_features"] == ["liveness", "liveness"] and entry["unsupported_features"] == []
