"""Removing actors the suite's drivers left on a cluster that outlives them.

Only actors of the suite's own jobs get here (``conformance.cluster.after_exit``
finds them), and each is removed by its exact identity, never by a pattern:

1. A cleanup driver (``python -m conformance.cluster.cleanup REQUEST``, connected
   with ``ray.init(address=...)``: a short job of its own) removes each one:
   - a named actor: ``ray.get_actor(name, namespace=...)``, checked to be the
     recorded actor id, then ``ray.kill(handle, no_restart=True)``;
   - an unnamed detached actor whose handle its driver recorded
     (``driver.pickled_handle``): that handle, checked to be the actor's,
     then ``ray.kill(handle, no_restart=True)``;
   - any other unnamed actor: Ray 2.60 has no public way to kill an actor by id
     without a handle, and no way to get one (measured: the private
     ``core_worker.get_actor_handle(id)`` aborts the process with "Check
     failed" for another job's actor; the GCS's KillActorViaGcs RPC needs
     grpcio, which the minimal ``ray`` wheel does not ship). A zero-CPU task
     pinned to the actor's node SIGKILLs the actor's worker pid there, after
     checking it is a ``ray::<Class>`` worker (``procs.ray_worker_refusal``).
2. The GCS is read until each actor is DEAD. A SIGKILLed actor with
   ``max_restarts`` comes back (measured: RESTARTING, then ALIVE with a new
   pid, within a second): it is live, so it is waited on, never taken for
   removed.
3. Fallback, for what is still alive and runs on this machine (the cleanup
   driver could not connect, the kill did not take, the actor restarted):
   SIGKILL of its current pid (read again from the GCS), with the same
   check, again each time it comes back, at most ``RESTART_KILLS`` times.
   Whatever is alive after that is reported as left, with why.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from fixtures.procs import ray_worker_refusal

#: seconds for the cleanup driver (connect, kill, disconnect); measured ~2 s
CLEANUP_DEADLINE = 60.0
#: seconds to wait for the GCS to report a removed actor DEAD
DEAD_WAIT = 10.0
#: SIGKILLs of a restarting actor's current worker before it is reported left
RESTART_KILLS = 3


def remove_actors(fixture: dict, actors: dict, env: dict, workdir: str,
                  handles: dict | None = None) -> dict:
    """Remove ``actors`` (``{id: GCS record}``, all of the suite's jobs) from
    the cluster of ``fixture`` (``info()``); ``env``: the variables of a
    driver of that fixture; ``handles``: ``{id: pickled handle}`` its drivers
    recorded. ``{"removed": {id: how}, "left": {id: state}}``."""
    from conformance.judge.oracles import LIVE_STATES
    from conformance.ops.verbs import HarnessError, check_signalable
    from fixtures.gcs import GcsObserver
    from fixtures.rayenv import full_env
    from fixtures.wait import poll

    if not actors:
        return {}
    os.makedirs(workdir, exist_ok=True)
    request = os.path.join(workdir, "cleanup-request.json")
    result = os.path.join(workdir, "cleanup-result.json")
    with open(request, "w") as f:
        json.dump({"address": fixture["address"], "result": result,
                   "actors": {aid: {**rec, "handle": (handles or {}).get(aid)}
                              for aid, rec in actors.items()}}, f)
    how = {}
    with open(os.path.join(workdir, "cleanup-output.txt"), "w") as out:
        try:
            subprocess.run([sys.executable, "-m", "conformance.cluster.cleanup", request], env=full_env(env),
                           cwd=workdir, stdout=out, stderr=subprocess.STDOUT,
                           timeout=CLEANUP_DEADLINE, check=False)
            with open(result) as f:
                how = json.load(f)
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            how = {aid: f"cleanup driver failed: {type(exc).__name__}: {exc}" for aid in actors}
    observer = GcsObserver(fixture["gcs_address"])

    def live():
        try:
            states = observer.actor_states(list(actors))
        except Exception as exc:  # noqa: BLE001 - reported as left, unknown
            return {aid: {"state": f"unknown ({exc})"} for aid in actors}
        return {aid: rec for aid, rec in states.items() if rec["state"] in LIVE_STATES}

    left = poll(live, lambda found: not found, DEAD_WAIT)
    for _ in range(RESTART_KILLS):  # the fallback: a worker on this machine
        if not left:
            break
        for aid, rec in left.items():
            pid = rec.get("pid") or actors[aid].get("pid")  # a restarted actor's new worker
            try:
                check_signalable(pid, actors[aid].get("class_name"))
                os.kill(pid, signal.SIGKILL)
                how[aid] = f"{how.get(aid)}; then SIGKILL to pid {pid} here"
            except (HarnessError, OSError) as exc:
                how[aid] = f"{how.get(aid)}; not signalled here: {exc}"
        left = poll(live, lambda found: not found, DEAD_WAIT)
    for aid, rec in left.items():
        if rec.get("pid") and rec.get("pid") != actors[aid].get("pid"):
            how[aid] = f"{how.get(aid)}; it came back each time (restarted: max_restarts)"
    return {"removed": {aid: how.get(aid) for aid in actors if aid not in left},
            "left": {aid: rec["state"] for aid, rec in left.items()},
            **({"how_left": {aid: how.get(aid) for aid in left}} if left else {})}


def sigkill_actor_worker(pid: int, class_name: str | None) -> str:
    """Runs on the actor's node, as a task of the cleanup driver (pickled by
    value with ``ray_worker_refusal``: the suite need not be installed there)."""
    refusal = ray_worker_refusal(pid, class_name)
    if refusal is not None:
        return f"not signalled: {refusal}"
    os.kill(pid, signal.SIGKILL)
    return f"SIGKILL to its worker (pid {pid}) on its node"


def _remove_one(ray, aid: str, rec: dict) -> str:
    if rec.get("handle") and not rec.get("name"):
        import base64

        handle = ray.cloudpickle.loads(base64.b64decode(rec["handle"]))
        # private: a handle's actor id has no public accessor in Ray 2.60 (as below)
        if handle._actor_id.hex() != aid:
            return f"not killed: the recorded handle is of actor {handle._actor_id.hex()[:8]}"
        ray.kill(handle, no_restart=True)
        return "ray.kill through the handle its driver recorded"
    if rec.get("name"):
        handle = ray.get_actor(rec["name"], namespace=rec.get("namespace"))
        # private: a handle's actor id has no public accessor in Ray 2.60 (the
        # state API that lists ids needs the dashboard, absent from the minimal
        # wheel); the check keeps a name reused since from being killed
        if handle._actor_id.hex() != aid:
            return (f"not killed: {rec['name']!r} in namespace {rec.get('namespace')!r} now "
                    f"names actor {handle._actor_id.hex()[:8]}, not this one")
        ray.kill(handle, no_restart=True)
        return f"ray.kill of {rec['name']!r} in namespace {rec.get('namespace')!r}"
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0, max_retries=0)(sigkill_actor_worker).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(rec["node_id"], soft=False))
    return ray.get(task.remote(rec.get("pid"), rec.get("class_name")), timeout=30)


def main(request_path: str) -> int:
    """The cleanup driver: remove each actor of the request, write how."""
    import ray
    from ray import cloudpickle

    from fixtures import procs

    with open(request_path) as f:
        request = json.load(f)
    for module in (sys.modules[__name__], procs):
        cloudpickle.register_pickle_by_value(module)
    done = {}
    ray.init(address=request["address"], log_to_driver=False)
    try:
        for aid, rec in request["actors"].items():
            try:
                done[aid] = _remove_one(ray, aid, rec)
            except Exception as exc:  # noqa: BLE001 - reported, the GCS decides
                done[aid] = f"failed: {type(exc).__name__}: {str(exc)[:200]}"
    finally:
        with open(request["result"], "w") as f:
            json.dump(done, f)
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
