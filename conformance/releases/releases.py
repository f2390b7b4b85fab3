"""``python -m conformance releases``: the verdict matrix over releases.

A releases file lists the columns, one a line: ``IMPL VERSION RAY  # why``
(``torchrl 0.12.0 2.55.1``; for ``rllib`` VERSION is Ray's). Each runs in its
cached environment (``conformance.releases.venvs``) as a whole pytest run of the
suite, writing ``OUT/<environment>.json``; then ``OUT/matrix.html`` and
``OUT/matrix.md`` are generated from every report, one column per (library,
version, Ray). Nothing in OUT is edited by hand: rerun the command.

``--shards N`` runs each column as N shards (``pytest --shard I/N``, balanced
by the column's previous report when there is one), one after another here,
each report in ``OUT/shards/``, then merges them into the column's report
(``conformance merge``). A shard whose report is already there is not run
again: a run that was stopped goes on where it stopped. ``--only-shard I``
runs shard I of every column and merges nothing: one CI job of N, whose
reports a last job merges with ``conformance merge``.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conformance.releases.venvs import REPO_ROOT, EnvSpec, ensure, spec_for


def load(path: str) -> list[tuple[str, EnvSpec]]:
    """``[(impl, EnvSpec)]`` of a releases file."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.split("#", 1)[0].split()
            if not text:
                continue
            if len(text) != 3:
                raise ValueError(f"{path}:{n}: expected 'IMPL VERSION RAY', got {line.strip()!r}")
            impl, version, ray = text
            try:
                out.append((impl, spec_for(impl, version, ray)))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: {exc}") from None
    return out


def _run_pytest(python, impl: str, report: Path, log: Path, pytest_args: list[str]) -> float:
    cmd = [str(python), "-m", "pytest", "conformance", "--impl", impl, "-q",
           "-p", "no:cacheprovider", "--conformance-report", str(report), *pytest_args]
    t0 = time.monotonic()
    with open(log, "w") as f:
        subprocess.run(cmd, cwd=REPO_ROOT, stdout=f, stderr=subprocess.STDOUT)
    return time.monotonic() - t0


def run_column(impl: str, spec: EnvSpec, out: Path, pytest_args: list[str], shards: int = 1,
               only_shard: int | None = None) -> Path:
    """The suite in ``spec``'s environment, whole or in ``shards`` shards
    merged; the column's report (or, with ``only_shard``, that shard's)."""
    python = ensure(spec)
    report = out / f"{spec.name}.json"
    if shards == 1:
        seconds = _run_pytest(python, impl, report, out / f"{spec.name}.log", pytest_args)
        print(f"{spec.name}: {seconds:.0f} s" + ("" if report.exists() else
                                                  " (no report: see the .log)"), flush=True)
        return report
    parts = out / "shards"
    parts.mkdir(exist_ok=True)
    balance = ["--shard-durations", str(report)] if report.exists() else []
    done = []
    for i in ([only_shard] if only_shard else range(1, shards + 1)):
        part = parts / f"{spec.name}.shard-{i}-of-{shards}.json"
        if part.exists():
            print(f"{spec.name} shard {i}/{shards}: done before ({part})", flush=True)
        else:
            seconds = _run_pytest(python, impl, part, parts / f"{part.stem}.log",
                                  [*pytest_args, "--shard", f"{i}/{shards}", *balance])
            print(f"{spec.name} shard {i}/{shards}: {seconds:.0f} s"
                  + ("" if part.exists() else " (no report: see its .log)"), flush=True)
        done.append(part)
    if only_shard:
        return done[0]
    merged = subprocess.run([sys.executable, "-m", "conformance", "merge", str(report),
                             *map(str, done)], cwd=REPO_ROOT, capture_output=True, text=True)
    print(merged.stdout.rstrip() or merged.stderr.rstrip(), flush=True)
    return report


def main(args) -> int:
    from conformance.adapters.registry import UsageError

    try:
        columns = load(args.releases)
    except (OSError, ValueError, UsageError) as exc:
        print(f"releases: {exc}", file=sys.stderr)
        return 2
    if args.only_shard is not None and not 1 <= args.only_shard <= args.shards:
        print(f"releases: --only-shard {args.only_shard} needs --shards N with N >= it",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pytest_args = ["--profile", args.profile, "--ray-fixture", args.ray_fixture,
                   "-n", str(args.workers)]
    if args.scenarios_from:
        pytest_args += ["--scenarios-from", str(Path(args.scenarios_from).resolve())]
    reports = [run_column(impl, spec, out, pytest_args, args.shards, args.only_shard)
               for impl, spec in columns]
    if args.only_shard:
        return 0 if all(r.exists() for r in reports) else 1
    found = [str(r) for r in reports if r.exists()]
    if not found:
        print("releases: no column produced a report", file=sys.stderr)
        return 1
    done = subprocess.run([sys.executable, "-m", "conformance", "matrix", *found,
                           "--html", str(out / "matrix.html"),
                           "--markdown", str(out / "matrix.md")], cwd=REPO_ROOT)
    return done.returncode if len(found) == len(reports) else 1
