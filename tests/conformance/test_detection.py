"""The suite's detection power: every regression variant is caught by the
scenarios it lists, and the reference passes those same scenarios."""
import pytest

from conformance import catalog
from conformance.adapters import regressions
from conformance.execute import failure_message, run_scenario
from conformance.registry import load_adapter

CASES = [(rid, sid) for rid in regressions.ids() for sid in regressions.REGRESSIONS[rid].catches]
WATCHED = sorted({sid for _, sid in CASES})


@pytest.mark.parametrize("rid,scenario_id", CASES)
def test_regression_is_caught(rid, scenario_id, session, tmp_path):
    scenario = catalog.find(scenario_id)
    assert "quick" in scenario.profiles, f"{scenario_id} must be in the quick profile"
    impl = f"regression:{rid}"
    entry = run_scenario(scenario, impl, load_adapter(impl), session, str(tmp_path))
    assert entry["verdict"] != "pass", f"{impl} was not caught by {scenario_id}"
    assert entry["verdict"] != "setup-error", failure_message(entry)


@pytest.mark.parametrize("scenario_id", WATCHED)
def test_reference_passes_what_catches_regressions(scenario_id, session, tmp_path):
    entry = run_scenario(catalog.find(scenario_id), "reference", load_adapter("reference"),
                         session, str(tmp_path))
    assert entry["verdict"] == "pass", failure_message(entry)
