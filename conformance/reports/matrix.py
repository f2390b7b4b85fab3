"""The scenario x implementation matrix, generated from reports, never by
hand (the command, ``python -m conformance matrix``, is ``matrix_cli``).

Rows are scenario ids grouped by family (catalog order; a component-subset
variant, ``...~no-evaluator``, in the row of the scenario it stands for,
marked in its cell); columns are one per report, labelled with the
implementation and its key versions. Each cell is colored by verdict; its tooltip names the failing oracles, the first
violation and, for a known failure, the reason given in the known-failures
file. The HTML is self-contained (inline CSS, no script, no external asset).
"""
from __future__ import annotations

import html
import time
from collections import Counter

from conformance.reports import report
from conformance.catalog import subset_names
from conformance.catalog.build import SUBSET_MARK, components_of
from conformance.reports.summary import BAD, family_order, first_violation

#: verdict -> (label, Markdown mark)
LABELS = {
    "pass": ("pass", "✅"),
    "fail": ("FAIL", "❌"),
    "crash": ("CRASH", "💥"),
    "hang": ("HANG", "⏳"),
    "setup-error": ("SETUP", "🛠️"),
    "error": ("ERROR", "⚠"),
    "skip": ("skip", "⏭️"),
    None: ("–", "–"),
}
COLUMN_VERSIONS = ("ray", "torch", "torchrl", "python")
HIDDEN_VERSIONS = {"tensordict", "gymnasium", "impl"}

CSS = """
:root { --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 13px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       margin: 24px; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.meta { color: var(--muted); margin: 0 0 12px; }
.legend { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 14px; }
.legend span { padding: 2px 8px; border-radius: 10px; border: 1px solid var(--line);
               font-size: 12px; }
table { border-collapse: separate; border-spacing: 0; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; white-space: nowrap; }
thead th { position: sticky; top: 0; z-index: 2; background: #f6f8fa; vertical-align: bottom;
           text-align: center; border-bottom: 2px solid #8c959f; font-weight: 600; }
thead th.corner { text-align: left; left: 0; z-index: 3; }
thead th.col { white-space: normal; overflow-wrap: anywhere; padding: 6px 6px; }
thead th .impl { font-size: 13px; display: block; }
thead th .ver { display: block; font-weight: 400; color: var(--muted); font-size: 11px; }
thead th .tally { display: block; font-weight: 400; font-size: 11px; margin-top: 2px; }
tbody th { position: sticky; left: 0; z-index: 1; background: #fff; text-align: left;
           font-weight: 400; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
           font-size: 12px; border-right: 1px solid var(--line); }
tbody th .fam { color: #8c959f; }
tr.family th, tr.family td { background: #eaeef2; font-weight: 600; font-family: inherit;
                              font-size: 13px; border-top: 12px solid #fff; }
tr.family th { border-right: none; }
tr.family td { text-align: center; font-weight: 400; font-size: 12px; }
td.v, thead th.col { width: 168px; min-width: 168px; max-width: 168px; }
td.v { text-align: center; font-size: 12px; font-weight: 600; border-left: 2px solid #fff; }
tr.family td.bad { color: #a40e26; font-weight: 600; }
tr.family td.known-only { color: #9a6700; font-weight: 600; }
td.v-pass { background: #dafbe1; color: #116329; font-weight: 400; }
td.v-fail { background: #ffcecb; color: #a40e26; }
td.v-crash { background: #a40e26; color: #fff; }
td.v-hang { background: #ffd8b5; color: #953800; }
td.v-setup-error { background: #fff1a8; color: #7d4e00; }
td.v-error { background: #e6e0ff; color: #3b2a8c; }
td.v-skip { background: #f6f8fa; color: #8c959f; font-weight: 400; }
td.v-none { background: #fff; color: #afb8c1; font-weight: 400; }
td.known { background-image: repeating-linear-gradient(135deg, transparent 0 5px,
           rgba(255,255,255,.55) 5px 10px); }
td.v-crash.known { background-image: repeating-linear-gradient(135deg, transparent 0 5px,
                   rgba(0,0,0,.28) 5px 10px); }
td.known::after { content: " known"; font-weight: 400; font-size: 10px; }
td.unexpected { box-shadow: inset 0 0 0 2px #1a7f37; }
td.unexpected::after { content: " unexpected"; font-size: 10px; }
td.v .sub { font-weight: 400; font-size: 10px; }
tr:hover th, tr:hover td.v { filter: brightness(.95); }
"""


def _v(doc: dict, key: str) -> str | None:
    return (doc.get("versions") or {}).get(key)


def column_label(doc: dict) -> tuple[str, list[str]]:
    """The implementation and its key versions (the adapter's own ones too)."""
    versions = doc.get("versions") or {}
    keys = [k for k in COLUMN_VERSIONS if k in versions]
    keys += sorted(k for k in versions
                   if k not in COLUMN_VERSIONS and k not in HIDDEN_VERSIONS
                   and k not in report.PACKAGES)
    return doc["impl"], [f"{k} {versions[k]}" for k in keys]


def row_of(docs: list[dict]) -> dict[str, str]:
    """Scenario id -> the id of its row. A component-subset variant
    (``order/.../collector>ray>buffer~no-evaluator``) shares the row of the
    scenario written for every component that it stands for, when exactly
    one such scenario is in the reports: a row reads as one scenario's
    history across implementations and releases."""
    full = sorted({s["id"] for d in docs for s in d["scenarios"] if SUBSET_MARK not in s["id"]})
    out = {}
    for doc in docs:
        for s in doc["scenarios"]:
            sid = s["id"]
            if SUBSET_MARK not in sid:
                out[sid] = sid
                continue
            comps = components_of(sid.split("/", 3)[-1])
            sources = [f for f in full if sid in subset_names(f, comps)]
            out[sid] = sources[0] if len(sources) == 1 else sid
    return out


def subset_mark(sid: str) -> str:
    """The component-subset mark of an id (``~no-evaluator``), or ""."""
    return SUBSET_MARK + sid.split(SUBSET_MARK, 1)[1] if SUBSET_MARK in sid else ""


def cells(docs: list[dict]) -> list[dict]:
    """Per report: row id -> its scenario entry (``row_of``)."""
    rows_of = row_of(docs)
    return [{rows_of[s["id"]]: s for s in d["scenarios"]} for d in docs]


def rows(docs: list[dict]) -> list[tuple[str, list[str]]]:
    """[(family, [row ids])] over all reports, in catalog order."""
    rows_of = row_of(docs)
    ids = {rows_of[s["id"]]: s["family"] for d in docs for s in d["scenarios"]}
    try:
        from conformance import catalog
        fixtures = sorted({s["fixture"] for d in docs for s in d["scenarios"]})
        from conformance.ops.scenario import FIXTURES
        position = {s.id: i for i, s in enumerate(
            catalog.scenarios([f for f in FIXTURES if f in fixtures], "full"))}
    except Exception:  # a report of ids the catalog does not know
        position = {}
    out = []
    for fam in family_order(set(ids.values())):
        members = [i for i in ids if ids[i] == fam]
        members.sort(key=lambda i: (position.get(i, len(position)), i))
        out.append((fam, members))
    return out


def classify(entry: dict | None) -> tuple[str, list[str], str]:
    """(verdict key, extra CSS classes, tooltip) of one cell."""
    if entry is None:
        return "none", [], "not run in this report"
    verdict = entry["verdict"]
    classes, tip = [], [verdict]
    if entry.get("oracles"):
        tip.append("failing oracles: " + ", ".join(entry["oracles"]))
    if verdict in BAD:
        tip.append(first_violation(entry))
        if entry.get("known_failure"):
            classes.append("known")
            tip.append(f"known failure: {entry['known_failure']}")
    elif verdict == "pass" and entry.get("known_failure"):
        classes.append("unexpected")
        tip.append(f"unexpected pass: listed as known failure ({entry['known_failure']})")
    elif verdict == "skip":
        tip.append((entry.get("evidence") or {}).get("reason", ""))
    return verdict, classes, "\n".join(t for t in tip if t)


def _tally(scenarios) -> str:
    c = Counter(s["verdict"] for s in scenarios)
    known = sum(1 for s in scenarios if s["verdict"] in BAD and s.get("known_failure"))
    text = " · ".join(f"{c[v]} {v}" for v in ("pass", *BAD, "skip") if c[v])
    return text + (f" ({known} known)" if known else "")


def render_html(docs: list[dict], sources: list[str]) -> str:
    e = html.escape
    index = cells(docs)
    groups = rows(docs)
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Lifecycle conformance matrix</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Lifecycle conformance matrix</h1>",
           f'<p class="meta">{sum(len(m) for _, m in groups)} scenarios × {len(docs)} '
           f"implementation(s). Generated {e(time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))} "
           f"by <code>python -m conformance matrix</code> from {e(', '.join(sources))}; "
           "do not edit by hand. Hover a cell for the failing oracles.</p>",
           '<div class="legend">']
    for key in ("pass", "fail", "crash", "hang", "error", "setup-error", "skip", None):
        cls = "v-none" if key is None else f"v-{key}"
        name = "not run" if key is None else key
        out.append(f'<span class="{cls}" style="{_legend_style(cls)}">{e(name)}</span>')
    out.append(f'<span style="{_legend_style("v-fail")};background-image:repeating-linear-'
               'gradient(135deg,transparent 0 5px,rgba(255,255,255,.55) 5px 10px)">'
               "known failure (striped)</span>")
    out.append('<span style="box-shadow:inset 0 0 0 2px #1a7f37;border-color:#1a7f37">'
               "unexpected pass (outlined)</span></div>")
    out += ["<table>", "<thead><tr><th class=\"corner\">scenario</th>"]
    for doc, source in zip(docs, sources):
        impl, versions = column_label(doc)
        impl_html = e(impl).replace(":", ":<wbr>").replace(".", ".<wbr>")
        out.append(f'<th class="col" title="{e(source)}"><span class="impl">{impl_html}</span>'
                   + "".join(f'<span class="ver">{e(v)}</span>' for v in versions)
                   + (f'<span class="ver">{e(doc["generated"])}</span>' if doc.get("generated") else "")
                   + f'<span class="tally">{e(_tally(doc["scenarios"]))}</span></th>')
    out.append("</tr></thead><tbody>")
    for fam, members in groups:
        out.append(f'<tr class="family"><th>{e(fam)} ({len(members)})</th>')
        for idx in index:
            got = [idx[i] for i in members if i in idx]
            passed = sum(1 for s in got if s["verdict"] == "pass")
            bad = [s for s in got if s["verdict"] in BAD]
            cls = (' class="bad"' if any(not s.get("known_failure") for s in bad)
                   else ' class="known-only"' if bad else "")
            out.append(f"<td{cls}>{passed}/{len(got)} pass</td>" if got else "<td>–</td>")
        out.append("</tr>")
        for sid in members:
            rest = sid[len(fam) + 1:] if sid.startswith(fam + "/") else sid
            out.append(f'<tr><th title="{e(sid)}"><span class="fam">{e(fam)}/</span>{e(rest)}</th>')
            for idx in index:
                entry = idx.get(sid)
                verdict, classes, tip = classify(entry)
                label = LABELS.get(None if verdict == "none" else verdict, (verdict, ""))[0]
                mark = subset_mark(entry["id"]) if entry else ""
                if mark:
                    tip = f"run as {entry['id']} (without the {mark[4:]})\n{tip}"
                cls = " ".join(["v", f"v-{verdict}", *classes])
                sub = f' <span class="sub">{e(mark)}</span>' if mark else ""
                out.append(f'<td class="{cls}" title="{e(tip)}">{e(label)}{sub}</td>')
            out.append("</tr>")
    out += ["</tbody></table>", "</body></html>", ""]
    return "\n".join(out)


def _legend_style(cls: str) -> str:
    colors = {"v-pass": ("#dafbe1", "#116329"), "v-fail": ("#ffcecb", "#a40e26"),
              "v-crash": ("#a40e26", "#fff"), "v-hang": ("#ffd8b5", "#953800"),
              "v-setup-error": ("#fff1a8", "#7d4e00"), "v-error": ("#e6e0ff", "#3b2a8c"), "v-skip": ("#f6f8fa", "#8c959f"),
              "v-none": ("#fff", "#8c959f")}
    bg, fg = colors[cls]
    return f"background:{bg};color:{fg}"


def render_markdown(docs: list[dict]) -> str:
    index = cells(docs)
    heads = []
    for doc in docs:
        impl, versions = column_label(doc)
        heads.append(f"{impl}<br>{', '.join(versions)}" if versions else impl)
    out = ["# Lifecycle conformance matrix", "",
           "Generated by `python -m conformance matrix`; do not edit by hand. "
           "✅ pass · ❌ fail · 💥 crash · ⏳ hang · ⚠ error (the harness could not observe it) · "
           "🛠️ setup-error · ⏭️ skip · – not run; "
           "*(known)*: listed in the known-failures file; *(unexpected)*: listed but passed; "
           "*~no-evaluator*: run without that component (the implementation lacks it), "
           "as the row's scenario written for every component.", "",
           "| scenario | " + " | ".join(h.replace("|", "\\|") for h in heads) + " |",
           "| --- |" + " :---: |" * len(docs)]
    for fam, members in rows(docs):
        tallies = []
        for idx in index:
            got = [idx[i] for i in members if i in idx]
            tallies.append(f"**{sum(s['verdict'] == 'pass' for s in got)}/{len(got)}**"
                           if got else "–")
        out.append(f"| **{fam}** | " + " | ".join(tallies) + " |")
        for sid in members:
            row = [cell_text(idx.get(sid)).replace("|", "\\|") for idx in index]
            out.append(f"| `{sid}` | " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def cell_text(entry: dict | None, marks: bool = True) -> str:
    """A Markdown cell: the verdict, its failing oracles and, with ``marks``,
    the known-failure and component-subset marks."""
    if entry is None:
        return "–"
    verdict, classes, _ = classify(entry)
    label, mark = LABELS.get(verdict, (verdict, ""))
    text = f"{mark} {label}"
    if entry.get("oracles"):
        text += f" `{', '.join(entry['oracles'])}`"
    if marks and "known" in classes:
        text += " *(known)*"
    if marks and "unexpected" in classes:
        text += " *(unexpected)*"
    if marks and subset_mark(entry["id"]):
        text += f" *{subset_mark(entry['id'])}*"
    return text
