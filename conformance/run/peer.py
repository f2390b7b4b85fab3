"""A second driver for scenarios with a ``peer`` operation, forked on demand.

The driver forks a standby copy of itself before it touches Ray (forking a
process connected to Ray is unsafe). When the scenario reaches its ``peer``
operation, the standby runs the peer's scenario as its own driver: a second
process with its own Ray connection, like a fresh ``python -m
conformance.run.driver`` but without a fresh interpreter's imports (~3 s of CPU
here). A standby that is never used exits when the driver closes it or exits.
"""
from __future__ import annotations

import json
import os
import sys
import traceback

import psutil

from fixtures.bootstrap import redirect_stdio


class PeerStandby:
    """The driver's side: ``run()`` once, or ``close()``."""

    def __init__(self, main):
        read_fd, self._write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._write_fd)
            _serve(read_fd, main)  # never returns
        os.close(read_fd)

    def run(self, request_path: str, env: dict, stdout: str, stderr: str,
            timeout: float) -> int:
        """Run ``main(request_path)`` in the standby; its exit code (-signal).

        Raises TimeoutError (after killing it) if it runs past ``timeout``.
        """
        message = {"request": request_path, "env": env, "stdout": stdout, "stderr": stderr}
        os.write(self._write_fd, (json.dumps(message) + "\n").encode())
        self.close()
        standby = psutil.Process(self.pid)
        try:
            return standby.wait(timeout)  # our child: its exit code, or -signal
        except psutil.TimeoutExpired:
            standby.kill()
            standby.wait()
            raise TimeoutError(f"peer driver still running after {timeout:.0f} s (killed)") from None

    def close(self) -> None:
        """Release the standby: an unused one exits at once."""
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None


def _serve(read_fd: int, main) -> None:
    """The standby's side: wait for a request, run it as a driver, exit."""
    with os.fdopen(read_fd) as pipe:
        line = pipe.readline()
    if not line:
        os._exit(0)
    message = json.loads(line)
    # The driver's own stdio set-up, minus its new session: the peer stays in
    # the driver's session, where the harness finds (and sweeps) it.
    redirect_stdio(message)
    # Fresh streams on fds 1 and 2, as a fresh interpreter would have (the
    # forked sys.stdout may be anything, e.g. pytest's capture).
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    os.environ.update(message["env"])
    try:
        code = main(message["request"])
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # noqa: BLE001 - like an uncaught exception in a script
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0)
