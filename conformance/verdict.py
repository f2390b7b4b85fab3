"""From a judged run to a verdict and a report entry."""
from __future__ import annotations

from conformance.oracles import Run, judge

VERDICTS = ("pass", "fail", "crash", "hang", "setup-error", "skip")


def setup_failure(run: Run) -> str | None:
    """Why the scenario could not be set up, or None."""
    if run.history.setup is None and not run.signal:
        return "the driver failed before the scenario started (see stderr)"
    for r in run.op_records("construct"):
        args = r["op"].get("args", {})
        if r["status"] == "raised" and not args.get("fail") and not args.get("infeasible"):
            e = r["error"]
            return f"constructing {r['op']['target']} raised {e['type']}: {e['message'][:300]}"
    return None


def decide(run: Run) -> tuple[str, dict[str, list[str]]]:
    """The verdict and the failing oracles with their violations."""
    violations = judge(run)
    if "no_hang" in violations:
        return "hang", violations
    if "no_crash" in violations:
        return "crash", violations
    why = setup_failure(run)
    if why:
        violations = {"setup": [why], **violations}
        return "setup-error", violations
    if violations:
        return "fail", violations
    return "pass", violations
