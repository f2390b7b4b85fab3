"""The pytest plugin: options, one test item per scenario, the report.

Options (each also read from an environment variable, for CI):
  --impl NAME              RLC_IMPL          reference | torchrl | regression:<id> | pkg.mod:attr
  --ray-fixture A,B        RLC_RAY_FIXTURE   local, multinode, external
  --ray-address ADDR       RLC_RAY_ADDRESS   the cluster of the ``external`` fixture
  --profile quick|full     RLC_PROFILE
  --conformance-report P   RLC_REPORT        JSON report (docs/reports.md)
  --known-failures FILE    RLC_KNOWN_FAILURES scenarios expected to fail: each id with the
                                             verdict and oracles it fails with, and why
  --scenario GLOB          RLC_SCENARIO      only scenarios whose id matches (repeatable)
  --scenarios-from FILE    RLC_SCENARIOS_FROM only the scenarios listed there (one id a line,
                                             "# why" after it, e.g. ci/torchrl-slice.txt)
  --shard I/N              RLC_SHARD         run shard I of N of the selected scenarios
                                             (conformance/reports/shard.py; merge the reports with
                                             python -m conformance merge)
  --shard-durations REPORT RLC_SHARD_DURATIONS balance the shards by this report's durations
RLC_RUN_ID names the run: every process it starts carries it in RLC_MARKER.

Registered by ``conformance/conftest.py`` (``pytest_plugins``); what it knows
about the run is a :class:`SuiteRun` in ``config.stash[RUN]``, each test's
result in ``item.stash[RESULT]``. The CLI needs nothing of it (pytest only at
the edge: ``tests/conformance/test_structure.py``).
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field

import pytest

from conformance import catalog
from conformance.reports import gate, known_failures, report, ruling, shard
from conformance.reports.claims import Claim
from conformance.run.execute import preload_modules
from conformance.adapters.registry import UsageError, load_adapter
from conformance.ops.scenario import FIXTURES
from fixtures.rayenv import RAY_ENV, absolute_pythonpath

ENV = {
    "impl": "RLC_IMPL",
    "ray_fixture": "RLC_RAY_FIXTURE",
    "ray_address": "RLC_RAY_ADDRESS",
    "profile": "RLC_PROFILE",
    "conformance_report": "RLC_REPORT",
    "known_failures": "RLC_KNOWN_FAILURES",
    "scenario": "RLC_SCENARIO",
    "scenarios_from": "RLC_SCENARIOS_FROM",
    "shard": "RLC_SHARD",
    "shard_durations": "RLC_SHARD_DURATIONS",
}


def pytest_addoption(parser):
    g = parser.getgroup("conformance", "Ray lifecycle conformance")
    g.addoption("--impl", help="implementation under test (default: reference)")
    g.addoption("--ray-fixture", action="append",
                help="local, multinode, external (repeat or comma-separate; "
                     "default: local,multinode)")
    g.addoption("--ray-address", help="address of your cluster, for --ray-fixture external")
    g.addoption("--profile", help="quick (the CI gate, default) or full")
    g.addoption("--conformance-report", help="write the JSON report to this path")
    g.addoption("--known-failures", help="file of the scenarios expected to fail, each with "
                                         "its verdict (and a fail's oracles) and why")
    g.addoption("--scenario", action="append",
                help="only scenarios whose id matches this glob (repeatable; -k cannot "
                     "express the '>' in order ids)")
    g.addoption("--scenarios-from", metavar="FILE",
                help="only the scenarios listed in FILE (one id a line, '# why' after "
                     "it; with --scenario: those too)")
    g.addoption("--shard", metavar="I/N",
                help="run only shard I of N of the selected scenarios (split by id, balanced "
                     "by --shard-durations); the report says which shard it holds")
    g.addoption("--shard-durations", metavar="REPORT.json",
                help="a previous JSON report whose scenario durations balance the shards "
                     "(a scenario not in it counts as their median)")


def _opt(config, name, default=None):
    value = config.getoption(name)
    if value in (None, []):
        value = os.environ.get(ENV[name]) or default
    return value


def _split(raw) -> list[str]:
    """Values of a repeatable, comma-separated option."""
    parts = raw if isinstance(raw, list) else [raw]
    out = []
    for p in parts:
        out += [x.strip() for x in p.split(",") if x.strip()]
    return out


def _fixtures(config) -> list[str]:
    return _split(_opt(config, "ray_fixture", "local,multinode"))


@dataclass
class SuiteRun:
    """What the plugin knows about this run (``config.stash[RUN]``)."""

    impl: str
    adapter: object
    profile: str
    fixtures: list
    address: str | None
    #: {scenario id: known_failures.Expected}
    known: dict
    report: str | None
    patterns: list
    listed: set
    shard: object  # shard.Shard or None
    durations: dict
    #: what every shard of the run records alike (``conformance.reports.merge``)
    shard_run: dict
    started: float
    results: list = field(default_factory=list)
    shard_record: dict | None = None
    #: known-failures entries no collected scenario has
    unused_known: list = field(default_factory=list)
    #: failures the rerun alone passed (``conformance.run.rerun``)
    cleared: list = field(default_factory=list)


RUN = pytest.StashKey[SuiteRun]()
#: per test item: its scenario's report entry, and the test this process runs next
RESULT = pytest.StashKey[dict]()
NEXT = pytest.StashKey[object]()


def pytest_configure(config):
    """Validate every choice before any Ray starts; one clear usage error."""
    os.environ.update(RAY_ENV)
    absolute_pythonpath()
    impl = _opt(config, "impl", "reference")
    profile = _opt(config, "profile", "quick")
    fixtures = _fixtures(config)
    if profile not in catalog.PROFILES:
        raise pytest.UsageError(f"unknown profile {profile!r}; valid: {', '.join(catalog.PROFILES)}")
    bad = [f for f in fixtures if f not in FIXTURES]
    if bad:
        raise pytest.UsageError(f"unknown ray fixture {bad[0]!r}; valid: {', '.join(FIXTURES)}")
    address = _opt(config, "ray_address")
    if "external" in fixtures and not address:
        raise pytest.UsageError("--ray-fixture external needs --ray-address ADDR")
    try:
        adapter = load_adapter(impl)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    kf_path = _opt(config, "known_failures")
    try:
        known = known_failures.load_expected(kf_path) if kf_path else {}
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"--known-failures {kf_path}: {exc}") from None
    listed = _listed(config, impl, adapter, profile, fixtures)
    this_shard, durations, shard_run = _sharding(config, profile, fixtures, known)
    if "external" in fixtures:
        _use_external(address, check=not hasattr(config, "workerinput"))
    _CONFIG["config"] = config
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        from fixtures.session import RUN_MARKER_VAR, install_controller_signal_handlers

        # A new marker for this run (never an outer run's), inherited by the
        # xdist workers started after this hook.
        os.environ[RUN_MARKER_VAR] = os.environ.get("RLC_RUN_ID") or "rlc-" + uuid.uuid4().hex[:8]
        install_controller_signal_handlers()
    config.stash[RUN] = SuiteRun(
        impl=impl, adapter=adapter, profile=profile, fixtures=fixtures, address=address,
        known=known, report=_opt(config, "conformance_report"),
        patterns=_split(_opt(config, "scenario", [])), listed=listed, shard=this_shard,
        durations=durations, shard_run=shard_run, started=time.monotonic())
    if this_shard is not None:
        config.pluginmanager.register(ShardSelection(), "rlc-shard-selection")


def _sharding(config, profile, fixtures, known):
    """--shard I/N, the durations that balance it, and what every shard of the
    run records alike (to be merged: ``conformance.reports.merge``)."""
    raw = _opt(config, "shard")
    try:
        this_shard = shard.Shard.parse(raw) if raw else None
    except ValueError as exc:
        raise pytest.UsageError(f"--shard: {exc}") from None
    path = _opt(config, "shard_durations")
    try:
        durations = shard.durations(report.load(path)) if path else {}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise pytest.UsageError(f"--shard-durations {path}: {exc}") from None
    run = {"profile": profile, "fixtures": fixtures,
           "known_failures": shard.digest(e.line() for e in known.values()) if known
           else None,
           "durations": shard.digest(f"{k} {v!r}" for k, v in durations.items()) if durations
           else None,
           "durations_from": path or None}
    return this_shard, durations, run


def _use_external(address: str, check: bool) -> None:
    """Put this process in the auth mode of the user's cluster (every process
    of the run, before any cluster of the suite starts) and, in the
    controller, check that the cluster answers: one usage error, before any
    scenario, if it does not (no token, a rejected token, nothing there)."""
    from fixtures.clusters import ClusterAccessError, ExternalCluster
    from fixtures.rayauth import TokenError

    try:
        cluster = ExternalCluster(address).use_auth()
        if check:
            cluster.check_access()
    except (TokenError, ClusterAccessError) as exc:
        raise pytest.UsageError(str(exc)) from None


def _listed(config, impl, adapter, profile, fixtures) -> set[str]:
    """The ids of --scenarios-from, each one a scenario of this run's catalog."""
    path = _opt(config, "scenarios_from")
    if not path:
        return set()
    try:
        listed = set(known_failures.load(path))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"--scenarios-from {path}: {exc}") from None
    if not listed:
        raise pytest.UsageError(f"--scenarios-from {path}: lists no scenario")
    ids = {s.id for s in catalog.scenarios(fixtures, profile, components=adapter.components)}
    listed, absent = _for_components(listed, ids, adapter.components)
    if absent:
        print(f"--scenarios-from {path}: {len(absent)} listed scenario(s) are about a "
              f"component {impl} does not have, so they do not exist for it: "
              f"{', '.join(absent)}", file=sys.stderr)
    unknown = sorted(listed - ids)
    if unknown:
        raise pytest.UsageError(
            f"--scenarios-from {path}: {', '.join(unknown)}: not in the {profile} profile on "
            f"{','.join(fixtures)} for {impl} (list them: python -m conformance catalog "
            f"--impl {impl} --profile {profile})")
    return listed


def _for_components(listed: set, ids: set, components) -> tuple[set, list]:
    """The listed ids as this implementation's catalog names them
    (``catalog.counterpart``), and apart those about a component it lacks."""
    out, absent = set(), []
    for sid in sorted(listed):
        mapped = catalog.counterpart(sid, components, ids)
        if mapped is None:
            absent.append(sid)
        else:
            out.add(mapped)
    return out, absent


def pytest_unconfigure(config):
    """The controller sweeps whatever a killed worker could not tear down:
    its processes, and what its drivers left on a cluster the suite did not
    start (its ledger)."""
    if RUN in config.stash and not hasattr(config, "workerinput"):
        from conformance.cluster.after_exit import sweep_run_ledgers
        from fixtures.session import sweep_run

        sweep_run(then=sweep_run_ledgers)


def pytest_generate_tests(metafunc):
    if "scenario" not in metafunc.fixturenames:
        return
    run = metafunc.config.stash[RUN]
    found = catalog.scenarios(run.fixtures, run.profile, components=run.adapter.components)
    if run.patterns or run.listed:
        found = [s for s in found if s.id in run.listed
                 or any(fnmatch.fnmatchcase(s.id, p) for p in run.patterns)]
    metafunc.parametrize("scenario", found, ids=[s.id for s in found])


def pytest_collection_modifyitems(config, items):
    """Mark the scenarios. A scenario listed as a known failure gets no xfail
    mark up front: only the outcome its entry states becomes an xfail
    (``test_lifecycle``), never a harness error, a fixture failure or a
    timeout before its verdict."""
    seen = set()
    for item in items:
        scenario = _scenario_of(item)
        if scenario is None:
            continue
        item.add_marker(pytest.mark.conformance)
        # No xdist_group mark: it only acts under --dist loadgroup, which puts
        # all of one fixture's scenarios on one worker. Measured (quick profile,
        # -n 2, 109 scenarios, 2026-11-25): 323 s with the default --dist load,
        # 367 s with loadgroup (one worker ran the 49 local scenarios, 511 s of
        # driver time, the other the 60 multinode ones, 259 s).
        seen.add(scenario.id)
    run = config.stash[RUN]
    run.unused_known = sorted(set(run.known) - seen)


class ShardSelection:
    """With --shard I/N (registered then): keep this shard's scenarios."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        """Deselect the other shards' scenarios, after every other selection
        (-k, --deselect, ...): the shards split what the run would run. Each
        xdist worker splits alike and tells the controller what it split
        (``workeroutput``)."""
        run = config.stash[RUN]
        ids = {item: _scenario_of(item).id for item in items if _scenario_of(item) is not None}
        this = run.shard
        part = shard.plan(ids.values(), this.count, run.durations)[this.index - 1]
        mine = set(part.ids)
        dropped = [item for item, sid in ids.items() if sid not in mine]
        gone = set(dropped)
        items[:] = [item for item in items if item not in gone]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        run.shard_record = shard.record(this, ids.values(), part, **run.shard_run)
        if hasattr(config, "workeroutput"):
            config.workeroutput["rlc_shard"] = run.shard_record


def _scenario_of(item):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("scenario") if callspec is not None else None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller: what the worker's shard split (every worker splits alike)."""
    config = _CONFIG.get("config")
    found = (getattr(node, "workeroutput", None) or {}).get("rlc_shard")
    if config is not None and found:
        config.stash[RUN].shard_record = found


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Remember the next test of this process: its driver may start early."""
    item.stash[NEXT] = nextitem


def next_scenario(item):
    """The scenario of the test this process runs after ``item`` (or None)."""
    return _scenario_of(item.stash.get(NEXT, None))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    result = item.stash.get(RESULT, None)
    if result is not None and rep.when == "call":
        rep.user_properties.append(("conformance", json.dumps(result)))


_CONFIG: dict = {}


SCENARIO_TEST = "test_lifecycle.py::test_scenario["


def pytest_runtest_logreport(report):
    """Gather scenario results (also those sent back by xdist workers). A
    scenario test that failed without a result (a fixture that could not be
    set up, an exception in the harness, a crashed worker) becomes an
    ``error`` entry: no scenario leaves the report silently."""
    config = _CONFIG.get("config")
    if config is None:
        return
    found = False
    for key, value in getattr(report, "user_properties", []):
        if key == "conformance":
            config.stash[RUN].results.append(json.loads(value))
            found = True
    if not found and report.failed and SCENARIO_TEST in report.nodeid:
        sid = report.nodeid.split(SCENARIO_TEST, 1)[1].rsplit("]", 1)[0]
        config.stash[RUN].results.append(harness_error_entry(sid, report))


def harness_error_entry(scenario_id: str, report) -> dict:
    """The report entry of a scenario whose test failed before it had a result."""
    from conformance.run.execute import entry
    from conformance.judge.findings import unknown_in_run

    text = str(getattr(report, "longreprtext", "") or report.longrepr or "")
    last = text.strip().splitlines()[-1][:300] if text.strip() else "(no detail)"
    why = unknown_in_run(f"the test failed in its {report.when} phase before the scenario had "
                         f"a verdict: {last}")
    return entry(scenario_id, "error", unknown=["harness"], findings=[why.as_dict("harness")],
                 evidence={"violations": {}, "unknown": {"harness": [why.text]},
                           "stderr_tail": text[-4000:]},
                 duration=round(getattr(report, "duration", 0.0), 2), no_result=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """The controller, once every worker finished: a failure a busy machine
    may have made (a timing violation under CPU pressure) is rerun once,
    alone, and decides (``conformance.run.rerun``). When the reruns passed every
    scenario that failed, and nothing else failed, the run's exit status is 0."""
    config = session.config
    if (RUN not in config.stash or hasattr(config, "workerinput")
            or config.option.collectonly or exitstatus == pytest.ExitCode.INTERRUPTED):
        return
    from conformance.run.execute import preload_modules
    from conformance.run.rerun import rerun_alone
    from conformance.judge.verdict import BAD

    run = config.stash[RUN]
    before = {e["id"]: e["verdict"] for e in run.results}
    run.results = rerun_alone(run.results, run.impl, run.adapter, run.address,
                              preload_modules(run.adapter))
    cleared = [e["id"] for e in run.results if (e.get("evidence") or {}).get("rerun")
               and before[e["id"]] in BAD and e["verdict"] not in BAD
               and e["id"] not in run.known]  # a known failure was an xfail, not a failure
    if cleared and session.exitstatus == pytest.ExitCode.TESTS_FAILED \
            and session.testsfailed == len(cleared):
        session.exitstatus = pytest.ExitCode.OK
        run.cleared = cleared


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if RUN not in config.stash or hasattr(config, "workerinput"):
        return
    run = config.stash[RUN]
    # one entry per scenario: a real result wins over an error entry of the
    # same test (e.g. a failure in its teardown phase)
    by_id: dict = {}
    for entry in run.results:
        if entry["id"] not in by_id or by_id[entry["id"]].get("no_result"):
            by_id[entry["id"]] = entry
    results = list(by_id.values())
    # a shard's report is written even empty: the merge counts every shard
    if not results and (run.shard is None or config.option.collectonly):
        return
    ruling.mark(results, run.known)
    doc = report.build(run.impl, run.adapter, results, _shard_block(run),
                       Claim.of_run(run.adapter, run.fixtures, run.profile).as_dict())
    tr = terminalreporter
    tr.section("conformance")
    for line in gate.lines(doc, ruling.rule(doc, run.known)):
        tr.write_line(line)
    from conformance.run.rerun import describe as describe_rerun

    for entry in results:
        line = describe_rerun(entry)
        if line:
            tr.write_line(line)
    if run.cleared:
        tr.write_line(f"exit status 0: the {len(run.cleared)} failure(s) above passed when "
                      "rerun alone (a busy machine's, not the implementation's)")
    if run.unused_known:
        tr.write_line(f"known-failures entries not in this run: {len(run.unused_known)}")
    if run.report:
        report.write(doc, run.report)
        tr.write_line(f"report: {run.report}")


def _shard_block(run: SuiteRun) -> dict | None:
    """The report's ``shard``: the record of the split (or, if no worker got
    as far as collecting, what this process knows), and the run's seconds."""
    if run.shard is None:
        return None
    found = run.shard_record or {"index": run.shard.index, "count": run.shard.count,
                                 "selection": None, **run.shard_run}
    return {**found, "elapsed": round(time.monotonic() - run.started, 3)}


@pytest.fixture(scope="session")
def conformance_session(request):
    """Per-process (per xdist worker) zygote and clusters, torn down by pid."""
    from fixtures.session import SessionResources

    adapter = request.config.stash[RUN].adapter
    session = SessionResources(preload=preload_modules(adapter))
    try:
        yield session
    finally:
        session.close()
