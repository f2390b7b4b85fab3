"""cosmic-ray's distributor ``rlc-scenarios``: each mutant against the
scenarios that execute its lines, stopping at the first kill.

cosmic-ray's own loop (``cosmic-ray exec``) hands us the session's pending
work items and records each result in the session database, so a run that
stops (killed, or its time is up) resumes with what is still pending. Per
mutant:

1. **Selection**: the scenarios of the profile whose coverage (driver and
   Ray workers, ``coverage_map``) includes a line of the mutation (of a
   value made at import time: the lines that use it, ``use_sites``), among
   those that pass on the unmutated reference (``selection``).
2. **Order**: first the scenarios that killed mutants within
   ``selection.NEARBY`` lines of this one in the same module (most kills first), then
   ``multinode`` before ``local`` (a connected driver skips a runtime's
   start: median 2.4 s against 5.6 s), then the shortest on the reference.
3. **Mutation**: cosmic-ray applies it to the file on disk
   (``use_mutation``) and puts the original back afterwards; the runner's
   drivers and Ray workers import ``impl`` from disk (``runner``).
4. **Budget** (a first pass): at most ``RLC_MUTATION_BUDGET`` scenarios per
   mutant; a mutant they all pass is a *shallow* survivor, counted as
   surviving (the score is then a lower bound) until ``--deep`` runs its
   other covering scenarios. Kills come early in the order (measured: see
   the results README), survivors run every covering scenario (~90 on the
   quick profile): the first pass gives a score in a fraction of the time.
5. **Order of mutants**: pseudo-random, fixed by cosmic-ray's job ids, so
   any prefix of a run is a uniform sample of the mutants.
6. **Kill**: a scenario that passes on the reference and fails, hangs or
   crashes under the mutant. A harness ``error`` is no kill (*unknown*, as
   a Jepsen checker that throws: never valid either way): the mutant goes on
   to its next scenario, and a survivor's result names the unknown ones.
   Every failure (and a hang, a crash, a harness error) is run again at
   once (``runner.ScenarioRunner.outcome``: a busy machine or a race must
   not fake a kill): a pass then is a flip, noted in the result, and the
   next scenario runs; an error in either run is unknown; two failures are
   a kill (``runner.confirmed_outcome``).

Run-time settings come from the environment (set by ``mutate run``):
``RLC_MUTATION_PROFILE``, ``RLC_MUTATION_SHARD`` (``I/N``: the work items
whose job id hashes to I), ``RLC_MUTATION_STOP_AT`` (a Unix time after which
no new mutant starts), ``RLC_MUTATION_COVERAGE`` (the map's path),
``RLC_MUTATION_KILLS`` (the kills already in the session, for the order, and
what the shallow survivors passed), ``RLC_MUTATION_BUDGET`` (scenarios per
mutant in a first, shallow pass; 0: all).
"""
from __future__ import annotations

import os
import time
import zlib
from pathlib import Path

from cosmic_ray.distribution.distributor import Distributor
from cosmic_ray.mutating import use_mutation
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

from conformance import catalog
from conformance.mutation import coverage_map
from conformance.mutation.runner import ScenarioRunner, load_json
from conformance.mutation.selection import Selection
from conformance.mutation.shards import in_shard

KILLED_BY = "killed by "
#: a survivor of the first pass (``RLC_MUTATION_BUDGET``: at most that many
#: scenarios per mutant); ``mutate run --deep`` gives it the rest
SHALLOW = "survived-shallow: "
#: a survivor's note of the scenarios the harness could not judge under it
UNKNOWN = "unknown (harness error, not a kill): "
_SHALLOW_PASSED: dict = {}  # job id -> scenarios it passed in the first pass (``--deep``)


def passed_of(output: str | None) -> set:
    """The scenarios a shallow survivor's result lists as passed (its second
    line, ``passed: ...``); none for any other result."""
    lines = (output or "").splitlines()
    if lines and lines[0].startswith(SHALLOW) and len(lines) > 1 and lines[1].startswith("passed:"):
        return set(lines[1].split()[1:])
    return set()


def shallow_passed(job_id: str) -> set:
    return _SHALLOW_PASSED.get(job_id, set())


class TimeUp(Exception):
    """The run's time is up in the middle of a mutant: it stays pending."""


STATEMENTS = ("simple_stmt", "funcdef", "classdef", "decorated", "if_stmt", "while_stmt",
              "for_stmt", "with_stmt", "try_stmt")


def statement_line(source: str, position: tuple) -> int | None:
    """The first line of the statement (or compound statement's header)
    holding ``position``."""
    import parso

    node = parso.parse(source).get_leaf_for_position(tuple(position), include_prefixes=True)
    while node is not None and node.type not in STATEMENTS:
        node = node.parent
    return None if node is None else node.start_pos[0]


def covering_of(mutation, selection: Selection, root: Path = Path()) -> set:
    """The profile's scenarios that run the lines of cosmic-ray's ``mutation``
    (its module path is relative to the tree's ``root``)."""
    module = str(mutation.module_path)
    statement = statement_line((root / module).read_text(), mutation.start_pos)
    return selection.covering(module, mutation.start_pos[0], mutation.end_pos[0], statement)


def killer_of(output: str | None) -> str | None:
    if output and output.startswith(KILLED_BY):
        return output[len(KILLED_BY):].split(" ", 1)[0]
    return None


class ScenarioDistributor(Distributor):
    """Runs pending mutants one after another in this process's tree."""

    def __call__(self, pending_work, test_command, timeout, distributor_config, on_task_complete):
        profile = os.environ.get("RLC_MUTATION_PROFILE", "quick")
        shard = os.environ.get("RLC_MUTATION_SHARD")
        stop_at = float(os.environ.get("RLC_MUTATION_STOP_AT") or "inf")
        selection = Selection(coverage_map.load(os.environ["RLC_MUTATION_COVERAGE"]), profile)
        if os.environ.get("RLC_MUTATION_KILLS"):  # the kills of the session so far (resumed)
            known = load_json(os.environ["RLC_MUTATION_KILLS"])
            selection.kills = [tuple(k) for k in known["kills"]]
            _SHALLOW_PASSED.update({job: set(ids) for job, ids in known["shallow"].items()})
        # a pseudo-random order fixed by the job ids: any prefix of a run (a
        # chunk, a run stopped early) is a uniform sample of the mutants, so a
        # partial score is an unbiased estimate, not the first modules' score
        pending = sorted((item for item in pending_work if in_shard(item.job_id, shard)),
                         key=lambda item: (zlib.crc32(item.job_id.encode()[::-1]), item.job_id))
        runner = ScenarioRunner()
        done = 0
        try:
            for item in pending:
                if time.time() >= stop_at:
                    print(f"mutate: time is up after {done} mutant(s); rerun to resume", flush=True)
                    break
                started = time.monotonic()
                try:
                    result = self.one(item, selection, runner, stop_at)
                except TimeUp:
                    print(f"mutate: time is up in a mutant, left pending, after {done} mutant(s); "
                          f"rerun to resume", flush=True)
                    break
                on_task_complete(item.job_id, result)
                done += 1
                mutation = item.mutations[0]
                print(f"mutate: {result.test_outcome.value if result.test_outcome else result.worker_outcome.value}"
                      f" {time.monotonic() - started:6.1f}s {mutation.module_path}:{mutation.start_pos[0]} "
                      f"{mutation.operator_name} #{mutation.occurrence}: "
                      f"{(result.output or '').splitlines()[0] if result.output else ''}", flush=True)
        finally:
            runner.close()

    def one(self, item, selection: Selection, runner: ScenarioRunner, stop_at: float) -> WorkResult:
        (mutation,) = item.mutations
        module, first = str(mutation.module_path), mutation.start_pos[0]
        scenario_ids = selection.order(module, first, covering_of(mutation, selection))
        operator = get_operator(mutation.operator_name)(**(mutation.operator_args or {}))
        with use_mutation(Path(module), operator, mutation.occurrence) as (original, mutated):
            if mutated is None:
                return WorkResult(worker_outcome=WorkerOutcome.NO_TEST)
            diff = _diff(original, mutated, module)
            if not scenario_ids:
                return WorkResult(output="survived: no scenario of the profile executes these lines",
                                  diff=diff, test_outcome=TestOutcome.SURVIVED,
                                  worker_outcome=WorkerOutcome.NORMAL)
            passed_before = shallow_passed(item.job_id)
            todo = [sid for sid in scenario_ids if sid not in passed_before]
            budget = int(os.environ.get("RLC_MUTATION_BUDGET") or 0)
            patterns = os.environ.get("RLC_MUTATION_SCENARIOS", "").split()
            if patterns:  # ``run --deep --scenario``: those scenarios only; the rest stays for --deep
                only = [sid for sid in todo if coverage_map.matches_any(sid, patterns)]
                todo, budget = only + [sid for sid in todo if sid not in only], len(only)
            flips, unknown = [], []  # notes; the scenarios the harness could not judge
            for k, sid in enumerate(todo, 1):
                if time.time() >= stop_at:
                    raise TimeUp()
                if (budget or patterns) and k > budget:
                    passed = passed_before | set(todo[:budget]) - set(unknown)
                    lines = [f"{SHALLOW}{len(passed)} of {len(scenario_ids)} covering scenario(s) passed",
                             f"passed: {' '.join(sorted(passed))}", *flips, *_unknown_notes(unknown)]
                    return WorkResult(output="\n".join(lines), diff=diff, test_outcome=TestOutcome.SURVIVED,
                                      worker_outcome=WorkerOutcome.NORMAL)
                outcome = runner.outcome(catalog.find(sid))
                if len(outcome.runs) > 1 and outcome.passed:
                    flips.append(outcome.line())
                if outcome.unknown:  # neither a kill nor a pass: go on
                    unknown.append(sid)
                    flips.append(outcome.line())
                elif outcome.killed:
                    selection.kills.append((module, first, sid))
                    lines = [f"{KILLED_BY}{sid} ({outcome.verdict} {','.join(outcome.oracles) or '-'};"
                             f" scenario {k + len(passed_before)} of {len(scenario_ids)})", outcome.line(), *flips]
                    return WorkResult(output="\n".join(lines), diff=diff, test_outcome=TestOutcome.KILLED,
                                      worker_outcome=WorkerOutcome.NORMAL)
            judged = len(scenario_ids) - len(unknown)
            lines = [f"survived: {judged} of {len(scenario_ids)} covering scenario(s) passed"
                     if unknown else f"survived: {len(scenario_ids)} covering scenario(s) passed",
                     *flips, *_unknown_notes(unknown)]
            return WorkResult(output="\n".join(lines), diff=diff, test_outcome=TestOutcome.SURVIVED,
                              worker_outcome=WorkerOutcome.NORMAL)


def _unknown_notes(unknown: list) -> list:
    """A survivor's note of the scenarios whose verdict was ``error`` under
    the mutant: the harness could not judge them, so they are no kill (an
    unknown is never valid) and, not having passed, a ``--deep`` pass runs
    them again."""
    return [f"{UNKNOWN}{' '.join(unknown)}"] if unknown else []


def _diff(original: str, mutated: str, module: str) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(original.split("\n"), mutated.split("\n"),
                                          fromfile=f"a/{module}", tofile=f"b/{module}", lineterm="", n=1))
