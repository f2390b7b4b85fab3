"""Known failures: the scenarios a fork expects to fail, each with the verdict
(and, for a ``fail``, the failing oracles) it fails with, and why.

The format follows array-api-tests' xfails files: one scenario a line, a
``#`` and the reason after it; blank lines and lines starting with ``#`` are
ignored. Between the id and the ``#``, the expected outcome, as ``compare``
states a verdict::

    double_close/local/user/buffer-twice  fail[teardown_never_raises]  # close() is not idempotent
    killed/local/user/evaluator-hang>teardown  hang  # shutdown() waits for the eval forever
    early_break/local/user/async-after-0  crash  flaky:2/3  # crash in 2 of 3 runs (measured)

- ``fail[ORACLE,...]``: a ``fail`` with exactly these failing oracles;
  ``crash``, ``hang``, ``setup-error``: that verdict (whichever oracles fail
  beside ``no_crash``/``no_hang``, as ``compare`` does). ``error`` is never
  expected: it is the harness's, not the implementation's.
- ``varies:ORACLE,...``: oracles that fail in some runs and not in others
  (a race the scenario does not control; measured, and said in the reason):
  left out of both sides. ``ORACLE@K/N`` states the rate measured, failing
  in K of N runs (0 < K < N, K not N/2): ``compare`` bounds the race by the
  usual outcome it names (``conformance.reports.varies``; without a rate:
  usually passing). The gate (``ruling``) leaves a varying oracle out and
  does not use its rate.
- ``flaky:K/N``: the failure happens in K of N runs (measured, 0 < K < N):
  a run that passes is expected too.
- ``otherwise:OUTCOME``, with ``flaky:K/N``: the other runs have OUTCOME
  (``fail[ORACLE,...]``, ``crash``, ...) instead of a pass, a race between
  two failures (torchrl's ``ray-shutdown-under-thread``: ``crash  flaky:K/N
  otherwise:fail[no_ray_restart,teardown_never_raises]``). A pass is then
  unexpected.

Anything else the scenario does (another verdict, other oracles, an
``error``) is a new failure. ``python -m conformance known-failures
REPORT.json...`` writes such a file from reports (the rate of a flaky entry
from several).

A list of scenarios (``--scenarios-from``, ``compare --scenarios-from``,
e.g. ``ci/torchrl-slice.txt``) is the same format, the outcome optional.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

#: the marker of oracles whose failure varies between runs of one scenario
VARIES = "varies:"
#: the marker of a flaky entry: ``flaky:K/N``, the failure in K of N runs
FLAKY = "flaky:"
#: a flaky entry's outcome in its other runs, when it is not a pass
OTHERWISE = "otherwise:"
#: the verdicts an entry may expect (never ``error``: the harness's)
EXPECTABLE = ("fail", "crash", "hang", "setup-error")
OUTCOME = re.compile(r"^(?P<verdict>[a-z-]+)(\[(?P<oracles>[\w,]*)\])?$")


def verdict_cell(verdict: str, oracles=(), varies=frozenset()) -> str:
    """A verdict as ``compare`` and the gate compare them: a ``fail`` with its
    failing oracles (those that vary left out), any other verdict alone. A
    ``fail`` whose every failing oracle varies is a ``pass`` with them left
    out: a run that passes is one of the outcomes the declaration allows."""
    if verdict == "fail":
        kept = sorted(set(oracles) - set(varies))
        return f"fail [{', '.join(kept)}]" if kept or not oracles else "pass"
    return verdict


class VerdictRace(NamedTuple):
    """A declared verdict race: ``outcome`` (a verdict cell, ``crash`` or
    ``fail [a, b]``) in ``rate`` = (K, N) runs, ``otherwise`` in the others."""

    outcome: str
    rate: tuple
    otherwise: str = "pass"


@dataclass(frozen=True)
class Expected:
    """One known failure: the outcome a scenario is expected to have, and why."""

    id: str
    verdict: str
    oracles: frozenset
    reason: str
    varies: frozenset = frozenset()
    #: (K, N): the failure in K of N runs, measured
    flaky: tuple | None = None
    #: (verdict, oracles) of the other runs of a flaky entry; None: a pass
    otherwise: tuple | None = None

    def cell(self) -> str:
        return verdict_cell(self.verdict, self.oracles, self.varies)

    def otherwise_cell(self) -> str | None:
        """The other runs' verdict cell (``otherwise:``), None if they pass."""
        return verdict_cell(*self.otherwise, self.varies) if self.otherwise else None

    def describe(self) -> str:
        """``fail [a, b]`` or ``crash``, with the flaky rate (and the other
        runs' outcome) if any."""
        rate = f" in {self.flaky[0]} of {self.flaky[1]} runs" if self.flaky else ""
        other = f", {self.otherwise_cell()} in the others" if self.otherwise else ""
        return self.cell() + rate + other

    def line(self) -> str:
        """The entry as a line of a known-failures file."""
        marks = [outcome_mark(self.verdict, self.oracles)]
        if self.varies:
            marks.append(VARIES + ",".join(sorted(self.varies)))
        if self.flaky:
            marks.append(f"{FLAKY}{self.flaky[0]}/{self.flaky[1]}")
        if self.otherwise:
            marks.append(OTHERWISE + outcome_mark(*self.otherwise))
        return f"{self.id}  {'  '.join(marks)}  # {self.reason}"

    def as_dict(self) -> dict:
        """The report entry's ``expected``."""
        return {"verdict": self.verdict, "oracles": sorted(self.oracles),
                "varies": sorted(self.varies),
                "flaky": list(self.flaky) if self.flaky else None, "reason": self.reason,
                **({"otherwise": {"verdict": self.otherwise[0], "oracles": sorted(self.otherwise[1])}}
                   if self.otherwise else {})}

    @classmethod
    def from_dict(cls, sid: str, d: dict) -> "Expected":
        return cls(sid, d["verdict"], frozenset(d.get("oracles") or ()), d.get("reason", ""),
                   frozenset(d.get("varies") or ()),
                   tuple(d["flaky"]) if d.get("flaky") else None,
                   (d["otherwise"]["verdict"], frozenset(d["otherwise"]["oracles"]))
                   if d.get("otherwise") else None)


def outcome_mark(verdict: str, oracles=()) -> str:
    """An outcome as an entry writes it: ``fail[a,b]``, ``crash``."""
    return f"fail[{','.join(sorted(oracles))}]" if verdict == "fail" else verdict


@dataclass(frozen=True)
class Line:
    """One entry line as written: the id, its marks and its reason."""

    id: str
    reason: str
    outcome: tuple | None = None  # (verdict, oracles)
    flaky: tuple | None = None
    #: {varying oracle: (K, N) measured, or None}
    rates: dict = field(default_factory=dict)
    otherwise: tuple | None = None  # (verdict, oracles) of a flaky entry's other runs

    @property
    def varies(self) -> frozenset:
        return frozenset(self.rates)


def _outcome(mark: str, where: str):
    m = OUTCOME.match(mark)
    if m is None or m.group("verdict") not in EXPECTABLE + ("error", "pass", "skip"):
        return None
    verdict, oracles = m.group("verdict"), m.group("oracles")
    if verdict == "error":
        raise ValueError(f"{where}: 'error' cannot be expected: an error is the harness's "
                         "(it could not observe the scenario), never a known failure of the "
                         "implementation")
    if verdict in ("pass", "skip"):
        raise ValueError(f"{where}: {verdict!r} is not a failure; expect one of "
                         f"{', '.join(EXPECTABLE)}")
    if verdict == "fail":
        names = frozenset(o for o in (oracles or "").split(",") if o)
        if not names:
            raise ValueError(f"{where}: a fail names its failing oracles: fail[ORACLE,...] "
                             "(as the report's 'oracles' lists them)")
        return verdict, names
    if oracles is not None:
        raise ValueError(f"{where}: {verdict} is compared by its verdict alone (the oracles "
                         f"failing beside it vary between runs): write {verdict!r}")
    return verdict, frozenset()


def _varying(mark: str, where: str, out: dict) -> None:
    """Add ``{oracle: (K, N) or None}`` of a ``varies:`` mark to ``out`` (the
    line's declarations so far: an oracle declared twice is refused)."""
    for item in (i for i in mark[len(VARIES):].split(",") if i):
        name, at, rate = item.partition("@")
        if not name:
            raise ValueError(f"{where}: {mark!r}: varies: names an oracle before its rate")
        if name in out:
            raise ValueError(f"{where}: varies:{name} is declared twice")
        m = re.fullmatch(r"(\d+)/(\d+)", rate)
        if at and (m is None or not 0 < int(m.group(1)) < int(m.group(2))
                   or 2 * int(m.group(1)) == int(m.group(2))):
            raise ValueError(f"{where}: {item!r}: write {name}@K/N, the oracle measured failing "
                             "in K of N runs (0 < K < N; K = N/2 names no usual outcome: "
                             "measure more runs)")
        out[name] = (int(m.group(1)), int(m.group(2))) if at else None


def _flaky(mark: str, where: str) -> tuple:
    m = re.fullmatch(r"(\d+)/(\d+)", mark[len(FLAKY):])
    if m is None or not 0 < int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"{where}: {mark!r}: write flaky:K/N, the failure measured in K of N "
                         "runs (0 < K < N)")
    return int(m.group(1)), int(m.group(2))


def lines(text: str, source: str = "<known failures>"):
    """Every entry line of ``text`` (:class:`Line`), checked (the oracles its
    outcomes and ``varies:`` name exist)."""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, sep, reason = line.partition("#")
        sid, *marks = head.split()
        reason, where = reason.strip(), f"{source}:{n}"
        if not sep or not reason:
            raise ValueError(f"{where}: {sid!r} has no '# reason'")
        if sid.count("/") < 3:
            raise ValueError(f"{where}: {sid!r} is not a scenario id "
                             "(family/fixture/owner/variant)")
        outcome, rates, flaky, otherwise = None, {}, None, None
        for mark in marks:
            if mark.startswith(VARIES) and mark != VARIES:
                _varying(mark, where, rates)
            elif mark.startswith(FLAKY):
                flaky = _flaky(mark, where)
            elif mark.startswith(OTHERWISE):
                if otherwise is not None:
                    raise ValueError(f"{where}: {OTHERWISE} is declared twice")
                otherwise = _outcome(mark[len(OTHERWISE):], where)
                if otherwise is None:
                    raise ValueError(f"{where}: {mark!r}: write {OTHERWISE}OUTCOME, the outcome of "
                                     "the other runs (fail[ORACLE,...], crash, hang or setup-error)")
            elif outcome is None and (found := _outcome(mark, where)) is not None:
                outcome = found
            else:
                raise ValueError(
                    f"{where}: {mark!r} after {sid!r}: between an id and its '#' stand its "
                    "expected outcome (fail[ORACLE,...], crash, hang or setup-error), "
                    f"'{VARIES}ORACLE[@K/N],...', '{FLAKY}K/N' and '{OTHERWISE}OUTCOME'")
        if flaky and outcome is None:
            raise ValueError(f"{where}: a flaky entry states the failure it has in "
                             f"{flaky[0]} of {flaky[1]} runs")
        if otherwise and not flaky:
            raise ValueError(f"{where}: {OTHERWISE} states the outcome of the runs a flaky entry "
                             f"does not fail as declared: write {FLAKY}K/N too")
        if otherwise and verdict_cell(*otherwise, rates) == verdict_cell(*outcome, rates):
            raise ValueError(f"{where}: {OTHERWISE} repeats the entry's outcome: a race has two")
        if otherwise and verdict_cell(*otherwise, rates) == "pass":
            raise ValueError(f"{where}: {OTHERWISE}fail[...] names only oracles declared varies: "
                             f"that is a pass, which a flaky entry allows without {OTHERWISE}")
        named = (outcome or ("", frozenset()))[1] | (otherwise or ("", frozenset()))[1]
        unknown = unknown_oracles(named)
        if unknown:
            raise ValueError(f"{where}: {', '.join(unknown)}: no such oracle")
        unknown = unknown_oracles(rates)
        if unknown:
            from conformance.judge.oracles import ORACLES

            raise ValueError(f"{where}: {sid}: varies:{','.join(unknown)} names no oracle "
                             f"(valid: {', '.join(sorted(ORACLES))})")
        yield Line(sid, reason, outcome, flaky, rates, otherwise)


def parse(text: str, source: str = "<known failures>") -> dict[str, str]:
    """``{scenario_id: reason}`` of a list of scenarios."""
    return {e.id: e.reason for e in lines(text, source)}


def varying(text: str, source: str = "<known failures>") -> dict[str, dict]:
    """``{scenario_id: {oracle: (K, N) or None}}`` of the entries that declare
    ``varies:``: the oracles that fail in some runs of the scenario and not
    in others (measured: in K of N runs, if stated), left out of a
    ``fail``'s oracles."""
    return {e.id: e.rates for e in lines(text, source) if e.rates}


def flaky(text: str, source: str = "<known failures>") -> dict[str, VerdictRace]:
    """``{scenario_id: VerdictRace}`` of the entries that declare ``flaky:K/N``:
    the outcome in K of N runs, a pass (or ``otherwise:``'s outcome) in the
    others (a verdict race; ``compare`` bounds it as
    ``conformance.reports.varies`` says)."""
    return {e.id: VerdictRace(verdict_cell(*e.outcome, e.varies), e.flaky,
                              verdict_cell(*e.otherwise, e.varies) if e.otherwise else "pass")
            for e in lines(text, source) if e.flaky}


def expected(text: str, source: str = "<known failures>") -> dict[str, Expected]:
    """``{scenario_id: Expected}`` of a known-failures file: each entry must
    state its expected outcome, with failing oracles that exist."""
    out = {}
    for e in lines(text, source):
        if e.outcome is None:
            raise ValueError(
                f"{source}: {e.id}: no expected outcome: write 'ID  fail[ORACLE,...]  # reason' "
                "(or crash, hang, setup-error); python -m conformance known-failures REPORT.json "
                "writes them from a report")
        verdict, oracles = e.outcome
        if e.id in out:
            raise ValueError(f"{source}: {e.id} is listed twice")
        out[e.id] = Expected(e.id, verdict, oracles, e.reason, e.varies, e.flaky, e.otherwise)
    return out


def unknown_oracles(names) -> list[str]:
    """The names that are no oracle of the suite (``setup`` is the verdict's)."""
    from conformance.judge.oracles import ORACLES

    return sorted(set(names) - set(ORACLES) - {"setup"})


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def load(path: str) -> dict[str, str]:
    return parse(_read(path), path)


def load_varying(path: str) -> dict[str, dict]:
    return varying(_read(path), path)


def load_flaky(path: str) -> dict[str, VerdictRace]:
    return flaky(_read(path), path)


def load_expected(path: str) -> dict[str, Expected]:
    return expected(_read(path), path)
