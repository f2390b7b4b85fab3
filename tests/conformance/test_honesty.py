"""The harness's honesty: a fault of the harness itself, injected into a run
of the reference, never gives ``pass`` and is never blamed on the
implementation (the ``error`` verdict, naming what the harness failed at)."""
import pytest

from conformance import catalog
from conformance.run.execute import failure_message, run_scenario
from conformance.adapters.registry import load_adapter

TEARDOWN = "double_close/local/user/buffer-twice"
KILL = "killed/local/user/buffer-sigkill>teardown"
RACE = "background/local/user/ray-shutdown-under-thread"
STEP_HANG = "killed/local/user/evaluator-step_hang-in-flight>teardown"
SIGNAL = "signals/local/user/evaluator-sigint-in-poll>teardown"
ENTRY = ("tests.conformance.harness_faults", "main")

# fault -> (scenario, a text the verdict's unknown findings must contain)
FAULTS = {
    "probe-raises": (TEARDOWN, "raised builtins.RuntimeError: injected: the probe raised"),
    "observer-raises": (TEARDOWN, "GCS query failed: injected: the GCS observer raised"),
    "gcs-unreachable": (TEARDOWN, "GCS query failed"),
    "kill-fails": (KILL, "the fault was not injected"),
    "exit-0": (TEARDOWN, "the driver exited 0 in the harness's probe after op 1"),
    "corrupt-line": (TEARDOWN, "history line 3 is not a JSON record"),
    "race-not-set-up": (RACE, "no thread of the implementation was blocked in a Ray call"),
    "step-hang-not-landed": (STEP_HANG, "no step of a hangable env ran"),
    "observer-hangs": (TEARDOWN, "the driver passed a deadline in the harness's probe after op 1"),
    "signal-lost": (SIGNAL, "the SIGINT never reached the driver's handler while the op ran"),
}


#: faults whose test waits out a deadline (``waits_for_deadline``): the
#: probe's, the kill's verification (KILL_VERIFY), a step hang's landing
DEADLINE_FAULTS = {"observer-hangs", "kill-fails", "step-hang-not-landed"}


@pytest.mark.parametrize("fault", [
    pytest.param(f, marks=[pytest.mark.waits_for_deadline] if f in DEADLINE_FAULTS else [])
    for f in sorted(FAULTS)])
def test_a_harness_fault_is_an_error_never_a_pass(fault, session, tmp_path):
    scenario_id, evidence = FAULTS[fault]
    entry = run_scenario(catalog.find(scenario_id), "reference", load_adapter("reference"),
                         session, str(tmp_path), entry=(*ENTRY, fault))
    assert entry["verdict"] == "error", failure_message(entry)
    assert entry["oracles"] == [], failure_message(entry)  # nothing blamed on the implementation
    found = [m for msgs in entry["evidence"]["unknown"].values() for m in msgs]
    assert any(evidence in m for m in found), failure_message(entry)
