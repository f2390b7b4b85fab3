"""The isolated driver: runs one scenario's operations and records the history.

Runs inside its own process (forked from the zygote; a peer driver is forked
from its driver, see ``conformance.peer``). It never judges: it executes,
times, probes and writes. A watchdog (``faulthandler.dump_traceback_later``)
dumps every thread's stack and ends the process if an operation passes its
deadline: the runner turns that into a "hang" verdict. The harness's own
probes run under a watchdog of their own, after the op's ``end`` record: a
probe that hangs is told apart from the implementation's op (an ``error``
verdict, not a ``hang``). A probe never fails open: what it could not observe
is recorded as unknown, never as "dead" or "gone".
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys
import time
import traceback

from conformance import verbs
from conformance.budgets import FINAL_PROBE_DEADLINE, INIT_DEADLINE, PEER_DEADLINE, \
    PROBE_DEADLINE, SETTLE_SECONDS, exit_bound
from conformance.history import HARNESS_EXIT_CODE, History, HistoryWriter, \
    describe_error, read_history
from conformance.peer import PeerStandby
from conformance.scenario import Op, Scenario
from conformance.targets import kind_of
from conformance.threads import new_threads, threads_now
from fixtures import procs
from fixtures.wait import poll

DEAD_STATES = {"DEAD"}


def ray_identity() -> str | None:
    """The connected Ray runtime as "gcs/session/job", without ever starting
    one: one definition, the reference's (``impl.runtime.runtime_identity``)."""
    from impl.runtime import runtime_identity

    identity = runtime_identity(strict=True)  # an error is the probe's, not "Ray is down"
    return None if identity is None else "/".join(str(x) for x in identity)


class Context:
    """What the verbs share: adapter, spec, fixture, components, actors."""

    def __init__(self, request: dict, peer_standby: PeerStandby | None = None):
        from conformance.adapter import Spec
        from conformance.registry import load_adapter

        self.request = request
        # The adapter first: its module may declare verbs the scenario uses.
        self.adapter = load_adapter(request["impl"])
        self.scenario = Scenario.from_dict(request["scenario"])
        self.spec = Spec.for_scenario(self.scenario)
        if request.get("namespace"):  # the run's own (``execute.run_namespace``)
            self.spec = self.spec.with_(namespace=request["namespace"])
        self.fixture = request["fixture"]
        self.actor_name = request.get("actor_name") or f"rlc-eval-{os.getpid()}"
        self.objects: dict = {}
        self.actors: dict = {}
        self.removed_nodes: list = []
        self.gcs_address = self.fixture.get("gcs_address")
        #: (GCS address, job id) of every runtime this driver was connected to
        #: (a user's ray_restart adds one; on local, with a GCS of its own)
        self.jobs: list = []
        self._observer = None
        self.peer_standby = peer_standby  # forked before Ray, for a scenario's peer op
        self.connected: set = set()  # components reached by name: they own no actor
        self.keep: list = []  # object refs of injected faults (a hung call)
        self.running_op: dict | None = None  # {"i", "verb"} while an op runs (armed kills)
        self.armed_kills: list = []  # kills waiting to land inside an op (verbs.kill `during`)
        self.last_known: dict = {}  # actor id -> last GCS record with a pid
        self.baseline_threads: list = []  # the threads before the scenario (threads.new_threads)

    # -- Ray facts, read without starting Ray --------------------------------
    def note_ray_started(self) -> None:
        import ray

        if ray.is_initialized():
            ctx = ray.get_runtime_context()
            pair = (ctx.gcs_address, ctx.get_job_id())
            if pair not in self.jobs:
                self.jobs.append(pair)
            self.gcs_address = self.gcs_address or ctx.gcs_address

    def init_ray_as_user(self) -> dict:
        """The user's own ``ray.init``: at the start for the ``user`` owner,
        and again after the user's ``ray.shutdown()`` (``ray_restart``)."""
        import ray

        fx = self.fixture
        # One namespace for every driver of a scenario, as a user running two
        # drivers against one named actor would configure them; or a bare
        # ray.init(), as most users write it (spec.ray_init).
        kwargs = {} if self.spec.ray_init == "bare" else {"namespace": self.spec.namespace}
        if fx["kind"] == "local":
            ray.init(**fx["init"], **kwargs)
        else:
            ray.init(address=fx["address"], **kwargs)
        self.note_ray_started()
        return {"gcs_address": ray.get_runtime_context().gcs_address,
                "job_id": ray.get_runtime_context().get_job_id()}

    @property
    def observer(self):
        if self._observer is None and self.gcs_address:
            from fixtures.gcs import GcsObserver

            self._observer = GcsObserver(self.gcs_address)
        return self._observer

    def actor_states(self, ids: list[str]) -> dict:
        """``{id: record}`` from the GCS. Fails closed: an actor the GCS does
        not answer for is ``{"state": "unknown", "error": why}``, never dead,
        except on the ``local`` fixture once the driver's own runtime is gone,
        where an actor whose process is gone is DEAD (``"source": "process"``)."""
        if not ids:
            return {}
        obs = self.observer
        try:
            if obs is None:
                raise RuntimeError("no GCS address known")
            found = obs.actor_states(ids)
        except Exception as exc:  # noqa: BLE001 - recorded, judged as unknown
            return self._states_by_process(ids, f"GCS query failed: {exc}")
        out = {}
        for i in ids:
            rec = found.get(i)
            if rec is None:
                out[i] = {"state": "unknown", "error": "not in the GCS actor table"}
                continue
            out[i] = rec
            if (rec.get("pid") or 0) > 1:
                self.last_known[i] = rec
        return out

    def runtime_gone(self, address: str | None = None) -> bool:
        """On the ``local`` fixture: the runtime at ``address`` (default: the
        one the driver's components were built in) is shut down (Ray is down,
        or the driver now runs another runtime)."""
        import ray

        if self.fixture.get("kind") != "local":
            return False
        if not ray.is_initialized():
            return True
        try:
            return ray.get_runtime_context().gcs_address != (address or self.gcs_address)
        except Exception:  # noqa: BLE001 - shutting down under us
            return not ray.is_initialized()

    def _states_by_process(self, ids: list[str], why: str) -> dict:
        runtime_gone = self.runtime_gone()
        out = {}
        for i in ids:
            pid = self.last_known.get(i, {}).get("pid")
            if runtime_gone and (not pid or not procs.pid_alive(pid)):
                out[i] = {"state": "DEAD", "source": "process", "pid": pid,
                          "note": "the driver's local runtime is shut down and "
                                  + (f"process {pid} is gone" if pid else "the actor never ran")}
            else:
                out[i] = {"state": "unknown", "pid": pid, "error": why}
        return out

    def describe_actors(self, component: str) -> list[dict]:
        """Record the actors (id, pid, node, state) of a component instance
        as created (``component`` is its target: ``collector.2``)."""
        handles = self.adapter.actors(kind_of(component), self.objects[component])
        ids = [h._actor_id.hex() for h in handles]
        states = self.actor_states(ids)
        infos = []
        for i in ids:
            st = states.get(i, {})
            infos.append(
                {"id": i, "pid": st.get("pid"), "node_id": st.get("node_id"),
                 "state": st.get("state")}
            )
        self.actors[component] = infos
        return infos

    def states_by_component(self, settle: str | None = None) -> dict:
        """Actor states per component; waits up to SETTLE_SECONDS for
        ``settle``'s actors to be dead (a kill is asynchronous)."""
        t0 = time.monotonic()

        def read():
            return {comp: self.actor_states([a["id"] for a in infos])
                    for comp, infos in self.actors.items()}

        def settled(out):  # an unknown state is waited on too, then reported as unknown
            return not settle or all(s.get("state") in DEAD_STATES
                                     for s in out.get(settle, {}).values())
        out = poll(read, settled, SETTLE_SECONDS)
        out["_settle_seconds"] = round(time.monotonic() - t0, 3)
        return out

    def leftovers(self) -> dict:
        """What is left now: the live actors of the driver's jobs and the
        implementation's threads (``verbs.check_clean``)."""
        return {"job_actors": job_actors(self), "threads": new_threads(self.baseline_threads)}

    def run_peer(self, op: Op) -> dict:
        """A second driver process (the peer standby) runs ``op.args["ops"]``."""
        sub = self.scenario.peer_of(op)
        workdir = os.path.dirname(self.request["paths"]["history"])
        path = lambda name: os.path.join(workdir, name)  # noqa: E731
        req = {
            "scenario": sub.to_dict(), "impl": self.request["impl"],
            "fixture": {"kind": "external", "address": self.gcs_address,
                        "gcs_address": self.gcs_address},
            "paths": {"history": path("peer-history.jsonl")}, "actor_name": self.actor_name,
            "namespace": self.spec.namespace,
        }
        with open(path("peer-request.json"), "w") as f:
            json.dump(req, f)
        timed_out = False
        try:
            exit_code = self.peer_standby.run(
                path("peer-request.json"), {"RAY_ADDRESS": self.gcs_address},
                path("peer-stdout.txt"), path("peer-stderr.txt"), PEER_DEADLINE)
        except TimeoutError:  # killed: its history says which op it was in
            exit_code, timed_out = None, True
        with open(path("peer-stderr.txt"), errors="replace") as f:
            stderr = f.read()
        peer = History(read_history(path("peer-history.jsonl")), expected_ops=len(sub.ops))
        where, at = peer.position()
        in_impl_op = where == "exit" or (where == "op" and verbs.VERBS[
            peer.begins[at]["op"]["verb"]].party != verbs.HARNESS)
        harness_raised = any(r.get("phase") == "harness-error" for r in peer.records)
        return {"exit_code": exit_code, "timed_out": timed_out, "stderr_tail": stderr[-3000:],
                "ops": peer.ops, "missing": peer.missing(),
                "stopped_in_harness": harness_raised or (bool(peer.missing()) and not in_impl_op)}


def run_op(ctx: Context, writer: HistoryWriter, i: int, op: Op, baseline: list[dict]) -> None:
    writer.write({"phase": "begin", "i": i, "op": op.to_dict(),
                  "deadline": verbs.deadline_of(op, ctx.adapter, ctx.spec)})
    verb = verbs.VERBS[op.verb]
    feature = verbs.optional_feature_of(op)
    if op.target and op.target not in ctx.objects and op.verb != "construct":
        status, result, error, duration = "skipped", {"reason": f"no {op.target}: never built"}, None, 0.0
    elif feature and feature not in ctx.adapter.features:
        status, error, duration = "unsupported", None, 0.0
        result = {"reason": f"{ctx.adapter.name} does not support {feature}",
                  "not_checked": list(verb.unchecks)}
    else:
        faulthandler.dump_traceback_later(verbs.deadline_of(op, ctx.adapter, ctx.spec), exit=True)
        t0 = time.monotonic()
        ctx.running_op = {"i": i, "verb": op.verb}
        try:
            result = verb.run(ctx, op) or {}
            status, error = "ok", None
        except BaseException as exc:  # noqa: BLE001 - a verdict, not a crash
            status, result, error = "raised", {}, describe_error(exc)
            if isinstance(exc, KeyboardInterrupt):
                raise
        finally:
            ctx.running_op = None
            duration = time.monotonic() - t0
            faulthandler.cancel_dump_traceback_later()
        if op.verb == "teardown" and status == "ok":
            calls = result.get("calls", [])
            bad = [c for c in calls if c["status"] != "ok"]
            if bad:
                status, error = "raised", bad[0]["error"]
    writer.write({
        "phase": "end", "i": i, "op": op.to_dict(), "status": status,
        "error": error, "duration": round(duration, 4), "result": result,
    })
    # The harness's probe, under its own watchdog: a hang here is the harness's.
    faulthandler.dump_traceback_later(PROBE_DEADLINE, exit=True)
    try:
        probe = probe_after(ctx, op, status, baseline)
    except Exception as exc:  # noqa: BLE001 - what needed it is judged unknown
        probe = {"error": describe_error(exc)}
    finally:
        faulthandler.cancel_dump_traceback_later()
    writer.write({"phase": "probe", "i": i, **probe})


def probe_after(ctx: Context, op: Op, status: str, baseline: list[dict]) -> dict:
    """What the harness observes right after an op: the Ray runtime, the
    implementation's threads (read first: a teardown must have joined them,
    not the settle wait below) and, after ops that change them, actor states."""
    probe = {"ray": ray_identity(), "threads": new_threads(baseline)}
    if op.verb == "construct" and status == "ok":
        probe["created"] = ctx.describe_actors(op.target)
    verb = verbs.VERBS[op.verb]
    if verb.probes_actors:
        # Wait for the component's actors to die, unless it owns none.
        settle = op.target if verb.settles and op.target not in ctx.connected else None
        probe["actors"] = ctx.states_by_component(settle=settle)
    if status == "raised" and (op.args.get("fail") or (
            op.verb == "construct" and op.args.get("may_fail"))):
        probe["job_actors"] = job_actors(ctx)  # a failed call leaves no actor behind
    return probe


def job_actors(ctx: Context) -> dict:
    """Every actor of this driver's jobs, in every runtime it was connected
    to: ``{"actors": {id: record}}``, or ``{"unknown": why}`` when a GCS that
    should answer does not. A job is the driver's if it recorded it or if the
    GCS lists this process as its driver (an implementation that started
    Ray, failed and shut it down leaves no other trace). On the ``local``
    fixture, a runtime that is shut down is read by process for the actors
    the driver knows (``"source": "process"``); an actor it never saw left a
    process behind, which the runner finds after the exit."""
    import psutil

    from fixtures.gcs import GcsObserver

    ctx.note_ray_started()
    addresses = list(dict.fromkeys([a for a, _ in ctx.jobs] + [ctx.gcs_address]))
    addresses = [a for a in addresses if a]
    if not addresses:
        return {"actors": {}, "source": "no Ray runtime seen by the driver"}
    found, sources = {}, []
    for address in addresses:
        recorded = [job for a, job in ctx.jobs if a == address]
        try:
            observer = ctx.observer if address == ctx.gcs_address else GcsObserver(address)
            jobs = set(recorded) | set(observer.jobs_of_driver(
                os.getpid(), since=psutil.Process().create_time()))
            for job in sorted(jobs):
                found.update(observer.job_actors(job))
            sources.append("gcs")
        except Exception as exc:  # noqa: BLE001
            if not ctx.runtime_gone(address):
                return {"unknown": f"GCS {address}: query for the driver's jobs and their "
                                   f"actors failed: {exc}"}
            known = [a["id"] for infos in ctx.actors.values() for a in infos]
            found.update(ctx._states_by_process(known, str(exc)))
            sources.append("process")
    return {"actors": found, "source": "+".join(sorted(set(sources)))}


def final_probe(ctx: Context, baseline_threads: list[dict]) -> dict:
    actors = ctx.states_by_component() if ctx.actors else {}
    return {
        "ray": ray_identity(),
        "threads": new_threads(baseline_threads),
        "actors": actors,
        "job_actors": job_actors(ctx),
        "zombie_pids": zombie_pids(ctx, actors),
        "removed_nodes": ctx.removed_nodes,
        "jobs": [job for _, job in ctx.jobs],  # read again by the parent after the exit
    }


def zombie_pids(ctx: Context, actors: dict) -> dict:
    """``{actor id: pid}`` of the actors the GCS reports DEAD whose worker
    process still runs (a zombie actor, ray-project/ray#52322). Waits up to
    SETTLE_SECONDS for them to go, since Ray reaps a killed worker
    asynchronously; the parent kills what is left (``after_exit``)."""
    dead = {}
    for comp, infos in ctx.actors.items():
        states = actors.get(comp, {})
        for a in infos:
            pid = ctx.last_known.get(a["id"], {}).get("pid") or a.get("pid")
            if pid and states.get(a["id"], {}).get("state") in DEAD_STATES:
                dead[a["id"]] = pid
    # a killed orphan may linger as a zombie: pid_alive says False
    return poll(lambda: {aid: pid for aid, pid in dead.items() if procs.pid_alive(pid)},
                lambda running: not running, SETTLE_SECONDS)


def main(request_path: str) -> int:
    """Run the scenario described by the request file; return the exit code."""
    with open(request_path) as f:
        request = json.load(f)
    # Before anything touches Ray (and before the history file is open).
    standby = PeerStandby(main) if any(
        o["verb"] == "peer" for o in request["scenario"]["ops"]) else None
    writer = HistoryWriter(request["paths"]["history"])
    try:
        ctx = run_scenario_ops(request, writer, standby)
    except Exception as exc:  # noqa: BLE001 - the harness's own failure: an `error` verdict
        writer.write({"phase": "harness-error", "error": describe_error(exc)})
        traceback.print_exc()
        raise SystemExit(HARNESS_EXIT_CODE) from exc
    # From here on the interpreter exits normally, with the components as the
    # scenario left them: atexit handlers and finalizers run, as for a user.
    # The watchdog stays armed: an exit that never finishes is a hang.
    # The "exiting" record comes first, so that a watchdog firing in the
    # user's ray.shutdown() below reads as an exit hang.
    bound = exit_bound(ctx.adapter)
    writer.write({"phase": "exiting", "bound": bound, "wall": time.time()})
    writer.close()
    faulthandler.dump_traceback_later(bound, exit=True)
    end_like_a_user(ctx.scenario)
    return 0


def run_scenario_ops(request: dict, writer: HistoryWriter, standby) -> Context:
    """Setup, every op with its probe, the final probe: the harness's part."""
    baseline = threads_now()
    ctx = Context(request, standby)
    ctx.baseline_threads = baseline
    scenario = ctx.scenario
    setup = {"phase": "setup", "owner": scenario.owner, "fixture": ctx.fixture.get("kind"),
             "pid": os.getpid(), "adapter": ctx.adapter.name,
             # the second driver's process: its jobs are the scenario's too
             "peer_pid": standby.pid if standby is not None else None}
    if scenario.owner == "user":
        faulthandler.dump_traceback_later(INIT_DEADLINE, exit=True)
        try:
            setup.update(ctx.init_ray_as_user())
        finally:
            faulthandler.cancel_dump_traceback_later()
    setup["ray"] = ray_identity()
    writer.write(setup)
    for i, op in enumerate(scenario.ops):
        run_op(ctx, writer, i, op, baseline)
    if ctx.armed_kills:  # e.g. a shrunk or hand-written scenario without its kill_landed
        raise RuntimeError(f"{len(ctx.armed_kills)} kill(s) armed with `during` were never "
                           "checked by a kill_landed op: whether they landed is unknown")
    if standby is not None:
        standby.close()
    faulthandler.dump_traceback_later(FINAL_PROBE_DEADLINE, exit=True)
    try:
        final = final_probe(ctx, baseline)
    except Exception as exc:  # noqa: BLE001 - what needed it is judged unknown
        final = {"error": describe_error(exc)}
    finally:
        faulthandler.cancel_dump_traceback_later()
    writer.write({"phase": "final", **final})
    return ctx


def end_like_a_user(scenario: Scenario) -> None:
    """A user who started Ray ends the program with ``ray.shutdown()``; other
    scenarios leave it to the interpreter exit (Ray's atexit hook, which also
    sleeps 0.5 s so that logs get printed). Runs after the final probe, under
    the exit watchdog: a crash or hang here is the scenario's."""
    import ray

    if scenario.owner == "user" and not scenario.tests_interpreter_exit and ray.is_initialized():
        ray.shutdown()


if __name__ == "__main__":
    faulthandler.enable()
    raise SystemExit(main(sys.argv[1]))
