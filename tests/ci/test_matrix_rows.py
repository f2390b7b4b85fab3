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



def _release(version, *entries, impl="torchrl", ray="2.60.0"):
    doc = _doc(impl, *entries)
    doc["versions"].update({impl: version, "ray": ray})
    return doc


def _texts(pair):
    return [(sid, matrix.cell_text(x), matrix.cell_text(y)) for sid, x, y in pair["changed"]]


def test_neighbouring_releases_list_the_rows_that_changed_and_only_those():
    from conformance.reports import matrix_changes

    same = "double_close/multinode/user/collector-concurrent"
    # given out of release order (0.13.3 first, as a glob or a hand might):
    # compared in release order; rllib is no neighbour of torchrl
    docs = [_release("0.13.3", (FULL, "fail"), (same, "pass")),
            _release("0.11.1", (NO_EVAL, "crash"), (same, "fail")),
            _doc("rllib", (NO_BUFFER, "pass")),
            _release("0.12.0", (FULL, "fail"), (same, "fail"),
                     ("use_after_close/local/user/evaluator", "fail"))]
    pairs = matrix_changes.changes(docs)
    assert [(p["before"], p["after"]) for p in pairs] == [
        ("torchrl 0.11.1, ray 2.60.0", "torchrl 0.12.0, ray 2.60.0"),
        ("torchrl 0.12.0, ray 2.60.0", "torchrl 0.13.3, ray 2.60.0")]
    # the subset row's crash -> the whole scenario's fail; the unchanged fail is not listed
    assert _texts(pairs[0]) == [(FULL, "💥 CRASH *~no-evaluator*", "❌ FAIL")]
    assert (pairs[0]["only_after"], pairs[0]["only_before"]) == (1, 0)
    assert _texts(pairs[1]) == [(same, "❌ FAIL", "✅ pass")]
    assert pairs[1]["only_before"] == 1
    md = "\n".join(matrix_changes.render_markdown(docs))
    assert "### torchrl 0.12.0, ray 2.60.0 → torchrl 0.13.3, ray 2.60.0" in md
    assert f"| `{same}` | ❌ FAIL | ✅ pass |" in md
    page = matrix_changes.render_html(docs)
    # HTML cells, not Markdown: no backticks or asterisks, the subset in its own span
    assert '>CRASH <span class="sub">~no-evaluator</span></td>' in page, page
    assert "*" not in page and "`" not in page


def test_the_same_verdict_with_other_failing_oracles_is_a_change_a_known_mark_alone_is_not():
    from conformance.reports import matrix_changes

    a, b = _release("0.12.0", (FULL, "fail")), _release("0.13.3", (FULL, "fail"))
    a["scenarios"][0]["oracles"], b["scenarios"][0]["oracles"] = ["data_kept"], ["no_ray_restart"]
    (pair,) = matrix_changes.changes([a, b])
    assert _texts(pair) == [(FULL, "❌ FAIL `data_kept`", "❌ FAIL `no_ray_restart`")]
    b["scenarios"][0].update(oracles=["data_kept"], known_failure="listed")
    assert matrix_changes.changes([a, b])[0]["changed"] == []
    assert matrix_changes.changes([a]) == [] and matrix_changes.render_markdown([a]) == []
    # the same release twice (another torch or Python): not neighbours
    assert matrix_changes.changes([a, _release("0.12.0", (FULL, "pass"))]) == []


def test_the_matrix_command_writes_the_changes_below_the_table_in_both_formats(tmp_path):
    import json
    from types import SimpleNamespace

    from conformance.reports import matrix_cli

    odd = "killed/local/user/a|b"  # a pipe in a cell's oracle must not split the row
    a, b = _release("0.12.0", (odd, "fail")), _release("0.13.3", (odd, "pass"))
    a["scenarios"][0]["oracles"] = ["x|y"]
    paths = []
    for name, doc in (("a", a), ("b", b)):
        doc.update(schema=2, generated="2026-11-26T00:00:00Z")
        paths.append(str(tmp_path / f"{name}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    html_out, md_out = tmp_path / "m.html", tmp_path / "m.md"
    assert matrix_cli.main(SimpleNamespace(reports=paths, html=str(html_out),
                                           markdown=str(md_out))) == 0
    md = md_out.read_text()
    assert md.endswith("| ✅ pass |\n"), md[-200:]
    table, section = md.split("## Changes between neighbouring releases")
    assert f"| `{odd}` | ❌ FAIL `x\\|y` | ✅ pass |" in section
    page = html_out.read_text()
    assert page.index("<h1>Changes between neighbouring releases</h1>") < page.index("</body>")
