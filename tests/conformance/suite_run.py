"""`pytest conformance ...` in a subprocess, as a user runs it (the tests of
the harness end to end)."""
import json
import os
import subprocess
import sys
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: what the test run itself set, which a user's shell has not
NOT_THE_USERS = ("RLC_MARKER", "RLC_RUN_MARKER", "PYTEST_XDIST_WORKER",
                 "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")


#: runs ARGV with SIGINT at its default: a process started from a shell's
#: background job inherits SIGINT ignored (POSIX, without job control) and
#: Python then never raises KeyboardInterrupt; a user's terminal does not
#: ignore it (measured: .ci/run launched with `setsid ... &` ignored the
#: Ctrl-C of test_external's interrupted run)
WITH_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
               "os.execv(sys.argv[1], sys.argv[1:])")


def suite(tmp_path, *args, run_id=None, env=None, **popen):
    """Start `pytest conformance ...` with its own run id (and ``env`` for
    its environment, default this one's), Ctrl-C working as in a terminal;
    return (proc, report path)."""
    report = tmp_path / f"report-{uuid.uuid4().hex[:6]}.json"
    env = {k: v for k, v in (os.environ if env is None else env).items()
           if k not in NOT_THE_USERS}
    env["RLC_RUN_ID"] = run_id or f"rlc-t{uuid.uuid4().hex[:8]}"
    cmd = [sys.executable, "-c", WITH_SIGINT, sys.executable, "-m", "pytest", "conformance",
           "-p", "no:cacheprovider", "-q", "--conformance-report", str(report), *args]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **popen), report


def verdicts(report) -> dict:
    doc = json.loads(report.read_text())
    return {s["id"]: s for s in doc["scenarios"]}
