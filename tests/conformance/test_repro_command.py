"""The repro command a failure prints runs from the repository root as it
stands: an adapter of the user's own outside the root gets its PYTHONPATH."""
import sys

from conformance.run.execute import repro_command
from fixtures.rayenv import REPO_ROOT


def test_an_adapter_outside_the_root_gets_its_pythonpath(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "ci" / "example-fork"))
    sys.modules.pop("myfork_adapter", None)
    assert repro_command("double_close/local/user/buffer-twice", "myfork_adapter:MyForkAdapter") == (
        "PYTHONPATH=ci/example-fork python -m conformance repro "
        "double_close/local/user/buffer-twice --impl myfork_adapter:MyForkAdapter")


def test_a_named_or_in_repo_implementation_needs_none():
    assert repro_command("order/local/user/ray>buffer", "reference", "127.0.0.1:6379") == (
        "python -m conformance repro 'order/local/user/ray>buffer' --impl reference "
        "--ray-address 127.0.0.1:6379")
    assert repro_command("x/local/user/y", "tests.conformance.toy_verb:ToyAdapter") == (
        "python -m conformance repro x/local/user/y --impl tests.conformance.toy_verb:ToyAdapter")
