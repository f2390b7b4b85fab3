"""Leaving a ``with`` block as Python does (``conformance.ops.with_block``):
what the driver records and the scripts assert."""

import pytest

from conformance.ops.with_block import leave_with_block


def test_the_bodys_error_comes_out_or_is_said_swallowed():
    seen = []

    def exit_block(exc_type, exc, tb):
        seen.append(exc_type.__name__ if exc_type else None)
        return None

    assert leave_with_block(exit_block, body_raises=False) is None
    assert leave_with_block(exit_block, body_raises=True) == "came out"
    assert seen == [None, "UserBlockError"]  # __exit__ got the body's error
    assert leave_with_block(lambda *exc: True, body_raises=True) == "swallowed"
    with pytest.raises(AssertionError, match="swallowed the error its body raised"):
        leave_with_block(lambda *exc: True, body_raises=True, strict=True)


def test_what_exit_raises_comes_out():
    def exit_block(*exc):
        raise RuntimeError("teardown failed")

    with pytest.raises(RuntimeError, match="teardown failed"):
        leave_with_block(exit_block, body_raises=False)
