"""Issue bodies for the upstream tracker (no Ray: findings from a report)."""
from conformance import upstream
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
