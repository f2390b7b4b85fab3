"""Verdict drift against a committed report:
``python -m conformance compare REPORT.json --against COMMITTED.json [--scenarios-from FILE]``.

Compares each scenario's verdict in REPORT (this run) with COMMITTED (e.g.
the torchrl matrix in ``ci/results/torchrl/``); for a ``fail``, also its
failing oracles (a ``hang`` or ``crash`` is compared by verdict only: which
oracles it fails besides ``no_hang`` / ``no_crash`` varies between runs).

The scenarios compared are those listed in ``--scenarios-from FILE`` (one id
a line, ``# why it is there`` after it: the known-failures format), or
without it every scenario of REPORT (a subset of COMMITTED's). An entry of
that list may declare the oracles whose failure varies between runs of its
scenario (``varies:clean_stderr``, or with the rate measured,
``varies:teardown_never_raises@4/5``; see ``conformance.reports.known_failures``;
``--varies-from FILE`` takes such declarations from a file of their own,
for whichever scenarios are compared):
they are left out of both sides' oracles, and the rest must match, within a
bound (``conformance.reports.varies``): one whose outcome in this run is not
its usual one (failing if the rate says so, else passing) must be seen with
it in a rerun of the scenario (``--reruns REPORT...``, reports of reruns;
``--pending`` lists the scenarios still to rerun), and one that misses it
in every one of ``varies.RUNS`` runs is a drift. A drift is a
scenario whose verdict (or failing oracles) changed, one whose varying
oracle no longer varies or is undecided, or one of the compared scenarios
missing from either report. The two reports must be of the same
implementation and the same versions of ``report.PACKAGES``: verdicts of
another torchrl or Ray are not comparable (regenerate COMMITTED).

Exit 0: no drift (with ``--pending``: the list was printed). Exit 1: drift,
printed as a table (scenario, committed, now, repro command), then the
failure message of each drifted scenario that does not pass now
(violations, history, stderr tail, repro command).
Exit 2: a report or the scenario list is missing or unreadable, or a rerun
report is of another implementation or versions.
"""
from __future__ import annotations

import os
import sys
from collections import Counter

from conformance.reports import known_failures, report
from conformance.reports.summary import first_violation
from conformance.reports.varies import RUNS, bound, bound_verdict, describe
from conformance.judge.verdict import BAD

NOT_IN_REPORT = "- (not in the report)"
#: the implementation's versions both reports must share (python may differ)
SAME_VERSIONS = report.PACKAGES


def verdict_cell(entry: dict | None, varies=frozenset()) -> str:
    """The verdict, and a ``fail``'s oracles; those in ``varies`` (declared
    to vary between runs: names, or a mapping by name) are left out."""
    if entry is None:
        return NOT_IN_REPORT
    return known_failures.verdict_cell(entry["verdict"], entry.get("oracles") or (), varies)


def same(committed: dict | None, now: dict | None, varies=frozenset()) -> bool:
    """Both have the verdict (and a fail's oracles). An ``error`` is the
    harness's, never a verdict to hold: it is never the same, even as an
    error on both sides."""
    return committed is not None and now is not None and \
        "error" not in (committed["verdict"], now["verdict"]) and \
        verdict_cell(committed, varies) == verdict_cell(now, varies)


def repro(sid: str, impl: str, *entries: dict | None) -> str:
    for e in entries:
        if e and e.get("repro"):
            return e["repro"]
    from conformance.run.execute import repro_command

    return repro_command(sid, impl)


def details(entry: dict) -> str:
    """What happened in a scenario of this run: its failure message (violations,
    history, stderr), or the first violation of an entry that lacks evidence."""
    from conformance.run.execute import failure_message

    try:
        return failure_message(entry)
    except (KeyError, TypeError):
        return first_violation(entry)


def version_drift(now_doc: dict, committed_doc: dict) -> list[tuple[str, str, str]]:
    """(package, committed version, this run's) for each package that differs."""
    a, b = committed_doc.get("versions") or {}, now_doc.get("versions") or {}
    return [(k, a.get(k, "-"), b.get(k, "-")) for k in SAME_VERSIONS
            if a.get(k) != b.get(k)]


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Plain-text columns, padded to the widest cell (the last one is not padded)."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells):
        return "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths)) + "  " + cells[-1]
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def compare(now_doc: dict, committed_doc: dict, ids: list[str] | None = None,
            varies: dict | None = None, reruns: list | None = None,
            flaky: dict | None = None) -> list[dict]:
    """One row per compared scenario: id, committed and now entries, same or
    not (``varies``: {id: oracles whose failure varies between its runs},
    bounded over this run and ``reruns``, reports of reruns: the row's
    ``varies`` is ``conformance.reports.varies.bound``'s answer; ``flaky``:
    {id: known_failures.VerdictRace}, a verdict race, ``bound_verdict``'s)."""
    now = {s["id"]: s for s in now_doc["scenarios"]}
    committed = {s["id"]: s for s in committed_doc["scenarios"]}
    ids = list(ids) if ids is not None else sorted(now)
    varies, flaky = varies or {}, flaky or {}
    rows = []
    for sid in ids:
        declared = varies.get(sid, {})
        runs = [e for doc in reruns or () for e in doc["scenarios"] if e["id"] == sid]
        found = bound(now.get(sid), runs, declared)
        matches = same(committed.get(sid), now.get(sid), declared)
        race = flaky.get(sid)
        if race is not None and now.get(sid) is not None:
            allowed = {race.outcome, race.otherwise}
            # a rerun's harness error says nothing of the verdict: not a run (this
            # run's error is a drift: it is never one of the declared outcomes)
            cells = [verdict_cell(now[sid], declared)] + [
                verdict_cell(e, declared) for e in runs if e["verdict"] != "error"]
            matches = verdict_cell(committed.get(sid), declared) in allowed \
                and all(c in allowed for c in cells)
            if matches:  # another verdict, in this run or a rerun, is a drift
                found = {**found, **bound_verdict(cells, race)}
        rows.append({"id": sid, "committed": committed.get(sid), "now": now.get(sid),
                     "varies": found, "flaky": race,
                     "same": matches and all(b.state == "varies" for b in found.values())})
    return rows


def now_cell(row: dict) -> str:
    """This run's cell: the verdict, and a varying oracle's count when it
    failed in every run so far."""
    bounded = describe(row.get("varies") or {}, race=row.get("flaky"))
    return verdict_cell(row["now"]) + (f" ({bounded})" if bounded else "")


def pending(rows: list[dict]) -> list[str]:
    """Scenario-list lines of the scenarios to rerun: a varying oracle missed
    its usual outcome in each of their runs so far, fewer than ``varies.RUNS``."""
    return [f"{r['id']}  # rerun: {describe(r['varies'], ('pending',), r.get('flaky'))} "
            f"(varies:, {RUNS} needed)" for r in rows
            if any(b.state == "pending" for b in r["varies"].values())]


def decide(now_doc: dict, committed_doc: dict, ids: list[str] | None = None, *,
           varies: dict | None = None, reruns: list | None = None,
           flaky: dict | None = None, now_name: str = "REPORT",
           committed_name: str = "COMMITTED", out=sys.stdout) -> int:
    """Print the comparison; 0 without drift, 1 with."""
    impl = now_doc["impl"]
    rows = compare(now_doc, committed_doc, ids, varies, reruns, flaky)
    drifted = [r for r in rows if not r["same"]]
    versions = version_drift(now_doc, committed_doc)
    wrong_impl = impl != committed_doc["impl"]
    if not rows:
        print(f"compare: FAILED: no scenario to compare (empty {now_name}"
              + (" and scenario list" if ids is not None else "") + ")", file=out)
        return 1
    if wrong_impl:
        print(f"compare: {now_name} is of {impl!r}, {committed_name} of "
              f"{committed_doc['impl']!r}: their verdicts are not comparable", file=out)
    for pkg, was, got in versions:
        print(f"compare: {pkg} {got} in {now_name}, {was} in {committed_name}: verdicts of "
              "other versions are not comparable; regenerate the committed report for "
              "these versions", file=out)
    if drifted:
        print(f"compare: {len(drifted)} of {len(rows)} scenarios of {impl} drifted from "
              f"{committed_name}:", file=out)
        lines = table(["scenario", "committed", "now", "repro"],
                      [[r["id"], verdict_cell(r["committed"]), now_cell(r),
                        repro(r["id"], impl, r["now"], r["committed"])] for r in drifted])
        for ln in lines:
            print(f"  {ln}", file=out)
        for r in drifted:
            if r["now"] is not None and r["now"]["verdict"] in BAD:
                print(f"\n  now {r['now']['verdict']}: {r['id']} (was "
                      f"{verdict_cell(r['committed'])}):", file=out)
                for ln in details(r["now"]).splitlines():
                    print(f"    {ln}", file=out)
        if pending(drifted):
            print(f"\n  Undecided: a declared varying oracle missed its usual outcome in "
                  f"every run so far; "
                  f"{RUNS} runs tell a race from a regression. Rerun those scenarios "
                  "(`compare ... --pending` lists them, as a --scenarios-from file) and "
                  "pass the reruns' reports with --reruns.", file=out)
        guide = os.path.join(os.path.dirname(committed_name), "README.md")
        print("\n  Rerun a scenario alone with its repro command. If the change is intended "
              "(a new version, a changed scenario or oracle), regenerate the committed report"
              + (f" with the commands in {guide}" if os.path.isfile(guide) else ""), file=out)
    tally = Counter(r["now"]["verdict"] for r in rows if r["now"])
    counts = ", ".join(f"{n} {v}" for v, n in sorted(tally.items()))
    if drifted or versions or wrong_impl:
        print(f"compare: FAILED: {len(drifted)} of {len(rows)} scenarios drifted"
              + (", versions differ" if versions else "")
              + (", implementations differ" if wrong_impl else "")
              + f" ({now_name} against {committed_name})", file=out)
        return 1
    print(f"compare: passed: {len(rows)} scenarios of {impl} have the verdicts of "
          f"{committed_name} ({counts})", file=out)
    return 0


def _load(path: str) -> dict:
    doc = report.load(path)
    if "impl" not in doc or not isinstance(doc.get("scenarios"), list):
        raise ValueError(f"{path}: a report without 'impl' or 'scenarios'")
    return doc


def main(args) -> int:
    try:
        now_doc, committed_doc = _load(args.report), _load(args.against)
        ids = list(known_failures.load(args.scenarios_from)) if args.scenarios_from else None
        varies, flaky = _races(args.scenarios_from) if args.scenarios_from else ({}, {})
        if args.varies_from:
            more_varies, more_flaky = _races(args.varies_from)
            have = {s["id"] for s in committed_doc["scenarios"]}
            stale = sorted((set(more_varies) | set(more_flaky)) - have)
            if stale:
                raise ValueError(f"{args.varies_from}: declares races for scenarios the "
                                 f"committed report does not have: {', '.join(stale)}")
            twice = sorted((set(more_varies) | set(more_flaky)) & (set(varies) | set(flaky)))
            if twice:
                raise ValueError(f"{args.varies_from}: {', '.join(twice)}: declared in the "
                                 "scenario list too")
            varies, flaky = {**varies, **more_varies}, {**flaky, **more_flaky}
        reruns = [_load(path) for path in args.reruns or ()]
        for path, doc in zip(args.reruns or (), reruns):
            if doc["impl"] != now_doc["impl"] or version_drift(now_doc, doc):
                raise ValueError(f"--reruns {path}: not of {now_doc['impl']} at the versions "
                                 f"of {args.report}")
    except (OSError, ValueError, KeyError) as exc:
        print(f"compare: FAILED: no usable input: {exc}", file=sys.stderr)
        return 2
    if args.pending:
        for line in pending(compare(now_doc, committed_doc, ids, varies, reruns, flaky)):
            print(line)
        return 0
    return decide(now_doc, committed_doc, ids, varies=varies, reruns=reruns, flaky=flaky,
                  now_name=args.report, committed_name=args.against)


def _races(path: str) -> tuple[dict, dict]:
    """The races a scenario list declares: ``({id: {oracle: rate}}, {id:
    VerdictRace})``, the varying oracles and the verdict races
    (``OUTCOME flaky:K/N [otherwise:OUTCOME]``), their oracles checked where
    each line is read (``known_failures.lines``)."""
    varies = known_failures.load_varying(path)
    flaky = known_failures.load_flaky(path)
    for sid, race in flaky.items():
        k, n = race.rate
        if 2 * k == n:
            raise ValueError(f"{path}: {sid}: flaky:{k}/{n} names no usual outcome for "
                             "compare: measure more runs")
    return varies, flaky


