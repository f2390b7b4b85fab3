"""One test per catalog scenario: run it in an isolated driver, judge it."""
import pytest

from conformance.run.execute import EarlyStart, failure_message, run_scenario, skip_entry
from conformance.plugin import RESULT, RUN, next_scenario
from conformance.reports.ruling import KNOWN, outcome


def test_scenario(scenario, conformance_session, request, tmp_path, tmp_path_factory):
    run = request.config.stash[RUN]
    adapter = run.adapter
    missing = adapter.unsupported(scenario.requires)
    if missing:
        request.node.stash[RESULT] = skip_entry(scenario, adapter.name, missing)
        pytest.skip(f"{adapter.name} does not support: {', '.join(missing)}")
    then = EarlyStart.of(conformance_session).trigger(
        next_scenario(request.node), run.impl, adapter,
        lambda: str(tmp_path_factory.mktemp("next", numbered=True)), run.address)
    entry = run_scenario(scenario, run.impl, adapter, conformance_session, str(tmp_path),
                         run.address, then)
    request.node.stash[RESULT] = entry
    expected = run.known.get(scenario.id)
    kind, why = outcome(entry, expected)
    if kind == KNOWN:  # the outcome its known-failures entry states, and only that
        pytest.xfail(f"known failure ({expected.describe()}): {expected.reason}")
    if entry["verdict"] != "pass":
        pytest.fail(failure_message(entry) + (f"\n\n{why}" if why else ""), pytrace=False)
