"""One run split into N parts (``--shard I/N``), each run by its own job.

Which scenarios a shard runs depends only on the set of ids selected and on
the durations given, never on the order the ids come in, on a hash or on
PYTHONHASHSEED: every process (each shard's, each of its xdist workers')
that splits the same selection with the same durations gets the same shards,
and every selected scenario is in exactly one of them.

The split is the greedy longest-first rule (LPT): scenarios sorted by their
estimated duration, longest first (then by id), each goes to the shard with
the least estimated time so far (then the lowest index); the longest shard
is then at most the mean plus one scenario. A scenario's estimate is its
``duration`` in a previous report (``--shard-durations REPORT.json``); one
missing there gets the median of those found among the selected ones.
Without durations every scenario weighs the same, and the split deals the
sorted ids round-robin: shard I gets ids I, I+N, I+2N, ...

A shard's report records which shard it was and what was split
(:func:`record`), so that ``python -m conformance merge`` can tell that its
shard reports are of one run and together complete.
"""
from __future__ import annotations

import hashlib
import heapq
import statistics
from dataclasses import dataclass

#: the estimate of every scenario when no duration is known for any
UNIFORM = 1.0


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        index, sep, count = str(text).strip().partition("/")
        if sep and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count):
            return cls(int(index), int(count))
        raise ValueError(f"{text!r} is not a shard I/N with 1 <= I <= N (e.g. 2/4)")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Part:
    """The scenario ids of one shard (sorted) and their estimated seconds."""

    ids: tuple
    estimate: float


def durations(doc: dict) -> dict[str, float]:
    """{scenario id: seconds} of the report's entries that have a duration."""
    return {s["id"]: float(s["duration"]) for s in doc.get("scenarios") or []
            if type(s.get("duration")) in (int, float)}


def estimates(ids, known: dict[str, float] | None = None) -> dict[str, float]:
    """Each id's duration in ``known``, else the median of the known ones
    among ``ids`` (else :data:`UNIFORM`)."""
    ids = list(ids)
    known = known or {}
    found = [known[i] for i in ids if i in known]
    default = statistics.median(sorted(found)) if found else UNIFORM
    return {i: known.get(i, default) for i in ids}


def plan(ids, count: int, known: dict[str, float] | None = None) -> list[Part]:
    """The ``count`` parts of ``ids``; part k is shard k + 1."""
    ids = list(ids)
    if count < 1:
        raise ValueError(f"{count} shards: at least 1")
    if len(set(ids)) != len(ids):
        raise ValueError("the ids to split are not unique")
    weight = estimates(ids, known)
    loads = [(0.0, k) for k in range(count)]  # (estimated seconds, part): a heap
    parts: list[list[str]] = [[] for _ in range(count)]
    for sid in sorted(ids, key=lambda i: (-weight[i], i)):
        load, k = heapq.heappop(loads)
        parts[k].append(sid)
        heapq.heappush(loads, (load + weight[sid], k))
    totals = dict((k, load) for load, k in loads)
    return [Part(tuple(sorted(p)), round(totals[k], 2)) for k, p in enumerate(parts)]


def digest(lines) -> str:
    """A fingerprint of a set of lines (their order does not matter)."""
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def record(shard: Shard, selected, part: Part, **run) -> dict:
    """What a shard's report says about its shard: which one it was, how many
    scenarios were split (``selected``, and their fingerprint ``selection``),
    how many it was given and their estimated seconds; ``run`` adds what
    every shard of one run shares (profile, fixtures, known failures, ...)."""
    selected = list(selected)
    return {"index": shard.index, "count": shard.count, "selected": len(selected),
            "selection": digest(selected), "assigned": len(part.ids),
            "estimate": part.estimate, **run}
