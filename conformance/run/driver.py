"""The isolated driver: runs one scenario's operations and records the history.

Runs inside its own process (forked from the zygote; a peer driver is forked
from its driver, see ``conformance.run.peer``). It never judges: it executes,
times, probes and writes. A watchdog (``faulthandler.dump_traceback_later``)
dumps every thread's stack and ends the process if an operation passes its
deadline: the runner turns that into a "hang" verdict. The harness's own
probes run under a watchdog of their own, after the op's ``end`` record: a
probe that hangs is told apart from the implementation's op (an ``error``
verdict, not a ``hang``). A probe never fails open: what it could not observe
is recorded as unknown, never as "dead" or "gone".
"""
from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import sys
import time
import traceback

from conformance.ops import verbs
from conformance.ops.budgets import FINAL_PROBE_DEADLINE, INIT_DEADLINE, PEER_DEADLINE, \
    PROBE_DEADLINE, RESOURCES_DEADLINE, SETTLE_SECONDS, ZOMBIE_GRACE, exit_bound
from conformance.ops.history import ANY_NODE, HARNESS_EXIT_CODE, History, HistoryWriter, \
    describe_error, read_history
from conformance.ops.interrupts import Interrupts, check_interrupts
from conformance.ops.log_capture import LogCapture, WarningCapture
from conformance.run.peer import PeerStandby
from conformance.ops.runtime_watch import RuntimeWatch, ray_identity
from conformance.ops.scenario import Op, Scenario
from conformance.ops.targets import kind_of
from conformance.ops.threads import new_threads, threads_now
from fixtures import procs
from fixtures.harness_threads import Unanswered, call_within
from fixtures.runner import STDERR_CAP
from fixtures.wait import poll

DEAD_STATES = {"DEAD"}


def node_resources() -> dict:
    """Per live node: ``{"available": {...}, "total": {...}}``, the numbers
    ``ray.available_resources()`` and ``ray.cluster_resources()`` sum (their
    own source, ``ray._private.state``). Private on purpose: the public
    functions sum over the live nodes, and a node the harness removed
    (``kill how=remove_node``) drops out of that sum when the GCS declares it
    dead, ~3 s after the kill on the multinode fixture (its health check,
    ``fixtures.clusters.MultinodeCluster``), possibly between two readings.
    Bounded (``RESOURCES_DEADLINE``): a reading that did not return raises
    ``Unanswered``, which ends the driver as the harness's failure (``main``)."""
    def read():
        from ray._private import state

        available = state.available_resources_per_node()
        return {node: {"available": available.get(node, {}), "total": total}
                for node, total in state.total_resources_per_node().items()}
    return call_within(read, RESOURCES_DEADLINE, "rlc-node-resources")


def ray_processes(pids_to_skip=()) -> list[dict]:
    """The Ray processes below this driver (a local runtime it started: GCS,
    raylet, agents, workers): pid, name, command line, start time."""
    import psutil

    out = []
    for proc in psutil.Process().children(recursive=True):
        if proc.pid in pids_to_skip:
            continue
        info = procs.describe(proc)
        if info["name"] in ("gcs_server", "raylet") or info["cmdline"].startswith("ray::") \
                or "/ray/" in info["cmdline"]:
            try:
                out.append({**info, "create_time": proc.create_time()})
            except psutil.Error:
                continue
    return out


def pickled_handle(handle) -> str:
    """A detached actor's handle, pickled (base64): it lives on after this
    driver, and the harness's cleanup driver loads it to ``ray.kill`` the
    actor for good (``no_restart=True``), whatever its ``max_restarts``
    (``conformance.cluster.cleanup``). Measured on Ray 2.60: a handle pickled by the
    creating driver loads in another driver after the creator exited, and
    its kill leaves the actor DEAD. Only detached actors: Ray counts no
    references to them, so pickling their handle changes nothing of their
    life (an owned actor's handle pickled out of band would keep it alive)."""
    import base64

    from ray import cloudpickle

    return base64.b64encode(cloudpickle.dumps(handle)).decode()


class Context:
    """What the verbs share: adapter, spec, fixture, components, actors."""

    def __init__(self, request: dict, peer_standby: PeerStandby | None = None):
        from conformance.adapter import Spec
        from conformance.adapters.registry import load_adapter

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
        self.occupiers: list = []  # harness actors holding the cluster's CPUs (verbs.occupy)
        #: target -> a build still running in its thread (construct wait=False; verbs.join_build)
        self.pending_builds: dict = {}
        self.last_known: dict = {}  # actor id -> last GCS record with a pid
        #: runtime identity -> the Ray processes below the driver while it ran
        #: (a local runtime the driver's process started; read after constructs)
        self.runtime_processes: dict = {}
        self.last_runtime: str | None = None  # the identity in the last probe
        self.baseline_threads: list = []  # the threads before the scenario (threads.new_threads)
        self.last_op: int | None = None  # the index of the last op begun
        self.interrupts: Interrupts | None = None  # signals armed to land in an op
        self.runtime_watch: RuntimeWatch | None = None  # Ray runtimes started and ended

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
        with self.as_user():
            if fx["kind"] == "local":
                ray.init(**fx["init"], **kwargs)
            else:
                ray.init(address=fx["address"], **kwargs)
        self.note_ray_started()
        return {"gcs_address": ray.get_runtime_context().gcs_address,
                "job_id": ray.get_runtime_context().get_job_id()}

    def node_cpus(self, place: str | None) -> float:
        """The CPUs of the node a component is placed on: ``place`` on the
        multinode fixture, the local runtime the driver's ray.init starts."""
        fx = self.fixture
        if fx["kind"] == "local" and "num_cpus" in fx.get("init", {}):
            return float(fx["init"]["num_cpus"])
        for node in fx.get("nodes", []):
            if node["name"] == place and "CPU" in node.get("resources", {}):
                return float(node["resources"]["CPU"])
        raise verbs.HarnessError(f"the CPUs of node {place!r} of the {fx['kind']} fixture "
                                 "are not known: a component cannot fill it")

    def as_user(self):
        """Ray calls meanwhile are the user's own (``RuntimeWatch.as_user``)."""
        return self.runtime_watch.as_user() if self.runtime_watch else contextlib.nullcontext()

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

    def release_reading(self, component: str, view: dict | None = None) -> dict | None:
        """What a teardown of ``component`` must release: the runtime, the GCS
        records of the component's actors (with what each holds), and the
        cluster's view (``view``, read earlier by ``resources_now``, or now);
        None without a Ray connection."""
        import ray

        if not ray.is_initialized():
            return None
        ids = [a["id"] for a in self.actors.get(component, [])]
        return {"ray": ray_identity(), "actors": self.actor_states(ids),
                **(view or self.resources_now(component))}

    def call_return_reading(self, component: str) -> dict:
        """At the return of one of several concurrent calls on ``component``
        (``verbs.teardown``): the runtime, the GCS records of its actors and
        the implementation's threads, read at once; ``{"error": ...}`` if the
        reading failed (judged unknown). Each GCS query is bounded
        (``GcsObserver.timeout``, 5 s, one per actor), well within the op's
        teardown deadline (``verbs._teardown_deadline``: 2 x bound + 10 s a call)."""
        import ray

        try:
            threads = new_threads(self.baseline_threads)  # in-process: read with Ray down too
            if not ray.is_initialized():
                return {"ray": None, "threads": threads}
            ids = [a["id"] for a in self.actors.get(component, [])]
            states = {aid: {k: st.get(k) for k in ("state", "node_id", "error") if k in st}
                      for aid, st in self.actor_states(ids).items()}
            return {"ray": ray_identity(), "actors": states, "threads": threads}
        except Exception as exc:  # noqa: BLE001 - what needed it is judged unknown
            return {"error": describe_error(exc)}

    def resources_now(self, component: str) -> dict:
        """Every node's resources and what other jobs' actors hold (read
        first at a teardown's return: ``probe_after``); nothing without Ray."""
        import ray

        if not ray.is_initialized():
            return {}
        ids = [a["id"] for a in self.actors.get(component, [])]
        return {"resources": node_resources(), "others": self.held_by_others(ids)}

    def held_by_others(self, ids: list[str]) -> dict:
        """What the live actors of other jobs hold (on a shared cluster another
        driver's components start and end beside this one): ``{"actors": {id:
        {"node": ..., "resources": {...}}}}``, ``node`` ``ANY_NODE`` for one
        still pending without a worker (the GCS learns an actor's worker only
        once it started: its resources are taken on a node before), or
        ``{"error": why}`` if the GCS did not answer. What lets the release
        rule tell a resource another job took from one the teardown kept.
        (Seen in CI, external fixture, two scenarios at once: 0.25 CPU taken
        on the node between the readings.) This driver's own jobs are not
        others: what they start is the implementation's."""
        try:
            if self.observer is None:
                raise RuntimeError("no GCS address known")
            live = self.observer.live_actors()
        except Exception as exc:  # noqa: BLE001 - recorded: the rule then counts nobody else
            return {"error": f"GCS query failed: {exc}"[:300]}
        mine, own_jobs = set(ids), {job for _, job in self.jobs}
        out = {}
        for aid, rec in live.items():
            if aid in mine or rec.get("job_id") in own_jobs:
                continue
            started = rec.get("state") == "ALIVE" or (rec.get("pid") or 0) > 0
            out[aid] = {"node": (rec.get("node_id") if started else None) or ANY_NODE,
                        "resources": {k: v for k, v in
                                      (rec.get("required_resources") or {}).items() if v > 0}}
        return {"actors": out}

    def note_runtime(self, identity: str | None, op: Op) -> dict | None:
        """Follow the driver's runtime from probe to probe: remember the Ray
        processes below the driver after a construct; when the runtime of
        the last probe is gone, what is left of it: its processes still
        running and, on a cluster that outlives it, its job and the job's
        live actors (``owned_runtime_ended``)."""
        ended, self.last_runtime = self.last_runtime, identity
        if identity is not None:
            if verbs.VERBS[op.verb].builds:
                skip = {self.peer_standby.pid} if self.peer_standby is not None else set()
                known = {p["pid"]: p for p in self.runtime_processes.get(identity, [])}
                known.update({p["pid"]: p for p in ray_processes(skip)})
                self.runtime_processes[identity] = list(known.values())
            return None
        if ended is None:
            return None
        left = [p for p in self.runtime_processes.get(ended, []) if procs.pid_alive(p["pid"])]
        out = {"identity": ended, "processes_left": left}
        if self.fixture.get("kind") != "local" and self.observer is not None:
            job = ended.rsplit("/", 1)[-1]
            try:
                jobs = {j["job_id"]: j for j in self.observer.jobs()}
                live = {aid: {"state": r["state"], "class_name": r.get("class_name")}
                        for aid, r in self.observer.job_actors(job).items()
                        if r["state"] != "DEAD"}
                out["job"] = {"id": job, "dead": jobs.get(job, {}).get("is_dead"),
                              "live_actors": live}
            except Exception as exc:  # noqa: BLE001 - judged unknown
                out["job"] = {"id": job, "error": describe_error(exc)}
        return out

    def describe_actors(self, component: str) -> list[dict]:
        """Record the actors (id, pid, node, state) of a component instance
        as created (``component`` is its target: ``collector.2``)."""
        handles = self.adapter.actors(kind_of(component), self.objects[component])
        ids = [h._actor_id.hex() for h in handles]
        states = self.actor_states(ids)
        infos = []
        for i, handle in zip(ids, handles):
            st = states.get(i, {})
            infos.append(
                {"id": i, "pid": st.get("pid"), "node_id": st.get("node_id"),
                 "state": st.get("state"), "required_resources": st.get("required_resources")}
            )
            if st.get("detached"):
                try:
                    infos[-1]["handle"] = pickled_handle(handle)
                except Exception as exc:  # noqa: BLE001 - the cleanup then signals its worker
                    infos[-1]["handle_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
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
        peer = read_history(path("peer-history.jsonl"))
        # The second driver's whole history and stderr: the oracles judge it as
        # they judge this driver's (``oracles.peer_runs``).
        return {"exit_code": exit_code, "timed_out": timed_out, "stderr": stderr[-STDERR_CAP:],
                "history": {"records": peer.records, "corrupt": peer.corrupt, "torn": peer.torn,
                            "missing": peer.missing}}


def harness_reading(read):
    """``read()`` under the probe's watchdog; an error is recorded, judged unknown."""
    faulthandler.dump_traceback_later(PROBE_DEADLINE, exit=True)
    try:
        return read()
    except Unanswered:
        raise  # the harness's call still blocks in Ray: the run ends here (``main``)
    except Exception as exc:  # noqa: BLE001 - what needed it is judged unknown
        return {"error": describe_error(exc)}
    finally:
        faulthandler.cancel_dump_traceback_later()


def run_op(ctx: Context, writer: HistoryWriter, i: int, op: Op, baseline: list[dict]) -> None:
    verb = verbs.VERBS[op.verb]
    feature = verbs.optional_feature_of(op)
    never_built = op.target and op.target not in ctx.objects and not verb.builds
    unsupported = feature and feature not in ctx.adapter.features
    # read before the op's begin record: a reading that hangs is the harness's
    before = harness_reading(lambda: ctx.release_reading(op.target)) \
        if verb.releases and not (never_built or unsupported) else None
    writer.write({"phase": "begin", "i": i, "op": op.to_dict(),
                  "deadline": verbs.deadline_of(op, ctx.adapter, ctx.spec)})
    ctx.last_op = i
    interrupt = None
    if never_built:
        status, result, error, duration = "skipped", {"reason": f"no {op.target}: never built"}, None, 0.0
    elif unsupported:
        status, error, duration = "unsupported", None, 0.0
        result = {"reason": f"{ctx.adapter.name} does not support {feature}",
                  "not_checked": list(verb.unchecks)}
    else:
        faulthandler.dump_traceback_later(verbs.deadline_of(op, ctx.adapter, ctx.spec), exit=True)
        t0 = time.monotonic()
        ctx.running_op = {"i": i, "verb": op.verb}
        ctx.interrupts.op_starts(i, op.verb)
        raised = None
        try:
            result = verb.run(ctx, op) or {}
            status, error = "ok", None
        except BaseException as exc:  # noqa: BLE001 - a verdict, not a crash
            status, result, error, raised = "raised", {}, describe_error(exc), exc
            if ctx.interrupts.interrupting(exc):
                status = "interrupted"  # what the harness's signal raised: recorded, see below
            elif isinstance(exc, KeyboardInterrupt):
                raise
        finally:
            out_at = time.monotonic()
            armed = ctx.interrupts.op_ends()
            ctx.running_op = None
            duration = out_at - t0
            faulthandler.cancel_dump_traceback_later()
        if armed is not None:
            interrupt = armed.record(raised, out_at)
            if status == "interrupted" and armed.ends_program:
                ctx.interrupts.uncaught = raised  # the user's program ends with it
        inner = verb.inner_error(result) if status == "ok" else None
        if inner is not None:  # a call the op made raised (teardown's calls)
            status, error = "raised", inner
    writer.write({
        "phase": "end", "i": i, "op": op.to_dict(), "status": status,
        "error": error, "duration": round(duration, 4), "result": result,
        **({"interrupt": interrupt} if interrupt is not None else {}),
    })
    if isinstance(ctx.interrupts.uncaught, SystemExit):
        return  # SIGTERM: Ray aborts the driver 3 s after it; the program ends now
    # The harness's probe, under its own watchdog: a hang here is the harness's.
    probe = harness_reading(lambda: probe_after(ctx, op, status, baseline, before))
    writer.write({"phase": "probe", "i": i, **probe})


def probe_after(ctx: Context, op: Op, status: str, baseline: list[dict],
                before: dict | None = None) -> dict:
    """What the harness observes right after an op: the Ray runtime, the
    implementation's threads (read first: a teardown must have joined them,
    not the settle wait below), for an op that ends its target what it
    released at its return (``before`` it, and ``at_return``: the resources
    read right after the threads, before anything else), what is left
    of a runtime that ended, and, after ops that change them, actor states."""
    probe = {"ray": ray_identity(), "threads": new_threads(baseline)}
    if before is not None:
        # The view right after the threads (in-process; read first, since a
        # teardown must have joined them at its return: with the resources
        # read before them, threads_joined no longer failed in two of
        # torchrl's background scenarios, 2026-11-26), not after the actors'
        # states (a GCS query each): the view lags a kill by 59 ms (median;
        # 110 max, 30 kills here), so a teardown that returns at ray.kill was
        # seen holding or not as those readings took longer or not (torchrl
        # 0.14.1 under two busy loops: 5 of 79 verdicts drifted). A view that
        # failed makes the reading one that failed (judged unknown).
        try:
            view = ctx.resources_now(op.target)
        except Unanswered:
            raise  # still blocked in Ray: the run ends here (``main``)
        except Exception as exc:  # noqa: BLE001 - the reading failed: judged unknown
            view = {"error": describe_error(exc)}
        probe["before"] = before
        probe["at_return"] = ctx.release_reading(op.target, view)
    ended = ctx.note_runtime(probe["ray"], op)
    if ended is not None:
        probe["runtime_end"] = ended
    verb = verbs.VERBS[op.verb]
    if verb.builds and status == "ok" and op.target in ctx.objects:  # not while it builds
        probe["created"] = ctx.describe_actors(op.target)
    if verb.probes_actors:
        # Wait for the component's actors to die, unless it owns none.
        settle = op.target if verb.settles and op.target not in ctx.connected \
            and status != "interrupted" else None  # an interrupted teardown may not be done
        probe["actors"] = ctx.states_by_component(settle=settle)
    if status == "raised" and (op.args.get("fail") or (
            verb.builds and op.args.get("may_fail"))):
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
    out = {
        "ray": ray_identity(),
        "threads": new_threads(baseline_threads),
        "actors": actors,
        "job_actors": job_actors(ctx),
    }
    t0 = time.monotonic()
    out["zombie_pids"] = zombie_pids(ctx, actors)
    # how long DEAD actors' workers took to exit (or to be called zombies)
    out["zombie_wait"] = round(time.monotonic() - t0, 3)
    return {
        **out,
        "removed_nodes": ctx.removed_nodes,
        "jobs": [job for _, job in ctx.jobs],  # read again by the parent after the exit
    }


def zombie_pids(ctx: Context, actors: dict) -> dict:
    """``{actor id: pid}`` of the actors the GCS reports DEAD whose worker
    process still runs (a zombie actor, ray-project/ray#52322). Ray reaps a
    killed worker asynchronously: each gets SETTLE_SECONDS to go, and up to
    ZOMBIE_GRACE while it is still at work (a worker exiting on a busy
    machine, ``procs.still_running``); the parent kills what is left
    (``after_exit``)."""
    dead = {}
    for comp, infos in ctx.actors.items():
        states = actors.get(comp, {})
        for a in infos:
            pid = ctx.last_known.get(a["id"], {}).get("pid") or a.get("pid")
            if pid and states.get(a["id"], {}).get("state") in DEAD_STATES:
                dead[a["id"]] = pid
    # a killed orphan may linger as a zombie process: pid_alive says False
    left = set(procs.still_running(sorted(set(dead.values())), SETTLE_SECONDS, ZOMBIE_GRACE))
    return {aid: pid for aid, pid in dead.items() if pid in left}


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
        if isinstance(exc, Unanswered):
            # The harness's call still blocks inside Ray, holding its shared
            # state (ray._private.state's init lock): what runs after it, the
            # implementation's teardown or Ray's atexit ray.shutdown(), could
            # wait on the harness and be judged a hang. End now, as the
            # probe's watchdog does (its stacks, no exit handlers).
            faulthandler.dump_traceback(all_threads=True)
            sys.stderr.flush()
            os._exit(HARNESS_EXIT_CODE)
        raise SystemExit(HARNESS_EXIT_CODE) from exc
    # From here on the interpreter exits normally, with the components as the
    # scenario left them: atexit handlers and finalizers run, as for a user.
    # The watchdog stays armed: an exit that never finishes is a hang.
    # The "exiting" record comes first, so that a watchdog firing in the
    # user's ray.shutdown() below reads as an exit hang.
    bound = exit_bound(ctx.adapter)
    exiting = {"phase": "exiting", "bound": bound, "wall": time.time()}
    uncaught = ctx.interrupts.uncaught
    if uncaught is not None:  # the user's program ends with what the signal raised
        exiting["uncaught"] = f"{type(uncaught).__module__}.{type(uncaught).__qualname__}"
        if isinstance(uncaught, SystemExit):
            exiting["skipped_probes_from"] = ctx.last_op
    writer.write(exiting)
    writer.close()
    faulthandler.dump_traceback_later(bound, exit=True)
    if uncaught is not None:
        raise uncaught  # as the user's program: the interpreter prints it and exits
    end_like_a_user(ctx.scenario)
    return 0


def run_scenario_ops(request: dict, writer: HistoryWriter, standby) -> Context:
    """Setup, every op with its probe, the final probe: the harness's part,
    with the runtime watched (not the interpreter exit after it)."""
    baseline = threads_now()
    # before the adapter loads: a module of it that captures ray.init at import
    # gets the watched one
    watch = RuntimeWatch(writer.write, writer.now)
    watched = watch.install()
    logs = shown = None
    try:
        ctx = Context(request, standby)
        ctx.baseline_threads = baseline
        ctx.runtime_watch = watch
        watch.where = lambda: ((ctx.running_op or {}).get("i"), ctx.last_op)
        logs = LogCapture(ctx.adapter.log_names, writer.write, watch.where).install()
        shown = WarningCapture(ctx.adapter.log_names, writer.write, watch.where).install()
        check_interrupts(ctx.scenario.ops)
        ctx.interrupts = Interrupts(writer)
        return _setup_ops_and_final(ctx, writer, baseline, standby, watched)
    finally:
        if logs is not None:
            logs.remove()
        if shown is not None:
            shown.remove()
        watch.stop()


def _setup_ops_and_final(ctx: Context, writer: HistoryWriter, baseline: list, standby,
                         watched: dict) -> Context:
    scenario = ctx.scenario
    setup = {"phase": "setup", "owner": scenario.owner, "fixture": ctx.fixture.get("kind"),
             "pid": os.getpid(), "adapter": ctx.adapter.name,
             # the second driver's process: its jobs are the scenario's too
             "peer_pid": standby.pid if standby is not None else None,
             "runtime_watch": watched}
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
        if ctx.interrupts.uncaught is not None:
            break  # the program ends with it: the interrupted op is the scenario's last
    if ctx.armed_kills:  # e.g. a shrunk or hand-written scenario without its kill_landed
        raise RuntimeError(f"{len(ctx.armed_kills)} kill(s) armed with `during` were never "
                           "checked by a kill_landed op: whether they landed is unknown")
    if ctx.interrupts.armed:
        raise RuntimeError(f"{len(ctx.interrupts.armed)} signal(s) armed with `during` never "
                           "met an op with that verb")
    ctx.interrupts.restore()
    if standby is not None:
        standby.close()
    if isinstance(ctx.interrupts.uncaught, SystemExit):
        return ctx  # SIGTERM: no final probe, Ray aborts the driver 3 s after the signal
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
