"""A known-failures file from reports:
``python -m conformance known-failures REPORT.json [REPORT.json ...] [-o FILE]``.

One entry per scenario that fails in the reports, with the outcome it fails
with (``fail[ORACLE,...]``, ``crash``, ``hang``, ``setup-error``: the format
of ``conformance.reports.known_failures``) and a reason: the entry's own when the run
already listed it, else its earliest violation. From several reports of the
same run (the same scenarios run again), the rate is measured: a scenario
that fails in K of N reports and passes in the others is ``flaky:K/N``;
oracles that fail in some of its failing runs and not in others are
``varies:``. Not written, and said on stderr: an ``error`` (the harness's,
never expected) and a scenario that fails in more than one way (one entry
states one failure).
"""
from __future__ import annotations

import sys

from conformance.reports import report
from conformance.reports.known_failures import EXPECTABLE, Expected
from conformance.reports.summary import first_violation

MAX_REASON = 160


def entries(docs: list[tuple[str, dict]]) -> tuple[list[Expected], list[str]]:
    """The known failures of ``(name, report)`` pairs, and what was not written (why)."""
    runs: dict[str, list[dict]] = {}
    for _, doc in docs:
        for s in doc["scenarios"]:
            runs.setdefault(s["id"], []).append(s)
    out, notes = [], []
    for sid in sorted(runs):
        seen = runs[sid]
        errors = [s for s in seen if s["verdict"] == "error"]
        failing = [s for s in seen if s["verdict"] in EXPECTABLE]
        if errors:
            notes.append(f"{sid}: error in {len(errors)} of {len(seen)} runs: the harness's, "
                         "never an expected failure (see its report entry)")
            continue
        if not failing:
            continue
        if len({s["verdict"] for s in failing}) > 1:
            ways = ", ".join(sorted({s["verdict"] for s in failing}))
            notes.append(f"{sid}: fails in more than one way ({ways}) in {len(seen)} runs: one "
                         "entry states one failure; write it by hand, or rerun")
            continue
        passing = [s for s in seen if s["verdict"] == "pass"]
        if len(failing) + len(passing) < len(seen):
            notes.append(f"{sid}: skipped in some runs: not written")
            continue
        oracle_sets = [set(s.get("oracles") or ()) for s in failing]
        always = set.intersection(*oracle_sets)
        varies = set.union(*oracle_sets) - always
        verdict = failing[0]["verdict"]
        if verdict == "fail" and not always:
            notes.append(f"{sid}: fails with no oracle common to its {len(failing)} failing "
                         "runs: write it by hand")
            continue
        flaky = (len(failing), len(seen)) if passing else None
        out.append(Expected(sid, verdict, frozenset(always if verdict == "fail" else ()),
                            _reason(failing[0], flaky, len(seen)),
                            frozenset(varies if verdict == "fail" else ()), flaky))
    return out, notes


def _reason(entry: dict, flaky, runs: int) -> str:
    listed = (entry.get("expected") or {}).get("reason")
    if listed:
        return listed
    text = " ".join(first_violation(entry).split())
    if len(text) > MAX_REASON:
        text = text[:MAX_REASON - 1] + "…"
    rate = f"{flaky[0]} of {flaky[1]} runs" if flaky else f"{runs} of {runs} runs"
    return f"{text} ({rate})"


def main(args) -> int:
    docs = report.load_all_for_cli(args.reports, "known-failures")
    if docs is None:
        return 2
    impls = {d["impl"] for _, d in docs}
    if len(impls) > 1:
        print(f"known-failures: reports of {', '.join(sorted(impls))}: one implementation's "
              "reports make one file", file=sys.stderr)
        return 2
    found, notes = entries(docs)
    text = "\n".join([
        f"# Known failures of {docs[0][1]['impl']}, written by python -m conformance "
        f"known-failures from {len(docs)} report(s): {', '.join(p for p, _ in docs)}.",
        "# One scenario a line: its id, the outcome it fails with, then '# why'. Anything "
        "else it does is a new failure.",
        *(e.line() for e in found)]) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"known-failures: wrote {len(found)} entries to {args.out}", file=sys.stderr)
    else:
        print(text, end="")
    for note in notes:
        print(f"known-failures: not written: {note}", file=sys.stderr)
    return 0
