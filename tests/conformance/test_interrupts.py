"""The harness's record of a signal sent into an op (conformance.ops.interrupts):
whether the process's Python SIGTERM handler ran inside the op, read by a
profile hook that leaves the handler in place."""
import os
import signal
import sys
import time

import pytest

from conformance.ops.interrupts import Armed, Interrupts


class _Writer:
    def write(self, record):
        pass


def _exits(signum, frame):
    """As Ray 2.60's handler in a driver's main thread (ray.init): sys.exit(15)."""
    sys.exit(signum)


@pytest.fixture
def sigterm_exits():
    saved = signal.signal(signal.SIGTERM, _exits)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved)


def _running(interrupts: Interrupts, verb: str) -> Armed:
    """An armed SIGTERM matched to the op ``verb`` now starting (no sending thread:
    the test sends it)."""
    armed = Armed({"signal": "SIGTERM", "during": verb})
    armed.done.set()  # its sending thread, which the test plays, has ended
    interrupts.armed.append(armed)
    interrupts.op_starts(0, verb)
    return armed


def test_a_sigterm_handler_that_runs_inside_the_op_is_seen_there(sigterm_exits):
    interrupts = Interrupts(_Writer())
    before = sys.getprofile()
    armed = _running(interrupts, "teardown")
    armed.sent_at = time.monotonic()
    with pytest.raises(SystemExit):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next bytecode
        time.sleep(5)  # not reached: the handler's SystemExit ends it
    assert interrupts.op_ends() is armed
    assert armed.in_op is True and armed.handled_at is not None
    assert sys.getprofile() is before  # the hook is gone with the op
    assert armed.record(None, time.monotonic())["in_op"] is True


def test_a_sigterm_handler_that_runs_after_the_op_is_not_inside_it(sigterm_exits):
    interrupts = Interrupts(_Writer())
    armed = _running(interrupts, "teardown")
    interrupts.op_ends()
    with pytest.raises(SystemExit):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert armed.in_op is None and armed.handled_at is None  # unknown, never "inside"


def test_a_c_level_sigterm_handler_leaves_in_op_unknown():
    saved = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        interrupts = Interrupts(_Writer())
        before = sys.getprofile()
        armed = _running(interrupts, "teardown")
        assert sys.getprofile() is before  # nothing to watch: no hook installed
        interrupts.op_ends()
        assert armed.in_op is None
    finally:
        signal.signal(signal.SIGTERM, saved)
