"""``python -m conformance releases``: the verdict matrix over releases.

A releases file lists the columns, one a line: ``IMPL VERSION RAY  # why``
(``torchrl 0.12.0 2.55.1``; for ``rllib`` VERSION is Ray's). Each runs in its
cached environment (``conformance.venvs``) as a whole pytest run of the
suite, writing ``OUT/<environment>.json``; then ``OUT/matrix.html`` and
``OUT/matrix.md`` are generated from every report, one column per (library,
version, Ray). Nothing in OUT is edited by hand: rerun the command.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conformance.venvs import REPO_ROOT, EnvSpec, ensure


def load(path: str) -> list[tuple[str, EnvSpec]]:
    """``[(impl, EnvSpec)]`` of a releases file."""
    from conformance.registry import adapter_class

    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.split("#", 1)[0].split()
            if not text:
                continue
            if len(text) != 3:
                raise ValueError(f"{path}:{n}: expected 'IMPL VERSION RAY', got {line.strip()!r}")
            impl, version, ray = text
            package = getattr(adapter_class(impl), "package", None)
            if not package:
                raise ValueError(f"{path}:{n}: adapter {impl!r} names no package")
            out.append((impl, EnvSpec(package, version, ray)))
    return out


def run_column(impl: str, spec: EnvSpec, out: Path, pytest_args: list[str]) -> Path:
    """One pytest run of the suite in ``spec``'s environment; its report."""
    python = ensure(spec)
    report = out / f"{spec.name}.json"
    cmd = [str(python), "-m", "pytest", "conformance", "--impl", impl, "-q",
           "-p", "no:cacheprovider", "--conformance-report", str(report), *pytest_args]
    t0 = time.monotonic()
    with open(out / f"{spec.name}.log", "w") as log:
        subprocess.run(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
    print(f"{spec.name}: {time.monotonic() - t0:.0f} s"
          + ("" if report.exists() else " (no report: see the .log)"), flush=True)
    return report


def main(args) -> int:
    from conformance.registry import UsageError

    try:
        columns = load(args.releases)
    except (OSError, ValueError, UsageError) as exc:
        print(f"releases: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pytest_args = ["--profile", args.profile, "--ray-fixture", args.ray_fixture,
                   "-n", str(args.workers)]
    if args.scenarios_from:
        pytest_args += ["--scenarios-from", str(Path(args.scenarios_from).resolve())]
    reports = [run_column(impl, spec, out, pytest_args) for impl, spec in columns]
    found = [str(r) for r in reports if r.exists()]
    if not found:
        print("releases: no column produced a report", file=sys.stderr)
        return 1
    done = subprocess.run([sys.executable, "-m", "conformance", "matrix", *found,
                           "--html", str(out / "matrix.html"),
                           "--markdown", str(out / "matrix.md")], cwd=REPO_ROOT)
    return done.returncode if len(found) == len(reports) else 1
