"""From a judged run to a verdict.

A verdict is ``pass`` only for a run the harness observed in full: every op
has its end record and its probe, the final probe and the exit record exist
and parse, no harness step failed and every oracle could answer. Otherwise:

- ``hang`` / ``crash``: the implementation's (an op of the implementation or
  the interpreter exit passed its deadline; the driver died by a signal, a
  non-zero exit code, Ray's "Check failed", or exited 0 inside an op);
- ``fail``: an oracle saw a violation;
- ``setup-error``: the scenario could not be set up (a constructor the
  scenario expects to work raised, or the driver failed before it started);
- ``error``: the harness could not observe the scenario as written (a fault
  not injected, a probe that raised or hung, a corrupt or incomplete
  history outside the implementation's code, an oracle that could not
  answer). Never a pass, never the implementation's failure, red at the gate.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.judge.conventions import may_refuse
from conformance.judge.findings import Finding, by_time, in_run, unknown_in_run
from conformance.ops.verbs import VERBS, raised_by_harness
from conformance.judge.oracles import HARNESS_EXIT_CODE, Run, in_implementation, judge, \
    position_text, signal_not_landed, stop_point, watchdog_fired

VERDICTS = ("pass", "fail", "crash", "hang", "error", "setup-error", "skip")
#: verdicts that turn the gate red
BAD = ("fail", "crash", "hang", "error", "setup-error")


def setup_failure(run: Run) -> Finding | None:
    """Why the scenario could not be set up, or None."""
    if run.history.setup is None and run.history.position()[0] == "start" and not run.signal:
        return in_run("the driver failed before the scenario started (see stderr)")
    for r in run.op_records("construct"):
        args = r["op"].get("args", {})
        if r["status"] == "raised" and not (args.get("fail") or args.get("may_fail")) \
                and not may_refuse(run.scenario, run.features, r["i"]):
            e = r["error"]
            return in_run(f"constructing {r['op']['target']} raised {e['type']}: "
                          f"{e['message'][:300]}", r.get("t"), r["i"])
    return None


def harness_failures(run: Run) -> list[Finding]:
    """What keeps the harness from vouching for the run, the implementation
    aside: an unreadable history, a harness step that hung, raised or ended
    the driver, a record missing outside the implementation's code (unknown
    findings, at the point where the history stops)."""
    out = []
    op, time = stop_point(run)
    hf = run.history.file
    for n, text in hf.corrupt:
        out.append(unknown_in_run(f"history line {n} is not a JSON record: {text!r}"))
    harness_record = next((r for r in run.history.records if r.get("phase") == "harness-error"),
                          None)
    if harness_record is not None or run.exit_code == HARNESS_EXIT_CODE:
        e = (harness_record or {}).get("error") or {}
        out.append(unknown_in_run(f"the harness raised {e.get('type', '?')} {position_text(run)}: "
                                  f"{str(e.get('message', 'see stderr'))[:300]}",
                                  (harness_record or {}).get("t", time), op))
    where = run.history.position()[0]
    if where == "start":
        return out  # a setup failure, judged by setup_failure
    if (run.hung or watchdog_fired(run)) and not in_implementation(run):
        out.append(unknown_in_run(f"the driver passed a deadline {position_text(run)}: the "
                                  "harness's step did not answer (stack dump below)", time, op))
    elif run.exit_code == 0 and not run.hung and not in_implementation(run):
        missing = run.history.missing()
        if missing:
            out.append(unknown_in_run(f"the driver exited 0 {position_text(run)}, outside the "
                                      f"implementation's ops; the history lacks "
                                      f"{'; '.join(missing)}", time, op))
    if hf.torn and run.exit_code == 0 and not run.signal:
        out.append(unknown_in_run("the history's last line is torn although the driver "
                                  "exited 0"))
    return out


def failed_harness_step(run: Run) -> int | None:
    """The index of the first op from which the run is not the scenario as
    written: a harness step (a fault injection, a lookup) that raised, an
    op its armed signal did not land in, or the op after which the
    harness's own code raised or stopped."""
    unlanded = signal_not_landed(run)
    for r in run.history.ops:
        if raised_by_harness(r) or r["i"] == unlanded:
            return r["i"]
    raised = any(r.get("phase") == "harness-error" for r in run.history.records)
    where, i = run.history.position()
    if raised or (run.history.missing() and not in_implementation(run)
                  and where not in ("exit", "start")):
        return i + 1 if i is not None else len(run.scenario.ops)
    return None


#: oracles about how the driver ended: their findings stand whatever the harness did
DRIVER_END = ("no_crash", "no_hang")


def _split_at(violations: dict, step: int) -> tuple[dict, dict]:
    """Violations seen before op ``step`` stand; later ones (and those not
    tied to an op) were observed on a run the harness broke: unknown."""
    kept, moved = {}, {}
    for oracle, found in violations.items():
        for f in found:
            if oracle in DRIVER_END or (f.op is not None and f.op < step):
                kept.setdefault(oracle, []).append(f)
            else:
                moved.setdefault(oracle, []).append(replace(
                    f, text=f"{f.text} (seen after the harness failed at op {step}: not judged)",
                    unknown=True))
    return kept, moved


@dataclass(frozen=True)
class Decision:
    """The verdict; the failing oracles with their violations (``setup``
    first for a setup-error); the oracles that could not answer with why
    (``unknown``: ``harness`` first, for what the harness failed to do).
    Each a list of findings."""

    verdict: str
    violations: dict
    unknown: dict

    def ordered(self) -> list:
        """Every ``(oracle, finding)``, violations and unknown alike, earliest first."""
        return by_time([(o, f) for part in (self.violations, self.unknown)
                        for o, fs in part.items() for f in fs])


def texts(by_oracle: dict) -> dict[str, list[str]]:
    """``{oracle: [text]}``: findings as the report's evidence shows them."""
    return {o: [f.text for f in found] for o, found in by_oracle.items()}


def decide(run: Run) -> Decision:
    """The verdict, with the findings it rests on."""
    j = judge(run)
    violations, unknown = j.violations, dict(j.unknown)
    step = failed_harness_step(run)
    if step is not None:
        violations, moved = _split_at(violations, step)
        for oracle, found in moved.items():
            unknown[oracle] = unknown.get(oracle, []) + found
    harness = harness_failures(run)
    if harness:
        unknown = {"harness": harness, **unknown}
    if "no_hang" in violations:
        return Decision("hang", violations, unknown)
    if "no_crash" in violations:
        return Decision("crash", violations, unknown)
    why = setup_failure(run)
    if why:
        return Decision("setup-error", {"setup": [why], **violations}, unknown)
    if violations:
        return Decision("fail", violations, unknown)
    if unknown:
        return Decision("error", violations, unknown)
    return Decision("pass", violations, unknown)
