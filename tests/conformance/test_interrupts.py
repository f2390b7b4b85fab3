"""The harness's record of a signal sent into an op (conformance.ops.interrupts):
whether the process's Python SIGTERM handler (Ray's ``sys.exit(signum)``) ran
inside the op, read by wrapping ``sys.exit`` for that op only, and whether
Python discarded its ``SystemExit`` (a handler run inside a finalizer)."""
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
    """As Ray 2.60's handler in a driver's main thread (ray.init): sys.exit(signum)."""
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
    real_exit, real_hook = sys.exit, sys.unraisablehook
    armed = _running(interrupts, "teardown")
    armed.sent_at = time.monotonic()
    with pytest.raises(SystemExit):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs at the next bytecode
        time.sleep(5)  # not reached: the handler's SystemExit ends it
    assert interrupts.op_ends() is armed
    assert armed.in_op is True and armed.handled_at is not None and armed.dropped is None
    assert armed.handler.endswith("test_interrupts.py:_exits")
    assert (sys.exit, sys.unraisablehook) == (real_exit, real_hook)  # put back with the op
    assert armed.record(None, time.monotonic())["in_op"] is True


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # passed on, as it must
def test_a_sigterm_handler_run_in_a_finalizer_is_seen_with_its_exit_dropped(sigterm_exits):
    """Python prints and discards an exception raised in ``__del__``: the op
    goes on, and the record says the SystemExit was Python's to drop."""

    class Dropped:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            sum(range(10))  # bytecode: the handler runs here, inside the finalizer

    interrupts = Interrupts(_Writer())
    saved_hook = sys.unraisablehook
    armed = _running(interrupts, "teardown")
    armed.sent_at = time.monotonic()
    dropped = Dropped()
    del dropped  # no SystemExit comes out here
    interrupts.op_ends()
    assert armed.in_op is True and "Dropped.__del__" in armed.dropped
    assert armed.record(None, time.monotonic())["dropped"] == armed.dropped
    assert sys.unraisablehook is saved_hook


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
        real_exit = sys.exit
        armed = _running(interrupts, "teardown")
        assert sys.exit is real_exit  # nothing to watch: nothing wrapped
        interrupts.op_ends()
        assert armed.in_op is None
    finally:
        signal.signal(signal.SIGTERM, saved)


def test_the_wrappers_go_even_when_the_handler_raises_as_the_op_ends(sigterm_exits):
    """A SIGTERM handled while ``op_ends`` runs: its SystemExit comes out of
    ``op_ends``, and ``sys.exit`` and ``sys.unraisablehook`` are Python's again."""
    interrupts = Interrupts(_Writer())
    real_exit, real_hook = sys.exit, sys.unraisablehook

    class RaisingLock:  # the handler's SystemExit, as it would come out inside the lock
        def __enter__(self):
            raise SystemExit(15)

        def __exit__(self, *exc):
            return False

    _running(interrupts, "teardown")
    interrupts.lock = RaisingLock()
    with pytest.raises(SystemExit):
        interrupts.op_ends()
    assert (sys.exit, sys.unraisablehook) == (real_exit, real_hook)

