"""A standalone reproduction script of one scenario, for a maintainer.

    python -m conformance script SCENARIO_ID --impl NAME [-o FILE]

The script runs the scenario's operations in order, in one plain Python
process, without this project: it imports only ray, torch, tensordict,
gymnasium and the implementation's own package. Each operation prints a line
when it starts (so an abort inside Ray still names it) and one with its
outcome (``ok`` / ``raised Type: message``) and duration; a few probes (the
Ray session, the component's actor states) follow the operations that may
change them. ``faulthandler.dump_traceback_later`` guards every operation
and the interpreter exit with the suite's own deadlines: a hang dumps every
thread's stack and ends the process with exit code 1.

The script only executes; it never judges. The verdict stays with the suite
(``python -m conformance repro``).

Code per operation comes from two places:

- the adapter (``script_header()``, ``script_actors(component)``,
  ``script_lines(op, spec)``): construction, teardown and the component
  verbs, written against the implementation's API exactly as the adapter
  calls it; the helpers below (``default_lines``, ``teardown_lines``,
  ``check_alive_lines``) build the common shapes;
- this module, for the verbs that need only Ray and the component's actor
  handles: ``kill`` (``ray.kill``, SIGKILL of the actor's pid, ``os._exit``
  or a sleep through ``__ray_call__``), ``ray_shutdown``, ``check_name``,
  ``drop`` and ``peer`` (a second driver: a nested script run with the same
  Python).

An operation the adapter does not support, or that a standalone script
cannot do (removing a node of a cluster it does not own), is a comment and
prints ``skipped``.
"""
from __future__ import annotations

import inspect
import sys
import textwrap
from types import SimpleNamespace

from conformance import ops as verbs
from conformance.adapter import Spec
from conformance.catalog.build import requirements
from conformance.driver import INIT_DEADLINE, exit_bound, op_deadline, tests_interpreter_exit
from conformance.scenario import Op, Scenario

#: The variable a snippet uses for the named eval worker's name (a CLI argument).
ACTOR_NAME = "ACTOR_NAME"
_NAME_SENTINEL = "\x00actor-name\x00"
#: Verbs after which the script prints the Ray session and the actor states.
PROBED = ("construct", "exhaust", "teardown", "kill", "kill_landed", "ray_shutdown",
          "ray_restart", "drop")


class ScriptError(ValueError):
    """The adapter cannot write scripts."""


# -- helpers for adapters' snippets ----------------------------------------------

def call_expr(call: str, spec: Spec, submit: str | None = None) -> str | None:
    """The expression of one component verb, as ``use`` and the verbs call it
    (``conformance.ops.USE_VERBS``) through a torchrl-like API."""
    return {
        "iterate": "next(iter(collector))",
        "start": "collector.start()",
        "sample": "buffer.sample(4)",
        "extend": "buffer.extend(_batch(4))",
        "len": "len(buffer)",
        "submit": submit,
        "poll": "evaluator.poll(0.5)",
    }.get(call)


def default_lines(op: Op, spec: Spec, *, submit: str | None = None,
                  length: str = "len(buffer)") -> list[str] | None:
    """Body lines of the component verbs for a torchrl-like API (the defaults
    of :class:`conformance.adapter.Adapter`): ``iter(collector)``,
    ``collector.start()``, ``buffer.sample/extend``, ``len(buffer)``,
    ``evaluator.submit/poll``. ``submit`` is the adapter's submit call.
    None for a verb this does not cover."""
    a = op.args
    if op.verb == "iterate":
        k = int(a.get("batches", 1))
        if k <= 0:
            return ["# batches=0: the collector is never iterated",
                    "return '0 batches'"]
        return ["n = 0",
                "for _ in collector:",
                "    n += 1",
                f"    if n >= {k}:",
                "        break  # an early break, as a user's loop does",
                "return f'{n} batches'"]
    if op.verb == "exhaust":
        return ["n = 0",
                f"for _ in collector:  # until total_frames={spec.total_frames}",
                "    n += 1",
                "return f'{n} batches'"]
    if op.verb == "start":
        note = f"  # expected to fail: {a['fail']}" if a.get("fail") else ""
        return [f"collector.start(){note}"]
    if op.verb == "wait_frames":
        want, limit = int(a.get("frames", 1)), float(a.get("timeout", 60))
        return ["t0 = time.monotonic()",
                f"n = {length}",
                f"while n < {want}:",
                f"    if time.monotonic() - t0 > {limit}:",
                f"        raise TimeoutError(f'buffer holds {{n}} frames after {limit}s, wanted {want}')",
                "    time.sleep(0.05)",
                f"    n = {length}",
                "return f'{n} frames'"]
    if op.verb == "sample":
        return [f"data = buffer.sample({int(a.get('batch_size', 8))})",
                "return f'numel={data.numel()}'"]
    if op.verb == "extend":
        return [f"buffer.extend(_batch({int(a.get('frames', 8))}))"]
    if op.verb == "submit":
        return None if submit is None else [submit]
    if op.verb == "poll":
        return [f"result = evaluator.poll({float(a.get('timeout', 0))})",
                "return 'ready' if result is not None else 'not ready'"]
    if op.verb == "check_data":
        at_least = int(a.get("at_least", 1))
        return [f"n = {length}",
                f"return f'{{n}} frames (the buffer held at least {at_least} before)'"]
    if op.verb == "use":
        expr = call_expr(a["call"], spec, submit)
        if expr is None:
            return None
        if a["call"] == "len":
            expr = length
        return ["# after teardown: the contract wants a clear 'closed' error, at once",
                f"return repr({expr})"]
    return None


def teardown_lines(call: str, op: Op) -> list[str]:
    """A teardown call, ``times`` times, from the main thread, another thread or
    ``concurrent`` threads at once (as ``conformance.ops.teardown``)."""
    a = op.args
    times, concurrent = int(a.get("times", 1)), int(a.get("concurrent", 1))
    thread = a.get("thread", "main")
    if times == 1 and concurrent == 1 and thread == "main":
        return [call]
    return [f"_teardown(lambda: {call}, times={times}, concurrent={concurrent}, thread={thread!r})"]


def check_alive_lines(expr: str, op: Op) -> list[str]:
    """Poll ``expr`` (an is_alive() call) until it equals ``expect`` or ``within`` passes."""
    expect = bool(op.args.get("expect", False))
    within = float(op.args.get("within", 5.0))
    return ["t0 = time.monotonic()",
            "while True:",
            f"    value = bool({expr})",
            "    elapsed = time.monotonic() - t0",
            f"    if value == {expect} or elapsed > {within}:",
            "        break",
            "    time.sleep(0.1)",
            f"return f'is_alive() = {{value}} after {{elapsed:.2f}}s (expected {expect} within {within}s)'"]


class Code(str):
    """Source text that :func:`call_lines` writes as is (a name, an expression)."""

    def __repr__(self) -> str:
        return str(self)


def _literal(value) -> str:
    if callable(value) and hasattr(value, "__name__"):  # a module-level function
        return value.__name__
    return repr(value)


def call_lines(head: str, args, kwargs: dict) -> list[str]:
    """``head(arg, ..., key=value, ...)``, one argument per line."""
    return ([f"{head}("] + [f"    {_literal(v)}," for v in args]
            + [f"    {k}={_literal(v)}," for k, v in kwargs.items()] + [")"])


def source_of(obj) -> list[str]:
    """The source lines of a module-level function or class (for the header)."""
    return textwrap.dedent(inspect.getsource(obj)).rstrip().splitlines()


# -- generic verbs -------------------------------------------------------------------

def _generic_lines(op: Op, adapter, scenario: Scenario, spec: Spec) -> list[str] | None:
    a = op.args
    if op.verb == "ray_shutdown":
        return ["ray.shutdown()  # the user's own"]
    if op.verb == "ray_restart":
        return ["ray.shutdown()  # the user restarts Ray: the components' handles are stale now",
                "ray.init(**USER_INIT)"]
    if op.verb == "drop":
        return ["global collector, buffer, evaluator",
                "collector = buffer = evaluator = None  # every reference to every component",
                "gc.collect()"]
    if op.verb == "check_name":
        return ["if not ray.is_initialized():  # ray.get_actor would start a new runtime",
                "    return 'not looked up: Ray is not initialized here'",
                "try:",
                f"    ray.get_actor({ACTOR_NAME}, namespace=ray.get_runtime_context().namespace)",
                "    return f'{ACTOR_NAME!r} is registered'",
                "except ValueError:",
                "    return f'{ACTOR_NAME!r} is not registered'"]
    if op.verb == "kill" and a.get("during"):
        now = _generic_lines(Op("kill", op.target, {k: v for k, v in a.items()
                                                    if k not in ("during", "after")}),
                             adapter, scenario, spec)
        if now is None:
            return None
        after = float(a.get("after", 0.5))
        body = [line for line in now[1:] if not line.startswith("return ")]
        return [now[0], "", "def _land():"] + ["    " + line for line in body] + [
            "", f"# lands {after}s into the next op ({a['during']}): a call in flight",
            f"_ARMED.append(threading.Timer({after}, _land))",
            f"return 'armed: lands {after}s into the next {a['during']}'"]
    if op.verb == "kill_landed":
        return ["timer = _ARMED.pop(0)", "timer.join()", "return 'the armed kill landed'"]
    if op.verb == "kill":
        how, index = a.get("how", "ray_kill"), int(a.get("index", 0))
        head = [f"handle = ({adapter.script_actors(op.target)})[{index}]"]
        if how == "ray_kill":
            return head + ["ray.kill(handle)"]
        if how == "sigkill":
            return head + ["pid = _actor_pid(handle)",
                           "os.kill(pid, signal.SIGKILL)  # the actor's worker process (this machine)",
                           "return f'SIGKILL to pid {pid}'"]
        if how == "exit":
            return head + ["handle.__ray_call__.remote(lambda self: os._exit(1))  # inside the actor"]
        if how == "hang":
            return head + ["handle.__ray_call__.remote(lambda self: time.sleep(3600))  # the actor hangs"]
        return None  # remove_node: see unsupported_reason
    if op.verb == "peer":
        sub = Scenario(family=scenario.family, fixture="external", owner="user",
                       variant=scenario.variant + "#peer",
                       ops=tuple(Op.from_dict(o) for o in a["ops"]), spec=scenario.spec)
        text = generate(sub, adapter, impl_name=getattr(adapter, "name", "?"), peer=True)
        return ["# a second driver (a fresh interpreter) runs these ops against the",
                "# named eval worker: " + sub.describe(),
                f"return _run_peer({text!r})"]
    return None


def unsupported_reason(op: Op, adapter, scenario: Scenario) -> str | None:
    """Why the script cannot run ``op`` (None: it can)."""
    optional = verbs.VERBS[op.verb].optional_feature
    missing = adapter.unsupported(requirements([op]) + ((optional,) if optional else ()))
    if missing:
        return f"{adapter.name} does not support {', '.join(missing)}"
    if op.verb == "kill" and op.args.get("how") == "remove_node":
        return ("removing a node is not done by a standalone script: kill every process of "
                "the node hosting the actor (e.g. `ray stop --force` on that machine) here")
    return None


def op_lines(op: Op, adapter, scenario: Scenario, spec: Spec) -> list[str] | None:
    if op.verb in ("ray_shutdown", "ray_restart", "drop", "check_name", "kill", "kill_landed",
                   "peer"):
        return _generic_lines(op, adapter, scenario, spec)
    op_spec = spec
    if op.verb == "construct":
        op_spec = verbs._spec_for(SimpleNamespace(spec=spec, actor_name=_NAME_SENTINEL), op)
    lines = adapter.script_lines(op, op_spec)
    if lines is None:
        return None
    lines = [line.replace(repr(_NAME_SENTINEL), ACTOR_NAME) for line in lines]
    if op.verb == "construct":
        fail = op.args.get("fail")
        if fail:
            lines.insert(0, f"# expected to fail clearly ({fail}) and leave no actor behind")
        lines = ([f"global {op.target}"] + lines
                 + [f"return _record({op.target!r}, {adapter.script_actors(op.target)})"])
    return lines


# -- the script ------------------------------------------------------------------------

RUNTIME = '''
collector = buffer = evaluator = None  # the components, as the operations leave them
ACTOR_IDS = {}  # component -> ids of the actors it created (recorded at construction)
_LAST_RAY = ["?"]
_ARMED = []  # kills armed to land inside the next operation (threading.Timer, not started)


class Unsupported(Exception):
    """An operation this script does not run (see its comment)."""


def _qualname(exc):
    t = type(exc)
    return f"{t.__module__}.{t.__qualname__}"


def _record(component, handles):
    ACTOR_IDS[component] = [h._actor_id.hex() for h in handles]
    return f"{len(handles)} actor(s)"


def _actor_pid(handle):
    """The pid of an actor's worker process, from the GCS actor table."""
    from ray._private import state

    return state.actors(actor_id=handle._actor_id.hex())["Pid"]


def _ray_session():
    """The connected Ray runtime (GCS address/session/job), never starting one."""
    identity = runtime_identity()
    return "not initialized" if identity is None else "/".join(str(x) for x in identity)


def _actor_states(settle=None):
    """{component: [state, ...]} of the recorded actors; waits up to 5 s for the
    actors of ``settle`` to leave ALIVE (a kill or a teardown is asynchronous)."""
    if not ray.is_initialized() or not ACTOR_IDS:
        return None
    from ray._private import state

    def states():
        out = {}
        for comp, ids in ACTOR_IDS.items():
            row = []
            for aid in ids:
                try:
                    row.append(state.actors(actor_id=aid).get("State", "unknown"))
                except Exception as exc:  # noqa: BLE001
                    row.append(f"unknown ({type(exc).__name__})")
            out[comp] = row
        return out

    t0 = time.monotonic()
    while True:
        out = states()
        live = [s for s in out.get(settle, []) if s in ("ALIVE", "PENDING_CREATION", "RESTARTING")]
        if not live or time.monotonic() - t0 > 5.0:
            return out
        time.sleep(0.1)


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
    except KeyboardInterrupt:
        raise
    except Unsupported as exc:
        outcome = f"skipped (unsupported: {exc})"
    except BaseException as exc:  # noqa: BLE001 - every outcome is printed
        outcome = f"raised {_qualname(exc)}: {str(exc)[:500]}"
    finally:
        faulthandler.cancel_dump_traceback_later()
    print(f"[{i}] {name}: {outcome} ({time.monotonic() - t0:.3f}s)", flush=True)
'''

BATCH = '''
def _batch(n):
    """A small CartPole-shaped batch, as a collector writes it."""
    import torch
    from tensordict import TensorDict

    return TensorDict(
        {
            "observation": torch.zeros(n, 4),
            "action": torch.zeros(n, dtype=torch.int64),
            ("next", "observation"): torch.zeros(n, 4),
            ("next", "reward"): torch.ones(n, 1),
            ("next", "done"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "terminated"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "truncated"): torch.zeros(n, 1, dtype=torch.bool),
        },
        batch_size=[n],
    )
'''


def _fixture_init(scenario: Scenario) -> dict:
    from fixtures.clusters import LocalFixture

    return LocalFixture().info()["init"]


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
        "It needs only ray, torch, tensordict, gymnasium and the implementation's package.\n\n"
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
    for method in ("script_header", "script_actors", "script_lines"):
        if not callable(getattr(adapter, method, None)):
            raise ScriptError(f"adapter {adapter.name!r} cannot write scripts: it has no "
                              f"{method}() (see conformance/script.py)")
    from conformance.report import versions as report_versions

    impl_name = impl_name or adapter.name
    spec = Spec(**{**Spec().to_dict(), **scenario.spec})
    versions = {k: v for k, v in report_versions(adapter).items() if k != "python"}
    out = [_docstring(scenario, adapter, impl_name, versions, peer), "",
           "# As the suite runs (optional; remove to use your defaults): every Ray process",
           "# on 127.0.0.1, no token authentication (Ray >= 2.60), no usage stats.",
           "import os",
           "",
           'os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")',
           'os.environ.setdefault("RAY_AUTH_MODE", "disabled")',
           'os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")',
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
    out += adapter.script_header()
    out += ["", "", f"NAMESPACE = {spec.namespace!r}",
            f"ACTOR_NAME = 'rlc-eval-{{}}'.format(os.getpid())  # set by --actor-name", ""]
    from impl.runtime import runtime_identity  # the suite's and the reference's definition

    out += ["", ""] + source_of(runtime_identity)
    out += [""] + RUNTIME.strip("\n").splitlines() + ["", ""] + BATCH.strip("\n").splitlines()
    table = []
    for i, op in enumerate(scenario.ops):
        out += ["", ""]
        name = str(op)
        why = unsupported_reason(op, adapter, scenario)
        lines = None if why else op_lines(op, adapter, scenario, spec)
        if lines is None and not why:
            why = f"the {adapter.name} adapter has no script snippet for {op.verb}"
        if why:
            out += [f"def op_{i}():", f"    # {name}: unsupported: {why}",
                    f"    raise Unsupported({why!r})"]
        else:
            out += [f"def op_{i}():", f"    # {name}"] + [f"    {line}" if line else ""
                                                         for line in lines]
        needs = op.target if (op.target and op.verb != "construct") else None
        deadline = op_deadline(op, adapter, spec)
        table.append(f"    ({i}, {name!r}, op_{i}, {deadline}, {needs!r}, {op.verb in PROBED}, "
                     f"{(op.target if op.verb in ('teardown', 'exhaust') else None)!r}),")
    out += ["", "", "OPS = [  # (index, operation, function, deadline in s, needs, probe, settle)"]
    out += table + ["]", ""]
    out += _main_lines(scenario, adapter)
    return "\n".join(out) + "\n"


def _main_lines(scenario: Scenario, adapter) -> list[str]:
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
             "    faulthandler.enable()",
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
              "    for i, name, fn, deadline, needs, probe, settle in OPS:",
              "        _step(i, name, fn, deadline, needs)",
              "        _probe(settle, actors=probe)",
              "    print('all operations returned; the interpreter exits with the components as '",
              "          'the operations left them', flush=True)",
              "    # The exit guard: atexit handlers and finalizers run now; an exit that does",
              "    # not finish within the bound is a hang.",
              f"    faulthandler.dump_traceback_later({exit_bound(adapter)}, exit=True)"]
    if owner == "user" and not tests_interpreter_exit(scenario):
        lines += ["    if ray.is_initialized():  # the user who started Ray ends with it, as in the suite",
                  "        ray.shutdown()"]
    lines += ["    return 0",
              "",
              "",
              "if __name__ == '__main__':",
              "    sys.exit(main())"]
    return lines


def main(args) -> int:
    from conformance.__main__ import load_scenario
    from conformance.registry import UsageError, load_adapter

    try:
        adapter = load_adapter(args.impl)
        scenario = load_scenario(args)
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
