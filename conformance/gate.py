"""The CI decision from a report: ``python -m conformance gate REPORT.json``.

Exit 0 when there is no new failure, 1 otherwise. A new failure is a
``fail``, ``crash``, ``hang``, ``error`` or ``setup-error`` whose id is not in the
known-failures file the run used (report entries carry ``known_failure``).
Listed scenarios that now pass are reported and do not fail the gate.
More than ``--max-skipped N`` skipped scenarios (default 0: a conformance
claim runs every scenario) also fail it, so that an adapter cannot go green
by declaring no features.
Exit 2 when the report is missing or unreadable (the run did not produce
one: that is red too).
"""
from __future__ import annotations

import sys

from conformance import report
from conformance.summary import first_violation


def decide(doc: dict, out=sys.stdout, max_skipped: int = 0) -> int:
    g = report.gate(doc)
    n = len(doc["scenarios"])
    cov = doc.get("coverage") or report.coverage(doc["scenarios"])
    too_many_skips = cov["skipped"] > max_skipped
    if report.shard_note(doc):
        print(f"note: {report.shard_note(doc)}", file=out)
    if too_many_skips:
        reasons = "; ".join(f"{k} ({v})" for k, v in cov["skip_reasons"].items())
        print(f"SKIPPED: {cov['skipped']} of {n} scenarios (at most {max_skipped} allowed, "
              f"--max-skipped): {reasons}", file=out)
    if cov.get("not_checked"):  # a declared gap is listed, never silent
        missing = ", ".join(doc.get("features_missing") or []) or "?"
        print("NOT CHECKED (features the implementation does not declare: "
              f"{missing}): " + ", ".join(f"{o} in {k} scenario(s)"
                                        for o, k in sorted(cov["not_checked"].items())), file=out)
    for s in g["new_failures"]:
        if s["verdict"] == "error":
            print(f"NEW HARNESS ERROR: {s['id']}: the suite could not observe this scenario as "
                  f"written (unknown: {', '.join(s.get('unknown') or [])}); not a verdict on "
                  "the implementation, and not a pass", file=out)
        else:
            print(f"NEW {s['verdict'].upper()}: {s['id']}  [{', '.join(s.get('oracles') or [])}]",
                  file=out)
        print(f"    {first_violation(s)}", file=out)
        print(f"    repro: {s.get('repro', '')}", file=out)
    for s in g["unexpected_passes"]:
        print(f"unexpected pass: {s['id']} (listed: {s['known_failure']}): "
              "remove it from the known-failures file", file=out)
    known = len(g["known_failures"])
    if too_many_skips and not g["new_failures"]:
        print(f"gate: FAILED: {cov['skipped']} skipped scenarios in {n} of {doc['impl']} "
              f"(allowed: {max_skipped})", file=out)
        return 1
    if g["new_failures"]:
        print(f"gate: FAILED: {len(g['new_failures'])} new failure(s) in {n} scenarios of "
              f"{doc['impl']} ({known} known failure(s) still failing)", file=out)
        return 1
    print(f"gate: passed: no new failure in {n} scenarios of {doc['impl']} "
          f"({known} known failure(s) still failing, "
          f"{len(g['unexpected_passes'])} unexpected pass(es))", file=out)
    return 0


def main(args) -> int:
    doc = report.load_for_cli(args.report, "gate: FAILED")
    if doc is None:
        return 2
    return decide(doc, max_skipped=args.max_skipped)
