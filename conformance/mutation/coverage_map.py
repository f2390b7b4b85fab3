"""Which scenarios execute which line of ``impl/``: measured once, stored.

``python -m conformance mutate coverage --profile P`` runs every scenario of
the profile once against the unmutated reference, one at a time, with
coverage.py in the driver (``covdriver``) and in every Ray worker
(``covhook/sitecustomize.py``), and writes
``ci/results/mutation/coverage-P.json``:

- ``lines``: ``{module: {line: [scenario ids]}}``;
- ``baseline``: per scenario, its verdict and duration on the reference
  (only a scenario that passes there can kill a mutant).

Attribution: a driver's data carries its scenario as coverage context; a
worker's carries it too when it inherited the driver's environment (a
``local`` driver starts its own raylet), otherwise (``multinode``: the
raylets are the cluster's) the job the worker ran, matched with the jobs the
scenario's driver recorded in its final probe.
"""
from __future__ import annotations

import fnmatch
import glob
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from conformance import catalog
from fixtures.rayenv import REPO_ROOT

HOOK = Path(__file__).with_name("covhook")



def matches_any(scenario_id: str, patterns) -> bool:
    """The id matches one of the globs (case-sensitive, as ``--scenario``)."""
    return any(fnmatch.fnmatchcase(scenario_id, p) for p in patterns)

def hook_dir(scratch: str) -> str:
    """A directory holding only the worker hook and coverage.py: what goes on
    the PYTHONPATH of the session's processes (not the rest of the mutation
    extra, whose aiohttp would change what ``ray.init`` starts)."""
    import coverage

    path = os.path.join(scratch, "hook")
    os.makedirs(path)
    os.symlink(HOOK / "sitecustomize.py", os.path.join(path, "sitecustomize.py"))
    os.symlink(os.path.dirname(coverage.__file__), os.path.join(path, "coverage"))
    return path


def measure(profile: str, out: str, scenario_filter=None, log=print, reuse: dict | None = None) -> dict:
    """Run the profile under coverage; write and return the map. ``reuse``:
    a map measured before (the quick profile's, for the full one) whose
    scenarios are not run again but merged in."""
    from conformance.mutation.runner import ScenarioRunner

    scratch = tempfile.mkdtemp(prefix="rlc-coverage-")
    data_dir = os.path.join(scratch, "data")
    os.makedirs(data_dir)
    os.environ.update({
        "RLC_COVERAGE_DIR": data_dir,
        "RLC_COVERAGE_INCLUDE": str(REPO_ROOT / "impl" / "*"),
        "PYTHONPATH": os.pathsep.join([hook_dir(scratch), *filter(None, [os.environ.get("PYTHONPATH")])]),
    })
    scenarios = catalog.scenarios(("local", "multinode"), profile)
    if scenario_filter:
        scenarios = [s for s in scenarios if matches_any(s.id, scenario_filter)]
    if reuse:
        scenarios = [s for s in scenarios if s.id not in reuse["baseline"]]
    runner = ScenarioRunner(entry=("conformance.mutation.covdriver", "main"))
    baseline, jobs = {}, {}
    started = time.monotonic()
    try:
        for k, scenario in enumerate(scenarios, 1):
            entry, history = runner.run(scenario)
            baseline[scenario.id] = {"verdict": entry["verdict"], "oracles": entry["oracles"],
                                     "duration": entry["duration"], "fixture": scenario.fixture}
            if scenario.fixture != "local":  # a local runtime's job ids start again each time
                for job in (history.final or {}).get("jobs") or []:
                    jobs.setdefault(job, []).append(scenario.id)
            log(f"[{k}/{len(scenarios)}] {entry['verdict']:5} {entry['duration']:6.1f}s {scenario.id}")
    finally:
        runner.close()
    try:
        lines = attribute(data_dir, jobs, log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if reuse:
        baseline = {**reuse["baseline"], **baseline}
        merge_lines(lines, reuse["lines"])
    seconds = time.monotonic() - started + (reuse or {}).get("seconds", 0.0)
    result = {"profile": profile, "seconds": round(seconds, 1), "baseline": baseline, "lines": lines}
    with open(out, "w") as f:
        f.write(compact(result))
    return result


def _defs_by_line(source: str) -> dict:
    """``{line: qualified name of the innermost def or class holding it}``
    (lines at module level are absent)."""
    import ast

    names: dict = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                names.update({ln: name for ln in range(child.lineno, child.end_lineno + 1)})
                visit(child, name + ".")  # an inner def's lines are its own
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return names


def moved(lines: dict, old_sources: dict, new_sources: dict) -> dict:
    """``lines`` (``{module: {line: ids}}``, measured on ``old_sources``,
    ``{module: text}``) on today's line numbers: a line of a block that
    difflib finds unchanged moves with it, when it stays in the function of
    the same name (a ``finally:`` of another function is the same text); a
    line of a changed block, or of a module that is gone, is dropped. An
    approximation both ways: a scenario whose path to an unchanged line
    changed (a new return above it) keeps it, and one that reaches it now
    through changed code is not found."""
    import difflib

    out: dict = {}
    for module, per in lines.items():
        if module not in old_sources or module not in new_sources:
            continue
        old, new = old_sources[module], new_sources[module]
        old_defs, new_defs = _defs_by_line(old), _defs_by_line(new)
        matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
        to_new = {i + 1 + k: j + 1 + k for i, j, n in matcher.get_matching_blocks() for k in range(n)
                  if old_defs.get(i + 1 + k) == new_defs.get(j + 1 + k)}
        kept = {str(to_new[int(ln)]): ids for ln, ids in per.items() if int(ln) in to_new}
        if kept:
            out[module] = kept
    return out


def moved_from(rev: str, profile: str, keep) -> dict:
    """The map of ``profile`` committed at git revision ``rev`` (``lines`` and
    ``baseline``), its lines moved to today's ``impl/`` (``moved``) from the
    sources it was measured on: ``rev``'s ``impl/``, which must be the tree its
    committed results record (``score.json``'s provenance); its scenarios only
    those ``keep`` accepts (e.g. today's catalog's, not measured again)."""
    import json
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"error: --moved-from {rev}: git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def show(path: str) -> str:
        return git("show", f"{rev}:{path}")

    then = json.loads(show("ci/results/mutation/score.json")).get(profile, {})
    measured_on = (then.get("provenance") or {}).get("impl_tree")
    tree = git("rev-parse", f"{rev}:impl").strip()
    if measured_on != tree:
        raise SystemExit(f"error: --moved-from {rev}: its {profile} results were measured on impl/ tree "
                         f"{measured_on}, its impl/ is {tree}: give a commit whose impl/ is that tree")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(show(f"ci/results/mutation/coverage-{profile}.json"))
        f.flush()
        old = load(f.name)
    old_sources = {m: show(m) for m in old["lines"]}
    new_sources = {m: (REPO_ROOT / m).read_text() for m in old["lines"] if (REPO_ROOT / m).exists()}
    baseline = {sid: v for sid, v in old["baseline"].items() if keep(sid)}
    lines = {m: {ln: [s for s in ids if s in baseline] for ln, ids in per.items()}
             for m, per in moved(old["lines"], old_sources, new_sources).items()}
    return {"baseline": baseline,
            "lines": {m: {ln: ids for ln, ids in per.items() if ids} for m, per in lines.items()}}


def merge_lines(into: dict, more: dict) -> dict:
    """``into`` (``{module: {line: ids}}``) with the scenarios of ``more`` added."""
    for module, per in more.items():
        mine = into.setdefault(module, {})
        for line, ids in per.items():
            mine[line] = sorted(set(mine.get(line, [])) | set(ids))
    return into


def compact(result: dict) -> str:
    """The map as stored: scenario ids listed once, lines naming them by index
    (2.7 MB of ids become a few hundred KB)."""
    ids = sorted(result["baseline"])
    index = {sid: k for k, sid in enumerate(ids)}
    lines = {m: {ln: [index[s] for s in sids] for ln, sids in per.items()}
             for m, per in result["lines"].items()}
    head = {k: v for k, v in result.items() if k != "lines"}
    body = ",\n".join(f"{json.dumps(m)}: {json.dumps(per)}" for m, per in sorted(lines.items()))
    return (json.dumps({**head, "scenarios": ids}, indent=1, sort_keys=True)[:-2]
            + f',\n "lines": {{\n{body}\n}}\n}}\n')


def load(path) -> dict:
    """The map with scenario ids in place of indices."""
    with open(path) as f:
        stored = json.load(f)
    ids = stored.get("scenarios")
    if ids is not None:
        stored["lines"] = {m: {ln: [ids[k] for k in ks] for ln, ks in per.items()}
                           for m, per in stored["lines"].items()}
    return stored


def _read(data) -> tuple[set, dict]:
    """A data file's contexts (the scenarios it ran for) and ``{module:
    lines}``, read whole before any is used (coverage.py's DataError on a
    half-written file may come from any of these reads)."""
    data.read()
    owners = {c for c in data.measured_contexts() if c}
    return owners, {os.path.relpath(f, REPO_ROOT): list(data.lines(f) or [])
                    for f in data.measured_files()}


def attribute(data_dir: str, jobs: dict, log=print) -> dict:
    """``{module: {line: [scenario ids]}}`` from every data file of the run.
    A file coverage.py cannot read is left out and said: a process killed
    while it saved its data (seen once in 222 files, 2026-11-28: a
    ``.coverage.worker.PID`` with coverage.py's tables and no schema row,
    which ended the whole measurement)."""
    from coverage import CoverageData
    from coverage.exceptions import DataError

    lines: dict = {}
    for path in sorted(glob.glob(os.path.join(data_dir, ".coverage.*"))):
        try:
            owners, measured = _read(CoverageData(path))
        except DataError as exc:
            log(f"left out: {os.path.basename(path)}, unreadable ({str(exc)[:120]}): "
                "a process killed while it saved; its lines are not in the map")
            continue
        if not owners:  # a worker of a connected driver: its job says whose
            pid = path.rsplit(".", 1)[-1] if ".worker." in path else None
            job_file = os.path.join(data_dir, f"{pid}.job")
            if pid and os.path.exists(job_file):
                owners = set(jobs.get(Path(job_file).read_text().strip(), []))
        for module, numbers in measured.items():
            for line in numbers:
                lines.setdefault(module, {}).setdefault(str(line), set()).update(owners)
    return {m: {ln: sorted(ids) for ln, ids in sorted(per.items(), key=lambda x: int(x[0]))}
            for m, per in sorted(lines.items())}
