"""The CI decision from a report: ``python -m conformance gate REPORT.json``.

Exit 0 when the report meets the required claim and has no new failure
(``conformance.reports.ruling``), 1 otherwise, 2 when the report (or the
known-failures file) is missing or unreadable: that is red too.

The required claim (``conformance.reports.claims``): ``--components``,
``--features`` (``all`` or a comma list), ``--fixtures``, ``--profile``;
by default every component, every feature, local and multinode, quick. A
report that covers less fails, whatever its skip count.

The known failures are the report's own (the file the run read, recorded in
each entry's ``expected``), or ``--known-failures FILE``: the report
decided again against that file, without running anything.

``summary`` takes the same options and states the same decision.
"""
from __future__ import annotations

import sys

from conformance.reports import claims, report, ruling
from conformance.reports.summary import first_violation


def lines(doc: dict, decided) -> list[str]:
    """What the gate prints (and the pytest run's terminal section)."""
    claimed = claims.of_report(doc)
    out = [f"claim: {doc['impl']}: "
           + (claimed.describe() if claimed else "(none stated)")
           + f"; required: {decided.required.describe()}"]
    counts = ", ".join(f"{n} {v}" for v, n in (doc.get("summary") or {}).items() if n)
    out.append(f"{len(doc['scenarios'])} scenarios: {counts or 'none'}; "
               + claims.coverage_line(doc))
    if report.shard_note(doc):
        out.append(f"note: {report.shard_note(doc)}")
    for why in decided.shortfall:
        out.append(f"CLAIM NOT MET: {why}")
    cov = doc.get("coverage") or report.coverage(doc["scenarios"])
    if cov.get("not_checked"):  # a declared gap is listed, never silent
        missing = ", ".join(doc.get("features_missing") or []) or "?"
        out.append("NOT CHECKED (features the implementation does not declare: "
                   f"{missing}): " + ", ".join(f"{o} in {k} scenario(s)"
                                             for o, k in sorted(cov["not_checked"].items())))
    for s, why in decided.new_failures:
        if s["verdict"] == "error":
            out.append(f"NEW HARNESS ERROR: {s['id']}: the suite could not observe this scenario "
                       f"as written (unknown: {', '.join(s.get('unknown') or [])}); not a "
                       "verdict on the implementation, and not a pass")
        else:
            out.append(f"NEW {s['verdict'].upper()}: {s['id']}  "
                       f"[{', '.join(s.get('oracles') or [])}]")
        if why:
            out.append(f"    {why}")
        out.append(f"    {first_violation(s)}")
        out.append(f"    repro: {s.get('repro', '')}")
    for s in decided.flaky_passes:
        flaky = (s.get("expected") or {}).get("flaky") or ["?", "?"]
        out.append(f"flaky pass: {s['id']} (listed: fails in {flaky[0]} of {flaky[1]} runs)")
    for s in decided.unexpected_passes:
        out.append(f"unexpected pass: {s['id']} (listed: {s.get('known_failure')}): "
                   "remove it from the known-failures file")
    if decided.unused:
        out.append(f"known-failures entries not in this report: {len(decided.unused)}")
    out.append(f"gate: {decided.headline(doc)}")
    return out


def main(args) -> int:
    found = ruling.from_options(args, "gate: FAILED")
    if found is None:
        return 2
    doc, decided = found
    for line in lines(doc, decided):
        print(line)
    return 0 if decided.green else 1
