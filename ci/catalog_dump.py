"""Every scenario of the catalog as canonical JSON: id, ops, spec, requires,
profiles and each op's deadline, for every component subset, both profiles
and every fixture. Self-contained on purpose: it runs against an older
checkout too (``ci/catalog-unchanged.sh REV``), so it uses only the
catalog's long-standing API.

    python ci/catalog_dump.py > now.json
    python ci/catalog_dump.py --against base.json   # exit 1 if a scenario of base changed
"""
import argparse
import itertools
import json
import sys

try:  # conformance/ in folders; the flat fallback: ci/catalog-unchanged.sh
    from conformance import catalog
    from conformance.ops import verbs
except ImportError:
    from conformance import catalog, verbs
from conformance.adapter import Spec
try:  # conformance/ in folders; the flat fallback: ci/catalog-unchanged.sh
    from conformance.adapters.registry import load_adapter
except ImportError:
    from conformance.registry import load_adapter

FIXTURES = ("local", "multinode", "external")
OPTIONAL = ("buffer", "evaluator")  # the collector is always there


def subsets():
    for k in range(len(OPTIONAL) + 1):
        for extra in itertools.combinations(OPTIONAL, k):
            yield tuple(c for c in catalog.ALL if c == "collector" or c in extra)


def dump() -> dict:
    adapter = load_adapter("reference")
    out = {}
    for comps, profile in itertools.product(subsets(), catalog.PROFILES):
        key = f"{profile}:{'+'.join(comps)}"
        records = {}
        for s in catalog.scenarios(FIXTURES, profile, components=comps):
            spec = Spec.for_scenario(s)
            d = s.to_dict()
            d["deadlines"] = [verbs.deadline_of(op, adapter, spec) for op in s.ops]
            records[s.id] = d
        out[key] = records
    return out


def compare(base: dict, now: dict) -> tuple[list, list]:
    """(changed or missing scenarios of ``base``, scenarios new in ``now``)."""
    changed, added = [], []
    for key, records in base.items():
        mine = now.get(key, {})
        for sid, rec in records.items():
            if mine.get(sid) != rec:
                changed.append(f"{key} {sid}: " + ("missing" if sid not in mine else "changed"))
        added += [f"{key} {sid}" for sid in mine if sid not in records]
    return changed, added


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--against", help="a dump of the base: exit 1 if any of its scenarios changed")
    p.add_argument("--new-families", default="",
                   help="comma-separated families whose scenarios may be new")
    args = p.parse_args(argv)
    now = dump()
    if not args.against:
        json.dump(now, sys.stdout, sort_keys=True)
        return 0
    with open(args.against) as f:
        base = json.load(f)
    changed, added = compare(base, now)
    allowed = set(filter(None, args.new_families.split(",")))
    stray = [a for a in added if a.split(" ", 1)[1].split("/", 1)[0] not in allowed]
    total = sum(len(r) for r in base.values())
    print(f"{total} scenario records of the base (every subset x profile); "
          f"{len(changed)} changed or missing, {len(added)} new "
          f"({len(added) - len(stray)} in {sorted(allowed) or 'no'} new families)")
    for line in changed[:50] + stray[:50]:
        print("  " + line)
    return 1 if changed or stray else 0


if __name__ == "__main__":
    raise SystemExit(main())
