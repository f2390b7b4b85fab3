"""Leaving a ``with component:`` block, as Python does (``teardown(via="with")``).

The user writes ``with RayCollector(...) as collector:``; leaving the block
tears the component down through its ``__exit__`` (the ``context_manager``
feature), also when the block's body raised, and that error must come out
of the ``with`` statement: an ``__exit__`` that returns a true value
swallows it. The driver and the reproduction scripts run this same function
(the scripts copy its source).
"""
from __future__ import annotations


def leave_with_block(exit_block, body_raises: bool, strict: bool = False):
    """Run a ``with`` statement whose ``__exit__`` is ``exit_block(exc_type,
    exc, tb)`` and whose body raises the user's own error if ``body_raises``.
    Returns "came out" when that error came out of the statement, "swallowed"
    when it did not (with ``strict``: raises AssertionError instead), None
    when the body did not raise. What ``exit_block`` raises comes out."""

    class UserBlockError(Exception):
        """The error of the user's own code inside the with block."""

    class Block:
        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc, tb):
            return exit_block(exc_type, exc, tb)

    try:
        with Block():
            if body_raises:
                raise UserBlockError("the with block's body failed (the user's own error)")
    except UserBlockError:
        return "came out"
    if not body_raises:
        return None
    if strict:
        raise AssertionError("leaving the with block swallowed the error its body raised "
                             "(__exit__ returned a true value)")
    return "swallowed"
