"""A standalone script's ``kill`` returns once the fault took effect, as the
suite's ``kill`` verb does (``conformance.ops.kill_effect``)."""
import re
import subprocess

import pytest

from conformance import catalog
from conformance.adapters.registry import load_adapter
from conformance.ops import kill_effect
from conformance.ops.verbs import HANG_CONFIRM, KILL_VERIFY
from conformance.repro import script


def op_source(text: str, i: int) -> str:
    """The source of ``op_<i>`` in a generated script."""
    return re.search(rf"^def op_{i}\(\):\n(?:    .*\n|\n)*?(?=\S)", text + "\nX", re.M).group(0)


def kill_op(scenario_id: str) -> tuple[str, int]:
    scenario = catalog.find(scenario_id)
    text = script.generate(scenario, load_adapter("reference"), "reference")
    return text, next(i for i, op in enumerate(scenario.ops) if op.verb == "kill")


def test_pid_gone_once_the_process_ended_even_unreaped():
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert kill_effect._pid_gone(child.pid) is False
        child.kill()
        # a zombie until reaped: ended, as the suite's procs.pid_alive says
        assert kill_effect._kill_took_effect(lambda: kill_effect._pid_gone(child.pid), 5.0,
                                             "sigkill").startswith("sigkill: took effect in ")
    finally:
        child.kill()
        child.wait()
    assert kill_effect._pid_gone(child.pid) is True  # reaped: no /proc entry


def test_a_fault_without_effect_is_an_error_saying_so():
    with pytest.raises(RuntimeError, match=r"ray.kill: no effect within 0.2 s: the fault was not injected"):
        kill_effect._kill_took_effect(lambda: False, 0.2, "ray.kill")


@pytest.mark.parametrize("scenario_id, waits, helpers", [
    ("walk/multinode/user/seed-4", f"_kill_took_effect(lambda: _actor_not_alive(handle), {KILL_VERIFY}, 'ray.kill')",
     ("_kill_took_effect", "_actor_not_alive")),
    ("killed/local/user/buffer-sigkill>teardown",
     f"_kill_took_effect(lambda: _pid_gone(pid), {KILL_VERIFY}, f'sigkill of pid {{pid}}')",
     ("_kill_took_effect", "_pid_gone")),
    ("killed/multinode/user/buffer-exit>ray>teardown",
     f"_kill_took_effect(lambda: _pid_gone(pid), {KILL_VERIFY}, f'exit of pid {{pid}}')",
     ("_kill_took_effect", "_pid_gone")),
    ("background/multinode/user/buffer-hang-under-thread", f"ray.wait([ref], timeout={HANG_CONFIRM})", ()),
])
def test_the_scripts_kill_waits_for_its_effect(scenario_id, waits, helpers):
    text, i = kill_op(scenario_id)
    body = op_source(text, i)
    assert waits in body and body.rstrip().endswith("return result"), body
    for helper in helpers:
        assert f"\ndef {helper}(" in text, helper


def test_the_exit_kill_reads_the_pid_before_the_actor_exits():
    text, i = kill_op("killed/multinode/user/buffer-exit>ray>teardown")
    body = op_source(text, i)
    assert body.index("pid = _actor_pid(handle)") < body.index("os._exit(1)")


def test_an_armed_kill_waits_in_its_timer_thread():
    text, i = kill_op("killed/multinode/user/collector-sigkill-in-flight>teardown")
    land = op_source(text, i)
    assert "        result = _kill_took_effect(lambda: _pid_gone(pid)" in land  # inside _land's try
    assert "return result" not in land  # the timer's function returns nothing
