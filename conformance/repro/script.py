"""A standalone reproduction script of one scenario, for a maintainer.

    python -m conformance script SCENARIO_ID --impl NAME [-o FILE]

The script runs the scenario's operations in order, in one plain Python
process, without this project: it imports only ray, torch, tensordict,
gymnasium and the implementation's own package. Each operation prints a line
when it starts (so an abort inside Ray still names it) and one with its
outcome (``ok`` / ``raised Type: message``) and duration; a few probes (the
Ray session, the component's actor states) follow the operations that may
change them; right at a teardown's return, on the nodes its actors were on,
what they held and what was available before it and now; after a call
that was to fail raised, this job's live actors no component recorded; and,
whenever it happens, each ``ray.init()`` or ``ray.shutdown()`` call that starts
or ends a runtime, with the thread that made it (a library's thread that starts
Ray again after the user's ``ray.shutdown()`` shows, however late it runs).
``faulthandler.dump_traceback_later`` guards every operation
and the interpreter exit with the suite's own deadlines: a hang dumps every
thread's stack and ends the process with exit code 1.

The script only executes; it never judges. The verdict stays with the suite
(``python -m conformance repro``).

Code per operation comes from two places:

- the verb table (``conformance.ops.verbs``, ``Verb.script``) for the verbs that
  need only Ray and the component's actor handles: ``kill`` (``ray.kill``,
  SIGKILL of the actor's pid, ``os._exit`` or a sleep through
  ``__ray_call__``, or armed to land inside the next op; as the suite's, it
  waits for its target ALIVE and returns once the fault took effect:
  ``conformance.ops.kill_effect``), ``ray_shutdown``,
  ``ray_restart``, ``check_name``, ``drop`` and ``peer`` (a second driver: a
  nested script run with the same Python);
- the adapter (``Adapter.script_header``, ``script_actors``,
  ``script_lines``) for construction, teardown and the component verbs,
  written against the implementation's API exactly as the adapter calls it
  (``conformance.adapters.snippets`` builds the common shapes).

An operation the adapter does not support, or that a standalone script
cannot do (removing a node of a cluster it does not own), is a comment and
prints ``skipped``.
"""
from __future__ import annotations

import sys
import textwrap
from types import SimpleNamespace

from conformance.ops import kill_effect, verbs
from conformance.adapter import Spec
from conformance.catalog.build import requirements
from conformance.ops.budgets import INIT_DEADLINE, exit_bound
from conformance.ops.scenario import Op, Scenario
from conformance.ops.threads import ray_driver_thread
from conformance.adapters.snippets import ACTOR_NAME, source_of
from conformance.repro import script_envs
from conformance.ops.targets import KINDS, actor_name, kind_of, variable, writes_into

_NAME_SENTINEL = "\x00actor-name\x00"


class ScriptError(ValueError):
    """The adapter cannot write scripts."""


# -- generic verbs -------------------------------------------------------------------

class Writer:
    """What a harness verb's script form (``Verb.script``) may ask of the script."""

    def __init__(self, adapter, scenario: Scenario):
        self.adapter, self.scenario = adapter, scenario

    def actors(self, component: str) -> str:
        """An expression: the actor handles of a component instance (its
        op's lines bind the kind's variable to it: :func:`aliases`)."""
        return self.adapter.script_actors(kind_of(component))

    def variables(self) -> list[str]:
        """Every component variable of the script: one per kind, then one
        per further instance the scenario builds (``collector_2``)."""
        return [*KINDS, *[variable(t) for t in self.scenario.components if t not in KINDS]]

    @staticmethod
    def actor_name(named) -> str:
        """An expression: the name of a named eval worker (``named``: True
        or a second name's suffix, as the construct op says)."""
        return ACTOR_NAME if named in (True, None) else f"({ACTOR_NAME} + {'-' + named!r})"

    def peer_ops(self, op: Op) -> str:
        return self.scenario.peer_of(op).describe()

    def peer_script(self, op: Op) -> str:
        """The text of the second driver's own script."""
        return generate(self.scenario.peer_of(op), self.adapter, impl_name=self.adapter.name,
                        peer=True)


def fixture_cpus(fixture: str, place: str | None) -> float:
    """The CPUs of a node of the suite's fixtures (``construct(fill=...)``):
    the local one's, or node ``place`` of the multinode fixture."""
    from fixtures.clusters import LocalCluster, MultinodeCluster

    if fixture == "local":
        return float(LocalCluster().info()["init"]["num_cpus"])
    return float(MultinodeCluster.NODE_ARGS[place]["num_cpus"])


def unsupported_reason(op: Op, adapter, scenario: Scenario) -> str | None:
    """Why the script cannot run ``op`` (None: it can)."""
    optional = verbs.optional_feature_of(op)
    missing = adapter.unsupported(requirements([op]) + ((optional,) if optional else ()))
    if missing:
        return f"{adapter.name} does not support {', '.join(missing)}"
    return None


def aliases(op: Op, scenario: Scenario) -> list[str]:
    """Lines that bind the kinds' variables to the instances ``op`` works on
    (``collector = collector_2``), local to its function: the adapter and the
    verbs write their lines against the kinds' names. None for an op on the
    first instances (their variables are the kinds')."""
    bound = {}
    if op.target is not None and not verbs.VERBS[op.verb].builds:  # that op assigns its own
        bound[kind_of(op.target)] = op.target
    into = writes_into(op) or (verbs.VERBS[op.verb].on_written_buffer and next(
        (writes_into(o) for o in scenario.ops
         if verbs.VERBS[o.verb].builds and o.target == op.target), None))
    if into:
        bound["buffer"] = into
    return [f"{variable(k)} = {variable(t)}  # this op's {t}" for k, t in bound.items() if k != t]


def op_lines(op: Op, adapter, scenario: Scenario, spec: Spec) -> list[str] | None:
    """The op's body lines: the verb's own script form (``Verb.script``), or
    the adapter's (``Adapter.script_lines``, given the op on its target's
    kind). Raises ``NoScript``."""
    form = verbs.VERBS[op.verb].script
    if form is not None:
        return aliases(op, scenario) + form(op, Writer(adapter, scenario))
    op_spec = spec
    builds = verbs.VERBS[op.verb].builds
    if builds:
        op_spec = verbs._spec_for(SimpleNamespace(
            spec=spec, actor_name=_NAME_SENTINEL,
            node_cpus=lambda place: fixture_cpus(scenario.fixture, place)), op)
    kind = kind_of(op.target)
    args = {**op.args, "buffer": True} if writes_into(op) else op.args
    lines = adapter.script_lines(Op(op.verb, kind, args), op_spec)
    if lines is None:
        return None
    named = op.args.get("named") or True
    lines = [line.replace(repr(actor_name(_NAME_SENTINEL, named)), Writer.actor_name(named))
             .replace(repr(_NAME_SENTINEL), ACTOR_NAME) for line in lines]
    if builds:
        fail = op.args.get("fail")
        if fail:
            lines.insert(0, f"# expected to fail clearly ({fail}) and leave no actor behind")
        var = variable(op.target)
        keep = [f"{var} = {kind}"] if var != kind else []
        lines = ([f"global {var}"] + lines + keep
                 + [f"return _record({op.target!r}, {adapter.script_actors(kind)})"])
        if op.args.get("thread"):
            run = (f"return _start_build({op.target!r}, _build)  # join_build waits for it"
                   if op.args.get("wait") is False else "return _in_ending_thread(_build)")
            lines = ["def _build():  # run in a thread of the user's that ends once it returned",
                     *[f"    {line}" if line else "" for line in lines], run]
    return aliases(op, scenario) + lines


# -- the script ------------------------------------------------------------------------

RUNTIME = '''
collector = buffer = evaluator = None  # the components, as the operations leave them
ACTOR_IDS = {}  # component -> ids of the actors it created (recorded at construction)
ACTOR_PIDS = {}  # actor id -> its worker process, as the GCS last said (read with its state)
RECORDED = set()  # every actor id any construction recorded (a rebuilt component's older ones too)
THREADS_BEFORE = set()  # the threads before any operation (main() fills it)
_LAST_RAY = ["?"]
_ARMED = []  # kills armed to land inside the next operation (threading.Timer, not started)
_ARMED_ERRORS = []  # what an armed kill raised, for its kill_landed op
_ARMED_RESULTS = []  # what an armed kill did, for its kill_landed op
_INTERRUPTS = []  # signals armed to reach this process inside the next operation


class Unsupported(Exception):
    """An operation this script does not run (see its comment)."""


def _qualname(exc):
    t = type(exc)
    return f"{t.__module__}.{t.__qualname__}"


_BUILDS = {}  # component -> (thread, outcome) of a build started by _start_build


def _start_build(component, fn):
    """fn() in a thread of its own, not waited for: the next builds run at once
    with it (a thread pool's map over the constructors); _join_build waits."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"user-build-{component}")
    thread.start()
    _BUILDS[component] = (thread, box)
    return f"{component}: build started"


def _join_build(component):
    thread, box = _BUILDS.pop(component)
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _in_ending_thread(fn):
    """fn() in a thread that ends once it returned (as a thread pool's worker
    or asyncio.to_thread's does when its pool shuts down): its result, or its
    error raised here."""
    _start_build("_waited", fn)
    return _join_build("_waited")


def _record(component, handles):
    ACTOR_IDS[component] = [h._actor_id.hex() for h in handles]
    RECORDED.update(ACTOR_IDS[component])
    return f"{len(handles)} actor(s)"


def _ray_session():
    """The connected Ray runtime (GCS address/session/job), never starting one."""
    identity = runtime_identity()
    return "not initialized" if identity is None else "/".join(str(x) for x in identity)


def _actor_states(settle=None):
    """{component: [state, ...]} of the recorded actors; waits up to 5 s for the
    actors of ``settle`` to leave ALIVE (a kill or a teardown is asynchronous).
    With Ray down (None: no states to read) it waits the same 5 s for the
    worker processes of ``settle``'s actors to end, as the suite does then
    (it reads them by process)."""
    if not ACTOR_IDS:
        return None
    if not ray.is_initialized():
        pids = [ACTOR_PIDS[aid] for aid in ACTOR_IDS.get(settle, []) if aid in ACTOR_PIDS]
        t0 = time.monotonic()
        while not all(_pid_gone(pid) for pid in pids) and time.monotonic() - t0 <= 5.0:
            time.sleep(0.1)
        return None
    # Private on purpose: the public ray.util.state.get_actor asks the
    # dashboard's API server, which a Ray started with include_dashboard=False
    # (as here and in the suite) does not run: ServerUnavailable (measured,
    # Ray 2.60, 2026-11-23). ray._private.state reads the GCS directly.
    from ray._private import state

    def states():
        out = {}
        for comp, ids in ACTOR_IDS.items():
            row = []
            for aid in ids:
                try:
                    record = state.actors(actor_id=aid)
                except Exception as exc:  # noqa: BLE001
                    row.append(f"unknown ({type(exc).__name__})")
                    continue
                row.append(record.get("State", "unknown"))
                if (record.get("Pid") or 0) > 1:  # a starting actor's is 0
                    ACTOR_PIDS[aid] = record["Pid"]
            out[comp] = row
        return out

    t0 = time.monotonic()
    while True:
        out = states()
        live = [s for s in out.get(settle, []) if s in ("ALIVE", "PENDING_CREATION", "RESTARTING")]
        if not live or time.monotonic() - t0 > 5.0:
            return out
        time.sleep(0.1)


def _watch_runtime_calls():
    """From now on, print each ray.init() and ray.shutdown() call that starts or
    ends a Ray runtime (this script's, the implementation's, Ray's own
    auto-init on a stale handle: it calls ray.init()), with the thread that
    made it, when it returns: a thread of the implementation that starts Ray
    again after the user's ray.shutdown() shows here, however late it runs."""
    def session():  # a reading that fails must not change what the call does
        try:
            return _ray_session()
        except Exception as exc:  # noqa: BLE001
            return f"unknown ({_qualname(exc)})"

    for name in ("init", "shutdown"):
        real = getattr(ray, name)

        def watched(*args, _real=real, _name=name, **kwargs):
            before = session()
            try:
                return _real(*args, **kwargs)
            finally:
                after = session()
                if after != before:
                    print(f"      runtime: ray.{_name}() from thread "
                          f"{threading.current_thread().name}: {before} -> {after}", flush=True)

        watched.__doc__ = real.__doc__
        setattr(ray, name, watched)


def _probe(settle=None, actors=True):
    """Print the Ray session when it changed, and the recorded actors' states."""
    session = _ray_session()
    if session != _LAST_RAY[0]:
        print(f"      ray: {session}", flush=True)
        _LAST_RAY[0] = session
    if not actors:
        return
    try:
        states = _actor_states(settle)
    except Exception as exc:  # noqa: BLE001
        states = {"?": [f"{_qualname(exc)}: {exc}"]}
    if states:
        print("      actors: " + "  ".join(f"{c}={','.join(s) or '-'}" for c, s in states.items()),
              flush=True)


def _node_resources():
    """``{node_id: (available, total)}`` of every live node. Private on
    purpose: the public ray.available_resources() sums over the nodes, and
    what a teardown releases is released on its actors' nodes."""
    from ray._private import state

    available = state.available_resources_per_node()
    return {n: (available.get(n, {}), t) for n, t in state.total_resources_per_node().items()}


def _actor_row(aid):
    """``(state, node id, resources it holds while it runs)`` of actor ``aid``
    in the GCS actor table (None: not there). Private on purpose:
    ray._private.state's own reading of that table drops
    ``required_resources``, and the public ray.util.state asks the dashboard
    (see _actor_states)."""
    from ray._private import state
    from ray.core.generated import gcs_pb2

    raw = state.state._connect_and_get_accessor().get_actor_info(ray.ActorID.from_hex(aid))
    if raw is None:
        return None
    data = gcs_pb2.ActorTableData.FromString(raw)
    return (gcs_pb2.ActorTableData.ActorState.Name(data.state),
            (data.node_id or data.address.node_id).hex(), dict(data.required_resources))


def _guarded(probe, *args, timeout=30.0):
    """``probe(*args)`` in a thread of its own, waited for at most ``timeout``
    s (a GCS that does not answer must neither hang the script nor end it:
    the operations after it still run); its result, or the exception it
    raised, or TimeoutError. Never raises."""
    box = []

    def run():
        try:
            box.append(probe(*args))
        except BaseException as exc:  # noqa: BLE001 - a probe never fails the script
            box.append(exc)

    thread = threading.Thread(target=run, name="rlc-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    return box[0] if box else TimeoutError(f"no answer within {timeout:g} s")


def _before_teardown(component):
    """Before a teardown: what ``component``'s ALIVE actors hold per node, and
    every node's resources (None: no actor recorded, or Ray is down)."""
    if not component or not ray.is_initialized() or not ACTOR_IDS.get(component):
        return None
    held = {}
    for aid in ACTOR_IDS[component]:
        row = _actor_row(aid)
        if row is None or row[0] != "ALIVE":
            continue
        node = held.setdefault(row[1], {"actors": 0})
        node["actors"] += 1
        for key, amount in row[2].items():
            node[key] = node.get(key, 0.0) + amount
    return component, held, _node_resources()


def _released(before):
    """Right at a teardown's return (before any wait): on each node its
    actors were ALIVE on, what they held, and each such resource available
    before it and now. What they held should be back now: a component built
    next sizes itself by ray.available_resources()."""
    if isinstance(before, Exception):
        print(f"      resources: unknown ({_qualname(before)}: {before})", flush=True)
        return
    if before is None or not ray.is_initialized():
        return
    component, held, was = before
    now = _guarded(_node_resources, timeout=10.0)
    if isinstance(now, Exception):
        print(f"      resources: unknown ({_qualname(now)}: {now})", flush=True)
        return
    for node, need in sorted(held.items()):
        if node not in was or node not in now:
            continue
        (free_before, total), (free_now, _) = was[node], now[node]
        keys = sorted(k for k in need if k != "actors")
        print(f"      resources: node {node[:8]} ({component}: {need['actors']} actor(s) ALIVE before): "
              + ("; ".join(f"{k} {need[k]!r} held, {float(free_before.get(k, 0.0))!r} available before, "
                           f"{float(free_now.get(k, 0.0))!r} at return, of {float(total.get(k, 0.0))!r}"
                           for k in keys) or "they held nothing"),
              flush=True)


def _threads_left(before, quiet=False):
    """Right at a teardown's return: the threads running now that did not
    before any operation (``before``: the script's threads then), but Ray's
    own driver threads and this script's armed kills (``threading.Timer``):
    what the library started and left running, with the module of the code
    each runs. Every component's: which one started a thread is the suite's
    reading (a thread appears some time after the call that starts it: read
    right after torchrl 0.14.1's start(), its thread was not there yet in
    1 of 2 runs, 2026-11-27). ``quiet``: returned, not printed."""
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()
            and not ray_driver_thread(t) and not isinstance(t, threading.Timer)]
    if quiet:  # only whether any is left (a wait for them to end)
        return left
    # private: threading keeps a thread's target only as Thread._target
    modules = [getattr(getattr(t, "_target", None), "__module__", None) or type(t).__module__
               for t in left]
    names = [f"{t.name} ({module})" for t, module in zip(left, modules)]
    print("      threads: " + (", ".join(names) or "none"), flush=True)


def _left_behind():
    """After a call that was to fail and raised: this job's actors still
    alive that no construction recorded (a failed call leaves none)."""
    if not ray.is_initialized():
        print("      job actors: not read (Ray is not initialized)", flush=True)
        return
    from ray._private import state  # not ray.util.state: see _actor_states

    job = ray.JobID.from_hex(ray.get_runtime_context().get_job_id())
    live = [f"{aid[:8]} {info.get('ActorClassName')} {info.get('State')}"
            for aid, info in sorted(state.actors(job_id=job).items())
            if aid not in RECORDED and info.get("State") in (
                "ALIVE", "PENDING_CREATION", "RESTARTING", "DEPENDENCIES_UNREADY")]
    print(f"      job actors not of any component: {len(live)}" + (f" ({', '.join(live)})" if live else ""),
          flush=True)


def _teardown(call, times=1, concurrent=1, thread="main"):
    """``call()`` ``times`` times, each from ``concurrent`` threads at once or from
    one other thread; prints every call, raises the first error."""
    results = []

    def one():
        t0 = time.monotonic()
        try:
            call()
            results.append((threading.current_thread().name, None, time.monotonic() - t0))
        except BaseException as exc:  # noqa: BLE001 - SystemExit too, in a thread
            results.append((threading.current_thread().name, exc, time.monotonic() - t0))

    in_thread = thread != "main" or concurrent > 1
    for _ in range(times):
        if not in_thread:
            one()
            continue
        barrier = threading.Barrier(concurrent)

        def run():
            barrier.wait()
            one()

        threads = [threading.Thread(target=run, name=f"teardown-{k}", daemon=True)
                   for k in range(concurrent)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for name, exc, took in results:
        outcome = "ok" if exc is None else f"raised {_qualname(exc)}: {exc}"
        print(f"      call in {name}: {outcome} ({took:.3f}s)", flush=True)
    errors = [exc for _, exc, _ in results if exc is not None]
    if errors:
        raise errors[0]
    return f"{len(results)} call(s)"


def _run_peer(script):
    """Run ``script`` (a second driver) against this driver's cluster."""
    address = ray.get_runtime_context().gcs_address
    proc = subprocess.run(
        [sys.executable, "-c", script, "--address", address, "--actor-name", ACTOR_NAME],
        capture_output=True, text=True, timeout=230)
    for line in (proc.stdout + proc.stderr[-3000:]).splitlines():
        print(f"      peer| {line}", flush=True)
    return f"second driver exited {proc.returncode}"


def _send_signal(armed):
    """An armed signal (the interrupt op), sent to this very process."""
    armed['sent'] = time.monotonic()
    os.kill(os.getpid(), armed['signal'])


def _signal_outcome(exc):
    """What the armed signal of this operation did (and whether the program
    ends with ``exc``), or None: no signal of ours was sent."""
    armed = next((a for a in _INTERRUPTS if a['sent'] is not None), None)
    if armed is None:
        return None, False
    _INTERRUPTS.remove(armed)
    took = time.monotonic() - armed['sent']
    if exc is None:
        return f"(a {signal.Signals(armed['signal']).name} was sent {took:.3f}s before it " \
               "returned, and nothing was raised)", False
    return f"interrupted: {_qualname(exc)} {took:.3f}s after the signal", armed['ends_program']


def _step(i, name, fn, deadline, needs=None):
    print(f"[{i}] {name} ...", flush=True)
    if needs and globals().get(needs) is None:
        print(f"[{i}] {name}: skipped (no {needs})", flush=True)
        return
    faulthandler.dump_traceback_later(deadline, exit=True)  # the hang guard
    for timer in _ARMED:  # a kill armed by the previous op starts with this one
        if timer.ident is None:
            timer.start()
    t0 = time.monotonic()
    try:
        result = fn()
        outcome = "ok" + (f" -> {result}" if result is not None else "")
        note, _ = _signal_outcome(None)
        outcome += f" {note}" if note else ""
    except (KeyboardInterrupt, SystemExit) as exc:  # a signal: Ctrl-C, or Ray's SIGTERM handler
        outcome, ends = _signal_outcome(exc)
        if outcome is None:
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome = f"raised {_qualname(exc)}: {str(exc)[:500]}"
        elif ends:
            print(f"[{i}] {name}: {outcome} ({time.monotonic() - t0:.3f}s); the program ends "
                  "with it", flush=True)
            raise
    except Unsupported as exc:
        outcome = f"skipped (unsupported: {exc})"
    except BaseException as exc:  # noqa: BLE001 - every outcome is printed
        outcome = f"raised {_qualname(exc)}: {str(exc)[:500]}"
    finally:
        faulthandler.cancel_dump_traceback_later()
        unsent = _cancel_unsent_signals()
    if unsent:  # the suite's verdict for this run is an error: the op was not interrupted
        outcome += f" (the armed {unsent} was not sent: the op returned before it was due)"
    print(f"[{i}] {name}: {outcome} ({time.monotonic() - t0:.3f}s)", flush=True)
    return outcome


def _cancel_unsent_signals():
    """An armed signal is sent only while its op runs, as the suite's
    (conformance.ops.interrupts): cancel the one not sent yet; its name."""
    for timer in _ARMED:
        armed = timer.args[0] if timer.function is _send_signal else None
        if armed is not None and timer.ident is not None and armed['sent'] is None:
            timer.cancel()
            _ARMED.remove(timer)
            _INTERRUPTS.remove(armed)
            return signal.Signals(armed['signal']).name
    return None
'''

def _fixture_init(scenario: Scenario) -> dict:
    from fixtures.clusters import LocalCluster

    return LocalCluster().info()["init"]


def _docstring(scenario, adapter, impl_name, versions, peer) -> str:
    fx = scenario.fixture
    if fx == "local":
        where = 'a private single-node Ray (address="local")'
        run = "python THIS_SCRIPT.py"
    else:
        where = "the cluster given with --address"
        run = "python THIS_SCRIPT.py --address HOST:PORT"
    if scenario.owner == "user":
        owner = "user: the script calls ray.init itself, the components find Ray running"
    else:
        owner = "impl: the script never calls ray.init, the implementation starts Ray"
    cluster = ""
    if fx == "multinode":
        cluster = textwrap.dedent("""
            The scenario places components with the custom resources node_a / node_b
            (the suite's multinode fixture: a head and two 2-CPU nodes). A stand-in:
              RAY_AUTH_MODE=disabled ray start --head --num-cpus 6 --include-dashboard=false \\
                  --resources='{"node_a": 100, "node_b": 100}'
              python THIS_SCRIPT.py --address 127.0.0.1:6379
            """)
    vers = ", ".join(f"{k} {v}" for k, v in versions.items())
    ops = "\n".join(f"  [{i}] {op}" for i, op in enumerate(scenario.ops))
    role = "the second driver of " if peer else ""
    return (
        f'r"""Standalone reproduction of {role}lifecycle conformance scenario\n'
        f"{scenario.id} against {impl_name}.\n\n"
        f"Generated by `python -m conformance script {scenario.id} --impl {impl_name}`\n"
        f"(ray-lifecycle-conformance) with {vers}.\n"
        "It needs only ray, torch, tensordict, gymnasium and the implementation's package.\n"
        + (f"Its env {scenario.spec['env_id']!r} is the suite's conformance/envs.py,\n"
           "carried below (ENVS_SOURCE): the script writes it beside itself, where gymnasium\n"
           "imports it, in Ray's workers too (they have the script's directory on sys.path).\n"
           if script_envs.uses_envs(scenario.spec.get("env_id")) else "") + "\n"
        f"fixture: {fx}: {where}\nowner:   {owner}\n"
        f"ops:\n{ops}\n{cluster}\n"
        "Each operation prints '[i] op ...' when it starts and '[i] op: ok|raised Type: message\n"
        "(duration)' when it returns. An operation past its deadline (the suite's) dumps\n"
        "every thread's stack and exits 1: a hang. An abort inside Ray (\"Check failed\")\n"
        "ends the process right after the start line of the operation that caused it.\n"
        "The script executes; the verdict is the suite's: python -m conformance repro "
        f"'{scenario.id}' --impl {impl_name}\n\n"
        f"Run: {run}\n"
        '"""'
    )


def generate(scenario: Scenario, adapter, impl_name: str | None = None, peer: bool = False) -> str:
    """The script's text."""
    if not adapter.writes_scripts:
        raise ScriptError(f"adapter {adapter.name!r} cannot write scripts: it does not "
                          "implement script_header, script_actors and script_lines "
                          "(conformance.adapter.Adapter)")
    from conformance.reports.report import versions as report_versions

    impl_name = impl_name or adapter.name
    spec = Spec.for_scenario(scenario)
    versions = {k: v for k, v in report_versions(adapter).items() if k != "python"}
    out = [_docstring(scenario, adapter, impl_name, versions, peer), "",
           "# As the suite runs (optional; remove to use your defaults): every Ray process",
           "# on 127.0.0.1, no token authentication (Ray >= 2.60), no usage stats.",
           "import os",
           "",
           'os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")',
           'os.environ.setdefault("RAY_AUTH_MODE", "disabled")',
           'os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")',
           "# A Ray this script starts starts up to 4 actor processes at once (Ray's default:",
           "# the core count), as the suite's local fixture (fixtures/clusters.py).",
           'os.environ.setdefault("RAY_worker_maximum_startup_concurrency", "4")',
           "",
           "import argparse",
           "import faulthandler",
           "import gc",
           "import signal",
           "import subprocess",
           "import sys",
           "import threading",
           "import time",
           "",
           "import ray",
           ""]
    for verb in verbs.VERBS.values():  # names bound before the library's import
        out += verb.script_prelude([op for op in scenario.ops if op.verb == verb.name])
    out += adapter.script_header()
    out += ["", "", f"NAMESPACE = {spec.namespace!r}",
            "ACTOR_NAME = 'rlc-eval-{}'.format(os.getpid())  # set by --actor-name", ""]
    from fixtures.identity import runtime_identity  # the harness's reading, not the reference's

    out += ["", ""] + source_of(runtime_identity)
    out += ["", ""] + source_of(ray_driver_thread)  # _threads_left leaves Ray's own out
    out += ["", ""] + source_of(kill_effect._pid_gone)  # _actor_states and the kills wait on it
    out += [""] + RUNTIME.strip("\n").splitlines()
    more = Writer(adapter, scenario).variables()[len(KINDS):]
    if more:
        out += [f"{' = '.join(more)} = None  # the further instances of the components"]
    out += ["", ""] + source_of(verbs._batch)
    # an item several verbs need (conformance.policies's) is written once
    defined = {ray_driver_thread, kill_effect._pid_gone}
    for verb in verbs.VERBS.values():  # what the verbs' lines call (``Verb.script_header``)
        for item in verb.script_header([op for op in scenario.ops if op.verb == verb.name]):
            if item in defined:
                continue
            defined.add(item)
            out += ["", ""] + ([item] if isinstance(item, str) else source_of(item))
    table = []
    for i, op in enumerate(scenario.ops):
        out += ["", ""]
        name = str(op)
        why, lines = unsupported_reason(op, adapter, scenario), None
        if not why:
            try:
                lines = op_lines(op, adapter, scenario, spec)
            except verbs.NoScript as exc:
                why = str(exc)
        if lines is None and not why:
            why = f"the {adapter.name} adapter has no script snippet for {op.verb}"
        if why:
            out += [f"def op_{i}():", f"    # {name}: unsupported: {why}",
                    f"    raise Unsupported({why!r})"]
        else:
            out += [f"def op_{i}():", f"    # {name}"] + [f"    {line}" if line else ""
                                                         for line in lines]
        verb = verbs.VERBS[op.verb]
        needs = variable(op.target) if (op.target and not verb.builds) else None
        deadline = verbs.deadline_of(op, adapter, spec)
        reads = "released" if verb.releases else "left" if (
            op.args.get("fail") or (verb.builds and op.args.get("may_fail"))) else None
        table.append(f"    ({i}, {name!r}, op_{i}, {deadline}, {needs!r}, {verb.probes_actors}, "
                     f"{(op.target if verb.settles else None)!r}, {reads!r}),")
    out += ["", "", "OPS = [  # (index, operation, function, deadline in s, needs, probe, settle, reads:",
            "        # 'released': resources at its return; 'left': actors left if it raised)"]
    out += table + ["]", ""]
    carries_envs = script_envs.uses_envs(spec.env_id)
    if carries_envs:
        out += [""] + script_envs.script_lines() + [""]
    out += _main_lines(scenario, adapter, carries_envs)
    return "\n".join(out) + "\n"


def _main_lines(scenario: Scenario, adapter, carries_envs: bool = False) -> list[str]:
    fx, owner = scenario.fixture, scenario.owner
    init = _fixture_init(scenario)
    need_address = fx != "local"
    lines = ["", "def main(argv=None):",
             "    global ACTOR_NAME, USER_INIT",
             "    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])",
             "    p.add_argument('--address', " + ("required=True, " if need_address else "")
             + "help='the Ray cluster (GCS address)'" + ("" if need_address else
                                                          ", default='local'") + ")",
             "    p.add_argument('--actor-name', default=ACTOR_NAME, "
             "help='name of the named eval worker')",
             "    args = p.parse_args(argv)",
             "    ACTOR_NAME = args.actor_name",
             *([f"    {script_envs.CALL}"] if carries_envs else []),
             "    faulthandler.enable()",
             "    _watch_runtime_calls()",
             "    # Where a plain ray.init() (the implementation's, or Ray's own auto-init on a",
             "    # stale handle) goes, as in the suite: never to a stray cluster on this machine.",
             "    os.environ['RAY_ADDRESS'] = args.address"]
    if fx == "local":
        kwargs = "".join(f", {k}={v!r}" for k, v in init.items() if k != "address")
    else:
        kwargs = ""
    namespace = "" if scenario.spec.get("ray_init") == "bare" else ", namespace=NAMESPACE"
    lines += ["    # how the user calls ray.init (at the start for owner=user, and to restart Ray)",
              f"    USER_INIT = dict(address=args.address{kwargs}{namespace})"]
    if owner == "user":
        lines += ["    # owner=user: the user starts (or joins) Ray before building anything",
                  f"    faulthandler.dump_traceback_later({INIT_DEADLINE}, exit=True)",
                  "    ray.init(**USER_INIT)",
                  "    faulthandler.cancel_dump_traceback_later()"]
    else:
        lines += ["    # owner=impl: no ray.init here; the implementation starts Ray itself"]
    lines += ["    _probe()",
              "    started = set(threading.enumerate())  # the threads before any operation",
              "    THREADS_BEFORE.update(started)  # for an op that waits for the library's threads",
              "    for i, name, fn, deadline, needs, probe, settle, reads in OPS:",
              "        before = _guarded(_before_teardown, settle) if reads == 'released' else None",
              "        outcome = _step(i, name, fn, deadline, needs)",
              "        if reads == 'released' and (outcome or '').startswith('ok'):",
              "            _threads_left(started)  # first: a thread may end any moment now",
              "            _released(before)",
              "        if reads == 'left' and (outcome or '').startswith('raised'):",
              "            left = _guarded(_left_behind)",
              "            if isinstance(left, Exception):",
              "                print(f'      job actors: unknown ({_qualname(left)}: {left})', flush=True)",
              "        if (outcome or '').startswith('interrupted'):",
              "            settle = None  # as the suite: an interrupted teardown may not be done",
              "        _probe(settle, actors=probe)",
              "    print('all operations returned; the interpreter exits with the components as '",
              "          'the operations left them', flush=True)",
              "    # The exit guard: atexit handlers and finalizers run now; an exit that does",
              "    # not finish within the bound is a hang.",
              f"    faulthandler.dump_traceback_later({exit_bound(adapter)}, exit=True)"]
    if owner == "user" and not scenario.tests_interpreter_exit:
        lines += ["    if ray.is_initialized():  # the user who started Ray ends with it, as in the suite",
                  "        ray.shutdown()"]
    lines += ["    return 0",
              "",
              "",
              "if __name__ == '__main__':",
              "    sys.exit(main())"]
    return lines


def main(args) -> int:
    from conformance import catalog
    from conformance.adapters.registry import UsageError, load_adapter

    try:
        adapter = load_adapter(args.impl)
        scenario = catalog.load(args.scenario_id)
        text = generate(scenario, adapter, impl_name=args.impl)
    except (UsageError, KeyError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    missing = adapter.unsupported(scenario.requires)
    if missing:
        print(f"note: {adapter.name} does not support {', '.join(missing)}: those operations "
              "are comments in the script (the suite skips this scenario)", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        import os

        os.chmod(args.out, 0o755)
        print(f"script: {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
