"""Scenarios of the reference run against whatever ``impl/`` holds on disk now.

One long-lived :class:`ScenarioRunner` per mutation process: one session
(fork server, ``multinode`` cluster), reused by every mutant. What makes a
mutant on disk the code that runs:

- the fork server preloads the harness only, never ``impl`` (nor the
  reference adapter's module, which would import it): each driver, a fork,
  imports ``impl`` from disk, and Ray's workers import it from disk when
  the driver creates its actors (a worker serves one job: a new driver's
  actors are new processes; ``python -m conformance mutate canary`` checks
  both on both fixtures);
- no bytecode cache: ``PYTHONDONTWRITEBYTECODE=1`` for every process of the
  session and ``impl/__pycache__`` removed at start, because a ``.pyc`` is
  trusted by the source's mtime (whole seconds) and size, and a mutant
  written in the same second as the file it replaces, with the same size
  (``<`` to ``>``), would run the cached original.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field

from conformance.run.execute import DRIVER_ENTRY, history_file, run_scenario
from conformance.ops.history import History, read_history
from fixtures.rayenv import REPO_ROOT

IMPL = "reference"
#: what the fork server imports once: the harness, not the code under test
PRELOAD = ["conformance.run.driver", "conformance.ops.verbs", "fixtures.gcs"]
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}

@dataclass
class Outcome:
    """One scenario's verdict under the code on disk (and its confirmation)."""

    scenario: str
    verdict: str
    oracles: list
    duration: float
    confirmed: bool = False  # a second run agreed (or none was needed)
    runs: list = field(default_factory=list)  # (verdict, oracles) of each run

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def unknown(self) -> bool:
        """The harness could not judge the scenario (verdict ``error``): never
        a pass and never the implementation's failure (as a Jepsen checker
        that throws is *unknown*, conformance.judge.verdict): no kill rests on it."""
        return self.verdict == "error"

    @property
    def killed(self) -> bool:
        """The mutant failed the scenario (fail, hang, crash): a kill."""
        return not self.passed and not self.unknown

    def line(self) -> str:
        runs = "; ".join(f"{v} {','.join(o) or '-'}" for v, o in self.runs)
        return f"{self.scenario}: {runs}"


class ScenarioRunner:
    """Runs scenarios one at a time in a session that never preloads ``impl``."""

    def __init__(self, extra_env: dict | None = None, entry: tuple = DRIVER_ENTRY):
        from conformance.adapters.registry import load_adapter
        from fixtures.session import SessionResources

        shutil.rmtree(REPO_ROOT / "impl" / "__pycache__", ignore_errors=True)
        os.environ.update(NO_BYTECODE)
        self.adapter = load_adapter(IMPL)
        self.entry = entry
        self.session = SessionResources(preload=PRELOAD, extra_env={**NO_BYTECODE, **(extra_env or {})})
        self.scratch = tempfile.TemporaryDirectory(prefix="rlc-mutate-")
        self.count = 0

    def run(self, scenario) -> tuple[dict, History]:
        """One run: the report entry and the driver's history."""
        self.count += 1
        workdir = os.path.join(self.scratch.name, f"run-{self.count}")
        entry = run_scenario(scenario, IMPL, self.adapter, self.session, workdir, entry=self.entry)
        history = History(read_history(history_file(workdir)), expected_ops=len(scenario.ops))
        shutil.rmtree(workdir, ignore_errors=True)
        return entry, history

    def outcome(self, scenario, confirm: bool = True) -> Outcome:
        """The scenario's verdict; any failure (fail, hang, crash, or a
        harness error) is run again, unless ``confirm`` is off (the CI
        sample): neither a busy machine nor a race may fake a kill:
        :func:`confirmed_outcome` of the two runs.

        Every failure, not only one of an oracle that reads a clock:
        ``collector.py:254``'s mutants (a concurrent second shutdown()
        logging the background error again) failed a scenario in the full
        run of 2026-11-28 17:25 UTC and passed it in 3 of 3 runs of
        ``mutate check``; with one run per non-timing failure that kill went
        into the session and was turned back into a survivor by hand. Cost:
        of the 395 kills of the quick session of 2026-11-28, 281 had run
        once; their killing scenarios take 533 s on the reference in all
        (``coverage-quick.json``'s baseline), against hours for a whole
        analysis."""
        entry, _ = self.run(scenario)
        result = Outcome(scenario.id, entry["verdict"], entry["oracles"], entry["duration"],
                         runs=[(entry["verdict"], entry["oracles"])])
        if result.passed or not confirm:
            result.confirmed = True
            return result
        again, _ = self.run(scenario)
        result.runs.append((again["verdict"], again["oracles"]))
        result.duration += again["duration"]
        return confirmed_outcome(result)

    def close(self) -> None:
        self.session.close()
        self.scratch.cleanup()


def confirmed_outcome(result: Outcome) -> Outcome:
    """The verdict of a result run twice (``result.runs``): a pass when the
    second run passed; unknown (``error``) when either run was a harness
    error, since a kill must rest on runs the harness could judge; else
    the second run's failure."""
    (first, _), (second, oracles) = result.runs[:2]
    result.confirmed = second != "pass"
    if not result.confirmed:
        result.verdict, result.oracles = "pass", []
    elif "error" in (first, second):
        result.verdict, result.oracles = "error", []
    else:
        result.verdict, result.oracles = second, list(oracles)
    return result


def load_json(path) -> dict:
    with open(path) as f:
        return json.load(f)
