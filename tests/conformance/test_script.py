"""`python -m conformance script`: a standalone reproduction script per scenario.

The script must run without this project (only ray, torch, tensordict,
gymnasium and the implementation's package), print every operation with its
outcome, and compile for every scenario.
"""
import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

from conformance import catalog
from conformance.repro import script
from conformance.adapters.reference import ReferenceAdapter
from fixtures.rayenv import RAY_ENV
from conformance.adapters.registry import load_adapter
from fixtures import procs
from fixtures.rayenv import MARKER_VAR, REPO_ROOT

RUN = "order/local/user/collector>buffer>evaluator>ray"
FORBIDDEN = {"conformance", "fixtures"}


def imported_modules(text: str) -> set:
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("impl", ["reference", "regression:abort-on-close"])
def test_every_quick_scenario_compiles_without_the_suite(impl):
    adapter = load_adapter(impl)
    for scenario in catalog.scenarios(("local", "multinode"), "quick"):
        text = script.generate(scenario, adapter, impl)
        compile(text, scenario.id, "exec")
        assert not imported_modules(text) & FORBIDDEN, scenario.id
        for i, op in enumerate(scenario.ops):
            assert f"def op_{i}():\n    # {op}" in text, (scenario.id, i)


def test_a_busy_cluster_script_keeps_the_harness_actors_apart():
    """The full profile's busy-cluster scenarios: the occupiers' code is the
    script's own, and their ids are recorded, so a failed build's left-behind
    check names only the implementation's actors, as the suite's does."""
    impl = "reference"
    adapter = load_adapter(impl)
    for scenario in catalog.scenarios(("local", "multinode"), "full"):
        if not scenario.id.endswith("-cluster-busy"):
            continue
        text = script.generate(scenario, adapter, impl)
        compile(text, scenario.id, "exec")
        assert not imported_modules(text) & FORBIDDEN, scenario.id
        assert "class CpuOccupier:" in text and "def vacate(" in text
        assert "RECORDED.update(h._actor_id.hex() for h in _OCCUPIERS)" in text


def test_regression_variant_carries_its_bug():
    text = script.generate(catalog.find("order/local/user/ray>collector>buffer>evaluator"),
                           load_adapter("regression:abort-on-close"), "regression:abort-on-close")
    assert "os.abort()" in text
    assert "RayReplayBuffer = _abort_on_close(RayReplayBuffer)" in text


def test_generic_verbs_and_unsupported_ops():
    class NoLiveness(ReferenceAdapter):
        name = "no-liveness"
        features = ReferenceAdapter.features - {"liveness"}

    text = script.generate(catalog.find("killed/multinode/user/buffer-sigkill>teardown"),
                           NoLiveness(), "no-liveness")
    assert "os.kill(pid, signal.SIGKILL)" in text
    assert "raise Unsupported('no-liveness does not support liveness')" in text
    assert "p.add_argument('--address', required=True" in text  # multinode: the user's cluster
    text = script.generate(catalog.find("killed/multinode/user/buffer-remove_node>teardown"),
                           ReferenceAdapter(), "reference")
    assert "# kill buffer(how=remove_node): unsupported: removing a node" in text
    peer = script.generate(catalog.find("named/local/user/peer-then-owner"),
                           ReferenceAdapter(), "reference")
    assert "return _run_peer(" in peer and "RayEvalWorker.from_name(" in peer


EXTRA_SCRIPTS = {  # impl -> (its module, scenarios whose scripts must compile)
    "torchrl": ("torchrl", ("early_break/local/user/buffer-mode-after-2", RUN,
                            "killed/local/user/collector-exit>teardown")),
    "rllib": ("ray.rllib", ("early_break/local/user/sync-after-1",
                            "order/local/user/collector>evaluator>ray~no-buffer",
                            "killed/local/user/collector-exit>teardown~no-buffer",
                            "use_after_close/local/user/evaluator")),
    "tianshou": ("tianshou", ("early_break/local/user/sync-after-1",
                              "order/local/user/collector>ray~no-buffer-evaluator",
                              "killed/local/user/collector-sigkill-in-flight>teardown~no-buffer-evaluator",
                              "use_after_close/local/user/collector",
                              "construction_failure/local/user/collector-one_unknown_env")),
}


@pytest.mark.parametrize("impl", sorted(EXTRA_SCRIPTS))
def test_extra_scripts_compile(impl):
    module, ids = EXTRA_SCRIPTS[impl]
    if impl not in os.environ.get("RLC_EXTRAS", "").split(","):  # else: must not skip
        pytest.importorskip(module)
    adapter = load_adapter(impl)
    for sid in ids:
        text = script.generate(catalog.find(sid), adapter, impl)
        compile(text, sid, "exec")
        assert f"from {module}" in text and not imported_modules(text) & FORBIDDEN


def test_cli_writes_a_script_and_rejects_unknown_ids(tmp_path):
    out = tmp_path / "repro.py"
    env = {**os.environ, **RAY_ENV}
    cmd = [sys.executable, "-m", "conformance", "script"]
    done = subprocess.run(cmd + [RUN, "--impl", "reference", "-o", str(out)], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert os.access(out, os.X_OK) and "def main(argv=None):" in out.read_text()
    bad = subprocess.run(cmd + ["order/local/user/nope", "--impl", "reference"], cwd=REPO_ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no scenario" in bad.stderr


def run_alone(scenario_id: str, tmp_path) -> subprocess.CompletedProcess:
    """The reference's script of the scenario, run with only `impl`
    importable: no conformance, no fixtures on the path."""
    text = script.generate(catalog.find(scenario_id), load_adapter("reference"), "reference")
    path = tmp_path / "repro.py"
    path.write_text(text)
    only_impl = tempfile.mkdtemp(prefix="rlcs-", dir="/tmp")  # short: Ray's socket paths
    os.symlink(os.path.join(REPO_ROOT, "impl"), os.path.join(only_impl, "impl"))
    marker = f"rlc-script-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", MARKER_VAR)}
    env.update(RAY_ENV, PYTHONPATH=only_impl, RAY_TMPDIR=only_impl, SPT_NOENV="1",
               **{MARKER_VAR: marker})
    try:
        done = subprocess.run([sys.executable, str(path)], cwd=only_impl, env=env,
                              capture_output=True, text=True, timeout=180)
    finally:
        procs.kill_marked(marker, grace=0.5)
        shutil.rmtree(only_impl, ignore_errors=True)
    return done


def test_reference_script_runs_standalone(tmp_path):
    done = run_alone(RUN, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for i, op in enumerate(catalog.find(RUN).ops):
        assert any(line.startswith(f"[{i}] {op}: ok") for line in lines), done.stdout
    assert "      actors: buffer=DEAD  collector=DEAD,DEAD  evaluator=DEAD" in lines
    assert "      ray: not initialized" in lines  # after the user's ray.shutdown()
    # what upstream --check reads for resources_released_at_teardown: each
    # teardown's resources at its return, on its actors' node; the reference
    # releases them before it returns (impl/resources.py)
    released = [re.search(r"\((\w+): \d+ actor\(s\) ALIVE before\): CPU ([\d.]+) held, ([\d.]+) "
                          r"available before, ([\d.]+) at return, of ([\d.]+)", line)
                for line in lines if "resources: node " in line]
    assert sorted(m.group(1) for m in released if m) == ["buffer", "collector", "evaluator"], done.stdout
    for m in released:  # the oracle's rule (the GCS's view may lag the actors' start)
        held, before, now, total = (float(m.group(k)) for k in (2, 3, 4, 5))
        assert held > 0 and now + 1e-3 >= min(before, total - held) + held, m.group(0)


def test_a_scripts_sigkill_returns_once_the_process_is_gone(tmp_path):
    """As the suite's kill: the actor ALIVE with a process first, then the op
    returns once that process has ended (conformance.ops.kill_effect)."""
    done = run_alone("killed/local/user/buffer-sigkill>teardown", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    killed = re.search(r"^\[\d+\] kill buffer\(how=sigkill\): ok -> sigkill of pid (\d+) "
                       r"\(this machine\): took effect in [\d.]+ s", done.stdout, re.M)
    assert killed and int(killed.group(1)) > 1, done.stdout



def test_an_armed_signal_is_not_sent_after_its_op_returned():
    """As the suite's (conformance.ops.interrupts): a signal due after its op
    returned is cancelled and said so, not sent into the next line."""
    scenario = catalog.find("signals/multinode/user/evaluator-sigint-in-poll>teardown")
    namespace = {"__name__": "repro"}  # not __main__: main() does not run
    exec(compile(script.generate(scenario, load_adapter("reference"), "reference"), "repro", "exec"),
         namespace)
    armed = {"signal": signal.SIGINT, "ends_program": False, "sent": None}
    namespace["_INTERRUPTS"].append(armed)
    timer = threading.Timer(60.0, namespace["_send_signal"], args=(armed,))
    namespace["_ARMED"].append(timer)
    try:
        outcome = namespace["_step"](0, "poll evaluator", lambda: "not ready", 30.0)
        timer.join(5.0)
    finally:
        timer.cancel()  # never a SIGINT into pytest, whatever the outcome
    assert outcome == ("ok -> not ready (the armed SIGINT was not sent: the op returned "
                       "before it was due)")
    assert not timer.is_alive() and armed["sent"] is None
    assert namespace["_ARMED"] == [] and namespace["_INTERRUPTS"] == []


def test_with_ray_down_a_settle_waits_for_the_actors_processes():
    """As the suite reads actors by process once the user's ray.shutdown()
    ended Ray: the settle waits (up to 5 s) for the worker processes last
    seen, instead of returning at once."""
    namespace = {"__name__": "repro"}
    exec(compile(script.generate(catalog.find(RUN), load_adapter("reference"), "reference"),
                 "repro", "exec"), namespace)
    assert not namespace["ray"].is_initialized()
    worker = subprocess.Popen(["sleep", "60"])  # stands in for an actor's worker process
    namespace["ACTOR_IDS"].update(buffer=["a1"], collector=["c1"])
    namespace["ACTOR_PIDS"].update(a1=worker.pid)
    try:
        t0 = time.monotonic()
        assert namespace["_actor_states"]("collector") is None  # no pid known: no wait
        assert time.monotonic() - t0 < 1.0
        assert namespace["_actor_states"]("buffer") is None
        assert time.monotonic() - t0 >= 5.0  # still running: the whole bound
        worker.kill()
        worker.wait()
        t0 = time.monotonic()
        assert namespace["_actor_states"]("buffer") is None
        assert time.monotonic() - t0 < 1.0  # ended: no wait
    finally:
        worker.kill()
        worker.wait()


def test_a_shutdown_bound_before_the_library_is_bound_before_its_import():
    """The script binds ``RAY_SHUTDOWN_BOUND_EARLY`` before the adapter's import
    lines, as a module imported first would (``Verb.script_prelude``), and its
    op waits for the library's threads before printing them."""
    text = script.generate(catalog.find("built_in_thread/local/impl/all>ray(bound-before-import)"),
                           ReferenceAdapter(), "reference")
    bound = text.index("RAY_SHUTDOWN_BOUND_EARLY = ray.shutdown")
    assert bound < text.index("from impl import")
    assert "RAY_SHUTDOWN_BOUND_EARLY()" in text
    assert "_threads_left(THREADS_BEFORE, quiet=True)" in text
    plain = script.generate(catalog.find("built_in_thread/local/impl/all>ray"),
                            ReferenceAdapter(), "reference")
    assert "RAY_SHUTDOWN_BOUND_EARLY" not in plain
