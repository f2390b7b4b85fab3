"""The repro command a failure prints runs from the repository root as it
stands: with the suite's own interpreter (a bare ``python`` is the
machine's), and an adapter of the user's own outside the root gets its
PYTHONPATH."""
import os
import sys

from conformance.run.execute import interpreter, repro_command
from fixtures.rayenv import REPO_ROOT

PY = interpreter()


def test_the_interpreter_is_the_suites_named_from_the_root():
    assert os.path.samefile(os.path.join(REPO_ROOT, PY), sys.executable)
    if os.path.abspath(sys.executable).startswith(str(REPO_ROOT) + os.sep):
        assert not os.path.isabs(PY) and not PY.startswith("..")


def test_an_adapter_outside_the_root_gets_its_pythonpath(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "ci" / "example-fork"))
    sys.modules.pop("myfork_adapter", None)
    assert repro_command("double_close/local/user/buffer-twice", "myfork_adapter:MyForkAdapter") == (
        f"PYTHONPATH=ci/example-fork {PY} -m conformance repro "
        "double_close/local/user/buffer-twice --impl myfork_adapter:MyForkAdapter")


def test_a_named_or_in_repo_implementation_needs_none():
    assert repro_command("order/local/user/ray>buffer", "reference", "127.0.0.1:6379") == (
        f"{PY} -m conformance repro 'order/local/user/ray>buffer' --impl reference "
        "--ray-address 127.0.0.1:6379")
    assert repro_command("x/local/user/y", "tests.conformance.toy_verb:ToyAdapter") == (
        f"{PY} -m conformance repro x/local/user/y --impl tests.conformance.toy_verb:ToyAdapter")
