"""Signals the harness sends to the driver itself while an op runs: a user's
Ctrl-C (SIGINT) or a CI cancellation (SIGTERM), in the driver process.

``Interrupts.arm`` (the ``interrupt`` verb) starts a harness thread that
waits for the next op with the armed verb, waits ``after`` seconds into it
and sends the signal to this process, but only while that op still runs
(checked under the lock the driver takes when the op ends). What the signal
raised, and when, is recorded with the op (``record``): the op's end record
gets ``"interrupt"``, and the sending thread writes a ``signal`` side record
first (flushed before the signal: a driver that dies of it still names it).

SIGINT goes through a handler of the harness that behaves as Python's
default one (raises ``KeyboardInterrupt`` in the main thread) while the op
runs; a SIGINT of ours that reaches the main thread only after the op
returned is recorded and not raised (the signal did not land inside the op:
the verdict is ``error``, never a pass), so it never breaks the harness's own
code. SIGTERM is sent as it is, under whatever handler the process has: on
Ray 2.60 ``ray.init`` in the main thread installs ``sys.exit(15)`` as its
Python handler and the core worker a C++ failure-signal handler in front of
it (which aborts the process 3 s after a SIGTERM if it is still running,
measured); replacing either would change what is under test. Whether that
Python handler's ``sys.exit`` ran while the op ran is read instead: for the
op a SIGTERM is armed for only, ``sys.exit`` is a wrapper that notes a call
from the handler and then exits as it would (no cost elsewhere, nothing
replaced that the signal goes through). An op that returns normally after
that swallowed the handler's ``SystemExit``: a user's ``kill`` or a CI
cancellation no longer ends the program (``interrupt_prompt`` fails it).
Unless Python itself dropped it: a handler that runs inside a finalizer
(a ``__del__``, a weakref callback) has its ``SystemExit`` printed as
"Exception ignored" and discarded, which ``sys.unraisablehook`` (wrapped
for the op too) records, and the run is then unknown. A handler that is
not a Python function, or never calls ``sys.exit``, leaves it unknown.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

from conformance.ops.history import describe_error
from fixtures.harness_threads import start_harness_thread

#: seconds an armed signal waits for its op to start
ARM_WAIT = 120.0
#: the signals the harness sends, by name
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
#: what each signal raises in the main thread of a Python driver: SIGINT,
#: Python's KeyboardInterrupt; SIGTERM, Ray's SystemExit (ray.init's handler
#: calls sys.exit(15); inside ray.get/ray.wait Ray turns it into SystemExit(1))
RAISES = {"SIGINT": KeyboardInterrupt, "SIGTERM": SystemExit}


def ends_program(args: dict) -> bool:
    """The signal armed with ``args`` ends the user's program: SIGTERM, or a
    SIGINT the user does not catch (``caught=False``)."""
    return args.get("signal", "SIGINT") == "SIGTERM" or not args.get("caught", True)


def check_interrupts(ops) -> None:
    """A signal that ends the program must be armed for the scenario's last
    op: nothing of the user's program runs after it."""
    for k, op in enumerate(ops):
        if op.verb != "interrupt" or not ends_program(op.args):
            continue
        target = next((j for j in range(k + 1, len(ops)) if ops[j].verb == op.args["during"]),
                      None)
        if target != len(ops) - 1:
            raise ValueError(f"scenario error: op {k} ({op}) ends the program, so the op it "
                             f"is armed for must be the last op (it is {target})")


class Armed:
    """One signal armed for the next op with verb ``during``."""

    def __init__(self, args: dict):
        self.signal = args.get("signal", "SIGINT")
        if self.signal not in SIGNALS:
            raise ValueError(f"unknown signal {self.signal!r}; valid: {sorted(SIGNALS)}")
        self.during = args["during"]
        self.after = float(args.get("after", 0.5))
        self.ends_program = ends_program(args)
        self.op_i: int | None = None  # the op it was sent into
        self.sent_at: float | None = None  # monotonic, just before os.kill
        self.handled_at: float | None = None  # monotonic: our SIGINT handler ran (SIGTERM:
        # the process's Python handler called sys.exit, seen by the op's wrapper)
        self.in_op: bool | None = None  # our handler ran while the op ran (None: it never ran)
        self.handler: str | None = None  # SIGINT's at the send: "harness", or "other" (the
        # implementation replaced it); SIGTERM's: the Python handler that called
        # sys.exit ("file:function"), None when none did during the op
        self.dropped: str | None = None  # SIGTERM: Python discarded the handler's
        # SystemExit (raised in a finalizer: sys.unraisablehook), where
        self.not_sent: str | None = None  # why it was never sent
        self.error: BaseException | None = None  # the sending thread failed
        self.done = threading.Event()  # the sending thread ended
        self.op_started = threading.Event()  # the op it waits for began
        self.op_ended = threading.Event()  # ... and returned

    def record(self, raised: BaseException | None, out_at: float) -> dict:
        """What the end record of the op says about the signal."""
        out = {"signal": self.signal, "after": self.after, "ends_program": self.ends_program,
               "sent": self.sent_at is not None, "in_op": self.in_op, "handler": self.handler}
        if self.dropped is not None:
            out["dropped"] = self.dropped
        if self.sent_at is not None:
            out["returned_after"] = round(out_at - self.sent_at, 4)
            if self.handled_at is not None:
                out["handled_after"] = round(self.handled_at - self.sent_at, 4)
        if self.not_sent:
            out["not_sent"] = self.not_sent
        if self.error is not None:
            out["error"] = describe_error(self.error)
        if raised is not None:
            out["raised"] = f"{type(raised).__module__}.{type(raised).__qualname__}"
        return out


class Interrupts:
    """The driver's armed signals; see the module docstring."""

    def __init__(self, writer):
        self.writer = writer
        self.lock = threading.Lock()  # the send, against the op's end
        self.armed: list[Armed] = []  # not yet matched to an op
        self.current: Armed | None = None  # matched to the op running now
        self.pending: Armed | None = None  # a SIGINT sent, its handler not run yet
        self.window_open = False  # the main thread is inside the op's call
        self.uncaught: BaseException | None = None  # what ends the program, raised again at exit
        self._installed = False
        self._saved_exit: tuple | None = None  # (sys.exit, sys.unraisablehook) while wrapped

    # -- arming (the interrupt verb, main thread) -----------------------------------
    def arm(self, args: dict) -> dict:
        armed = Armed(args)
        if armed.signal == "SIGINT" and not self._installed:
            signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        self.armed.append(armed)
        start_harness_thread(self._deliver, "rlc-interrupt", args=(armed,))
        return {"armed": {"signal": armed.signal, "during": armed.during, "after": armed.after,
                          "ends_program": armed.ends_program}}

    def restore(self) -> None:
        """Python's own SIGINT handler again (the scenario's end: the exit behaves
        as a user's program's). Main thread."""
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._installed = False

    # -- the op (driver, main thread) ------------------------------------------------
    def op_starts(self, i: int, verb: str) -> None:
        """Before op ``i`` runs: the first signal armed for ``verb`` is now its."""
        armed = next((a for a in self.armed if a.during == verb), None)
        if armed is not None:
            self.armed.remove(armed)
            armed.op_i = i
        self.current = armed
        self.window_open = True
        if armed is not None:
            if armed.signal == "SIGTERM":
                self._watch_sigterm_handler(armed)
            armed.op_started.set()

    def op_ends(self) -> Armed | None:
        """Right after the op's call returned or raised: no signal is sent from
        here on; the op's signal (if any), its thread ended."""
        try:
            with self.lock:
                self.window_open = False
                armed, self.current = self.current, None
        finally:  # a SIGTERM handler running here must not leave the wrappers in place
            if self._saved_exit is not None:
                sys.exit, sys.unraisablehook = self._saved_exit
                self._saved_exit = None
        if armed is not None:
            armed.op_ended.set()
            armed.done.wait(5.0)  # it was waiting or is sending now: either ends at once
        return armed

    def interrupting(self, exc: BaseException) -> bool:
        """``exc``, raised in the running op, is what the op's signal raised."""
        armed = self.current
        return (armed is not None and armed.sent_at is not None
                and isinstance(exc, RAISES[armed.signal]))

    # -- the harness thread ----------------------------------------------------------
    def _deliver(self, armed: Armed) -> None:
        try:
            if not armed.op_started.wait(ARM_WAIT):
                armed.not_sent = f"no op {armed.during} started within {ARM_WAIT}s"
                return
            started = time.monotonic()
            if armed.op_ended.wait(armed.after):  # an offset into the op, not a synchronisation
                armed.not_sent = (f"op {armed.op_i} ({armed.during}) returned "
                                  f"{time.monotonic() - started:.3f}s in, before the signal "
                                  f"was due at {armed.after}s")
                return
            with self.lock:
                if self.current is not armed or not self.window_open:
                    armed.not_sent = f"op {armed.op_i} ({armed.during}) returned just before"
                    return
                armed.sent_at = time.monotonic()
                if armed.signal == "SIGINT":
                    self.pending = armed
                    armed.handler = "harness" if signal.getsignal(signal.SIGINT) == \
                        self._on_sigint else "other"
                self.writer.write({"phase": "signal", "i": armed.op_i, "signal": armed.signal,
                                   "after": armed.after, "ends_program": armed.ends_program})
                os.kill(os.getpid(), SIGNALS[armed.signal])
        except BaseException as exc:  # noqa: BLE001 - recorded with the op
            armed.error = exc
        finally:
            armed.done.set()

    def _watch_sigterm_handler(self, armed: Armed) -> None:
        """Until the op ends, note a call of ``sys.exit`` made by the process's
        Python SIGTERM handler (Ray's: ``sys.exit(signum)``), and a
        ``SystemExit`` Python discards as unraisable. Main thread, at the op's
        start; ``op_ends`` puts both back."""
        handler = getattr(signal.getsignal(signal.SIGTERM), "__code__", None)
        if handler is None:
            return
        real_exit, real_hook = sys.exit, sys.unraisablehook

        def exit(*args):
            if sys._getframe(1).f_code is handler and armed.handled_at is None:
                armed.handled_at = time.monotonic()
                armed.in_op = self.window_open and self.current is armed
                armed.handler = f"{handler.co_filename}:{handler.co_name}"
            return real_exit(*args)

        def unraisable(info):
            if isinstance(info.exc_value, SystemExit) and armed.handled_at is not None:
                armed.dropped = f"{info.err_msg or 'Exception ignored in'}: {info.object!r}"[:200]
            real_hook(info)

        self._saved_exit = (real_exit, real_hook)
        sys.exit, sys.unraisablehook = exit, unraisable

    def _on_sigint(self, signum, frame):
        """Python's default SIGINT behaviour, except for a SIGINT of ours that
        reaches the main thread after its op returned (recorded, not raised)."""
        armed, self.pending = self.pending, None
        if armed is None:
            raise KeyboardInterrupt
        armed.handled_at = time.monotonic()
        armed.in_op = self.window_open and self.current is armed
        if armed.in_op:
            raise KeyboardInterrupt
