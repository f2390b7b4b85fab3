"""The matrix's rows: one scenario's history across implementations and
releases, a component-subset variant in the row of the scenario it stands
for (no Ray: synthetic reports)."""
import html

from conformance.reports import matrix


def _doc(impl, *entries):
    return {"impl": impl, "versions": {"ray": "2.60.0"},
            "scenarios": [{"id": sid, "family": sid.split("/")[0], "fixture": sid.split("/")[1],
                           "verdict": verdict, "oracles": []} for sid, verdict in entries]}


FULL = "order/multinode/user/collector>ray>buffer>evaluator"
NO_EVAL = "order/multinode/user/collector>ray>buffer~no-evaluator"
NO_BUFFER = "order/multinode/user/collector>ray>evaluator~no-buffer"


def test_a_subset_variant_shares_the_row_of_the_scenario_it_stands_for():
    docs = [_doc("torchrl-0.11", (NO_EVAL, "crash")), _doc("torchrl-0.12", (FULL, "fail")),
            _doc("rllib", (NO_BUFFER, "pass"))]
    assert matrix.rows(docs) == [("order", [FULL])]
    cells = matrix.cells(docs)
    assert [c[FULL]["id"] for c in cells] == [NO_EVAL, FULL, NO_BUFFER]
    md = matrix.render_markdown(docs)
    assert f"| `{FULL}` | 💥 CRASH *~no-evaluator* | ❌ FAIL | ✅ pass *~no-buffer* |" in md, md
    assert html.escape(f"run as {NO_EVAL}") in matrix.render_html(docs, ["a", "b", "c"])


def test_a_subset_variant_that_stands_for_several_scenarios_keeps_its_own_row():
    # without the eval worker, these two orders are the same scenario
    other = "order/multinode/user/collector>ray>evaluator>buffer"
    docs = [_doc("torchrl-0.11", (NO_EVAL, "crash")), _doc("torchrl-0.12", (FULL, "fail"), (other, "fail"))]
    (family, members), = matrix.rows(docs)
    assert family == "order" and sorted(members) == sorted([FULL, other, NO_EVAL])
    assert matrix.cells(docs)[0] == {NO_EVAL: docs[0]["scenarios"][0]}
