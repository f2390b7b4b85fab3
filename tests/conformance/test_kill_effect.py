"""A standalone script's ``kill`` waits as the suite's ``kill`` verb does
(``conformance.ops.kill_effect``): for its target ALIVE with a process, and
for the fault's effect before its op returns."""
import ast
import inspect
import re
import subprocess

import pytest

from conformance import catalog
from conformance.adapters.registry import load_adapter
from conformance.ops import kill_effect
from conformance.ops.verbs import HANG_CONFIRM, KILL_VERIFY, KILL_WAIT_ALIVE
from conformance.repro import script

ALIVE = f"pid = _await_alive_pid(handle, {KILL_WAIT_ALIVE})"


def op_source(text: str, i: int) -> str:
    """The source of ``op_<i>`` in a generated script."""
    return re.search(rf"^def op_{i}\(\):\n(?:    .*\n|\n)*?(?=\S)", text + "\nX", re.M).group(0)


def kill_op(scenario_id: str) -> tuple[str, int]:
    scenario = catalog.find(scenario_id)
    text = script.generate(scenario, load_adapter("reference"), "reference")
    return text, next(i for i, op in enumerate(scenario.ops) if op.verb == "kill")


def module_names(text: str) -> set:
    """What a script defines at module level (imports, functions, assignments)."""
    names = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_pid_gone_once_the_process_ended_even_unreaped():
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert kill_effect._pid_gone(child.pid) is False
        child.kill()
        # a zombie until reaped: ended, as the suite's procs.pid_alive says
        assert kill_effect._await_kill_effect(lambda: kill_effect._pid_gone(child.pid), 5.0,
                                              "sigkill").startswith("sigkill: took effect in ")
    finally:
        child.kill()
        child.wait()
    assert kill_effect._pid_gone(child.pid) is True  # reaped: no /proc entry


def test_a_fault_without_effect_is_an_error_saying_so():
    with pytest.raises(RuntimeError, match=r"ray.kill: no effect within 0.2 s: the fault was not injected"):
        kill_effect._await_kill_effect(lambda: False, 0.2, "ray.kill")


@pytest.mark.parametrize("scenario_id, effect, helpers", [
    ("walk/multinode/user/seed-4", "_await_kill_effect(lambda: _actor_not_alive(handle)",
     {"_await_alive_pid", "_await_kill_effect", "_actor_not_alive"}),
    ("killed/local/user/buffer-sigkill>teardown", "_await_kill_effect(lambda: _pid_gone(pid)",
     {"_await_alive_pid", "_await_kill_effect", "_pid_gone"}),
    ("killed/multinode/user/buffer-exit>ray>teardown", "_await_kill_effect(lambda: _pid_gone(pid)",
     {"_await_alive_pid", "_await_kill_effect", "_pid_gone"}),
    ("background/multinode/user/buffer-hang-under-thread", f"ray.wait([ref], timeout={HANG_CONFIRM})",
     {"_await_alive_pid"}),
])
def test_the_scripts_kill_waits_for_its_target_and_its_effect(scenario_id, effect, helpers):
    text, i = kill_op(scenario_id)
    body = op_source(text, i)
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    # the target first, the fault, then its effect; the op returns what the wait said
    first = next(k for k, line in enumerate(lines) if line.startswith(ALIVE))
    assert first < next(k for k, line in enumerate(lines) if effect in line), body
    assert lines[-1] == "return result", body
    defined = module_names(text)
    assert helpers <= defined
    for name in helpers:  # a helper copied by its source finds its globals in the script
        used = inspect.getclosurevars(getattr(kill_effect, name))
        assert set(used.globals) <= defined and not used.nonlocals, (name, used)


def test_the_exit_kill_reads_the_pid_before_the_actor_exits():
    text, i = kill_op("killed/multinode/user/buffer-exit>ray>teardown")
    body = op_source(text, i)
    assert body.index(ALIVE) < body.index("os._exit(1)")


def test_an_armed_kill_waits_in_its_timer_and_kill_landed_reports_what_it_did():
    scenario = catalog.find("killed/multinode/user/collector-sigkill-in-flight>teardown")
    text, i = kill_op(scenario.id)
    land = op_source(text, i)
    assert "        result = _await_kill_effect(lambda: _pid_gone(pid)" in land  # in _land's try
    assert "        _ARMED_RESULTS.append(result)" in land
    landed = next(k for k, op in enumerate(scenario.ops) if op.verb == "kill_landed")
    assert "return 'the armed kill landed: ' + _ARMED_RESULTS.pop(0)" in op_source(text, landed)


def test_removing_a_node_has_no_script_and_says_what_to_do_instead():
    text, i = kill_op("killed/multinode/user/buffer-remove_node>teardown")
    assert "unsupported: removing a node is not done by a standalone script" in op_source(text, i)
    assert "def _await_alive_pid(" not in text  # no kill form of it needs the helpers
