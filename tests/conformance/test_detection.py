"""The suite's detection power: every regression variant is caught by the
scenarios it lists, with the verdict and the oracles it names, on both
fixtures and (where the bug applies) both owners; the reference passes those
same scenarios. A variant that fails for another reason is not "caught".

By default each catch runs on local/user and multinode/impl (both fixtures,
both owners: 4.5 min here with -n 2); ``RLC_CI_FULL=1`` runs every fixture
with every owner (8 min 42 s here, all passing on 2026-11-23). The reference
runs the quick profile's scenarios in ``ci/conformance.sh``; here it runs
the others."""
import os

import pytest

from conformance import catalog
from conformance.adapters import regressions
from conformance.run.execute import failure_message, run_scenario
from conformance.adapters.registry import load_adapter

CROSS = os.environ.get("RLC_CI_FULL") == "1"
CASES = [(rid, catch, sid) for rid in regressions.ids()
         for catch in regressions.REGRESSIONS[rid].catches for sid in catch.ids(CROSS)]
QUICK = {s.id for s in catalog.scenarios(("local", "multinode"), "quick")}
WATCHED = sorted({sid for _, _, sid in CASES} - (set() if CROSS else QUICK))


def test_every_variant_is_caught_by_the_quick_profile_on_both_fixtures():
    for rid, regression in regressions.REGRESSIONS.items():
        ids = {sid for catch in regression.catches for sid in catch.ids()}
        for fixture in regression.fixtures:
            assert any(f"/{fixture}/" in sid and sid in QUICK for sid in ids), (rid, fixture)


@pytest.mark.parametrize("rid,catch,scenario_id", CASES,
                         ids=[f"{rid}:{sid}" for rid, _, sid in CASES])
def test_regression_is_caught_as_named(rid, catch, scenario_id, session, tmp_path):
    impl = f"regression:{rid}"
    entry = run_scenario(catalog.find(scenario_id), impl, load_adapter(impl), session,
                         str(tmp_path))
    failing = set(entry["oracles"])
    assert entry["verdict"] == catch.verdict, failure_message(entry)
    assert set(catch.oracles) <= failing <= set(catch.oracles) | set(catch.may_also), \
        failure_message(entry)
    assert set(entry["unknown"]) <= set(catch.may_be_unknown), failure_message(entry)


@pytest.mark.parametrize("scenario_id", WATCHED)
def test_reference_passes_what_catches_regressions(scenario_id, session, tmp_path):
    entry = run_scenario(catalog.find(scenario_id), "reference", load_adapter("reference"),
                         session, str(tmp_path))
    assert entry["verdict"] == "pass", failure_message(entry)
