"""The gate's decision on a report: one function, read by ``gate``,
``summary`` and the pytest run's terminal section alike.

A report is green when it meets the required claim (``conformance.reports.claims``)
and has no new failure. Each scenario's outcome against the known-failures
file (``conformance.reports.known_failures``): not listed and not passing, a new
failure; listed, the outcome its entry states (the verdict, and a ``fail``'s
oracles), a known failure; listed and anything else (another verdict,
other oracles, an ``error``: the harness's, never expected), a new failure;
listed and passing, an unexpected pass (the entry is to be removed), or for
a flaky entry a pass it allows; a flaky entry with ``otherwise:`` (a race
between two failures) allows either failure and no pass. The known
failures are the report's own (each entry's ``expected``, as the run read
its file), or a file given to re-decide a report without running it again.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from conformance.reports import claims, known_failures, report
from conformance.reports.claims import Claim, shortfall
from conformance.reports.known_failures import Expected, verdict_cell
from conformance.judge.verdict import BAD

NEW, KNOWN, FLAKY_PASS, UNEXPECTED_PASS = "new", "known", "flaky-pass", "unexpected-pass"


def outcome(entry: dict, expected: Expected | None) -> tuple[str, str]:
    """``(kind, why)``: ``new``, ``known``, ``flaky-pass``, ``unexpected-pass``,
    or the verdict itself (``pass``, ``skip``) for an entry that is neither;
    ``why`` says what a listed scenario did instead of what its entry states."""
    verdict = entry["verdict"]
    if expected is None:
        return (NEW, "") if verdict in BAD else (verdict, "")
    if verdict == "pass":
        return (FLAKY_PASS if expected.flaky and not expected.otherwise else UNEXPECTED_PASS), ""
    if verdict not in BAD:
        return verdict, ""
    now = verdict_cell(verdict, entry.get("oracles") or (), expected.varies)
    if verdict == "error":
        return NEW, (f"listed as {expected.describe()}, but an error is the harness's: it could "
                     "not observe the scenario, never an expected failure")
    if now not in (expected.cell(), expected.otherwise_cell()):
        return NEW, f"listed as {expected.describe()}, now {now}"
    return KNOWN, ""


def expectations(doc: dict, known: dict[str, Expected] | None = None) -> dict:
    """``{id: Expected}``: ``known`` (a file's, to re-decide the report), else
    what each entry recorded as expected when the run read its file."""
    if known is not None:
        return dict(known)
    return {s["id"]: Expected.from_dict(s["id"], s["expected"]) for s in doc["scenarios"]
            if s.get("expected")}


@dataclass
class Ruling:
    required: Claim
    #: how the report covers less than the required claim (empty: it meets it)
    shortfall: list = field(default_factory=list)
    new_failures: list = field(default_factory=list)  # (entry, why)
    known_failures: list = field(default_factory=list)
    flaky_passes: list = field(default_factory=list)
    unexpected_passes: list = field(default_factory=list)
    #: listed ids that are not in the report
    unused: list = field(default_factory=list)

    @property
    def green(self) -> bool:
        return not self.shortfall and not self.new_failures

    def headline(self, doc: dict) -> str:
        """The decision in one line (the gate's last line, the summary's verdict)."""
        n, impl = len(doc["scenarios"]), doc["impl"]
        if self.green:
            return (f"passed: {impl} meets the claim ({self.required.describe()}): no new "
                    f"failure in {n} scenarios ({len(self.known_failures)} known failure(s) "
                    f"still failing, {len(self.flaky_passes)} flaky pass(es), "
                    f"{len(self.unexpected_passes)} unexpected pass(es))")
        why = []
        if self.new_failures:
            why.append(f"{len(self.new_failures)} new failure(s) in {n} scenarios of {impl}")
        if self.shortfall:
            why.append(f"the report covers less than the claim ({self.required.describe()})")
        return (f"FAILED: {'; '.join(why)} ({len(self.known_failures)} known failure(s) still "
                "failing)")


def rule(doc: dict, known: dict[str, Expected] | None = None,
         required: Claim | None = None) -> Ruling:
    """The decision on ``doc`` against the ``required`` claim (default
    :meth:`Claim.full`), with ``known`` failures (default: the report's own)."""
    required = required or Claim.full()
    expected = expectations(doc, known)
    out = Ruling(required, shortfall(doc, required))
    ids = set()
    for s in doc["scenarios"]:
        ids.add(s["id"])
        listed = expected.get(s["id"])
        kind, why = outcome(s, listed)
        if listed is None and s.get("known_failure") and known is None:
            # listed by id alone, in a report of a suite older than expected
            # verdicts: what it was expected to do is unknown, never "known"
            if s["verdict"] in BAD:
                why = ("listed without its expected verdict (a report of an older suite): "
                       "decide it with gate --known-failures FILE")
            elif s["verdict"] == "pass":
                kind = UNEXPECTED_PASS
        if kind == NEW:
            out.new_failures.append((s, why))
        elif kind == KNOWN:
            out.known_failures.append(s)
        elif kind == FLAKY_PASS:
            out.flaky_passes.append(s)
        elif kind == UNEXPECTED_PASS:
            out.unexpected_passes.append(s)
    out.unused = sorted(set(expected) - ids)
    return out


def mark(entries: list[dict], known: dict[str, Expected]) -> None:
    """Record on each entry what the run's file expects of it (``expected``)
    and, when the entry is what the file allows (the stated failure, or a
    pass of a listed scenario), the reason (``known_failure``, which readers
    of older reports take as "listed")."""
    for s in entries:
        listed = known.get(s["id"])
        s["expected"] = listed.as_dict() if listed else None
        kind, _ = outcome(s, listed)
        s["known_failure"] = listed.reason if kind in (KNOWN, FLAKY_PASS, UNEXPECTED_PASS) else None


def add_options(parser) -> None:
    """The options of a decision (``gate`` and ``summary`` share them)."""
    g = parser.add_argument_group("the claim the report must meet (default: all of it)")
    g.add_argument("--components", default="all", metavar="all|A,B",
                   help="components the implementation must have (default: all)")
    g.add_argument("--features", default="all", metavar="all|A,B",
                   help="features its adapter must declare (default: all)")
    g.add_argument("--fixtures", default=",".join(claims.DEFAULT_FIXTURES), metavar="A,B",
                   help="fixtures the run must cover (default: local,multinode)")
    g.add_argument("--profile", default="quick", choices=claims.PROFILES,
                   help="the profile the run must cover (default: quick; full covers quick)")
    parser.add_argument("--known-failures", metavar="FILE",
                        help="decide against this known-failures file instead of the one "
                             "the run read (nothing is run again)")


def from_options(args, who: str):
    """``(doc, Ruling)`` from the options, or None after telling stderr why."""
    doc = report.load_for_cli(args.report, who)
    if doc is None:
        return None
    try:
        required = claims.Claim.parse(args.components, args.features, args.fixtures,
                                      args.profile)
        known = known_failures.load_expected(args.known_failures) \
            if args.known_failures else None
    except (OSError, ValueError) as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return None
    return doc, rule(doc, known, required)
