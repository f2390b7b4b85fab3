"""The suite's detection power: every regression variant is caught by the
scenarios it lists, with the verdict and the oracles it names; the reference
passes those same scenarios. A variant that fails for another reason is not
"caught".

By default (``.ci/run``) each catch runs where the quick gate must catch it
(``gated_fixtures``): on the multinode fixture, in the scenario the quick
profile runs there, and on local too where the catch there is the fixture's
own. A catch the same on both fixtures costs 2.5 times as much on local
(1086 s against 668 s of test time for the 89 runs of 2026-11-25: each local
run starts a runtime, and a hang waits out its deadline there too).
``RLC_CI_FULL=1`` runs every fixture with every owner. The reference runs
the quick profile's scenarios in ``ci/conformance.sh``; here it runs the
others."""
import os

import pytest

from conformance import catalog
from conformance.adapters import regressions
from conformance.run.execute import failure_message, run_scenario
from conformance.adapters.registry import load_adapter

CROSS = os.environ.get("RLC_CI_FULL") == "1"
QUICK = {s.id for s in catalog.scenarios(("local", "multinode"), "quick")}


def gated_fixtures(regression) -> list[str]:
    """The fixtures on which the quick profile must catch ``regression``: the
    multinode fixture where the variant applies there, and local where its
    catch there is the fixture's own (a Catch that names local) or it applies
    to local only. A catch the same on both fixtures runs on local with
    ``RLC_CI_FULL=1`` and in the full profile (conformance/catalog/quick_slots.py)."""
    own_local = any(c.scenario.split("/")[1] == "local" for c in regression.catches)
    return [fx for fx in regression.fixtures
            if fx == "multinode" or own_local or "multinode" not in regression.fixtures]


def gated_ids(regression, catch) -> list[str]:
    """The catch's scenarios on each of ``gated_fixtures``: the one the quick
    profile runs there (the gate's own), else the fixture's first owner."""
    out = []
    for fixture in gated_fixtures(regression):
        ids = [sid for sid in catch.ids() if sid.split("/")[1] == fixture]
        if ids:
            out.append(next((sid for sid in ids if sid in QUICK), ids[0]))
    return out


CASES = [(rid, catch, sid) for rid, regression in sorted(regressions.REGRESSIONS.items())
         for catch in regression.catches
         for sid in (catch.ids() if CROSS else gated_ids(regression, catch))]
WATCHED = sorted({sid for _, _, sid in CASES} - (set() if CROSS else QUICK))


def test_every_variant_is_caught_by_the_quick_profile():
    missed = []
    for rid, regression in regressions.REGRESSIONS.items():
        ids = {sid for catch in regression.catches for sid in catch.ids()}
        for fixture in gated_fixtures(regression):
            if not any(f"/{fixture}/" in sid and sid in QUICK for sid in ids):
                missed.append(f"{rid} on {fixture}")
    assert not missed, f"not caught by the quick profile: {missed}"


def test_gated_fixtures_keep_local_where_the_catch_is_its_own():
    by_rid = regressions.REGRESSIONS
    assert gated_fixtures(by_rid["background-thread-unguarded"]) == ["local"]
    assert gated_fixtures(by_rid["named-worker-outlives-owner"]) == ["local", "multinode"]
    assert gated_fixtures(by_rid["close-not-idempotent"]) == ["multinode"]
    close = by_rid["close-not-idempotent"]
    assert gated_ids(close, close.catches[0]) == ["double_close/multinode/user/buffer-twice"]


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
