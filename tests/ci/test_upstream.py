"""Issue bodies for the upstream tracker (no Ray: findings from a report)."""
from conformance.repro import upstream
from conformance.adapters import regressions


def _entry(sid, verdict, oracle, message, ops="construct buffer ; ray_shutdown ; teardown buffer"):
    family, fixture, owner, _ = sid.split("/", 3)
    return {"id": sid, "family": family, "fixture": fixture, "owner": owner, "verdict": verdict,
            "oracles": [oracle], "ops": ops, "repro": f"python -m conformance repro '{sid}'",
            "evidence": {"violations": {oracle: [message]}, "history": ["  0 construct buffer ok"],
                         "stderr_tail": "Traceback (most recent call last):\nValueError: x"}}


RESTART_A = _entry("order/multinode/user/ray>buffer", "fail", "no_ray_restart",
                   "op 5 (teardown buffer) started a Ray runtime (127.0.0.1:6379/session_1/01000000)",
                   ops="construct buffer ; iterate collector ; ray_shutdown ; teardown buffer")
RESTART_B = _entry("use_after_close/local/user/buffer-after-ray-shutdown", "fail", "no_ray_restart",
                   "op 2 (teardown buffer) started a Ray runtime (127.0.0.1:51234/session_9/02000000)")
HANG = _entry("killed/local/user/evaluator-hang>teardown", "hang", "no_hang",
              "op 4 (teardown evaluator) did not return within 25.0s")
PASS = {**_entry("order/local/user/x", "pass", "none", "-"), "oracles": []}


def test_findings_with_one_cause_are_one_issue():
    found = upstream.causes([RESTART_A, HANG, PASS, RESTART_B])
    assert [len(c.entries) for c in found] == [2, 1]
    restart, hang = found
    assert restart.key == "fail: [no_ray_restart] (teardown buffer) started a Ray runtime (<addr><path>)"
    # the simplest scenario speaks for the group: local before multinode
    assert restart.representative is RESTART_B
    assert hang.key == "hang: [no_hang] (teardown evaluator) did not return within <n>s"


def test_the_body_says_versions_script_expected_observed_evidence_and_repro():
    adapter = regressions.make("stale-handle-restarts-ray")
    from conformance import catalog

    scenario = catalog.find(RESTART_B["id"])
    cause = upstream.causes([RESTART_A, RESTART_B])[0]
    text = upstream.body(cause, "regression:stale-handle-restarts-ray", {"ray": "2.60.0"},
                         upstream._script_for(scenario, adapter, adapter.name), None)
    assert text.startswith("# regression:stale-handle-restarts-ray 2.60.0: teardown buffer "
                           "started a Ray runtime"), text[:200]
    assert "| ray | 2.60.0 |" in text and "| Python |" in text and "| OS |" in text
    assert "```python" in text and "def op_2():" in text  # the standalone script
    assert "**Expected** (`no_ray_restart`): No call starts or restarts a Ray runtime" in text
    assert "op 2 (teardown buffer) started a Ray runtime" in text  # observed
    assert "ValueError: x" in text  # stderr evidence
    assert RESTART_B["repro"] in text
    assert "## Same cause in" in text and f"`{RESTART_A['id']}`" in text


# -- the check: does a script's output show the finding -----------------------------

from conformance.repro.upstream_check import Trace, marker, shows  # noqa: E402

OUT = """[0] construct buffer ...
[0] construct buffer: ok -> 1 actor(s) (0.512s)
      actors: buffer=ALIVE
[1] ray_shutdown ...
[1] ray_shutdown: ok (1.101s)
      ray: not initialized
[2] teardown buffer ...
[2] teardown buffer: raised ray.exceptions.ActorHandleNotFoundError: not valid (3.2s)
      ray: 127.0.0.1:5555/session_2/01000000
[3] teardown evaluator ...
"""


def test_the_marker_names_the_earliest_finding_by_its_op():
    entry = {**RESTART_B, "findings": [
        {"oracle": "no_ray_restart", "op": 2, "time": 3.0, "text": "op 2 ...", "unknown": False}]}
    assert '"op": "teardown buffer"' in marker(entry) and '"oracle": "no_ray_restart"' in marker(entry)


def test_a_trace_shows_a_raise_a_new_session_and_a_hang_at_the_op():
    trace = Trace(OUT, "", 0)
    raised = "op 2 (teardown buffer) raised ray.exceptions.ActorHandleNotFoundError: not valid"
    assert shows({"oracle": "teardown_never_raises", "op": "teardown buffer", "verdict": "fail",
                  "text": raised}, trace)[0] is True
    ok, why = shows({"oracle": "no_ray_restart", "op": "teardown buffer", "verdict": "fail",
                     "text": "op 2 (teardown buffer) started a Ray runtime (x)"}, trace)
    assert ok and "ray: 127.0.0.1:5555" in why
    assert shows({"oracle": "teardown_never_raises", "op": "ray_shutdown", "verdict": "fail",
                  "text": "op 1 (ray_shutdown) raised builtins.ValueError: x"},
                 trace)[0] is False  # it returned ok: not shown
    hang = {"oracle": "no_hang", "op": "teardown evaluator", "verdict": "hang",
            "text": "op 3 (teardown evaluator) did not return within 25.0s"}
    assert shows(hang, Trace(OUT, "Timeout (0:00:25)!\nThread 0x...", 1))[0] is True
    assert shows(hang, Trace(OUT, "", 0))[0] is False  # no watchdog: not a hang
    assert shows({"oracle": "threads_joined", "op": "teardown buffer", "verdict": "fail",
                  "text": "op 2 (teardown buffer): thread x still running"},
                 trace)[0] is None  # nothing in the output to read: never "shown"


def test_a_new_run_leaves_no_stale_body_behind(tmp_path):
    """A cause renamed or merged (#7: grouping by the earliest op) must not
    leave its old body for ``--check`` to run; hand-written notes stay."""
    (tmp_path / "03-fail-clean-stderr-stderr-traceback.md").write_text("old body\n")
    (tmp_path / "NOTES.md").write_text("read before filing\n")
    adapter = regressions.make("stale-handle-restarts-ray")
    doc = {"generated": "now", "versions": {"ray": "2.60.0"}, "scenarios": [RESTART_B]}
    written = upstream.write_all(doc, adapter.name, adapter, str(tmp_path), shrink=False,
                                 log=lambda line: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*written, "NOTES.md", "README.md"])
    assert written == ["01-fail-no-ray-restart-teardown-buffer-started-a-ray-runtime-ad.md"]


def test_a_timing_only_failure_under_cpu_pressure_never_rerun_alone_is_not_filed(tmp_path):
    """Tianshou's construction_failure/local/impl/collector-one_unknown_env
    (report of 2026-11-25, before failures were rerun alone): fails_clearly
    on time only at CPU pressure 0.95. Not a body; the README lists it with
    its rerun command. The same failure rerun alone (``evidence.rerun``), or
    at low pressure, or with another violation beside, is filed."""
    slow = _entry("construction_failure/local/impl/collector-one_unknown_env", "fail",
                  "fails_clearly", "op 0 (construct collector) took 18.95s to fail (bound 10.25s)",
                  ops="construct collector(fail=one_unknown_env)")
    slow["evidence"]["cpu_pressure"] = 0.95
    assert "fails_clearly failed at CPU pressure 0.95, never rerun alone" in upstream.undecided(slow)
    calm = {**slow, "evidence": {**slow["evidence"], "cpu_pressure": 0.3}}
    rerun = {**slow, "evidence": {**slow["evidence"], "rerun": {"agreed": True}}}
    both = {**slow, "evidence": {**slow["evidence"], "violations": {"fails_clearly": [
        "op 0 (construct collector) took 18.95s to fail (bound 10.25s)",
        "op 0 (construct collector) left actors behind: ['717dc154']"]}}}
    assert [upstream.undecided(e) for e in (calm, rerun, both)] == [None, None, None]
    assert [len(c.entries) for c in upstream.causes([slow, calm, RESTART_B])] == [1, 1]

    adapter = regressions.make("stale-handle-restarts-ray")
    doc = {"generated": "now", "versions": {"ray": "2.60.0"}, "scenarios": [slow, RESTART_B]}
    written = upstream.write_all(doc, adapter.name, adapter, str(tmp_path), shrink=False,
                                 log=lambda line: None)
    assert len(written) == 1
    readme = (tmp_path / "README.md").read_text()
    assert "- `construction_failure/local/impl/collector-one_unknown_env`: only timing:" in readme
    assert "python -m conformance repro 'construction_failure/local/impl/collector-one_unknown_env'" \
        in readme


def test_a_withheld_finding_gets_no_body_and_the_readme_says_why(tmp_path):
    """torchrl 0.14.1's exit SIGSEGV race: its script alone showed it in 0 of 9
    runs (CHECKED.md, 2026-11-26). withheld.txt (by hand) names it: no body,
    the README lists it with the why and its rerun command; a line without a
    why is refused, naming the file and line."""
    adapter = regressions.make("stale-handle-restarts-ray")
    doc = {"generated": "now", "versions": {"ray": "2.60.0"}, "scenarios": [RESTART_B, HANG]}
    (tmp_path / "withheld.txt").write_text(
        "# by hand\n\n" + f"{HANG['id']}: a race; its script alone: 0 of 9 runs\n"
        "order/local/user/gone: not in this report\n")
    logged = []
    written = upstream.write_all(doc, adapter.name, adapter, str(tmp_path), shrink=False,
                                 log=logged.append)
    assert written == ["01-fail-no-ray-restart-teardown-buffer-started-a-ray-runtime-ad.md"]
    readme = (tmp_path / "README.md").read_text()
    assert (f"- `{HANG['id']}` (hang: [no_hang] op 4 (teardown evaluator) did not return within "
            f"25.0s): a race; its script alone: 0 of 9 runs; `{HANG['repro']}`") in readme
    assert logged == ["upstream: withheld.txt names no finding of the report: order/local/user/gone"]
    (tmp_path / "withheld.txt").write_text(f"{HANG['id']}\n")
    import pytest

    with pytest.raises(ValueError, match=r"withheld.txt:1: not 'SCENARIO_ID: why'"):
        upstream.write_all(doc, adapter.name, adapter, str(tmp_path), shrink=False,
                           log=lambda line: None)


def test_a_body_is_about_its_earliest_violation_that_is_no_duration_over_a_bound():
    """torchrl 0.14.1's construction_failure/local/impl/collector-one_unknown_env
    (quick report): a slow failure (20.37 s, bound 10.25 s) first, then the
    actors it left. Alone its script failed within the bound; the actors it
    left showed. The title, the cause and the marker name the actors; a body
    with only timing violations names the earliest."""
    entry = _entry("construction_failure/local/impl/collector-one_unknown_env", "hang",
                   "fails_clearly", "op 2 (construct collector) took 20.37s to fail (bound 10.25s)",
                   ops="construct buffer ; construct evaluator ; construct collector(fail=one_unknown_env)")
    entry["evidence"]["violations"]["fails_clearly"].append(
        "op 2 (construct collector) left actors behind: ['b60deeaa']")
    assert upstream.named_violation(entry) == \
        "[fails_clearly] op 2 (construct collector) left actors behind: ['b60deeaa']"
    assert upstream.cause_of(entry) == \
        "hang: [fails_clearly] (construct collector) left actors behind: ['<id>']"
    assert "left actors behind" in marker(entry) and "took" not in marker(entry)
    cause = upstream.causes([entry])[0]
    assert upstream.title(cause, "torchrl", {"torchrl": "0.14.1"}) == \
        "torchrl 0.14.1: construct collector left actors behind: ['b60deeaa']"
    slow_only = _entry("killed/local/user/x", "fail", "teardown_within_bound",
                       "op 3 (teardown collector) took 31.83s (bound 10.0s)")
    assert upstream.named_violation(slow_only) == \
        "[teardown_within_bound] op 3 (teardown collector) took 31.83s (bound 10.0s)"


def test_a_rule_broken_only_after_another_violation_gets_a_body_of_its_own():
    """torchrl 0.14.1's env_helper/local/user/all (2026-11-27): its teardown
    does not give the CPUs back (the named violation, the cause of 28
    scenarios), and the env's helper process outlives the driver, which no
    other scenario fails first: that leak needs a body too. A rule some
    group names already gets none."""
    leak = _entry("env_helper/local/user/all", "fail", "resources_released_at_teardown",
                  "op 5 (teardown collector): CPU 0.5 held by its actors on node c8330371 not back",
                  ops="construct collector ; iterate collector ; teardown collector")
    leak["oracles"].append("no_leftover_process")
    leak["evidence"]["violations"]["no_leftover_process"] = [
        "process left running after the driver exited: {'pid': 19258, 'name': 'python'}"]
    # a duration over a bound after it is never a body's own (named_finding's rule)
    leak["oracles"].append("teardown_within_bound")
    leak["evidence"]["violations"]["teardown_within_bound"] = [
        "op 5 (teardown collector) took 31.83s (bound 10.0s)"]
    also_restart = {**RESTART_A, "oracles": ["no_ray_restart", "no_hang"],
                    "evidence": {**RESTART_A["evidence"], "violations": {
                        **RESTART_A["evidence"]["violations"],
                        "no_hang": ["op 6 (teardown evaluator) did not return within 25.0s"]}}}
    found = upstream.causes([leak, also_restart, HANG])
    assert [c.key for c in found] == [
        "fail: [no_ray_restart] (teardown buffer) started a Ray runtime (<addr><path>)",
        "fail: [resources_released_at_teardown] (teardown collector): CPU <n> held by its "
        "actors on node <id> not back",
        "hang: [no_hang] (teardown evaluator) did not return within <n>s",
        "fail: [no_leftover_process] process left running after the driver exited: {'pid': "
        "<n>, 'name': 'python'}"]  # no_hang is named by HANG's group: no second body for it
    later = found[-1]
    assert [e["id"] for e in later.entries] == ["env_helper/local/user/all"]
    view = later.representative
    assert view["oracles"][0] == "no_leftover_process"
    assert '"oracle": "no_leftover_process"' in marker(view)
    assert upstream.title(later, "torchrl", {"torchrl": "0.14.1"}).startswith(
        "torchrl 0.14.1: process left running after the driver exited")
