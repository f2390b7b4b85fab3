"""What a driver leaves on a cluster that outlives it.

On the ``local`` fixture the driver's runtime ends with the driver (the
runner finds any process left). A driver *connected* to a running cluster
(``multinode``, ``external``: the user's ``ray.init(address=...)``) is
different: ``ray.shutdown()`` or the exit only disconnects it, Ray ends its
jobs' non-detached actors (asynchronously), and detached actors outlive it.
This module reads, from the parent after the driver exited, the actors of the
driver's jobs that are still alive, and then kills them by pid (they are the
suite's: created by its driver's jobs), so the next scenario starts clean.
It also kills the zombie actors the driver's final probe found (Ray reports
them DEAD, their processes run on: ray-project/ray#52322; on a graceful exit
blocked by a non-daemon thread such a process survived even the local
runtime's shutdown, measured on Ray 2.60).
"""
from __future__ import annotations

from conformance.oracles import LIVE_STATES

#: seconds Ray may take to end a departed driver's non-detached actors (it
#: takes 0.05-0.3 s after a connected driver's ray.shutdown(), measured)
REAP_WAIT = 10.0


def actors_after_exit(fixture: dict, final: dict | None, driver_pid: int | None) -> dict:
    """``{"actors": {id: record}}`` of the live actors of the driver's jobs
    (the ones it recorded, and every job the GCS lists with the driver's pid
    as its driver), ``{"unknown": why}``, or ``{}`` where nothing can outlive
    the driver (``local``) or no driver ever ran."""
    from fixtures.gcs import GcsObserver
    from fixtures.wait import poll

    if fixture.get("kind") == "local" or driver_pid is None or not fixture.get("gcs_address"):
        return {}
    observer = GcsObserver(fixture["gcs_address"])
    try:
        jobs = sorted(set((final or {}).get("jobs") or ()) | set(observer.jobs_of_driver(driver_pid)))
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
    return {"actors": left, "killed": _kill(left.values())}


def kill_zombies(final: dict | None) -> list:
    """SIGKILL the worker of each zombie actor of the final probe
    (``zombie_pids``); the pids killed."""
    zombies = (final or {}).get("zombie_pids")
    if not isinstance(zombies, dict):
        return []
    return _kill([{"pid": pid} for pid in zombies.values()])


def _kill(records) -> list:
    """SIGKILL each actor's worker, if it is a ``ray::`` worker (of the
    record's class, when it names one) on this machine; the pids killed."""
    import os
    import signal

    from conformance.verbs import HarnessError, check_signalable

    killed = []
    for rec in records:
        try:
            check_signalable(rec.get("pid"), rec.get("class_name"))
            os.kill(rec["pid"], signal.SIGKILL)
            killed.append(rec["pid"])
        except (HarnessError, OSError):
            pass  # not ours to signal (another machine, gone by now): reported, not killed
    return killed
