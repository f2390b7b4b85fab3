"""``upstream --check``: does a script's output show the finding its body claims?

Each case is a body whose check verdict a hand reading found wrong
(ci/results/{torchrl,rllib,tianshou}/upstream/NOTES.md), or a defect of the
check the lead listed: the finding is the body's marker, the output is what
its script prints (``conformance/repro/script.py``: "[i] op ..." when an op
starts, "[i] op: ok|raised Type: message (duration)" when it returns, then
the probes' "ray: ..." and "actors: component=STATE,..." lines), cut to the
ops around the finding. The outputs the earlier check read were not saved;
these follow the scripts' print format and the hand readings.
"""
import os

from conformance.judge.findings import from_text
from conformance.repro import upstream
from conformance.repro.upstream_check import Trace, marker, shows
from conformance.reports.summary import first_violation, findings_of

SESSION = "127.0.0.1:41000/session_2026-11-25_20-55-03_157460_13061/01000000"
NEW_SESSION = "127.0.0.1:34073/session_2026-11-25_20-55-09_514113_13061/01000000"


def finding(oracle, op, text, verdict="fail"):
    return {"id": "x", "verdict": verdict, "oracle": oracle, "op": op, "text": text}


RAY_LOG = "2026-11-25 20:20:26,310\tINFO worker.py:2038 -- Started a local Ray instance.\n"


#: the printers of a script from before 2026-11-26 (none) and before 2026-11-27 (no threads)
BEFORE_PROBES, BEFORE_THREADS = frozenset(), frozenset({"_released", "_left_behind"})


def verdict_of(found, stdout, stderr="", returncode=0, printers=None):
    """``printers``: the script's reading functions (None: today's, every one)."""
    return {True: "shown", False: "NOT shown", None: "not checked"}[
        shows(found, Trace(stdout, stderr, returncode, printers=printers))[0]]


# -- 1. fails_clearly: a finished call is not the finding; what the text claims is -----

TIANSHOU_09 = finding("fails_clearly", "construct collector(fail=one_unknown_env)",
                      "op 0 (construct collector) took 18.95s to fail (bound 10.25s)")
ONE_UNKNOWN_ENV_RAISED = f"""      ray: not initialized
[0] construct collector(fail=one_unknown_env) ...
[0] construct collector(fail=one_unknown_env): raised gymnasium.error.NameNotFound: Environment `RlcNoSuchEnv` doesn't exist. (3.748s)
      ray: {SESSION}
"""


def test_tianshou_09_a_failure_within_its_bound_is_not_a_slow_failure():
    """Hand reading: the constructor raised in 3.7 s, within its 10.25 s bound."""
    assert verdict_of(TIANSHOU_09, ONE_UNKNOWN_ENV_RAISED) == "NOT shown"
    slow = ONE_UNKNOWN_ENV_RAISED.replace("(3.748s)", "(18.950s)")
    assert verdict_of(TIANSHOU_09, slow) == "shown"


TORCHRL_08 = finding("fails_clearly", "construct collector(fail=unknown_env)",
                     "op 0 (construct collector) left actors behind: ['717dc154']")


def test_torchrl_08_actors_left_by_a_failed_constructor_are_read_from_the_job_actors_line():
    """Scripts since 2026-11-26 print, after a constructor that raised, the
    job's live actors no component recorded; one written before prints none:
    nothing to read, not checked."""
    old = f"""      ray: {SESSION}
[0] construct collector(fail=unknown_env) ...
[0] construct collector(fail=unknown_env): raised ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task. (2.101s)
"""
    assert verdict_of(TORCHRL_08, old, printers=BEFORE_PROBES) == "not checked"  # regenerate it
    left = old + "      job actors not of any component: 1 (717dc154 Collector ALIVE)\n"
    assert verdict_of(TORCHRL_08, left) == "shown"
    assert verdict_of(TORCHRL_08, old + "      job actors not of any component: 0\n") == "NOT shown"
    assert verdict_of(TORCHRL_08, old + "      job actors: not read (Ray is not initialized)\n") \
        == "not checked"
    returned = old.replace("raised ray.exceptions.ActorDiedError: The actor died unexpectedly before "
                           "finishing this task.", "ok -> 2 actor(s)")
    assert verdict_of(TORCHRL_08, returned) == "NOT shown"  # it did not fail at all here


def test_torchrl_25_a_hang_verdict_whose_first_finding_is_another_claim_reads_that_claim():
    """construction_failure/local/impl/collector-one_unknown_env: the verdict is
    a hang (a later op), the first finding the actors its constructor left.
    The script's constructor raised: read for the actors, not for a hang."""
    found = dict(TORCHRL_08, verdict="hang", op="construct collector(fail=one_unknown_env)",
                 text="op 2 (construct collector) left actors behind: ['6ab6076c']")
    out = """[2] construct collector(fail=one_unknown_env) ...
[2] construct collector(fail=one_unknown_env): raised ray.exceptions.ActorDiedError: The actor died unexpectedly. (9.239s)
      job actors not of any component: 1 (6ab6076c Collector ALIVE)
"""
    assert verdict_of(found, out, returncode=0) == "shown"
    unfinished = "[2] construct collector(fail=one_unknown_env) ...\n"
    assert verdict_of(found, unfinished, stderr="Timeout (0:01:00)!", returncode=1) == "NOT shown"


def test_rllib_05_a_constructor_that_returned_shows_did_not_raise():
    found = finding("fails_clearly", "construct collector(fail=unknown_env)",
                    "op 0 (construct collector) with unknown_env did not raise")
    ok = f"""      ray: {SESSION}
[0] construct collector(fail=unknown_env) ...
[0] construct collector(fail=unknown_env): ok -> 2 actor(s) (4.253s)
      actors: collector=ALIVE,ALIVE
"""
    assert verdict_of(found, ok) == "shown"
    raised = ok.replace("ok -> 2 actor(s)", "raised gymnasium.error.NameNotFound: no such env")
    assert verdict_of(found, raised) == "NOT shown"  # it raised: the body's claim is wrong


# -- 2. actors: the component the finding names, in the state it claims ----------------

TORCHRL_24 = finding("others_untouched", "teardown buffer",
                     "op 8 (teardown buffer) ended collector actor eda8e111 (DEAD; it was ALIVE)")
BUFFER_TEARDOWN = """[8] teardown buffer ...
[8] teardown buffer: ok (0.412s)
      actors: buffer=DEAD  collector=ALIVE,ALIVE  evaluator=PENDING_CREATION
[9] teardown collector ...
"""


def test_torchrl_24_the_collector_alive_after_the_buffer_teardown_is_not_shown():
    """Hand reading: after `teardown buffer`, collector=ALIVE,ALIVE: the finding
    (its actor ended) did not happen in this run."""
    assert verdict_of(TORCHRL_24, BUFFER_TEARDOWN) == "NOT shown"
    ended = BUFFER_TEARDOWN.replace("collector=ALIVE,ALIVE", "collector=DEAD,ALIVE")
    assert verdict_of(TORCHRL_24, ended) == "shown"


def test_torchrl_12_ray_shut_down_by_the_teardown_ended_the_other_actors():
    """Hand reading: `ray: not initialized` after it (the buffer's actor ended
    with the runtime), then `check_data buffer` raised."""
    found = finding("others_untouched", "teardown collector(shutdown_ray=True)",
                    "op 6 (teardown collector) ended buffer actor f766e8cb (DEAD; it was ALIVE)")
    out = """[6] teardown collector(shutdown_ray=True) ...
[6] teardown collector(shutdown_ray=True): ok (1.546s)
      ray: not initialized
[7] check_data buffer ...
[7] check_data buffer: raised builtins.Exception: Failed to submit task to actor ActorID(f766e8cbc7acdfb32ab6e7d201000000) (9.072s)
"""
    assert verdict_of(found, out) == "shown"


def test_own_actors_alive_must_be_the_torn_down_component():
    found = finding("own_actors_dead_after_teardown", "teardown collector",
                    "op 2 (teardown collector): actor 2bc3df7c still ALIVE after teardown")
    out = """[2] teardown collector ...
[2] teardown collector: ok (0.051s)
      actors: collector=DEAD,DEAD  buffer=ALIVE
"""
    assert verdict_of(found, out) == "NOT shown"  # ALIVE, but the buffer's
    assert verdict_of(found, out.replace("collector=DEAD,DEAD", "collector=ALIVE,ALIVE")) \
        == "shown"  # tianshou 03's hand reading


def test_rllib_03_runners_alive_after_exhaustion_are_read_from_the_actors_line():
    found = finding("exhaustion_auto_shutdown", "exhaust collector",
                    "op 1 (exhaust collector): collector actor 515eb470 still ALIVE after exhaustion")
    out = """[1] exhaust collector ...
[1] exhaust collector: ok -> 4 batches (2.310s)
      actors: collector=ALIVE,ALIVE
"""
    assert verdict_of(found, out) == "shown"
    assert verdict_of(found, out.replace("ALIVE,ALIVE", "DEAD,DEAD")) == "NOT shown"


# -- 3. use after close: a call that succeeded instead of raising ----------------------

RLLIB_07 = finding("use_after_close_clear_error", "use evaluator(call=submit)",
                   "op 2 (use evaluator) submit() after teardown succeeded instead of raising a "
                   "closed error")


def test_rllib_07_a_call_that_succeeded_after_teardown_is_shown():
    """Hand reading: `submit: ok`, as the body says."""
    out = """[1] teardown evaluator ...
[1] teardown evaluator: ok (1.204s)
      actors: evaluator=DEAD
[2] use evaluator(call=submit) ...
[2] use evaluator(call=submit): ok -> None (0.000s)
[3] use evaluator(call=poll) ...
[3] use evaluator(call=poll): raised builtins.ValueError: <SingleAgentEnvRunner> doesn't have an env! (0.020s)
"""
    assert verdict_of(RLLIB_07, out) == "shown"
    raised = out.replace("[2] use evaluator(call=submit): ok -> None",
                         "[2] use evaluator(call=submit): raised builtins.RuntimeError: closed")
    assert verdict_of(RLLIB_07, raised) == "NOT shown"


# -- 4. "an unclear X": that X, not any exception ---------------------------------------

TORCHRL_20 = finding("use_after_close_clear_error", "use buffer(call=sample)",
                     "op 2 (use buffer) sample() after teardown raised an unclear "
                     "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing "
                     "this task.")
SAMPLE_AFTER_CLOSE = """[2] use buffer(call=sample) ...
[2] use buffer(call=sample): raised {error} (0.031s)
"""


def test_torchrl_20_the_unclear_error_must_be_the_claimed_type():
    died = "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."
    assert verdict_of(TORCHRL_20, SAMPLE_AFTER_CLOSE.format(error=died)) == "shown"
    clear = "torchrl.RayClosedError: the replay buffer is closed"
    assert verdict_of(TORCHRL_20, SAMPLE_AFTER_CLOSE.format(error=clear)) == "NOT shown"


def test_a_teardown_raising_another_type_than_claimed_is_not_shown():
    found = finding("teardown_never_raises", "teardown collector(concurrent=2)",
                    "op 3 (teardown collector) raised builtins.IndexError: pop from empty list")
    out = """[3] teardown collector(concurrent=2) ...
      call in teardown-0: ok (0.002s)
      call in teardown-1: raised builtins.KeyError: 'x' (0.001s)
[3] teardown collector(concurrent=2): raised builtins.KeyError: 'x' (0.004s)
"""
    assert verdict_of(found, out) == "NOT shown"
    assert verdict_of(found, out.replace("builtins.KeyError: 'x'",
                                         "builtins.IndexError: pop from empty list")) == "shown"


# -- 5. batch counts: the count printed against the count asked for ---------------------

TORCHRL_06 = finding("batch_counts", "iterate collector(batches=2)",
                     "op 1 (iterate collector): the collector yielded 0 batches before it "
                     "stopped; 2 were asked for")


def test_torchrl_06_the_batch_count_is_compared():
    out = """[1] iterate collector(batches=2) ...
[1] iterate collector(batches=2): ok -> {n} batches (0.077s)
"""
    assert verdict_of(TORCHRL_06, out.format(n=0)) == "shown"
    assert verdict_of(TORCHRL_06, out.format(n=2)) == "NOT shown"  # as many as asked for


# -- 6. no_ray_restart: a new session, never "not initialized" --------------------------

RESTART = finding("no_ray_restart", "teardown buffer",
                  "op 2 (teardown buffer): ray.init() from thread MainThread 0.00s into it "
                  f"started a Ray runtime ({NEW_SESSION})")


def test_ray_not_initialized_after_the_op_is_not_a_restart():
    out = f"""      ray: {SESSION}
[2] teardown buffer ...
[2] teardown buffer: ok (0.512s)
      ray: not initialized
[3] use buffer(call=sample) ...
"""
    # the runtime ended after it (a shutdown, ray_not_shut_down_by_non_owner's): no start
    assert verdict_of(RESTART, out, RAY_LOG) == "NOT shown"
    started = out.replace("ray: not initialized", f"ray: {NEW_SESSION}")
    assert verdict_of(RESTART, started, RAY_LOG * 2) == "shown"  # torchrl 04's hand reading


TORCHRL_10 = finding("no_ray_restart", "teardown buffer",
                     "op 2 (teardown buffer): ray.init() from thread MainThread 0.00s into it "
                     f"started a Ray runtime ({NEW_SESSION}), which the same op shut down again: "
                     "the probe after it saw no change")
# owner=impl: torchrl's constructor starts Ray; op 2 starts and ends one; op 3 starts one
IMPL_OWNED = f"""      ray: not initialized
[0] construct buffer ...
[0] construct buffer: ok -> 1 actor(s) (3.102s)
      ray: {SESSION}
      actors: buffer=ALIVE
[1] ray_shutdown ...
[1] ray_shutdown: ok (1.185s)
      ray: not initialized
[2] teardown buffer ...
[2] teardown buffer: ok (5.419s)
[3] use buffer(call=sample) ...
[3] use buffer(call=sample): raised builtins.Exception: Failed to submit task to actor (3.831s)
      ray: {NEW_SESSION}
[4] use buffer(call=extend) ...
[4] use buffer(call=extend): raised builtins.Exception: Failed to submit task to actor (0.008s)
all operations returned; the interpreter exits with the components as the operations left them
"""


def test_torchrl_10_a_runtime_started_and_ended_within_the_op_is_in_rays_log():
    """Hand reading: `teardown buffer` took 5.4 s and stderr has "Started a local
    Ray instance" in it: three starts for two sessions the probes printed, and
    op 2 is the only op that ran with Ray down before and after it."""
    assert Trace(IMPL_OWNED, "", 0).sessions()[:3] == [
        ("construct buffer", "not initialized", SESSION),
        ("ray_shutdown", SESSION, "not initialized"),
        ("teardown buffer", "not initialized", "not initialized")]
    assert verdict_of(TORCHRL_10, IMPL_OWNED, RAY_LOG * 3) == "shown"
    assert verdict_of(TORCHRL_10, IMPL_OWNED, RAY_LOG * 2) == "NOT shown"  # every start seen
    # torchrl 15, the multinode twin (2026-11-26, on a stand-in): each ray.init joins the
    # cluster as a new job; the teardown's join and shutdown left no session to print
    joined = "2026-11-26 17:51:18,535\tINFO worker.py:2038 -- Connected to Ray cluster.\n"
    assert verdict_of(TORCHRL_10, IMPL_OWNED, joined * 3) == "shown"
    assert verdict_of(TORCHRL_10, IMPL_OWNED, joined * 2) == "NOT shown"


# -- a second driver's op: read in its own printed trace --------------------------------

PEER_OUT = """[2] peer ...
[2] peer: ok -> second driver exited 0 (6.990s)
      peer|       ray: 127.0.0.1:41000/session_2026-11-25_20-01-53_563582_5401/02000000
      peer| [0] construct evaluator(connect=True,named=True) ...
      peer| [0] construct evaluator(connect=True,named=True): {construct}
      peer|       actors: evaluator=ALIVE
      peer| [3] teardown evaluator ...
      peer| [3] teardown evaluator: ok (0.003s)
      peer|       actors: evaluator={state}
      peer| all operations returned; the interpreter exits with the components as the operations left them
[3] check_alive evaluator(expect=True) ...
[3] check_alive evaluator(expect=True): skipped (unsupported: torchrl does not support liveness) (0.000s)
[4] check_name ...
[4] check_name: ok -> 'rlc-eval-5401' is not registered (0.005s)
"""
TORCHRL_13 = finding("own_actors_dead_after_teardown", "peer",
                     "op 2 (peer): second driver: op 3 (teardown evaluator): a non-owning handle's "
                     "teardown ended the owner's actor 819a9a2d (DEAD)")
TORCHRL_14 = finding("peer_ok", "peer",
                     "op 2 (peer): the second driver's op 0 (construct evaluator) raised "
                     "builtins.ValueError: Failed to look up actor with name 'rlc-eval-5682'.")


def test_torchrl_13_the_peers_teardown_ended_the_owners_actor():
    """Hand reading: shown (the owner's actor gone after the peer's teardown)."""
    out = PEER_OUT.format(construct="ok -> 1 actor(s) (0.007s)", state="DEAD")
    assert verdict_of(TORCHRL_13, out) == "shown"
    assert verdict_of(TORCHRL_13, out.replace("evaluator=DEAD", "evaluator=ALIVE")) \
        == "NOT shown"


def test_torchrl_13_the_peers_lines_relayed_before_the_ops_outcome_are_read():
    """Run 2026-11-26 in torchrl 0.14.1's fresh environment, the script
    relayed the peer's lines as it ran, before `[2] peer: ok ...`."""
    out = PEER_OUT.format(construct="ok -> 1 actor(s) (0.007s)", state="DEAD").splitlines()
    outcome = out.pop(1)
    relayed = out[:8] + [outcome] + out[8:]
    assert verdict_of(TORCHRL_13, "\n".join(relayed) + "\n") == "shown"
    alive = "\n".join(relayed).replace("evaluator=DEAD", "evaluator=ALIVE") + "\n"
    assert verdict_of(TORCHRL_13, alive) == "NOT shown"


def test_torchrl_14_the_peers_constructor_raised():
    """Hand reading: `peer| [0] construct evaluator(connect=True,named=True): raised
    ValueError: Failed to look up actor with name …`."""
    out = PEER_OUT.format(construct="raised builtins.ValueError: Failed to look up actor with "
                                    "name 'rlc-eval-5682'. (0.011s)", state="ALIVE")
    assert verdict_of(TORCHRL_14, out) == "shown"
    fine = PEER_OUT.format(construct="ok -> 1 actor(s) (0.007s)", state="ALIVE")
    assert verdict_of(TORCHRL_14, fine) == "NOT shown"


# -- 7. a report from before findings were data: the earliest op, not the first name ----

RLLIB_01 = {  # order/local/user/collector>ray>evaluator~no-buffer, the RLlib report of 10:29
    "id": "order/local/user/collector>ray>evaluator~no-buffer", "family": "order",
    "fixture": "local", "owner": "user", "verdict": "fail",
    "oracles": ["clean_stderr", "no_ray_restart", "teardown_never_raises"],
    "ops": "construct collector(sync=False) ; construct evaluator ; iterate collector(batches=1) "
           "; submit evaluator ; teardown collector ; ray_shutdown ; teardown evaluator",
    "evidence": {"violations": {
        "clean_stderr": ["stderr: Traceback (most recent call last):"],
        "no_ray_restart": ["op 6 (teardown evaluator) started a Ray runtime "
                           "(127.0.0.1:40091/session_2026-11-25_10-23-12_417182_23235/01000000)"],
        "teardown_never_raises": ["op 6 (teardown evaluator) raised "
                                  "ray.exceptions.ActorHandleNotFoundError: ActorHandle objects "
                                  "are not valid across Ray sessions."]}}}


def test_rllib_01_a_legacy_report_is_titled_by_its_earliest_op_not_the_first_oracle_name():
    """NOTES.md: body 01 was titled by `clean_stderr` (first by name), a
    consequence of op 6's restart."""
    assert from_text(RLLIB_01["evidence"]["violations"]["no_ray_restart"][0]).op == 6
    assert first_violation(RLLIB_01).startswith("[no_ray_restart] op 6 (teardown evaluator) "
                                                "started a Ray runtime")
    assert [f["oracle"] for f in findings_of(RLLIB_01)] == [
        "no_ray_restart", "teardown_never_raises", "clean_stderr"]  # by op, run-level last
    assert '"oracle": "no_ray_restart", "op": "teardown evaluator"' in marker(RLLIB_01)


def _tianshou(sid, oracles, ops, violations):
    family, fixture, owner, _ = sid.split("/", 3)
    return {"id": sid, "family": family, "fixture": fixture, "owner": owner, "verdict": "fail",
            "oracles": oracles, "ops": ops, "evidence": {"violations": violations}}


TIANSHOU_01 = _tianshou(
    "defaults/local/user/collector", ["no_leftover_actor", "own_actors_dead_after_teardown"],
    "construct collector(may_fail=True) ; iterate collector(batches=1) ; teardown collector",
    {"no_leftover_actor": ["actor d5b04cb1 (_SetAttrWrapper) still ALIVE",
                           "actor 745db3d9 (_SetAttrWrapper) still ALIVE"],
     "own_actors_dead_after_teardown": [
         "op 2 (teardown collector): actor 745db3d9 still ALIVE after teardown",
         "op 2 (teardown collector): actor d5b04cb1 still ALIVE after teardown"]})
TIANSHOU_03 = _tianshou(
    "order/local/user/collector>ray~no-buffer-evaluator", ["own_actors_dead_after_teardown"],
    "construct collector(sync=False) ; iterate collector(batches=1) ; teardown collector ; "
    "ray_shutdown",
    {"own_actors_dead_after_teardown": [
        "op 2 (teardown collector): actor 2bc3df7c still ALIVE after teardown"]})


def test_tianshou_01_and_03_one_defect_is_one_body():
    """NOTES.md: 01 (titled by the run-level `no_leftover_actor`, first by name)
    and 03 are the same defect: `close()` leaves the env actors ALIVE."""
    found = upstream.causes([TIANSHOU_01, TIANSHOU_03])
    assert len(found) == 1 and len(found[0].entries) == 2
    assert found[0].key == ("fail: [own_actors_dead_after_teardown] (teardown collector): actor "
                            "<id> still ALIVE after teardown")


# -- the outputs kept, and read again without a rerun ----------------------------------

def test_a_kept_output_is_read_again_without_running_the_script(tmp_path):
    """The earlier check kept only one line per output, so its verdicts could
    not be read again by a fixed check: --save-outputs keeps them,
    --from-outputs reads them (a plain-Python script here, no Ray)."""
    import json
    import sys

    from conformance.repro.upstream_check import MARK, check_dir

    script = "\n".join([
        "print('[0] use evaluator(call=submit) ...')",
        "print('[0] use evaluator(call=submit): ok -> None (0.000s)')"])
    bodies, kept = tmp_path / "bodies", tmp_path / "outputs"
    bodies.mkdir()
    (bodies / "09-fail-use-after-close.md").write_text(
        f"# body\n\n```python\n{script}\n```\n\n{MARK}{json.dumps(RLLIB_07)} -->\n")
    assert check_dir(str(bodies), sys.executable, log=lambda line: None, save=str(kept)) == 0
    saved = json.loads((kept / "09-fail-use-after-close.json").read_text())
    assert saved["returncode"] == 0 and "ok -> None" in saved["stdout"]
    assert "| shown | use evaluator(call=submit): ok -> None" in (bodies / "CHECKED.md").read_text()
    (kept / "09-fail-use-after-close.json").write_text(json.dumps(
        {**saved, "stdout": saved["stdout"].replace("ok -> None", "raised builtins.RuntimeError: "
                                                                   "closed")}))
    assert check_dir(str(bodies), "/no/such/python", log=lambda line: None,
                     replay=str(kept)) == 1  # read again, not run: NOT shown
    assert "| NOT shown |" in (bodies / "CHECKED.md").read_text()


def test_what_a_script_leaves_in_its_session_is_stopped_and_said(tmp_path):
    """A script's runtime can leave processes behind (seen: Ray's agents
    outliving an RLlib script): the check stops what remains in the
    script's session after it and says so in the output it reads."""
    import json
    import sys

    import psutil

    from conformance.repro.upstream_check import MARK, run_body

    pid_file = tmp_path / "child.pid"
    script = "\n".join([
        "import subprocess, sys",
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])",
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))",
        "print('[0] use evaluator(call=submit) ...')",
        "print('[0] use evaluator(call=submit): ok -> None (0.000s)')"])
    body = tmp_path / "09-fail-use-after-close.md"
    body.write_text(f"# body\n\n```python\n{script}\n```\n\n{MARK}{json.dumps(RLLIB_07)} -->\n")
    _, trace, _ = run_body(str(body), sys.executable, timeout=60)
    child = int(pid_file.read_text())
    assert trace.returncode == 0, trace
    assert "upstream --check: stopped 1 process(es) the script left behind" in trace.stderr
    try:
        assert psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        pass  # gone: stopped and reaped


# -- a multinode scenario's script: against a stand-in cluster of its own -------------

def _cluster_body(tmp_path, fixture="multinode", ran=None):
    """A body whose script needs a cluster (``--address``, as a multinode
    scenario's does): it prints the address it got and whether the stand-in
    was up while it ran (plain Python: no Ray)."""
    import json

    from conformance.repro.upstream_check import MARK

    up = tmp_path / "stand-in-up"
    script = "\n".join([
        'r"""A script of a scenario on a cluster.',
        "",
        f"fixture: {fixture}: the cluster given with --address",
        '"""',
        "import argparse, os",
        "p = argparse.ArgumentParser()",
        "p.add_argument('--address', required=True, help='the Ray cluster (GCS address)')",
        "args = p.parse_args()",
        *([f"open({str(ran)!r}, 'w').close()"] if ran else []),
        "print('[0] use evaluator(call=submit) ...')",
        f"print('      at', args.address, 'up' if os.path.exists({str(up)!r}) else 'down')",
        "print('[0] use evaluator(call=submit): ok -> None (0.000s)')"])
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "09-fail-use-after-close.md").write_text(
        f"# body\n\n```python\n{script}\n```\n\n{MARK}{json.dumps(RLLIB_07)} -->\n")
    return bodies, up


def _fake_stand_in(up, events, fail=None):
    """A stand-in cluster class: ``up`` exists while it runs; ``fail``: its
    start raises that instead."""
    from conformance.repro.upstream_check import ClusterStartFailed

    class FakeStandIn:
        address = "127.0.0.1:6399"

        def __init__(self, python, tmpdir):
            events.append(("made", python, os.path.basename(tmpdir)[:19]))

        def describe(self):
            return "head num_cpus=2; node_a num_cpus=2; node_b num_cpus=2"

        def __enter__(self):
            if fail:
                raise ClusterStartFailed(fail)
            events.append("start")
            up.touch()
            return self

        def __exit__(self, *exc):
            events.append("stop")
            up.unlink()

    return FakeStandIn


def test_a_multinode_script_runs_against_a_stand_in_cluster_of_its_own(tmp_path, monkeypatch):
    """Started for the script, its address passed with --address, stopped
    after it; the row says the script ran against a stand-in, and so does
    the row read again from the kept output."""
    import sys

    from conformance.repro import upstream_check

    bodies, up = _cluster_body(tmp_path)
    events = []
    monkeypatch.setattr(upstream_check, "STAND_INS",
                        {"multinode": _fake_stand_in(up, events)})
    kept = tmp_path / "outputs"
    assert upstream_check.check_dir(str(bodies), sys.executable, log=lambda line: None,
                                    save=str(kept)) == 0
    assert events == [("made", sys.executable, "rlc-upstream-check-"), "start", "stop"]
    saved = (kept / "09-fail-use-after-close.json").read_text()
    assert "at 127.0.0.1:6399 up" in saved  # the address given, the stand-in up meanwhile
    row = next(r for r in (bodies / "CHECKED.md").read_text().splitlines() if "09-" in r)
    assert "| shown |" in row and "run against a stand-in cluster of its own: head" in row
    upstream_check.check_dir(str(bodies), "/no/such/python", log=lambda line: None,
                             replay=str(kept))
    assert "run against a stand-in cluster of its own" in (bodies / "CHECKED.md").read_text()


def test_a_stand_in_that_does_not_start_leaves_the_body_not_checked(tmp_path, monkeypatch):
    """Never "shown" (nor "NOT shown"): the script is not run, and the row
    says why, on one line."""
    import sys

    from conformance.repro import upstream_check

    ran = tmp_path / "script-ran"
    bodies, up = _cluster_body(tmp_path, ran=ran)
    monkeypatch.setattr(upstream_check, "STAND_INS", {"multinode": _fake_stand_in(
        up, [], fail="node_a: `ray.scripts.scripts start --address ...` exited 1: boom")})
    assert upstream_check.check_dir(str(bodies), sys.executable, log=lambda line: None) == 0
    row = next(r for r in (bodies / "CHECKED.md").read_text().splitlines() if "09-" in r)
    assert "| not checked |" in row and "its stand-in cluster did not start: node_a" in row
    assert "exited 1: boom" in row and not ran.exists()


def test_a_script_of_a_cluster_without_a_stand_in_is_not_checked(tmp_path, monkeypatch):
    import sys

    from conformance.repro import upstream_check

    ran = tmp_path / "script-ran"
    bodies, up = _cluster_body(tmp_path, fixture="external", ran=ran)
    events = []
    monkeypatch.setattr(upstream_check, "STAND_INS", {"multinode": _fake_stand_in(up, events)})
    upstream_check.check_dir(str(bodies), sys.executable, log=lambda line: None)
    row = next(r for r in (bodies / "CHECKED.md").read_text().splitlines() if "09-" in r)
    assert "| not checked |" in row and "fixture external" in row
    assert events == [] and not ran.exists()


def test_the_stand_in_is_the_fixture_s_for_a_multinode_body_only():
    """The committed bodies: the multinode ones (their scripts take
    --address) get the stand-in, the local ones none; a second driver's
    script inside a local scenario's script takes --address too, but
    quoted, and is not the script's."""
    import glob

    from conformance import catalog
    from conformance.adapters.registry import load_adapter
    from conformance.repro.script import generate
    from conformance.repro.upstream_check import cluster_fixture, read_body
    from fixtures.rayenv import REPO_ROOT

    fixtures = {os.path.relpath(p, REPO_ROOT): cluster_fixture(read_body(p)[1]) for p in glob.glob(
        os.path.join(REPO_ROOT, "ci/results/*/upstream/[0-9][0-9]-*.md"))}
    assert fixtures["ci/results/torchrl/upstream/"
                    "03-hang-no-hang-teardown-evaluator-did-not-return-within-n-s.md"] == "multinode"
    assert fixtures["ci/results/torchrl/upstream/"
                    "01-fail-resources-released-at-teardown-teardown-collector-cpu-n.md"] is None
    assert set(fixtures.values()) == {None, "multinode"}
    with_peer = generate(catalog.load("named/local/user/peer-then-owner"), load_adapter("reference"))
    assert "p.add_argument(\\'--address\\', required=True" in with_peer  # the peer's, quoted
    assert cluster_fixture(with_peer) is None


def test_a_body_naming_the_suite_s_envs_without_carrying_them_is_not_checked(tmp_path):
    """A body written before its script carried conformance.envs: run alone,
    its actors would fail at import, which is not the finding. Not run and
    not read again: "not checked", to be regenerated."""
    import json
    import sys

    from conformance.repro.upstream_check import MARK, check_dir

    ran = tmp_path / "script-ran"
    script = "\n".join([f"open({str(ran)!r}, 'w').close()",
                        "ENV_ID = 'conformance.envs:RlcSlowCartPole-v0'",
                        "print('[0] use evaluator(call=submit) ...')"])
    bodies, kept = tmp_path / "bodies", tmp_path / "outputs"
    bodies.mkdir()
    kept.mkdir()
    (bodies / "09-fail-use-after-close.md").write_text(
        f"# body\n\n```python\n{script}\n```\n\n{MARK}{json.dumps(RLLIB_07)} -->\n")
    (kept / "09-fail-use-after-close.json").write_text(json.dumps(
        {"stdout": "", "stderr": "ModuleNotFoundError: No module named 'conformance'",
         "returncode": 1}))
    for how in ({"save": None}, {"replay": str(kept)}):
        assert check_dir(str(bodies), sys.executable, log=lambda line: None, **how) == 0
        row = next(r for r in (bodies / "CHECKED.md").read_text().splitlines() if "09-" in r)
        assert "| not checked |" in row and "regenerate the body" in row, row
    assert not ran.exists()


# -- resources: what a teardown's actors held is back at its return --------------------

TORCHRL_01 = finding("resources_released_at_teardown", "teardown collector",
                     "op 1 (teardown collector): CPU 0.5 held by its actors on node 2371ac78 not back "
                     "in ray.available_resources() when it returned: 1.5 available, 2 expected")


def test_torchrl_01_resources_not_back_at_the_teardowns_return_are_read_per_node():
    """The script prints, right at a teardown's return, for each node its
    actors were ALIVE on: what they held (the GCS's required resources), the
    amount available before and now. The oracle's rule on the script's own
    held amount: at least min(before, total - held) + held."""
    def out(now, comp="collector", held="0.5", before="1.5", total="2", outcome="ok (0.004s)"):
        return f"""[1] teardown collector ...
[1] teardown collector: {outcome}
      resources: node 9f3a77c1 ({comp}: 2 actor(s) ALIVE before): CPU {held} held, {before} available before, {now} at return, of {total}
      actors: collector=DEAD,DEAD
"""
    assert verdict_of(TORCHRL_01, out("1.5")) == "shown"
    assert verdict_of(TORCHRL_01, out("2")) == "NOT shown"
    # its actors held 0.5 of the 2 the suite saw held elsewhere: released, not shown
    assert verdict_of(TORCHRL_01, out("3", held="0.5", before="2.5", total="4")) == "NOT shown"
    # the situation of the finding did not arise in this run: not shown
    assert verdict_of(TORCHRL_01, out("1.5", comp="buffer")) == "NOT shown"  # no collector actor held
    assert verdict_of(TORCHRL_01, out("1.5").replace("CPU 0.5 held", "GPU 0.5 held")) == "NOT shown"
    raised = out("1.5", outcome="raised builtins.IndexError: pop from empty list (0.012s)")
    assert verdict_of(TORCHRL_01, raised) == "NOT shown"  # the oracle judges a returned teardown
    # nothing to read: not checked
    unknown = out("1.5").replace(out("1.5").splitlines()[2], "      resources: unknown (x: y)")
    assert verdict_of(TORCHRL_01, unknown) == "not checked"
    assert verdict_of(TORCHRL_01, out("1.5"), printers=BEFORE_PROBES) == "not checked"


def test_the_scripts_print_resources_at_a_teardown_and_the_actors_a_failed_call_left():
    """What the check reads is printed by the generated script: the table
    marks a teardown 'released' and a call that is to fail 'left'; the probes
    run under a watchdog and never fail the script (a stub Ray that raises)."""
    import types

    from conformance import catalog
    from conformance.adapters.registry import load_adapter
    from conformance.repro.script import generate

    text = generate(catalog.load("construction_failure/local/user/collector-unknown_env"),
                    load_adapter("reference"))
    assert "'construct collector(fail=unknown_env)', op_0, " in text and "None, 'left')," in text
    compile(text, "repro.py", "exec")
    order = generate(catalog.load("order/local/user/collector>buffer>evaluator>ray"),
                     load_adapter("reference"))
    assert order.count(", 'released'),") == 3
    start = order.index("def _node_resources():")
    probes = order[start:order.index("def _teardown(call")]
    printed = []
    import threading

    space = {"ray": types.SimpleNamespace(is_initialized=lambda: True), "ACTOR_IDS": {"collector": ["ab"]},
             "threading": threading,
             "RECORDED": set(), "faulthandler": types.SimpleNamespace(
                 dump_traceback_later=lambda *a, **k: None, cancel_dump_traceback_later=lambda: None),
             "_qualname": lambda exc: type(exc).__name__, "print": lambda *a, **k: printed.append(a[0])}
    exec(probes, space)  # noqa: S102 - the generated probes, with a Ray whose GCS cannot be read
    before = space["_guarded"](space["_before_teardown"], "collector")
    assert isinstance(before, Exception)
    space["_released"](before)
    assert printed and printed[-1].startswith("      resources: unknown (")
    blocked = threading.Event()  # a GCS that never answers: the script goes on
    assert isinstance(space["_guarded"](blocked.wait, timeout=0.2), TimeoutError)
    assert space["_guarded"](lambda: 7) == 7
    blocked.set()
# -- races: a finding the suite saw in K of N runs gets more than one run --------------

def test_a_declared_race_gets_runs_until_one_shows_it(tmp_path):
    """torchrl's killed/*/user/buffer-sigkill>teardown: others_untouched in 3
    of 9 runs (varies.txt). Up to runs_for(3/9) = 8 runs (all 8 miss with
    probability 4 %), read here from kept outputs: the third shows it."""
    from conformance.reports.known_failures import VerdictRace
    from conformance.repro.upstream_check import (check_dir, declared_rate, runs_for,
                                                  save_output)

    rates = {"varying": {"killed/local/user/buffer-sigkill>teardown": {"others_untouched": (3, 9)}},
             "flaky": {"exit/multinode/user/background-running": VerdictRace("crash", (2, 7))}}
    found = dict(TORCHRL_24, id="killed/local/user/buffer-sigkill>teardown")
    assert declared_rate(found, rates) == (3, 9) and runs_for((3, 9)) == 8
    assert runs_for((1, 7)) == 10 and runs_for(None) == 1 and runs_for((9, 9)) == 1
    crash = {"id": "exit/multinode/user/background-running", "verdict": "crash",
             "oracle": "no_crash"}
    assert declared_rate(crash, rates) == (2, 7)
    assert declared_rate(dict(crash, verdict="fail"), rates) is None
    failing = {"flaky": {"x/local/user/y": VerdictRace("fail [clean_stderr, no_leak]", (2, 7))}}
    fail = {"id": "x/local/user/y", "verdict": "fail", "oracle": "no_leak"}
    assert declared_rate(fail, failing) == (2, 7)
    assert declared_rate(dict(fail, oracle="peer_ok"), failing) is None
    # a race between two failures: the other one is shown in the other 5 of 7 runs
    two = {"flaky": {"x/local/user/y": VerdictRace("crash", (2, 7), "fail [no_ray_restart]")}}
    assert declared_rate(dict(fail, oracle="no_ray_restart"), two) == (5, 7)
    assert declared_rate(dict(crash, id="x/local/user/y"), two) == (2, 7)
    assert declared_rate(fail, two) is None

    bodies, kept = tmp_path / "bodies", tmp_path / "kept"
    bodies.mkdir()
    name = "01-fail-others-untouched.md"
    (bodies / name).write_text(f"```python\nprint()\n```\n{marker_of(found)}\n")
    alive, ended = BUFFER_TEARDOWN, BUFFER_TEARDOWN.replace("collector=ALIVE,ALIVE", "collector=DEAD,ALIVE")
    for run, out in enumerate([alive, alive, ended], 1):
        save_output(str(kept), name, Trace(out, "", 0), 20.0, run, "print()")
    races = tmp_path / "varies.txt"
    races.write_text("killed/local/user/buffer-sigkill>teardown  varies:others_untouched@3/9  # a race\n")
    assert check_dir(str(bodies), "python", log=lambda line: None, replay=str(kept),
                     varies_from=str(races)) == 0
    row = (bodies / "CHECKED.md").read_text().splitlines()[-1]
    assert "| shown |" in row and "[run 3 of up to 8: a race, 3/9 of the suite's runs]" in row
    assert "| 60 s |" in row

    (kept / "01-fail-others-untouched.run3.json").unlink()  # two runs kept, neither shows it
    assert check_dir(str(bodies), "python", log=lambda line: None, replay=str(kept),
                     varies_from=str(races)) == 1
    row = (bodies / "CHECKED.md").read_text().splitlines()[-1]
    assert "| NOT shown |" in row
    assert "not in any of 2 run(s) (only 2 kept of up to 8) (at that rate, 44 % likely)" in row
    # without the races file, one run: the first (alive) decides
    assert check_dir(str(bodies), "python", log=lambda line: None, replay=str(kept)) == 1
    # an output kept from another script (the body written again since) is not read
    (bodies / name).write_text(f"```python\nprint('new')\n```\n{marker_of(found)}\n")
    assert check_dir(str(bodies), "python", log=lambda line: None, replay=str(kept)) == 0
    row = (bodies / "CHECKED.md").read_text().splitlines()[-1]
    assert "| not checked |" in row and "printed by another script" in row
    # run 1 saved again replaces the body's earlier runs
    save_output(str(kept), name, Trace(alive, "", 0), 20.0, 1, "print('new')")
    assert sorted(os.listdir(kept)) == ["01-fail-others-untouched.json"]


def marker_of(found: dict) -> str:
    import json

    from conformance.repro.upstream_check import MARK

    return f"{MARK}{json.dumps(found)} -->"


def test_torchrl_11_an_env_failure_never_surfaced_is_a_check_error_that_returned():
    """env_error/*/user/under-thread: the script's check_error loop calls
    start() for 30 s; it returning (ok) is the finding, raising is not."""
    found = finding("errors_surface", "check_error collector(call=start,cause=env,within=30.0)",
                    "op 3 (check_error collector) (env failure): returned 297 time(s) in 30.037s "
                    "without raising")
    out = """[3] check_error collector(call=start,cause=env,within=30.0) ...
[3] check_error collector(call=start,cause=env,within=30.0): ok -> returned without raising: the error was not surfaced (30.041s)
"""
    assert verdict_of(found, out) == "shown"
    raised = out.replace("ok -> returned without raising: the error was not surfaced",
                         "raised builtins.RuntimeError: env step failed")
    assert verdict_of(found, raised) == "NOT shown"


# -- a runtime a library's thread starts after the op returned ---------------------------

TORCHRL_14_RESTART = finding(
    "no_ray_restart", "ray_shutdown",
    "op 7 (ray_shutdown): after it returned, ray.init() from thread Thread-1 "
    f"(_run_collection_loop) started a Ray runtime ({NEW_SESSION})")
# the check of 2026-11-26 (17:50 UTC), cut: the probe after ray_shutdown ran before
# the collector's thread did; its ray.init() returned during the next op
SHUTDOWN_UNDER_THREAD = f"""      ray: {SESSION}
[7] ray_shutdown ...
      runtime: ray.shutdown() from thread MainThread: {SESSION} -> not initialized
[7] ray_shutdown: ok (0.171s)
      ray: not initialized
[8] teardown collector ...
{{thread_line}}[8] teardown collector: raised ray.exceptions.ActorHandleNotFoundError: ActorHandle objects are not valid across Ray sessions. (0.848s)
      ray: {NEW_SESSION}
"""


def test_torchrl_14_a_thread_starting_ray_after_the_op_returned_is_read_from_its_runtime_line():
    """The scripts print each ray.init() that starts a runtime with its thread
    (``script._watch_runtime_calls``), whenever it returns: the finding's
    thread (its number left out: each process numbers its threads) starting
    one after the op, in a later op, shows it; the main thread's start (the
    teardown's own auto-init) is another finding, and no line is none."""
    line = f"      runtime: ray.init() from thread Thread-3 (_run_collection_loop): " \
           f"not initialized -> {NEW_SESSION}\n"
    assert verdict_of(TORCHRL_14_RESTART, SHUTDOWN_UNDER_THREAD.format(thread_line=line)) \
        == "shown"
    main = line.replace("Thread-3 (_run_collection_loop)", "MainThread")
    assert verdict_of(TORCHRL_14_RESTART, SHUTDOWN_UNDER_THREAD.format(thread_line=main)) \
        == "NOT shown"
    assert verdict_of(TORCHRL_14_RESTART, SHUTDOWN_UNDER_THREAD.format(thread_line="")) \
        == "NOT shown"


def test_the_scripts_print_a_runtime_start_with_the_thread_that_made_it():
    """The generated watcher wraps ray.init and ray.shutdown (Ray's auto-init
    calls ``ray.init()`` through the module: ray/_private/auto_init_hook.py, Ray
    2.60) and prints the line ``_runtime_call`` reads, only for a call that
    changed the runtime."""
    import threading
    import types

    from conformance import catalog
    from conformance.adapters.registry import load_adapter
    from conformance.repro.script import generate
    from conformance.repro.upstream_check import INIT_CALL

    text = generate(catalog.load("background/local/user/ray-shutdown-under-thread"),
                    load_adapter("reference"))
    assert "    _watch_runtime_calls()\n" in text
    watcher = text[text.index("def _watch_runtime_calls():"):text.index("def _probe(")]
    session = ["not initialized"]
    printed = []
    fake_ray = types.SimpleNamespace(init=lambda **kw: session.__setitem__(0, NEW_SESSION),
                                     shutdown=lambda: session.__setitem__(0, "not initialized"))
    space = {"ray": fake_ray, "threading": threading, "_ray_session": lambda: session[0],
             "_qualname": lambda exc: type(exc).__name__,
             "print": lambda *a, **k: printed.append(a[0])}
    exec(watcher + "\n_watch_runtime_calls()\n", space)  # noqa: S102 - the generated watcher
    worker = threading.Thread(target=fake_ray.init, name="Thread-1 (_run_collection_loop)")
    worker.start()
    worker.join()
    fake_ray.init()  # already up: no change, no line
    assert len(printed) == 1
    m = INIT_CALL.match(printed[0].strip())
    assert m and m.group("thread") == "Thread-1 (_run_collection_loop)" \
        and m.group("after") == NEW_SESSION
    fake_ray.shutdown()
    assert printed[-1].strip() == f"runtime: ray.shutdown() from thread MainThread: " \
                                  f"{NEW_SESSION} -> not initialized"

    def unreadable():
        raise RuntimeError("the GCS did not answer")

    space["_ray_session"] = unreadable  # a reading that fails leaves the call as it was
    fake_ray.init()
    assert session[0] == NEW_SESSION and len(printed) == 2


def test_rllib_11_a_call_over_its_own_timeout_is_read_from_its_duration():
    """RLlib's evaluate() has no timeout: the poll with timeout 0.5 s returned
    after 5.2 s (the script went on to hang later: the first finding counts)."""
    found = finding("calls_within_timeout", "poll evaluator(timeout=0.5)",
                    "op 4 (poll evaluator): took 5.21s; its timeout is 0.5s", verdict="hang")
    out = """[4] poll evaluator(timeout=0.5) ...
[4] poll evaluator(timeout=0.5): ok -> ready (5.214s)
[5] submit evaluator ...
"""
    assert verdict_of(found, out, returncode=1) == "shown"
    assert verdict_of(found, out.replace("(5.214s)", "(0.612s)"), returncode=1) == "NOT shown"


def test_torchrl_22_a_thread_of_the_library_running_at_the_teardowns_return_is_read():
    """torchrl 0.14.1's collection thread outlives shutdown(): the script
    prints, right at a teardown's return, the threads that did not run
    before any operation (``script._threads_left``), with the module of what
    each runs; Python numbers unnamed threads per process, so Thread-1 in the
    suite's driver may be Thread-3 in the script."""
    found = finding("threads_joined", "teardown collector",
                    "op 6 (teardown collector): thread Thread-1 (_run_collection_loop) "
                    "(torchrl.collectors.distributed.ray) of the collector still running right "
                    "after its teardown returned")

    def out(threads, outcome="ok (0.528s)"):
        return f"""[6] teardown collector ...
[6] teardown collector: {outcome}
      threads: {threads}
      actors: buffer=ALIVE  collector=DEAD,DEAD
"""
    left = "Thread-3 (_run_collection_loop) (torchrl.collectors.distributed.ray)"
    assert verdict_of(found, out(left)) == "shown"
    assert verdict_of(found, out(f"ThreadPoolExecutor-0_0 (concurrent.futures.thread), {left}")) \
        == "shown"
    assert verdict_of(found, out("none")) == "NOT shown"
    # another thread of another module is not the one the finding names
    assert verdict_of(found, out("Thread-3 (_run_collection_loop) (other.module)")) == "NOT shown"
    # a teardown that raised: the oracle judges a returned one
    assert verdict_of(found, out(left, "raised builtins.IndexError: x (0.01s)")) == "NOT shown"
    # a script from before the threads line: not checked (regenerate the body)
    older = out(left).replace(f"      threads: {left}\n", "")
    assert verdict_of(found, older, printers=BEFORE_THREADS) == "not checked"
    assert verdict_of(found, older) == "NOT shown"  # a script that reads threads, no line


def test_the_scripts_print_the_threads_left_at_a_teardowns_return():
    """The generated script lists, after a teardown that returned, the threads
    started since its first operation: not Ray's own driver threads, not an
    armed kill's timer, not a thread that ended."""
    import threading

    from conformance import catalog
    from conformance.adapters.registry import load_adapter
    from conformance.repro.script import generate

    text = generate(catalog.load("background/multinode/user/stop-from-main"),
                    load_adapter("reference"))
    assert "            _threads_left(started)" in text
    assert text.count("def ray_driver_thread") == 1
    # read first at the return, before the resources (GCS reads, tens of ms)
    assert text.index("_threads_left(started)  #") < text.index("_released(before)\n")
    start = text.index("def _threads_left(before, quiet=False):")
    printed = []
    space = {"threading": threading, "print": lambda *a, **k: printed.append(a[0]),
             "ray_driver_thread": lambda t: t.name == "ray_print_logs"}
    exec(text[start:text.index("def _left_behind():")], space)  # noqa: S102 - the generated reader
    before = set(threading.enumerate())
    stop = threading.Event()
    library = threading.Thread(target=stop.wait, name="collection")
    ray_own = threading.Thread(target=stop.wait, name="ray_print_logs")
    armed = threading.Timer(60, lambda: None)
    for t in (library, ray_own, armed):
        t.start()
    try:
        space["_threads_left"](before)
    finally:
        stop.set()
        armed.cancel()
        for t in (library, ray_own, armed):
            t.join()
    assert printed == ["      threads: collection (threading)"]
    space["_threads_left"](before)
    assert printed[-1] == "      threads: none"
