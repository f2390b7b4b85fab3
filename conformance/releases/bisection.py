"""``python -m conformance bisect``: the first release where a scenario's
verdict changed.

Along one axis, the implementation's versions (each with one Ray version:
``--ray`` gives one for all, or one per version) or Ray's versions for a
fixed implementation version, each point runs in its own cached environment
(``conformance.releases.venvs``) as ``python -m conformance repro SCENARIO``. The
search is a bisection between the two ends (the verdict at the first
version, then halving the interval where it changed), so it assumes one
change along the axis, as ``git bisect`` does; ``--all`` runs every point
and lists every change.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance.releases.venvs import REPO_ROOT, EnvSpec, ensure

SPECIFIER_CHARS = "<>=!~"


def index_versions(package: str) -> list[str]:
    """Every final release of ``package`` on the package index pip is
    configured with, oldest first."""
    from packaging.version import Version

    name = package.split("[")[0]
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name,
                          "--disable-pip-version-check"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.strip().startswith("Available versions:"):
            found = [v.strip() for v in line.split(":", 1)[1].split(",")]
            return sorted((v for v in found if not Version(v).is_prerelease), key=Version)
    raise RuntimeError(f"pip index versions {name}: no versions found ({out.stderr.strip()[-300:]})")


def versions_of(text: str, package: str) -> list[str]:
    """``A,B,C`` as given, or the index's releases within a range such as
    ``>=0.10,<0.15``."""
    if any(c in text for c in SPECIFIER_CHARS):
        from packaging.specifiers import SpecifierSet

        wanted = SpecifierSet(text)
        return [v for v in index_versions(package) if v in wanted]
    return [v.strip() for v in text.split(",") if v.strip()]


def axis(package: str, versions: list[str], rays: list[str]) -> list[EnvSpec]:
    """The points to test: several versions (one Ray each, or the same for
    all) or several Ray versions for one version of the implementation."""
    if package.split("[")[0] == "ray":  # RLlib comes with Ray: one axis
        return [EnvSpec(package, r, r) for r in rays or versions]
    if len(versions) > 1 and len(rays) not in (1, len(versions)):
        raise ValueError(f"--ray: one version for all, or one per version ({len(versions)})")
    if len(versions) == 1:
        return [EnvSpec(package, versions[0], r) for r in rays]
    rays = rays * len(versions) if len(rays) == 1 else rays
    return [EnvSpec(package, v, r) for v, r in zip(versions, rays)]


def run_point(spec: EnvSpec, scenario_id: str, impl: str, outdir: Path, log=print) -> dict:
    """The report entry of ``scenario_id`` in ``spec``'s environment, saved
    as ``outdir/<env>.json``; a run that wrote none is a ``setup-error``
    entry naming why."""
    python = ensure(spec, log=log)
    out = outdir / f"{spec.name}.json"
    if out.exists():
        out.unlink()
    log(f"running {scenario_id} --impl {impl} in {spec.name}")
    done = subprocess.run([str(python), "-m", "conformance", "repro", scenario_id,
                           "--impl", impl, "--json", str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    (outdir / f"{spec.name}.log").write_text(done.stdout + done.stderr)
    if not out.exists():
        return {"id": scenario_id, "verdict": "setup-error", "oracles": [],
                "evidence": {"setup": (done.stdout + done.stderr)[-2000:]}}
    return json.loads(out.read_text())


def key_of(entry: dict, by_oracles: bool):
    return (entry["verdict"], tuple(sorted(entry.get("oracles", ())))) if by_oracles \
        else entry["verdict"]


def first_change(n: int, key) -> tuple[int, int] | None:
    """Indices (i, i+1) where ``key`` first differs from ``key(0)``, found by
    bisection between 0 and n-1 (``key`` is evaluated lazily); None if both
    ends agree."""
    first = key(0)
    if n < 2 or key(n - 1) == first:
        return None
    lo, hi = 0, n - 1  # key(lo) == first != key(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if key(mid) == first:
            lo = mid
        else:
            hi = mid
    return lo, hi


def _label(spec: EnvSpec) -> str:
    return f"{spec.package} {spec.version} (Ray {spec.ray})" \
        if spec.package.split("[")[0] != "ray" else f"{spec.package} {spec.ray}"


def _line(spec: EnvSpec, entry: dict) -> str:
    oracles = f" [{', '.join(entry.get('oracles', []))}]" if entry.get("oracles") else ""
    return f"  {_label(spec):40} {entry['verdict']}{oracles}"


def main(args) -> int:
    from conformance.adapters.registry import UsageError, adapter_class

    try:
        package = args.package or getattr(adapter_class(args.impl), "package", None)
    except UsageError as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return 2
    if not package:
        print(f"bisect: which package is {args.impl!r}? give --package", file=sys.stderr)
        return 2
    try:
        versions = versions_of(args.versions, package) if args.versions else []
        rays = versions_of(args.ray, "ray") if args.ray else []
        points = axis(package, versions, rays)
    except (ValueError, RuntimeError) as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return 2
    if len(points) < 2:
        print("bisect: give at least two versions (--versions or --ray)", file=sys.stderr)
        return 2
    outdir = Path(args.out or f"bisect-{args.scenario_id.replace('/', '_')}")
    outdir.mkdir(parents=True, exist_ok=True)
    entries: dict[int, dict] = {}

    def entry(i: int) -> dict:
        if i not in entries:
            entries[i] = run_point(points[i], args.scenario_id, args.impl, outdir)
            print(_line(points[i], entries[i]), flush=True)
        return entries[i]

    print(f"bisect {args.scenario_id} --impl {args.impl} over {len(points)} points: "
          + ", ".join(_label(p) for p in points), flush=True)
    key = (lambda i: key_of(entry(i), args.by_oracles))
    if args.all:
        changes = [(i, i + 1) for i in range(len(points) - 1) if key(i) != key(i + 1)]
    else:
        change = first_change(len(points), key)
        changes = [change] if change else []
    print("\ntested:")
    for i in sorted(entries):
        print(_line(points[i], entries[i]))
    if not changes:
        print(f"\nno change: the verdict is {key(0)!r} at both ends"
              + ("" if args.all else " (--all runs every point in between)"))
        return 0
    for before, after in changes:
        print(f"\nthe verdict changed between {_label(points[before])} and {_label(points[after])}:")
        for i in (before, after):
            e = entries[i]
            print(f"  {_label(points[i])}: {e['verdict']}"
                  f"{' [' + ', '.join(e.get('oracles', [])) + ']' if e.get('oracles') else ''}"
                  f"\n    report entry: {outdir / (points[i].name + '.json')}"
                  f"\n    output:       {outdir / (points[i].name + '.log')}"
                  f"\n    environment:  {points[i].name} ({os.environ.get('RLC_VENV_CACHE') or '~/.cache/rlc-venvs'})")
    return 1
