"""A conformance report as Markdown: ``python -m conformance summary REPORT.json``.

Fit for a GitHub step summary (``>> $GITHUB_STEP_SUMMARY``): a header with
the implementation and versions, a family x fixture matrix (passed/total per
cell, marked when something failed), every new failure with its verdict,
failing oracles, first violation and repro command, then short sections for
known failures, flaky and unexpected passes, and skips. Its first line names
the claim the run makes (components, features, fixtures, profile), its
verdict line the decision of :func:`conformance.reports.ruling.rule`, with the options
``gate`` takes (the required claim, ``--known-failures``): this page and the
gate always agree.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from conformance.judge import findings
from conformance.reports import claims, report, ruling
from conformance.judge.verdict import BAD

#: versions shown first in headers, when present; the rest follow
KEY_VERSIONS = ("ray", "torch", "torchrl", "tensordict", "gymnasium", "python")
NEW_MARK = "❌"
MAX_LINE = 300  # characters of a first violation line
KNOWN_MARK = "⚠️"


def family_order(families) -> list[str]:
    """Families in catalog order, unknown ones after, alphabetically."""
    try:
        from conformance.catalog import FAMILIES
        order = list(FAMILIES)
    except Exception:  # a report read far from the catalog
        order = []
    known = [f for f in order if f in families]
    return known + sorted(set(families) - set(known))


def fixture_order(fixtures) -> list[str]:
    try:
        from conformance.ops.scenario import FIXTURES
        order = list(FIXTURES)
    except Exception:
        order = []
    known = [f for f in order if f in fixtures]
    return known + sorted(set(fixtures) - set(known))


def version_items(versions: dict) -> list[tuple[str, str]]:
    keys = [k for k in KEY_VERSIONS if k in versions]
    keys += sorted(k for k in versions if k not in KEY_VERSIONS)
    return [(k, str(versions[k])) for k in keys]


def _one_line(text: str) -> str:
    """The first line of ``text``, its whitespace collapsed, at most MAX_LINE long."""
    lines = str(text).strip().splitlines()
    line = " ".join(lines[0].split()) if lines else ""
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "…"


def findings_of(entry: dict) -> list[dict]:
    """The entry's findings, earliest first (``{"oracle", "op", "time",
    "text", "unknown"}``). A report written before findings were data keeps
    only texts per oracle: they are read back with ``findings.from_text``
    (the op from each text's "op N (...)" label) and ordered by op, those
    tied to no op after, ties in the entry's oracle order; its violations
    before its unknown findings."""
    if entry.get("findings"):
        return entry["findings"]
    ev = entry.get("evidence") or {}
    out = []
    for key, unknown in (("violations", False), ("unknown", True)):
        texts = ev.get(key) or {}
        order = [o for o in entry.get("oracles") or [] if o in texts]
        order += [o for o in texts if o not in order]
        found = [(o, findings.from_text(t, unknown)) for o in order for t in texts[o] or []]
        out += [f.as_dict(o) for o, f in findings.by_time(found)]
    return out


def finding_line(f: dict) -> str:
    """``[oracle] text`` of one finding (``findings_of``), on one line."""
    return f"[{f['oracle']}{': unknown' if f.get('unknown') else ''}] {_one_line(f['text'])}"


def first_violation(entry: dict) -> str:
    """The earliest violation of the run (``findings_of``: by time, or by op
    for a report from before findings were data), else its earliest unknown
    finding, else how the driver ended."""
    found = findings_of(entry)
    if found:
        return finding_line(next((f for f in found if not f.get("unknown")), found[0]))
    ev = entry.get("evidence") or {}
    if ev.get("signal"):
        return f"driver killed by signal {ev['signal']}"
    if ev.get("exit_code"):
        return f"driver exit code {ev['exit_code']}"
    return "(no violation recorded)"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def grid(doc: dict, decided) -> tuple[list[str], list[str], dict]:
    """Families, fixtures and {(family, fixture): Counter(verdict / 'new' / 'known')}."""
    new = {s["id"] for s, _ in decided.new_failures}
    cells: dict = defaultdict(Counter)
    for s in doc["scenarios"]:
        c = cells[(s["family"], s["fixture"])]
        c[s["verdict"]] += 1
        c["total"] += 1
        if s["verdict"] in BAD:
            c["new" if s["id"] in new else "known"] += 1
    families = family_order({f for f, _ in cells})
    fixtures = fixture_order({x for _, x in cells})
    return families, fixtures, cells


def _count_cell(c: Counter) -> str:
    if not c["total"]:
        return "–"
    text = f"{c['pass']}/{c['total']}"
    if c["new"]:
        text += f" {NEW_MARK}"
    elif c["known"]:
        text += f" {KNOWN_MARK}"
    if c["skip"]:
        text += f" ({c['skip']} skip)"
    return text


def render(doc: dict, decided=None) -> str:
    """The page; ``decided``: the ruling to state (default: ``ruling.rule(doc)``)."""
    decided = decided or ruling.rule(doc)
    scenarios = doc["scenarios"]
    counts = Counter(s["verdict"] for s in scenarios)
    claimed = claims.of_report(doc)
    out = [f"# Lifecycle conformance: {_code(doc['impl'])}: "
           + (claimed.describe() if claimed else "no claim stated"), ""]
    out.append(" · ".join(f"{k} {_code(v)}" for k, v in version_items(doc.get("versions", {})))
               + (f" · generated {doc['generated']}" if doc.get("generated") else ""))
    if report.shard_note(doc):
        out += ["", f"Only part of a run: {report.shard_note(doc)}."]
    out.append("")
    tally = ", ".join(f"{counts[v]} {v}" for v in ("pass", *BAD, "skip") if counts[v])
    new = decided.new_failures
    if decided.green:
        verdict = "✅ **gate: green**: no new failure, the claim met"
    else:
        verdict = f"{NEW_MARK} **gate: red**: " + "; ".join(
            ([f"{len(new)} new failure(s)"] if new else [])
            + (["the report covers less than the claim"] if decided.shortfall else []))
    out += [f"{verdict}. {len(scenarios)} scenarios: {tally or 'none'}."]
    if decided.known_failures or decided.unexpected_passes or decided.flaky_passes:
        out[-1] += (f" Known failures still failing: {len(decided.known_failures)};"
                    f" flaky passes: {len(decided.flaky_passes)};"
                    f" unexpected passes: {len(decided.unexpected_passes)}.")
    out += ["", f"**Claim required**: {decided.required.describe()}."]
    out += [f"- {NEW_MARK} not met: {why}" for why in decided.shortfall]
    out += ["", f"**Coverage**: {claims.coverage_line(doc)}.", ""]

    families, fixtures, cells = grid(doc, decided)
    out += ["## Family × fixture", "",
            f"passed/total per cell; {NEW_MARK} a new failure, {KNOWN_MARK} known failures only.",
            ""]
    out.append("| family | " + " | ".join(fixtures) + " | all |")
    out.append("| --- | " + " | ".join("---:" for _ in fixtures) + " | ---: |")
    col_totals = {fx: Counter() for fx in fixtures}
    for fam in families:
        row_total = Counter()
        row = []
        for fx in fixtures:
            c = cells.get((fam, fx), Counter())
            row.append(_count_cell(c))
            row_total.update(c)
            col_totals[fx].update(c)
        out.append(f"| {fam} | " + " | ".join(row) + f" | {_count_cell(row_total)} |")
    all_total = Counter()
    for c in col_totals.values():
        all_total.update(c)
    out.append("| **all** | " + " | ".join(f"**{_count_cell(col_totals[fx])}**" for fx in fixtures)
               + f" | **{_count_cell(all_total)}** |")
    out.append("")

    if new:
        out += [f"## {NEW_MARK} New failures ({len(new)})", ""]
        for s, why in new:
            oracles = ", ".join(_code(o) for o in s.get("oracles") or []) or "none"
            out += [f"### {_code(s['id'])}: {s['verdict'].upper()}", ""]
            out += [f"- {why}"] if why else []
            out += [f"- failing oracles: {oracles}",
                    f"- first violation: {_code(first_violation(s))}",
                    "- reproduce:", "", "  ```bash", f"  {s.get('repro', '')}", "  ```", ""]

    known = decided.known_failures
    if known:
        out += [f"## {KNOWN_MARK} Known failures ({len(known)})", "",
                "Listed in the known-failures file; they do not turn the gate red.", "",
                "| scenario | verdict | failing oracles | reason (known-failures file) |",
                "| --- | --- | --- | --- |"]
        for s in known:
            out.append(f"| {_cell(_code(s['id']))} | {s['verdict']} | "
                       f"{_cell(', '.join(s.get('oracles') or [])) or '–'} | "
                       f"{_cell(str(s['known_failure']))} |")
        out += ["", "<details><summary>first violations and repro commands</summary>", ""]
        for s in known:
            out += [f"- {_code(s['id'])}: {_code(first_violation(s))}",
                    f"  repro: {_code(s.get('repro', ''))}"]
        out += ["", "</details>", ""]

    if decided.flaky_passes:
        out += [f"## Flaky passes ({len(decided.flaky_passes)})", "",
                "Listed as failing in some runs (flaky): they passed this time.", ""]
        out += [f"- {_code(s['id'])} (listed: {s['known_failure']})"
                for s in decided.flaky_passes]
        out.append("")

    if decided.unexpected_passes:
        out += [f"## Unexpected passes ({len(decided.unexpected_passes)})", "",
                "Listed as known failures but passed: remove them from the known-failures file.",
                ""]
        out += [f"- {_code(s['id'])} (listed: {s['known_failure']})"
                for s in decided.unexpected_passes]
        out.append("")

    skipped = [s for s in scenarios if s["verdict"] == "skip"]
    if skipped:
        out += [f"## Skipped ({len(skipped)})", ""]
        out += [f"- {_code(s['id'])}: {(s.get('evidence') or {}).get('reason', '')}"
                for s in skipped]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(args) -> int:
    found = ruling.from_options(args, "summary")
    if found is None:
        return 2
    text = render(*found)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text, end="")
    return 0
