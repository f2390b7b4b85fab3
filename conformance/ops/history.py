"""The history of one scenario run: a JSON-lines file, one record per event.

The driver writes, in order: ``setup``; per operation ``begin``, ``end``
(status, result) and ``probe`` (what the harness observed after it); then
``final`` (the final probe) and ``exiting`` (the interpreter exit begins).
Side records, from any thread and at any time, say what happened without
moving the driver's position: ``runtime`` (a Ray runtime started or ended:
``conformance.ops.runtime_watch``), ``signal`` (the harness signalled the
driver: ``conformance.ops.interrupts``), ``log`` (the implementation logged a
warning or an error: ``conformance.ops.log_capture``), ``harness-error``.
Each line is flushed, so a driver that aborts, hangs or exits early still
leaves a history naming where it was: :meth:`History.position`.
"""
from __future__ import annotations

import json
import threading
import time
import traceback
from dataclasses import dataclass, field

#: the exit code of a driver whose own (harness) code raised; it writes a
#: "harness-error" record first
HARNESS_EXIT_CODE = 70
#: in a release reading's ``others`` (what other live actors hold, per node):
#: what the ones not yet on a node (pending, no worker) may hold on any
ANY_NODE = "*"
#: records that do not move the driver's position (see the module docstring)
SIDE_PHASES = ("harness-error", "runtime", "signal", "log")


def _qualified(exc: BaseException) -> str:
    t = type(exc)
    return f"{t.__module__}.{t.__qualname__}"


#: how many links of an exception's chain ``describe_error`` records
CHAIN_DEPTH = 5


#: the characters of an exception's message kept in ``message``: all of a
#: message that quotes tracebacks, as Ray's ActorDiedError does (torchrl
#: 0.14.1's constructor on an unknown env: the creation task's traceback,
#: gymnasium's error in its middle, then an AttributeError of its
#: ``__len__``; 2000, the limit before 2026-11-27, cut gymnasium's line off)
MESSAGE_MAX = 20000


def describe_error(exc: BaseException) -> dict:
    """Type, message and traceback of an exception, JSON-ready, with the
    exceptions it is chained to (``causes``: ``__cause__``, else the
    ``__context__`` it did not suppress; then theirs), nearest first."""
    causes, seen, link = [], {id(exc)}, exc
    while len(causes) < CHAIN_DEPTH:
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
        if link is None or id(link) in seen:
            break
        seen.add(id(link))
        causes.append({"type": _qualified(link), "message": str(link)[:1000]})
    return {
        "type": _qualified(exc),
        "message": str(exc)[:MESSAGE_MAX],
        "traceback": "".join(traceback.format_exception(exc))[-4000:],
        "causes": causes,
    }


class HistoryWriter:
    """Appends records to the history file, one flushed JSON line each."""

    def __init__(self, path: str):
        self._f = open(path, "a", buffering=1)
        self.t0 = time.monotonic()
        self._lock = threading.Lock()  # side records come from other threads

    def now(self) -> float:
        """Seconds since the history began (the records' ``t``)."""
        return round(time.monotonic() - self.t0, 4)

    def write(self, record: dict) -> None:
        record.setdefault("t", self.now())
        line = json.dumps(record, default=repr) + "\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def close(self) -> None:
        with self._lock:
            self._f.close()


@dataclass
class HistoryFile:
    """What a history file holds: its records and what could not be read."""

    records: list = field(default_factory=list)
    #: (line number, start of the text) of every line that is not a JSON object
    corrupt: list = field(default_factory=list)
    #: the last line has no newline: the driver died while writing it
    torn: bool = False
    missing: bool = False


def read_history(path: str) -> HistoryFile:
    """Every record of a history file; unreadable lines are kept as evidence,
    never dropped silently (a torn last line is told apart from corruption)."""
    out = HistoryFile()
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        out.missing = True
        return out
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        out.torn = True
        lines.pop()  # the part after the last newline was never finished
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            out.records.append(record)
        else:
            out.corrupt.append((n, line[:120].decode(errors="replace")))
    return out


def last_phase(path: str) -> str | None:
    """The phase of the file's last complete record (cheap: reads its tail)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - 512))
            tail = f.read()
    except FileNotFoundError:
        return None
    lines = tail.split(b"\n")  # the part after the last newline is torn or empty
    try:
        return json.loads(lines[-2]).get("phase") if len(lines) > 1 else None
    except ValueError:  # longer than the tail read: not the short "exiting" record
        return None


class History:
    """A parsed history: per-op records (end + probe merged), the final probe,
    and where the driver was when its history stops."""

    def __init__(self, records, expected_ops: int | None = None):
        if isinstance(records, HistoryFile):
            self.file = records
        else:
            self.file = HistoryFile(records=list(records))
        records = self.file.records
        self.records = records
        self.expected_ops = expected_ops
        self.begins = {r["i"]: r for r in records if r.get("phase") == "begin"}
        self.ends = {r["i"]: dict(r) for r in records if r.get("phase") == "end"}
        self.probes = {r["i"]: r for r in records if r.get("phase") == "probe"}
        for i, end in self.ends.items():
            if i in self.probes:
                end["probe"] = {k: v for k, v in self.probes[i].items()
                                if k not in ("phase", "i", "t")}
        self.setup = next((r for r in records if r.get("phase") == "setup"), None)
        self.final = next((r for r in records if r.get("phase") == "final"), None)
        self.exiting = next((r for r in records if r.get("phase") == "exiting"), None)
        ended_at = (self.exiting or {}).get("skipped_probes_from")
        for i, end in self.ends.items():
            if ended_at is not None and i >= ended_at and "probe" not in end:
                end["probe_skipped"] = True  # the program ended (SIGTERM): none was taken
        #: the signals the harness sent the driver (``conformance.ops.interrupts``)
        self.signals = [r for r in records if r.get("phase") == "signal"]
        #: every start and end of a Ray runtime seen (``conformance.ops.runtime_watch``)
        self.runtime = [r for r in records if r.get("phase") == "runtime"]
        #: what the implementation logged at WARNING or above (``conformance.ops.log_capture``)
        self.logs = [r for r in records if r.get("phase") == "log"]

    @property
    def ops(self) -> list[dict]:
        """End records in order (each with its ``probe``); an op that began
        but never ended is last, with status "unfinished"."""
        out = [self.ends[i] for i in sorted(self.ends)]
        unfinished = self.unfinished
        if unfinished is not None:
            out.append({**unfinished, "status": "unfinished"})
        return out

    @property
    def unfinished(self) -> dict | None:
        pending = [i for i in self.begins if i not in self.ends]
        return self.begins[max(pending)] if pending else None

    def position(self) -> tuple[str, int | None]:
        """Where the driver was when the history stops:

        ``("start", None)`` before the setup record; ``("op", i)`` inside op i;
        ``("probe", i)`` in the harness's probe after op i; ``("between", i)``
        in harness code after op i's probe; ``("final", None)`` in the final
        probe; ``("before-exit", None)`` after it; ``("exit", None)`` in the
        interpreter exit (the ``exiting`` record is the last one)."""
        last = next((r for r in reversed(self.records)
                     if r.get("phase") and r.get("phase") not in SIDE_PHASES), None)
        if last is None:
            return "start", None
        phase, i = last.get("phase"), last.get("i")
        n = self.expected_ops
        if phase == "exiting":
            return "exit", None
        if phase == "final":
            return "before-exit", None
        if phase == "begin":
            return "op", i
        if phase == "end" and "probe" not in last:
            return "probe", i
        if phase in ("probe", "end"):
            return ("final", None) if n is not None and i == n - 1 else ("between", i)
        if phase == "setup":
            return ("final", None) if n == 0 else ("between", None)
        return "between", i

    def missing(self) -> list[str]:
        """What a complete history has and this one lacks (empty: complete)."""
        out = []
        if self.file.missing:
            return ["the history file"]
        if self.setup is None:
            out.append("the setup record")
        n = self.expected_ops
        # a program ended by the signal's exception (SIGTERM) skips the probes
        # from its op on and the final probe: Ray aborts it 3 s after the signal
        ended_at = (self.exiting or {}).get("skipped_probes_from")
        if n is not None:
            no_end = [i for i in range(n) if i not in self.ends]
            no_probe = [i for i in range(n) if i in self.ends and "probe" not in self.ends[i]
                        and (ended_at is None or i < ended_at)]
            if no_end:
                out.append(f"the end records of ops {_ranges(no_end)} (of {n})")
            if no_probe:
                out.append(f"the probes after ops {_ranges(no_probe)}")
        if self.final is None and ended_at is None:
            out.append("the final probe")
        if self.exiting is None:
            out.append("the exit record")
        return out


def _ranges(ints: list[int]) -> str:
    if len(ints) <= 3:
        return ", ".join(map(str, ints))
    return f"{ints[0]}-{ints[-1]}"
