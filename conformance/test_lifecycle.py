"""One test per catalog scenario: run it in an isolated driver, judge it."""
import pytest

from conformance.execute import failure_message, prestart, run_scenario, skip_entry
from conformance.plugin import next_scenario
from fixtures.clusters import FIXTURE_CLASSES


def test_scenario(scenario, conformance_session, request, tmp_path, tmp_path_factory):
    rlc = request.config._rlc
    adapter = rlc["adapter"]
    missing = adapter.unsupported(scenario.requires)
    if missing:
        request.node._rlc_result = skip_entry(
            scenario, f"{adapter.name} does not support {', '.join(missing)}")
        pytest.skip(f"{adapter.name} does not support: {', '.join(missing)}")
    then = None
    upcoming = next_scenario(request.node)
    if (upcoming is not None and not adapter.unsupported(upcoming.requires)
            and FIXTURE_CLASSES[upcoming.fixture].overlap_start):
        def then():  # the next driver starts while this one exits
            workdir = str(tmp_path_factory.mktemp("next", numbered=True))
            prestart(upcoming, rlc["impl"], adapter, conformance_session, workdir, rlc["address"])
    entry = run_scenario(scenario, rlc["impl"], adapter, conformance_session, str(tmp_path),
                         rlc["address"], then)
    request.node._rlc_result = entry
    if entry["verdict"] != "pass":
        pytest.fail(failure_message(entry), pytrace=False)
