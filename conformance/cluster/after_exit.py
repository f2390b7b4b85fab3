"""What a driver leaves on a cluster that outlives it, found and removed.

On the ``local`` fixture the driver's runtime ends with the driver (the
runner finds any process left). A driver *connected* to a running cluster
(``multinode``, ``external``: the user's ``ray.init(address=...)``) is
different: ``ray.shutdown()`` or the exit only disconnects it, Ray ends its
jobs' non-detached actors (asynchronously), and detached actors outlive it.

The suite's jobs are the jobs its drivers (and their peers) ran: the ones
they recorded, and every job the GCS lists with one of their pids as its
driver, started while that process lived. Only actors of those jobs are ever
removed (``conformance.cluster.cleanup``: by id, name and namespace):

- after each driver (``actors_after_exit``): what it left alive is the
  evidence of ``no_actor_outlives_driver``, then removed, so that the next
  scenario starts clean;
- at the session's end (``Ledger.sweep``, also after Ctrl-C: the session
  runs it once its drivers are killed): whatever any of its drivers left on
  a cluster the suite did not start (``external``), e.g. a driver
  interrupted before its own check.

It also kills the zombie actors the driver's final probe found (Ray reports
them DEAD, their processes run on: ray-project/ray#52322; on a graceful exit
blocked by a non-daemon thread such a process survived even the local
runtime's shutdown, measured on Ray 2.60).
"""
from __future__ import annotations

import json
import os
import sys
import time
import weakref

from conformance.cluster.cleanup import remove_actors
from conformance.judge.oracles import LIVE_STATES

#: seconds Ray may take to end a departed driver's non-detached actors (it
#: takes 0.05-0.3 s after a connected driver's ray.shutdown(), measured)
REAP_WAIT = 10.0


def suite_jobs(observer, recorded, pids, since, until=None) -> list[str]:
    """The jobs of the suite's processes ``pids`` (lived from ``since`` to
    ``until``, epoch seconds), plus the ``recorded`` ones."""
    listed = observer.jobs()
    found = set(recorded or ())
    for pid in pids:
        found.update(observer.jobs_of_driver(pid, since, until, jobs=listed))
    return sorted(found)


def recorded_handles(records) -> dict:
    """``{actor id: pickled handle}`` of the detached actors a driver's
    history recorded as created (``driver.pickled_handle``)."""
    return {a["id"]: a["handle"] for r in records if r.get("phase") == "probe"
            for a in r.get("created") or [] if a.get("handle")}


def actors_after_exit(fixture: dict, final: dict | None, pids: list, since: float,
                      until: float, cleanup_env: dict, workdir: str, handles=None) -> dict:
    """``{"actors": {id: record}, "jobs": [...], ...removed}``: the live
    actors of the driver's jobs (``pids``: the driver and its peer), then
    removed (``handles``: ``recorded_handles``); ``{"unknown": why}``; or
    ``{}`` where nothing can outlive the driver (``local``) or no driver
    ever ran."""
    from fixtures.gcs import GcsObserver
    from fixtures.wait import poll

    pids = [p for p in pids if p]
    if fixture.get("kind") == "local" or not pids or not fixture.get("gcs_address"):
        return {}
    observer = GcsObserver(fixture["gcs_address"])
    try:
        jobs = suite_jobs(observer, (final or {}).get("jobs"), pids, since, until)
    except Exception as exc:  # noqa: BLE001 - judged unknown
        return {"unknown": f"GCS job query after the driver's exit failed: {exc}"}

    def live():
        found = {}
        for job in jobs:
            found.update({aid: rec for aid, rec in observer.job_actors(job).items()
                          if rec["state"] in LIVE_STATES})
        return found

    try:
        # Only detached actors may remain once Ray has reaped the others;
        # whatever is alive after REAP_WAIT is reported. A query that fails is
        # unknown at once, never "nothing left".
        left = poll(live, lambda found: all(r.get("detached") for r in found.values()),
                    REAP_WAIT)
    except Exception as exc:  # noqa: BLE001 - judged unknown
        return {"unknown": f"GCS query after the driver's exit failed: {exc}"}
    return {"actors": left, "jobs": jobs,
            **remove_actors(fixture, left, cleanup_env, workdir, handles)}


class Ledger:
    """The drivers one session ran on clusters it did not start, appended to
    ``<session tmp>/ledger.jsonl`` as they start and exit: the session's
    close sweeps from it (``sweep``), and so does the run's controller once
    its workers are gone, however they ended (``sweep_ledgers``: a worker
    killed before its close leaves its file behind)."""

    FILE = "ledger.jsonl"
    _by_session: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def __init__(self, session):
        self.path = os.path.join(session.tmpdir, self.FILE)
        self.pids: set = set()
        session.on_close(self.sweep)

    @classmethod
    def of(cls, session) -> "Ledger":
        if session not in cls._by_session:
            cls._by_session[session] = cls(session)
        return cls._by_session[session]

    def _write(self, record: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")

    def spawned(self, fixture: dict, cleanup_env: dict, pid: int, since: float,
                history_path: str) -> None:
        """Note a driver of ``fixture``, if the suite did not start it (``external``)."""
        if fixture.get("kind") == "external":
            self.pids.add(pid)
            self._write({"spawned": pid, "fixture": fixture, "env": cleanup_env,
                         "since": since, "history": history_path})

    def exited(self, pid: int, peer_pid: int | None, jobs) -> None:
        """Driver ``pid`` exited and was checked: its peer and its jobs."""
        if pid in self.pids:
            self._write({"exited": pid, "peer_pid": peer_pid, "jobs": list(jobs or ()),
                         "until": time.time()})

    def sweep(self) -> dict:
        return sweep_ledgers([self.path], os.path.join(os.path.dirname(self.path), "sweep"))


def _drivers(paths) -> list[dict]:
    """The drivers of the ledger files: ``{fixture, env, pids, since, until, jobs}``."""
    from conformance.ops.history import read_history

    drivers = []
    for path in paths:
        try:
            with open(path) as f:
                records = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError):
            continue
        by_pid = {}
        for rec in records:
            if "spawned" in rec:
                by_pid[rec["spawned"]] = {**rec, "pids": {rec["spawned"]}, "until": None,
                                          "jobs": set()}
            elif rec.get("exited") in by_pid:
                entry = by_pid[rec["exited"]]
                entry["until"] = rec["until"]
                entry["pids"].add(rec["peer_pid"])
                entry["jobs"].update(rec["jobs"])
        for entry in by_pid.values():  # a peer of a driver interrupted before its check
            records = read_history(entry["history"]).records
            setup = next((r for r in records if r.get("phase") == "setup"), {})
            entry["pids"] = (entry["pids"] | {setup.get("peer_pid")}) - {None}
            entry["handles"] = recorded_handles(records)
            drivers.append(entry)
    return drivers


def sweep_ledgers(paths, workdir: str) -> dict:
    """Remove what the drivers of the ledger files left alive, cluster by
    cluster; one line on stderr for a cluster where there was anything.
    ``{address: result}``."""
    from fixtures.gcs import GcsObserver

    by_cluster: dict = {}
    for entry in _drivers(paths):
        by_cluster.setdefault(entry["fixture"]["gcs_address"], []).append(entry)
    results = {}
    for gcs_address, entries in by_cluster.items():
        fixture = entries[0]["fixture"]
        observer = GcsObserver(gcs_address)
        try:
            listed = observer.jobs()
            jobs, handles = set(), {}
            for e in entries:
                jobs.update(e["jobs"])
                handles.update(e["handles"])
                for pid in e["pids"]:
                    jobs.update(observer.jobs_of_driver(pid, e["since"], e["until"], jobs=listed))
            left = {aid: rec for aid, rec in observer.all_actors().items()
                    if rec["job_id"] in jobs and rec["state"] in LIVE_STATES}
            result = remove_actors(fixture, left, entries[0]["env"], workdir, handles) \
                if left else {}
        except Exception as exc:  # noqa: BLE001 - reported, the closing goes on
            result = {"error": f"{type(exc).__name__}: {exc}"}
        results[gcs_address] = result
        if result:
            print(f"conformance: session end, cluster {fixture['address']}: "
                  f"{_describe(result)}", file=sys.stderr, flush=True)
    return results


def sweep_run_ledgers(run_marker: str) -> dict:
    """The controller's sweep (``fixtures.session.sweep_run``): every ledger
    of the run's sessions still on disk."""
    import glob

    return sweep_ledgers(sorted(glob.glob(f"/tmp/{run_marker}-*/{Ledger.FILE}")),
                         f"/tmp/{run_marker}-sweep")


def _describe(result: dict) -> str:
    if "error" in result:
        return f"could not check what the suite's drivers left there: {result['error']}"
    removed, left = result.get("removed") or {}, result.get("left") or {}
    text = f"removed {len(removed)} actor(s) the suite's drivers left alive"
    if left:
        text += f"; STILL ALIVE: {', '.join(f'{a} ({s})' for a, s in sorted(left.items()))}"
    return text


def kill_zombies(final: dict | None) -> list:
    """SIGKILL the worker of each zombie actor of the final probe
    (``zombie_pids``); the pids killed."""
    import signal

    from conformance.ops.verbs import HarnessError, check_signalable

    zombies = (final or {}).get("zombie_pids")
    if not isinstance(zombies, dict):
        return []
    killed = []
    for pid in zombies.values():
        try:  # a Ray worker on this machine; otherwise not ours to signal (reported)
            check_signalable(pid)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (HarnessError, OSError):
            pass
    return killed
