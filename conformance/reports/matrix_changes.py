"""What changed between neighbouring releases in the matrix: the columns of
one implementation in release order (the implementation's version, then
Ray's), and for each two in a row the rows whose verdict, failing oracles or
component subset (``~no-evaluator``) differ. A row that exists in only one
of the two (the eval worker's scenarios before torchrl 0.12) is counted, not
listed; a change of known-failure mark alone is not a change. Generated with
the matrix (``python -m conformance matrix``), never by hand."""
from __future__ import annotations

import html

from packaging.version import InvalidVersion, Version

from conformance.reports import matrix


def _version(text: str | None) -> tuple:
    try:
        return (0, Version(text or ""))
    except InvalidVersion:
        return (1, text or "")


def _versions(doc: dict) -> tuple[str | None, str | None]:
    """(the implementation's own version, Ray's) of a report's column."""
    versions = doc.get("versions") or {}
    return versions.get(doc["impl"]), versions.get("ray")


def column_name(doc: dict) -> str:
    """``torchrl 0.12.0, ray 2.55.1``: what tells one release's column from
    its neighbours'."""
    own, ray = _versions(doc)
    return ", ".join([f"{doc['impl']} {own}" if own else doc["impl"]]
                     + ([f"ray {ray}"] if ray else []))


def neighbours(docs: list[dict]) -> list[tuple[int, int]]:
    """Index pairs of the reports to compare: each implementation's columns
    in release order, two in a row; columns of the same release (the same
    name: they differ in torch or Python only) are not compared."""
    pairs = []
    for impl in dict.fromkeys(d["impl"] for d in docs):
        ks = sorted((k for k, d in enumerate(docs) if d["impl"] == impl),
                    key=lambda k: tuple(map(_version, _versions(docs[k]))))
        pairs += [(a, b) for a, b in zip(ks, ks[1:])
                  if column_name(docs[a]) != column_name(docs[b])]
    return pairs


def changes(docs: list[dict]) -> list[dict]:
    """Per pair of ``neighbours``: ``{"before", "after", "changed": [(row,
    entry before, entry after)], "only_before", "only_after"}``."""
    index = matrix.cells(docs)
    order = [sid for _, members in matrix.rows(docs) for sid in members]
    out = []
    for a, b in neighbours(docs):
        left, right = index[a], index[b]
        changed = [(sid, left[sid], right[sid]) for sid in order
                   if sid in left and sid in right and _differ(left[sid], right[sid])]
        out.append({"before": column_name(docs[a]), "after": column_name(docs[b]),
                    "changed": changed, "only_before": len(left.keys() - right.keys()),
                    "only_after": len(right.keys() - left.keys())})
    return out


def _differ(x: dict, y: dict) -> bool:
    return (matrix.cell_text(x, marks=False) != matrix.cell_text(y, marks=False)
            or matrix.subset_mark(x["id"]) != matrix.subset_mark(y["id"]))


def _counts(pair: dict) -> str:
    parts = [f"{len(pair['changed'])} row(s) changed"]
    if pair["only_after"]:
        parts.append(f"{pair['only_after']} row(s) only in {pair['after']}")
    if pair["only_before"]:
        parts.append(f"{pair['only_before']} row(s) only in {pair['before']}")
    return "; ".join(parts)


def render_markdown(docs: list[dict]) -> list[str]:
    """The Markdown section (lines), or none without neighbouring releases."""
    pairs = changes(docs)
    out = ["", "## Changes between neighbouring releases"] if pairs else []
    for pair in pairs:
        out += ["", f"### {pair['before']} → {pair['after']}", "", _counts(pair) + "."]
        if pair["changed"]:
            out += ["", "| scenario | before | after |", "| --- | :---: | :---: |"]
            out += [f"| `{sid}` | " + " | ".join(matrix.cell_text(e).replace("|", "\\|")
                                               for e in (x, y)) + " |"
                    for sid, x, y in pair["changed"]]
    return out


def _html_cell(entry: dict) -> str:
    e = html.escape
    verdict, classes, tip = matrix.classify(entry)
    label = matrix.LABELS.get(verdict, (verdict, ""))[0]
    oracles = f" <code>{e(', '.join(entry['oracles']))}</code>" if entry.get("oracles") else ""
    mark = matrix.subset_mark(entry["id"])
    sub = f' <span class="sub">{e(mark)}</span>' if mark else ""
    cls = " ".join(["v", f"v-{verdict}", *classes])
    return f'<td class="{cls}" title="{e(tip)}">{e(label)}{oracles}{sub}</td>'


def render_html(docs: list[dict]) -> str:
    """The same section as HTML (for before ``</body>``), or ""."""
    e = html.escape
    out = []
    for pair in changes(docs):
        out.append(f"<h2>{e(pair['before'])} → {e(pair['after'])}</h2><p>{e(_counts(pair))}.</p>")
        if pair["changed"]:
            out.append("<table><thead><tr><th>scenario</th><th>before</th><th>after</th></tr>"
                       "</thead><tbody>")
            out += [f"<tr><th>{e(sid)}</th>{_html_cell(x)}{_html_cell(y)}</tr>"
                    for sid, x, y in pair["changed"]]
            out.append("</tbody></table>")
    return ("<h1>Changes between neighbouring releases</h1>" + "\n".join(out)) if out else ""
