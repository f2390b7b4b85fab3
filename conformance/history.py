"""The history of one scenario run: a JSON-lines file, one record per event.

The driver appends a ``begin`` record before each operation and an ``end``
record after it, flushing each line, so that a driver that aborts or hangs
mid-operation still leaves a history naming the operation it died in.
"""
from __future__ import annotations

import json
import time
import traceback


def describe_error(exc: BaseException) -> dict:
    """Type, message and traceback of an exception, JSON-ready."""
    t = type(exc)
    return {
        "type": f"{t.__module__}.{t.__qualname__}",
        "message": str(exc)[:2000],
        "traceback": "".join(traceback.format_exception(exc))[-4000:],
    }


class HistoryWriter:
    """Appends records to the history file, one flushed JSON line each."""

    def __init__(self, path: str):
        self._f = open(path, "a", buffering=1)
        self.t0 = time.monotonic()

    def write(self, record: dict) -> None:
        record.setdefault("t", round(time.monotonic() - self.t0, 4))
        self._f.write(json.dumps(record, default=repr) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def read_history(path: str) -> list[dict]:
    """All complete records of a history file (a torn last line is dropped)."""
    records = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    break
    except FileNotFoundError:
        pass
    return records


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
    """A parsed history: op begin/end records, probes, and the final probe."""

    def __init__(self, records: list[dict]):
        self.records = records
        self.begins = {r["i"]: r for r in records if r.get("phase") == "begin"}
        self.ends = {r["i"]: r for r in records if r.get("phase") == "end"}
        self.setup = next((r for r in records if r.get("phase") == "setup"), None)
        self.final = next((r for r in records if r.get("phase") == "final"), None)
        self.exiting = next((r for r in records if r.get("phase") == "exiting"), None)

    @property
    def ops(self) -> list[dict]:
        """End records in order; an op that began but never ended is last."""
        out = [self.ends[i] for i in sorted(self.ends)]
        unfinished = self.unfinished
        if unfinished is not None:
            out.append({**unfinished, "status": "unfinished"})
        return out

    @property
    def unfinished(self) -> dict | None:
        pending = [i for i in self.begins if i not in self.ends]
        return self.begins[max(pending)] if pending else None

    def actors_of(self, component: str) -> list[dict]:
        """Actor records (id, pid, node) captured after a component's construction."""
        for r in self.ends.values():
            if r["op"].get("verb") == "construct" and r["op"].get("target") == component:
                return r.get("result", {}).get("actors", [])
        return []
