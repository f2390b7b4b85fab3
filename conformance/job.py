"""The suite as a Ray job: ``python -m conformance job --address URL [-- SUITE ARGS]``.

Two halves, one per side of ``ray job submit``:

- ``submit_and_follow`` (the machine you submit from): checks that the
  cluster's job server answers with the token, submits this clone as the
  job's ``working_dir`` with the entrypoint below, prints the job's log as
  it comes, then takes the report out of the log (between two marker lines,
  so no filesystem is shared) and exits with the suite's exit status. Ctrl-C
  stops the job (the suite gets SIGINT, as a user's Ctrl-C, and its session
  end removes what its drivers left) and exits 130.
- ``run_in_job`` (``python -m conformance.job SUITE ARGS``, the entrypoint,
  on the head node with the cluster's Python): ``pytest conformance
  --ray-fixture external --ray-address $RAY_ADDRESS`` (Ray sets RAY_ADDRESS
  to the cluster's GCS for a job's entrypoint), then the report, gzipped and
  base64-encoded, between the markers, and the exit status.

The suite's drivers are started inside the job and inherit its runtime_env
(Ray's RAY_JOB_CONFIG_JSON_ENV_VAR): the cluster's workers import the suite
and the reference from the uploaded working_dir.

Ray's job client needs pieces of ``ray[default]`` the minimal wheel lacks
(pydantic for the job's status, aiohttp to follow its log): where they are
not importable, ``$RLC_JOBS_SITE`` (default ``<venv>/jobs-site``, installed by
``RLC_EXTRAS=jobs bash ci/setup.sh``) is put on this process's path. This
process starts no Ray runtime, so they cost nothing here.
"""
from __future__ import annotations

import base64
import gzip
import json
import os
import shlex
import subprocess
import sys
import uuid

from fixtures.rayenv import REPO_ROOT

BEGIN = "=== rlc-job: report begin ==="
END = "=== rlc-job: report end ==="
EXIT = "=== rlc-job: exit "
#: where the entrypoint writes the report, in the job's working_dir
REPORT_IN_JOB = os.path.join("reports", "job-conformance.json")
#: not uploaded with the clone: environments, history, reports, caches
# gitignore-style (Ray): "/reports" is the clone's reports/ only, not conformance/reports/
EXCLUDES = [".venv", ".venv-*", ".git", "/reports", "__pycache__", "*.pyc", ".pytest_cache"]
#: options the job sets itself
SET_BY_THE_JOB = ("--ray-fixture", "--ray-address", "--conformance-report")
#: options naming a file, which the job reads from its working_dir
FILE_OPTIONS = ("--scenarios-from", "--known-failures", "--shard-durations")
#: what a stop does to the entrypoint (Ray's supervisor reads both from the
#: job's runtime_env): SIGINT, as a user's Ctrl-C, and time for the suite's
#: session end to remove what its drivers left before Ray's SIGKILL
STOP_ENV = {"RAY_JOB_STOP_SIGNAL": "SIGINT", "RAY_JOB_STOP_WAIT_TIME_S": "60"}
JOBS_SITE = os.environ.get("RLC_JOBS_SITE") or os.path.join(sys.prefix, "jobs-site")
#: seconds to wait for a stopped job to end (Ray's 60 s, then its SIGKILL)
STOP_TIMEOUT = 90.0


class JobUsageError(RuntimeError):
    """Nothing was submitted: what is wrong and how to fix it, one message."""


# -- the entrypoint, inside the job -------------------------------------------

def run_in_job(suite_args: list[str]) -> int:
    """Run the suite on the cluster this job runs on; print the report
    between the markers; return pytest's exit status."""
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        print("conformance.job: RAY_ADDRESS is not set: run me as a Ray job's entrypoint "
              "(python -m conformance job --address ...)", file=sys.stderr)
        return 2
    report = os.path.abspath(REPORT_IN_JOB)
    os.makedirs(os.path.dirname(report), exist_ok=True)  # reports/ is not uploaded
    # Ray unpacks a working_dir once per content hash and reuses the directory:
    # a job submitted from an unchanged clone finds the last one's report here,
    # which must never come back as this run's
    if os.path.exists(report):
        os.remove(report)
    cmd = [sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider",
           "--ray-fixture", "external", "--ray-address", address,
           "--conformance-report", report, *suite_args]
    print(f"conformance.job: {shlex.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd)
    while True:
        try:
            status = proc.wait()
            break
        except KeyboardInterrupt:  # the job is being stopped: pytest got it too
            continue
    sys.stdout.write(report_block(report))
    print(f"{EXIT}{status} ===", flush=True)
    return status


def report_block(path: str) -> str:
    """The report at ``path`` between the markers (nothing if there is none)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    text = base64.b64encode(gzip.compress(data)).decode()
    lines = [text[i:i + 76] for i in range(0, len(text), 76)]
    return "\n".join([BEGIN, *lines, END, ""])


def read_report_block(log: str) -> dict | None:
    """The report printed between the markers in a job's log (None if absent)."""
    lines = log.splitlines()
    if BEGIN not in lines or END not in lines[lines.index(BEGIN):]:
        return None
    start = lines.index(BEGIN) + 1
    body = "".join(lines[start:lines.index(END, start)])
    return json.loads(gzip.decompress(base64.b64decode(body)))


def exit_status(log: str) -> int | None:
    """The suite's exit status the entrypoint printed (None if it did not)."""
    found = [line for line in log.splitlines() if line.startswith(EXIT)]
    return int(found[-1][len(EXIT):].split()[0]) if found else None


# -- the client, where the job is submitted from ------------------------------

def entrypoint(python: str, suite_args: list[str]) -> str:
    return shlex.join([python, "-m", "conformance.job", *suite_args])


def job_suite_args(suite_args: list[str], repo: str = str(REPO_ROOT)) -> list[str]:
    """The suite's arguments as the job runs them: the options the job sets
    itself refused, a file option's path made relative to the clone (the
    job's working_dir); a file outside the clone is not uploaded."""
    out, args = [], list(suite_args)
    while args:
        arg = args.pop(0)
        name = arg.split("=", 1)[0]
        if name in SET_BY_THE_JOB:
            raise JobUsageError(f"{name}: the job sets it (the cluster it runs on, its report "
                                "comes back to --report)")
        if name not in FILE_OPTIONS:
            out.append(arg)
            continue
        if "=" in arg:
            value = arg.split("=", 1)[1]
        elif args:
            value = args.pop(0)
        else:
            raise JobUsageError(f"{name} needs a file")
        path = os.path.realpath(value)
        if os.path.commonpath([path, os.path.realpath(repo)]) != os.path.realpath(repo):
            raise JobUsageError(f"{name} {value}: outside the clone ({repo}), which is what the "
                                "job uploads; put the file inside it")
        if not os.path.isfile(path):
            raise JobUsageError(f"{name} {value}: no such file")
        out += [name, os.path.relpath(path, os.path.realpath(repo))]
    return out


def _job_client_class():
    """Ray's JobSubmissionClient, with the pieces of ray[default] it needs."""
    from importlib.util import find_spec

    def usable():
        return all(find_spec(name) is not None for name in ("aiohttp", "pydantic"))
    if not usable() and os.path.isdir(JOBS_SITE):
        sys.path.insert(0, JOBS_SITE)
    if not usable():
        raise JobUsageError(
            "Ray's job client needs ray[default] (aiohttp, pydantic): install the jobs extra "
            f"(RLC_EXTRAS=jobs bash ci/setup.sh, into {JOBS_SITE}) or "
            "pip install 'ray[default]' here")
    from ray.job_submission import JobSubmissionClient

    return JobSubmissionClient


def connect(address: str):
    """A job client of the cluster's job server, in the cluster's auth mode
    (token mode where a token is found here, as for ``external``); one
    ``JobUsageError`` if it does not answer or refuses this process."""
    from ray.exceptions import AuthenticationError

    from fixtures import rayauth

    client_class = _job_client_class()
    try:
        mode = rayauth.external_mode()
    except rayauth.TokenError as exc:
        raise JobUsageError(f"--address {address}: {exc}") from None
    rayauth.use_mode(mode)
    try:
        client = client_class(address)
        client.list_jobs()
    except AuthenticationError:
        raise JobUsageError(rayauth.refused(f"--address {address}", mode)) from None
    except (ConnectionError, RuntimeError) as exc:
        raise JobUsageError(
            f"--address {address}: no Ray job server answers there ({exc}); it is the head's "
            "dashboard (`ray start --head --dashboard-host 127.0.0.1 --dashboard-port 8265`), "
            "which serves jobs only where the head's Ray has ray[default]") from None
    return client


def submit_and_follow(address: str, suite_args: list[str], report_path: str,
                      python: str = "python", out=sys.stdout) -> int:
    """Submit the suite, follow its log, write its report to ``report_path``;
    the suite's exit status (130 after Ctrl-C)."""
    args = job_suite_args(suite_args)
    client = connect(address)
    from ray.job_submission import JobStatus

    run_id = os.environ.get("RLC_RUN_ID") or f"rlc-job-{uuid.uuid4().hex[:8]}"
    # the run id names the job too: its processes and namespace say which job they are
    job_id = client.submit_job(
        entrypoint=entrypoint(python, args), submission_id=run_id,
        runtime_env={"working_dir": str(REPO_ROOT), "excludes": EXCLUDES,
                     "env_vars": {**STOP_ENV, "RLC_RUN_ID": run_id}},
        metadata={"rlc": "conformance"})
    print(f"conformance job: submitted {job_id} to {address}", file=sys.stderr, flush=True)
    try:
        _follow(client, job_id, out)
    except KeyboardInterrupt:
        return _stop(client, job_id, address, report_path)
    status = _wait_until_ended(client, job_id)
    log = client.get_job_logs(job_id)
    wrote = _write_report(log, report_path)
    code = exit_status(log)
    if status == JobStatus.STOPPED:
        print(f"conformance job: {job_id} was stopped before the suite ended"
              + (f" (the suite exited {code})" if code is not None else ""), file=sys.stderr)
        return 1
    if code is None:
        info = client.get_job_info(job_id)
        print(f"conformance job: {job_id} {status} before the suite could end: "
              f"{info.message}", file=sys.stderr)
        return 1
    if not wrote:
        # nothing to gate on: never a success, whatever the suite's status
        print(f"conformance job: {job_id} {status}, the suite exited {code} but its log holds "
              f"no report between the markers; rerun, or read the job's log: "
              f"ray job logs {job_id} --address {address}", file=sys.stderr)
        return code or 1
    print(f"conformance job: {job_id} {status}, the suite exited {code}; report: {report_path}",
          file=sys.stderr)
    return code


def _stop(client, job_id: str, address: str, report_path: str) -> int:
    """After Ctrl-C: stop the job, wait for it to end, write what report
    there is; 130. A second Ctrl-C stops the waiting, not the job's stop."""
    print(f"\nconformance job: Ctrl-C: stopping {job_id} (the suite removes what its "
          "drivers left; Ctrl-C again to stop waiting)", file=sys.stderr, flush=True)
    asked = False
    try:
        client.stop_job(job_id)
        asked = True
        status = _wait_until_ended(client, job_id)
        print(f"conformance job: {job_id} {status}", file=sys.stderr)
        _write_report(client.get_job_logs(job_id), report_path)
    except KeyboardInterrupt:
        state = (f"it was asked to stop; see: ray job status {job_id} --address {address}"
                 if asked else f"it may still run; stop it: ray job stop {job_id} "
                 f"--address {address}")
        print(f"\nconformance job: Ctrl-C again: not waiting for {job_id} to end ({state}); "
              "no report written", file=sys.stderr, flush=True)
    return 130


def _follow(client, job_id: str, out) -> None:
    """Print the job's log as it comes, without the report block."""
    import asyncio

    async def tail():
        inside = False
        async for chunk in client.tail_job_logs(job_id):
            for line in chunk.splitlines(keepends=True):
                if line.rstrip("\n") == BEGIN:
                    inside = True
                elif line.rstrip("\n") == END:
                    inside = False
                elif not inside:
                    out.write(line)
            out.flush()
    asyncio.run(tail())


def _wait_until_ended(client, job_id: str):
    from fixtures.wait import poll

    return poll(lambda: client.get_job_status(job_id), lambda s: s.is_terminal(),
                STOP_TIMEOUT, interval=0.5)


def _write_report(log: str, path: str) -> bool:
    doc = read_report_block(log)
    if doc is None:
        return False
    from conformance.reports import report

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    report.write(doc, path)
    return True


def main(args) -> int:
    """``python -m conformance job``."""
    suite_args = list(args.suite_args)
    if suite_args[:1] == ["--"]:
        suite_args = suite_args[1:]
    try:
        return submit_and_follow(args.address, suite_args, args.report, args.python)
    except JobUsageError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(run_in_job(sys.argv[1:]))
