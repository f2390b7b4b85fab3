"""A driver with one fault of the harness injected: ``main(fault, request_path)``.

Spawned in place of ``conformance.run.driver.main`` (``run_scenario(entry=...)``)
by ``test_honesty.py``. Each fault breaks the harness, never the
implementation, so the verdict must be neither ``pass`` nor blamed on the
implementation.
"""
import os
import signal
import time

from conformance.run import driver
from conformance.ops.history import HistoryWriter
from fixtures.gcs import GcsObserver

#: a short probe deadline, so that a hanging probe ends the test in seconds
PROBE_DEADLINE = 20.0  # > the probe's settle wait (5 s) and a refused GCS connect


def _after_construction(func):
    """``func`` once the scenario's components exist (their probes then use it)."""
    def patched(self, *args, **kwargs):
        if os.environ.get("RLC_FAULT_ARMED"):
            return func(self, *args, **kwargs)
        return ORIGINAL_ACTOR_STATES(self, *args, **kwargs)
    return patched


ORIGINAL_ACTOR_STATES = GcsObserver.actor_states
ORIGINAL_PROBE_AFTER = driver.probe_after


def _arm_on_teardown(op):
    if op.verb == "teardown":
        os.environ["RLC_FAULT_ARMED"] = "1"


def _probe_after(fault):
    def probe_after(ctx, op, status, *rest):
        _arm_on_teardown(op)
        if os.environ.get("RLC_FAULT_ARMED"):
            if fault == "probe-raises":
                raise RuntimeError("injected: the probe raised")
            if fault == "exit-0":
                os._exit(0)
        return ORIGINAL_PROBE_AFTER(ctx, op, status, *rest)
    return probe_after


def _raise(self, ids):
    raise RuntimeError("injected: the GCS observer raised")


def _hang(self, ids):
    time.sleep(3600)


def _kill_without_sigkill(kill):
    def patched(pid, sig):
        if sig == signal.SIGKILL:
            return None  # the fault "lands" nowhere
        return kill(pid, sig)
    return patched


def _kill_without_signals_to_self(kill):
    def patched(pid, sig):
        if pid == os.getpid():
            return None  # the harness's SIGINT to the driver is lost
        return kill(pid, sig)
    return patched


class CorruptingWriter(HistoryWriter):
    """Writes a torn JSON line before the third record."""

    def write(self, record):
        self.count = getattr(self, "count", 0) + 1
        if self.count == 3:
            self._f.write('{"phase": "end", "i": \n')
        super().write(record)


def main(fault, request_path):
    driver.PROBE_DEADLINE = PROBE_DEADLINE
    driver.probe_after = _probe_after(fault)
    if fault == "observer-raises":
        GcsObserver.actor_states = _after_construction(_raise)
    elif fault == "observer-hangs":
        GcsObserver.actor_states = _after_construction(_hang)
    elif fault == "gcs-unreachable":
        original_init = GcsObserver.__init__

        def unreachable(self, gcs_address, timeout=5.0):
            original_init(self, "127.0.0.1:9", timeout)  # the discard port: refused
        GcsObserver.__init__ = unreachable
    elif fault == "kill-fails":
        os.kill = _kill_without_sigkill(os.kill)
    elif fault == "signal-lost":
        os.kill = _kill_without_signals_to_self(os.kill)
    elif fault == "corrupt-line":
        driver.HistoryWriter = CorruptingWriter
    elif fault == "step-hang-not-landed":
        import tempfile

        from conformance import envs

        nowhere = tempfile.mkdtemp(prefix="rlc-no-env-looks-here-")
        envs.hang_flag = lambda pid: os.path.join(nowhere, str(pid))  # no env reads it
    elif fault == "race-not-set-up":
        from conformance.ops import threads, verbs

        verbs.IN_CALL_WAIT = 1.0
        threads.inside_ray = lambda skip=None: []  # the thread never seen inside Ray
    return driver.main(request_path)
