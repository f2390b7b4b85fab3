"""One test per catalog scenario: run it in an isolated driver, judge it."""
import pytest

from conformance.execute import EarlyStart, failure_message, run_scenario, skip_entry
from conformance.plugin import next_scenario
from conformance.ruling import KNOWN, outcome


def test_scenario(scenario, conformance_session, request, tmp_path, tmp_path_factory):
    rlc = request.config._rlc
    adapter = rlc["adapter"]
    missing = adapter.unsupported(scenario.requires)
    if missing:
        request.node._rlc_result = skip_entry(scenario, adapter.name, missing)
        pytest.skip(f"{adapter.name} does not support: {', '.join(missing)}")
    then = EarlyStart.of(conformance_session).trigger(
        next_scenario(request.node), rlc["impl"], adapter,
        lambda: str(tmp_path_factory.mktemp("next", numbered=True)), rlc["address"])
    entry = run_scenario(scenario, rlc["impl"], adapter, conformance_session, str(tmp_path),
                         rlc["address"], then)
    request.node._rlc_result = entry
    expected = rlc["known"].get(scenario.id)
    kind, why = outcome(entry, expected)
    if kind == KNOWN:  # the outcome its known-failures entry states, and only that
        pytest.xfail(f"known failure ({expected.describe()}): {expected.reason}")
    if entry["verdict"] != "pass":
        pytest.fail(failure_message(entry) + (f"\n\n{why}" if why else ""), pytrace=False)
