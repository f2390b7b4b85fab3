"""What changed between neighbouring columns of the matrix: for each pair of
adjacent columns of one implementation (two releases of torchrl, in the
order the reports are given), the rows whose verdict or failing oracles
differ. A row that exists in only one of the two (the eval worker's
scenarios before torchrl 0.12) is counted, not listed. Generated with the
matrix (``python -m conformance matrix``), never by hand."""
from __future__ import annotations

import html

from conformance.reports import matrix


def column_name(doc: dict) -> str:
    """``torchrl 0.12.0, ray 2.55.1``: the implementation and the versions
    that tell its columns apart."""
    impl, versions = matrix.column_label(doc)
    package = next((v for v in versions if v.startswith(f"{impl} ")), None)
    ray = next((v for v in versions if v.startswith("ray ")), None)
    return ", ".join([package or impl] + ([ray] if ray else []))


def changes(docs: list[dict]) -> list[dict]:
    """Per pair of adjacent columns of the same implementation:
    ``{"before", "after", "changed": [(row, before cell, after cell)],
    "only_before", "only_after"}`` (cells as ``matrix.cell_text`` without the
    known-failure marks: a change of verdict or of failing oracles)."""
    index = matrix.cells(docs)
    order = [sid for _, members in matrix.rows(docs) for sid in members]
    out = []
    for k in range(len(docs) - 1):
        if docs[k]["impl"] != docs[k + 1]["impl"]:
            continue
        left, right = index[k], index[k + 1]
        changed = []
        for sid in order:
            if sid in left and sid in right:
                a, b = (matrix.cell_text(c, marks=False) for c in (left[sid], right[sid]))
                if a != b or matrix.subset_mark(left[sid]["id"]) != matrix.subset_mark(right[sid]["id"]):
                    changed.append((sid, matrix.cell_text(left[sid]), matrix.cell_text(right[sid])))
        out.append({"before": column_name(docs[k]), "after": column_name(docs[k + 1]),
                    "changed": changed, "only_before": len(left.keys() - right.keys()),
                    "only_after": len(right.keys() - left.keys())})
    return out


def _counts(pair: dict) -> str:
    parts = [f"{len(pair['changed'])} row(s) changed"]
    if pair["only_after"]:
        parts.append(f"{pair['only_after']} row(s) only in {pair['after']}")
    if pair["only_before"]:
        parts.append(f"{pair['only_before']} row(s) only in {pair['before']}")
    return "; ".join(parts)


def render_markdown(docs: list[dict]) -> list[str]:
    """The Markdown section (lines), or nothing without neighbouring columns."""
    pairs = changes(docs)
    if not pairs:
        return []
    out = ["", "## Changes between neighbouring columns", ""]
    for pair in pairs:
        out += [f"### {pair['before']} → {pair['after']}", "", _counts(pair) + ".", ""]
        if pair["changed"]:
            out += ["| scenario | before | after |", "| --- | :---: | :---: |"]
            out += [f"| `{sid}` | " + " | ".join(c.replace("|", "\\|") for c in (a, b)) + " |"
                    for sid, a, b in pair["changed"]]
            out.append("")
    return out


def render_html(docs: list[dict]) -> str:
    """The same section as HTML (inserted before ``</body>``), or ""."""
    e = html.escape
    out = []
    for pair in changes(docs):
        out.append(f"<h2>{e(pair['before'])} → {e(pair['after'])}</h2><p>{e(_counts(pair))}.</p>")
        if pair["changed"]:
            out.append("<table><thead><tr><th>scenario</th><th>before</th><th>after</th></tr>"
                       "</thead><tbody>")
            out += [f"<tr><th>{e(sid)}</th><td>{e(a)}</td><td>{e(b)}</td></tr>"
                    for sid, a, b in pair["changed"]]
            out.append("</tbody></table>")
    return ("<h1>Changes between neighbouring columns</h1>" + "".join(out)) if out else ""
