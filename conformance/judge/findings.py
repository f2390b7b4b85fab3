"""A finding: what one oracle found in one run, as data.

An oracle returns a list of :class:`Finding`. ``op`` is the index of the op
record it is about (None: about the whole run, e.g. the stderr or what was
left after the exit), ``time`` the history time of the event (seconds since
the driver's history began: the ``t`` of the record that shows it; None when
no record does), ``text`` what a user reads, and ``unknown`` True when the
rule could not be judged (as in Jepsen's checkers, unknown is never valid).

The verdict splits findings at a failed harness step by ``op`` and picks the
first violation by ``time``: neither reads the text. The helpers below keep
an oracle short::

    at(r, "raised X")            # op r: "op 3 (teardown buffer) raised X"
    at(r, ": buffer holds 0")    # "op 3 (check_data buffer): buffer holds 0"
    unknown_at(r, ": state of ... unknown")
    in_run("stderr: ...")        # about the run, not an op
    unknown_in_run("after the exit: ...", time=...)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: the label a finding about an op starts with (:func:`label`): its op index
LABEL = re.compile(r"op (\d+) \(")


@dataclass(frozen=True)
class Finding:
    op: int | None
    time: float | None
    text: str
    unknown: bool = False

    def __str__(self) -> str:
        return self.text

    def as_dict(self, oracle: str) -> dict:
        """The report's form: ``{"oracle", "op", "time", "text", "unknown"}``."""
        return {"oracle": oracle, "op": self.op, "time": self.time, "text": self.text,
                "unknown": self.unknown}


def label(r: dict) -> str:
    """How a user reads op record ``r``: ``op 3 (teardown buffer)``."""
    op = r["op"]
    tgt = f" {op['target']}" if op.get("target") else ""
    return f"op {r['i']} ({op['verb']}{tgt})"


def at(r: dict, text: str, unknown: bool = False) -> Finding:
    """A finding about op record ``r``: its label, then ``text`` (after a
    space, or directly when ``text`` starts with ":" or ",")."""
    sep = "" if text[:1] in (":", ",") else " "
    return Finding(r["i"], r.get("t"), f"{label(r)}{sep}{text}", unknown)


def unknown_at(r: dict, text: str) -> Finding:
    """Op record ``r``'s rule could not be judged: ``at(r, text)``, unknown."""
    return at(r, text, unknown=True)


def in_run(text: str, time: float | None = None, op: int | None = None) -> Finding:
    """A finding about the run as a whole (its text names no op first)."""
    return Finding(op, time, text)


def unknown_in_run(text: str, time: float | None = None, op: int | None = None) -> Finding:
    return Finding(op, time, text, unknown=True)


def from_text(text: str, unknown: bool = False) -> Finding:
    """A finding known only by its text (a report written before findings
    were data keeps texts per oracle): its op read from the label it starts
    with (``op N (...)``, :func:`label`; None: about the run), no time."""
    index = LABEL.match(text)
    return Finding(int(index.group(1)) if index else None, None, text, unknown)


def by_time(found) -> list:
    """``(oracle, Finding)`` pairs, earliest first: by history time, then op;
    findings without a time (none of the history's records shows them) after
    those with one. Stable: equal keys keep their order."""
    def key(pair):
        f = pair[1]
        return (f.time is None, f.time or 0.0, f.op is None, f.op or 0)
    return sorted(found, key=key)
