"""The scenario catalog: every family, on every fixture, for both owners."""
from __future__ import annotations

from collections import Counter

from conformance.catalog.build import ALL, components_of
from conformance.catalog.families import FAMILIES as SINGLE_INSTANCE
from conformance.catalog.instances import instances
from conformance.catalog.sweep import sweep
from conformance.scenario import OWNERS, Scenario

PROFILES = ("quick", "full")
#: every family: one component of each kind (``families``), several at once
#: (``instances``) and one after another in one driver (``sweep``)
FAMILIES = {**SINGLE_INSTANCE, "instances": instances, "sweep": sweep}


def scenarios(fixtures=("local", "multinode"), profile: str = "full",
              families=None, components=ALL) -> list[Scenario]:
    """All scenarios of ``profile`` on ``fixtures`` for an implementation with
    ``components`` (in the order of ``ALL``), in a stable order."""
    comps = tuple(c for c in ALL if c in components)
    out = []
    for fixture in fixtures:
        for owner in OWNERS:
            for name, family in FAMILIES.items():
                if families and name not in families:
                    continue
                for s in family(fixture, owner, comps):
                    if profile in s.profiles:
                        out.append(s)
    ids = [s.id for s in out]
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    if dupes:
        raise RuntimeError(f"duplicate scenario ids: {dupes}")
    return out


def find(scenario_id: str) -> Scenario:
    """The scenario with this id (any fixture, any profile, any component set)."""
    family, fixture, *rest = scenario_id.split("/")
    comps = components_of(rest[-1]) if rest else ALL
    for s in scenarios((fixture,), "full", families=[family] if family in FAMILIES else None,
                       components=comps):
        if s.id == scenario_id:
            return s
    from conformance.catalog.walks import walk_from_id

    walk = walk_from_id(scenario_id)
    if walk is not None:
        return walk
    raise KeyError(f"no scenario {scenario_id!r}")


def counts(fixtures=("local", "multinode"), components=ALL) -> dict:
    """{profile: {family: {fixture: n}}}"""
    out = {}
    for profile in PROFILES:
        table = {}
        for s in scenarios(fixtures, profile, components=components):
            table.setdefault(s.family, Counter())[s.fixture] += 1
        out[profile] = {f: dict(c) for f, c in table.items()}
    return out


def load(name: str) -> Scenario:
    """A scenario named on a command line: a catalog id, or a JSON file
    (``Scenario.to_json``, e.g. one a shrink wrote)."""
    if name.endswith(".json"):
        import json

        with open(name) as f:
            return Scenario.from_dict(json.load(f))
    return find(name)
