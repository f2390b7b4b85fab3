"""The scenario catalog: every family, on every fixture, for both owners."""
from __future__ import annotations

from collections import Counter

from conformance.catalog.build import ALL, components_of
from conformance.catalog.built_in_thread import built_in_thread
from conformance.catalog.families import FAMILIES as SINGLE_INSTANCE
from conformance.catalog.instances import instances
from conformance.catalog.sweep import sweep
from conformance.ops.scenario import OWNERS, Scenario

PROFILES = ("quick", "full")
#: every family: one component of each kind (``families``), several at once
#: (``instances``), one after another in one driver (``sweep``), built from a
#: thread that ends (``built_in_thread``)
FAMILIES = {**SINGLE_INSTANCE, "instances": instances, "sweep": sweep,
            "built_in_thread": built_in_thread}


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


def subset_names(sid: str, components) -> tuple[str, str]:
    """The ids the scenario ``sid``, written for every component, may have for
    an implementation with ``components``: its subset variant
    (``...~no-evaluator``), and that of its order over the components without
    the missing ones' steps, as the families write them."""
    from conformance.catalog.build import subset_variant

    family, fixture, owner, variant = sid.split("/", 3) if sid.count("/") >= 3 else (sid,) * 4
    steps = [t for t in variant.split(">") if t not in ALL or t in components]
    return tuple(f"{family}/{fixture}/{owner}/{subset_variant(v, components)}"
                 for v in (variant, ">".join(steps)))


def counterpart(sid: str, components, ids) -> str | None:
    """What the scenario ``sid``, written for every component, is called in the
    catalog ``ids`` of an implementation with ``components``: ``sid`` itself,
    one of its ``subset_names``, or None when it is about a component the
    implementation lacks. An id of neither kind (a typo, a scenario of another
    catalog) comes back as it is."""
    if sid in ids:
        return sid
    mapped = next((m for m in subset_names(sid, components) if m in ids), None)
    if mapped is not None:
        return mapped
    try:
        about_missing = any(c not in components for c in find(sid).kinds)
    except KeyError:
        about_missing = False
    return None if about_missing else sid


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
