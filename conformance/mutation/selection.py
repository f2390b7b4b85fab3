"""Which scenarios a mutant runs, in which order: the one selection both
``mutate run`` (``distributor``) and ``mutate check --covering`` use."""
from __future__ import annotations

from pathlib import Path

from conformance import catalog
from conformance.mutation.use_sites import use_lines

#: lines: a kill within this distance in the same module puts its scenario first
NEARBY = 12


class Selection:
    """Which scenarios to run for a mutation, in which order. ``profile``
    None: every scenario of the map (``mutate check``); "full": only those
    the quick profile lacks (the full profile's pending mutants are the
    quick profile's survivors)."""

    def __init__(self, coverage: dict, profile: str | None, root: Path = Path()):
        if profile is None:
            ids = set(coverage["baseline"])
        else:
            ids = {s.id for s in catalog.scenarios(("local", "multinode"), profile)}
            if profile == "full":
                ids -= {s.id for s in catalog.scenarios(("local", "multinode"), "quick")}
        self.baseline = {sid: b for sid, b in coverage["baseline"].items()
                         if b["verdict"] == "pass" and sid in ids}
        self.lines = coverage["lines"]
        self.root = root
        self.kills: list = []  # (module, line, scenario id) of kills so far
        self._uses: dict = {}

    def _ran(self, module: str, lines) -> set:
        per = self.lines.get(module, {})
        return {sid for line in lines for sid in per.get(str(line), ())}

    def covering(self, module: str, first: int, last: int, statement: int | None = None,
                 source: str | None = None) -> set:
        """Scenarios that executed a line of the mutation or the first line of
        the statement around it (coverage.py records a statement spread over
        lines at its first line: a parameter of a ``def``, a continued call).
        Of a line that runs at import (a constant, a ``def``'s defaults or
        decorators), the scenarios that ran a line using it
        (``use_sites.use_lines``; ``source``: the module's unmutated text, when
        a mutant is on disk), where any did: every scenario imports it."""
        key = (module, statement or first)
        if key not in self._uses:
            self._uses[key] = use_lines(module, statement or first, self.root, source)
        uses = self._uses[key]
        found = set()
        if uses is not None:
            found = set().union(*(self._ran(m, lines) for m, lines in uses.items())) & set(self.baseline)
        if not found:
            found = self._ran(module, {*range(first, last + 1), *([statement] if statement else [])})
        return found & set(self.baseline)

    def order(self, module: str, line: int, scenario_ids) -> list:
        near: dict = {}
        for m, ln, sid in self.kills:
            if m == module and abs(ln - line) <= NEARBY:
                near[sid] = near.get(sid, 0) + 1
        return sorted(scenario_ids, key=lambda sid: (
            -near.get(sid, 0), self.baseline[sid]["fixture"] != "multinode",
            self.baseline[sid]["duration"], sid))
