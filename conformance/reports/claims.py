"""The claim: what a run certifies, and whether a report meets the claim a
gate requires.

A run claims the components its adapter has, the features it declares, the
fixtures and the profile it ran (the report's ``claim``). A gate requires a
claim (by default :meth:`Claim.full`: every component, every feature, both
fixtures the suite starts itself, the quick profile) and a report meets it
only if it covers all of it: the components and features are the adapter's,
the fixtures and the profile were run, every scenario of the claim is in
the report and none of them skipped or left an operation undone for a
feature the claim includes. The skip count alone never decides: an adapter
that declares fewer components has fewer scenarios and no skip, and still
covers less.

Generic over ``conformance.adapter.FEATURES``: a feature added there is in
"every feature", and an operation recorded unsupported (with the oracles it
leaves unchecked) counts against the claim of its feature.
"""
from __future__ import annotations

from dataclasses import dataclass

from conformance.adapter import FEATURES
from conformance.catalog.build import ALL

#: the fixtures a claim covers by default: the clusters the suite starts itself
DEFAULT_FIXTURES = ("local", "multinode")
PROFILES = ("quick", "full")  # each a superset of the one before


@dataclass(frozen=True)
class Claim:
    components: tuple
    features: tuple
    fixtures: tuple
    profile: str

    @classmethod
    def full(cls) -> "Claim":
        return cls(ALL, tuple(sorted(FEATURES)), DEFAULT_FIXTURES, "quick")

    @classmethod
    def parse(cls, components: str = "all", features: str = "all",
              fixtures: str = ",".join(DEFAULT_FIXTURES), profile: str = "quick") -> "Claim":
        """A required claim from the gate's options (``all`` or a comma list)."""
        def pick(raw: str, valid, what: str) -> tuple:
            if raw.strip() == "all":
                return tuple(valid)
            names = tuple(dict.fromkeys(x.strip() for x in raw.split(",") if x.strip()))
            bad = [n for n in names if n not in valid]
            if bad:
                raise ValueError(f"unknown {what} {', '.join(bad)} (valid: all, or "
                                 f"{', '.join(valid)})")
            return tuple(n for n in valid if n in names)
        from conformance.ops.scenario import FIXTURES

        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r} (valid: {', '.join(PROFILES)})")
        return cls(pick(components, ALL, "component"), pick(features, sorted(FEATURES), "feature"),
                   pick(fixtures, tuple(FIXTURES), "fixture"), profile)

    @classmethod
    def of_run(cls, adapter, fixtures, profile: str) -> "Claim":
        return cls(tuple(adapter.components), tuple(sorted(adapter.features)),
                   tuple(fixtures), profile)

    def as_dict(self) -> dict:
        return {"components": list(self.components), "features": list(self.features),
                "fixtures": list(self.fixtures), "profile": self.profile}

    @classmethod
    def from_dict(cls, d: dict) -> "Claim":
        return cls(tuple(d["components"]), tuple(d["features"]), tuple(d["fixtures"]),
                   d["profile"])

    def describe(self) -> str:
        """One line: ``every component; every feature; fixtures local+multinode; quick profile``."""
        comps = ("every component" if set(ALL) <= set(self.components)
                 else "components " + ", ".join(self.components))
        lacking = sorted(set(FEATURES) - set(self.features))
        feats = ("every feature" if not lacking else
                 f"features {', '.join(self.features) or 'none'} (not {', '.join(lacking)})")
        return f"{comps}; {feats}; fixtures {'+'.join(self.fixtures)}; {self.profile} profile"

    def slug(self) -> str:
        """Short, for a check name: ``all components, all features, local+multinode, quick``."""
        comps = "all components" if set(ALL) <= set(self.components) else "+".join(self.components)
        lacking = sorted(set(FEATURES) - set(self.features))
        feats = "all features" if not lacking else "without " + "+".join(lacking)
        return f"{comps}, {feats}, {'+'.join(self.fixtures)}, {self.profile}"


def of_report(doc: dict) -> Claim | None:
    """The claim a report states (None: a report written before claims)."""
    return Claim.from_dict(doc["claim"]) if doc.get("claim") else None


def shortfall(doc: dict, required: Claim) -> list[str]:
    """How the report covers less than ``required`` (empty: it meets it)."""
    claimed = of_report(doc)
    if claimed is None:
        return ["the report states no claim (written by a suite older than claims): run the "
                "suite again"]
    out = []
    missing = [c for c in required.components if c not in claimed.components]
    if missing:
        out.append(f"components not in the implementation: {', '.join(missing)} (it has "
                   f"{', '.join(claimed.components)})")
    missing = [f for f in required.features if f not in claimed.features]
    if missing:
        out.append(f"features not declared by the adapter: {', '.join(missing)} (declare them in "
                   "the adapter's `features`, or claim fewer: `gate --features`, the workflow's "
                   "`features` input)")
    missing = [f for f in required.fixtures if f not in claimed.fixtures]
    if missing:
        out.append(f"fixtures not run: {', '.join(missing)} (run: {', '.join(claimed.fixtures)})")
    if PROFILES.index(claimed.profile) < PROFILES.index(required.profile):
        out.append(f"profile {claimed.profile} run, {required.profile} required")
    return out + _scenarios_short(doc, required, claimed)


def _scenarios_short(doc: dict, required: Claim, claimed: Claim) -> list[str]:
    """The claim's scenarios the report lacks, skipped ones and operations
    left undone, for a feature the claim includes."""
    from conformance import catalog

    fixtures = [f for f in required.fixtures if f in claimed.fixtures]
    profile = required.profile if required.profile in PROFILES else "quick"
    want = {s.id for s in catalog.scenarios(fixtures, profile, components=claimed.components)}
    entries = {s["id"]: s for s in doc["scenarios"]}
    out = []
    absent = sorted(want - set(entries))
    if absent:
        out.append(f"{len(absent)} of the claim's {len(want)} scenarios are not in the report "
                   f"(the run was narrowed: --scenario, -k, a shard not merged): "
                   f"{', '.join(absent[:3])}{', ...' if len(absent) > 3 else ''}")
    wanted = set(required.features)
    skipped = [s for s in entries.values() if s["id"] in want and s["verdict"] == "skip"
               and (set(_skipped_for(s)) & wanted or not _skipped_for(s))]
    if skipped:
        reasons = sorted({(s.get("evidence") or {}).get("reason", "?") for s in skipped})
        out.append(f"{len(skipped)} of the claim's scenarios skipped: {'; '.join(reasons)}")
    undone = [(s["id"], f) for s in entries.values() if s["id"] in want
              for f in s.get("unsupported_features") or [] if f in wanted]
    if undone:
        feats = sorted({f for _, f in undone})
        out.append(f"{len(undone)} operations not run for features the claim includes "
                   f"({', '.join(feats)}), in {len({i for i, _ in undone})} scenarios")
    return out


def _skipped_for(entry: dict) -> list:
    return (entry.get("evidence") or {}).get("missing_features") or []


def coverage_line(doc: dict) -> str:
    """What the claim covers beyond its scenarios: operations never run and
    oracles not checked (``report.coverage``)."""
    from conformance.reports.report import coverage

    cov = doc.get("coverage") or coverage(doc["scenarios"])
    not_checked = ", ".join(f"{o} ({n})" for o, n in (cov.get("not_checked") or {}).items())
    return (f"{cov['run']} of {cov['scenarios']} scenarios run to a verdict, "
            f"{cov['skipped']} skipped; operations never run: {cov['ops_unsupported']} "
            f"unsupported, {cov.get('ops_not_built', 0)} on a component never built (a "
            f"constructor the scenario lets fail, failed); oracles not checked: "
            f"{not_checked or 'none'}")
