"""Run one scenario in an isolated driver and turn the run into a result."""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
import weakref

from conformance.cluster.after_exit import Ledger, actors_after_exit, kill_zombies, recorded_handles
from conformance.judge import conventions
from conformance.ops.budgets import FINAL_PROBE_DEADLINE, INIT_DEADLINE, PROBE_DEADLINE, exit_bound
from conformance.ops.history import History, HistoryFile, last_phase, read_history
from conformance.run.cpu_pressure import CpuPressure, describe as describe_load
from conformance.ops.scenario import Op
from conformance.ops.verbs import deadline_of, optional_feature_of
from conformance.judge.oracles import Run
from conformance.judge.verdict import decide, texts

STDERR_TAIL = 4000


def interpreter() -> str:
    """The Python running the suite, as a command pasted at the repository
    root names it: ``.venv/bin/python`` when it lives inside the root, its
    absolute path otherwise (a bare ``python`` is the machine's, which a
    newcomer's shell found without Ray: 2026-11-26)."""
    from fixtures.rayenv import REPO_ROOT

    exe = os.path.abspath(sys.executable)
    inside = os.path.commonpath([exe, str(REPO_ROOT)]) == str(REPO_ROOT)
    return os.path.relpath(exe, REPO_ROOT) if inside else exe


def repro_command(scenario_id: str, impl: str, address: str | None = None) -> str:
    """The command that runs the scenario again, pasted at the repository
    root, with the suite's interpreter (``interpreter``) and the
    ``PYTHONPATH`` an adapter of the user's own (``pkg.mod:attr``) needs when
    it lives outside the repository root (``ci/example-fork``)."""
    cmd = [interpreter(), "-m", "conformance", "repro", scenario_id, "--impl", impl]
    if address:
        cmd += ["--ray-address", address]
    root = _import_root(impl)
    prefix = f"PYTHONPATH={shlex.quote(root)} " if root else ""
    return prefix + " ".join(shlex.quote(c) for c in cmd)


def _import_root(impl: str) -> str | None:
    """The folder a ``pkg.mod:attr`` adapter is imported from, when that is
    not the repository root (relative to it when inside); None otherwise."""
    import importlib.util

    from fixtures.rayenv import REPO_ROOT

    if ":" not in impl:
        return None
    try:
        spec = importlib.util.find_spec(impl.split(":", 1)[0].split(".")[0])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    where = spec.submodule_search_locations[0] if spec.submodule_search_locations else spec.origin
    root = os.path.dirname(os.path.abspath(where))
    if root == str(REPO_ROOT):
        return None
    inside = os.path.commonpath([root, str(REPO_ROOT)]) == str(REPO_ROOT)
    return os.path.relpath(root, REPO_ROOT) if inside else root


def scenario_deadline(scenario, adapter) -> float:
    """The parent's bound on a driver: the user's ray.init, each op with its
    probe, the final probe and the exit, each at its own deadline, plus 180 s.
    The driver's own watchdogs fire first; this one is the outer guard."""
    from conformance.adapter import Spec

    spec = Spec.for_scenario(scenario)
    ops = sum(deadline_of(o, adapter, spec) + PROBE_DEADLINE for o in scenario.ops)
    return INIT_DEADLINE + ops + FINAL_PROBE_DEADLINE + exit_bound(adapter) + 180.0


def teardown_bound_of(scenario, adapter) -> float:
    """The bound a scenario's teardowns are judged against: the one the
    scenario gives the components (``Spec.teardown_timeout``: only for an
    adapter with the feature of that name), else the adapter's."""
    return float(scenario.spec.get("teardown_timeout", adapter.teardown_bound))


def preload_modules(adapter) -> list[str]:
    """What the zygote imports once, so that drivers start warm."""
    return ["conformance.run.driver", "conformance.ops.verbs", "fixtures.gcs",
            type(adapter).__module__, *adapter.preload]


#: the driver's entry point: module, function (called with the request path)
DRIVER_ENTRY = ("conformance.run.driver", "main")


def start_scenario(scenario, impl: str, adapter, session, workdir: str,
                   address: str | None = None, entry: tuple = DRIVER_ENTRY):
    """Prepare the fixture and spawn ``scenario``'s driver: a ``DriverRun``.
    ``entry`` names another driver main (the harness's own honesty tests wrap
    the driver with injected faults)."""
    from fixtures.runner import DriverRun, driver_request

    os.makedirs(workdir, exist_ok=True)
    fixture, info = session.prepare(scenario.fixture, address)
    history_path = history_file(workdir)
    if os.path.exists(history_path):
        os.remove(history_path)
    request = {"scenario": scenario.to_dict(), "impl": impl, "fixture": info,
               "paths": {"history": history_path}, "namespace": run_namespace()}
    request_path = os.path.join(workdir, "request.json")
    with open(request_path, "w") as f:
        json.dump(request, f)
    spawn = driver_request(entry[0], entry[1], [*entry[2:], request_path],
                           session.next_driver_marker(), workdir, fixture.driver_env())
    driver = DriverRun(session.zygote, spawn, scenario_deadline(scenario, adapter))
    Ledger.of(session).spawned(info, cleanup_env(session, fixture), driver.pid,
                               driver.started_wall, history_path)
    return driver


def run_namespace() -> str:
    """The Ray namespace of this run's drivers: a run's named actors never
    meet another run's (or a user's) on a shared cluster."""
    from fixtures.session import run_marker

    return f"rlc-conformance-{run_marker()}"


def cleanup_env(session, fixture) -> dict:
    """The variables of the cleanup driver (``conformance.cluster.cleanup``) of a
    fixture: a driver of it, marked as the session's."""
    from fixtures.rayenv import ray_env

    return {**ray_env(os.path.join(session.tmpdir, "cleanup"), f"{session.marker}:cleanup"),
            **fixture.driver_env()}


def history_file(workdir: str) -> str:
    return os.path.join(workdir, "history.jsonl")


class EarlyStart:
    """Starting the next scenario's driver while this one exits, in one
    place: which drivers were started ahead (per session), when to start
    one, and adopting or stopping them.

    When a driver has written its "exiting" record, the driver of the
    worker's next test starts if that one is a scenario the implementation
    supports on a fixture whose drivers start their own Ray
    (``overlap_start``): one driver's exit then overlaps the next one's
    start-up instead of leaving the cores idle.
    """

    _by_session: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def __init__(self, session):
        self.session = session
        self.started: dict = {}  # scenario id -> DriverRun started ahead of its test

    @classmethod
    def of(cls, session) -> "EarlyStart":
        if session not in cls._by_session:
            cls._by_session[session] = cls(session)
        return cls._by_session[session]

    def trigger(self, upcoming, impl: str, adapter, workdir_factory, address=None):
        """What ``run_scenario(then=...)`` calls once the current driver exits:
        start ``upcoming``'s driver, or None when it is not to start early."""
        from fixtures.clusters import FIXTURE_CLASSES

        if (upcoming is None or adapter.unsupported(upcoming.requires)
                or not FIXTURE_CLASSES[upcoming.fixture].overlap_start):
            return None
        return lambda: self.start(upcoming, impl, adapter, workdir_factory(), address)

    def start(self, scenario, impl: str, adapter, workdir: str, address=None) -> None:
        """Start ``scenario``'s driver now; ``run_scenario`` adopts it later.
        A failure here is left for ``run_scenario`` to meet again (and report)."""
        try:
            self.started[scenario.id] = start_scenario(
                scenario, impl, adapter, self.session, workdir, address)
        except Exception:  # noqa: BLE001 - the scenario's own run reports it
            pass

    def adopt(self, scenario_id: str):
        """The driver started ahead for ``scenario_id`` (or None); every other
        one is killed: a test this process did not run next (``--dist
        worksteal`` gave it to another worker) must not run unobserved next
        to this scenario, on the same cluster."""
        driver = self.started.pop(scenario_id, None)
        while self.started:
            _, stale = self.started.popitem()
            stale.stop()
        return driver


def run_scenario(scenario, impl: str, adapter, session, workdir: str,
                 address: str | None = None, then=None, entry: tuple = DRIVER_ENTRY) -> dict:
    """Execute ``scenario`` against ``impl``; return its report entry.

    Adopts the driver started for it ahead (``EarlyStart``), if any.
    ``then()`` runs once the driver has written its "exiting" record
    (operations and probes done, the interpreter exit under way): see
    ``EarlyStart.trigger``.
    """
    pressure = CpuPressure()
    driver = EarlyStart.of(session).adopt(scenario.id)
    driver = driver or start_scenario(scenario, impl, adapter, session, workdir, address, entry)
    history_path = history_file(driver.request["cwd"])  # a prestarted driver's own workdir
    if then is not None:
        driver.wait_for(lambda: last_phase(history_path) == "exiting")
        then()
    outcome = driver.finish()
    duration = time.monotonic() - driver.started
    history = History(read_history(history_path), expected_ops=len(scenario.ops))
    with open(os.path.join(driver.request["cwd"], "request.json")) as f:
        fixture_info = json.load(f)["fixture"]
    peer_pid = (history.setup or {}).get("peer_pid")
    after_exit = actors_after_exit(
        fixture_info, history.final, [driver.pid, peer_pid], driver.started_wall, time.time(),
        cleanup_env(session, session.cluster(scenario.fixture, address)), driver.request["cwd"],
        recorded_handles(history.records))
    Ledger.of(session).exited(driver.pid, peer_pid, after_exit.get("jobs"))
    zombies_killed = kill_zombies(history.final)
    if zombies_killed:
        after_exit = {**after_exit, "zombies_killed": zombies_killed}
    run = Run(
        scenario=scenario, history=history, exit_code=outcome.exit_code,
        signal=outcome.signal, hung=outcome.hung, stderr=outcome.stderr or "",
        stack_dump=outcome.stack_dump, leftover=list(outcome.leftover or []),
        after_exit=after_exit, teardown_bound=teardown_bound_of(scenario, adapter),
        closed_errors=tuple(f"{t.__module__}.{t.__qualname__}" for t in adapter.closed_errors),
        documented_defaults=adapter.documented_defaults, features=frozenset(adapter.features),
    )
    entry = result_entry(scenario, impl, run, decide(run), duration, address)
    entry["timings"] = phase_times(history, duration, outcome.duration)
    # from the driver's adoption (or start) to the verdict
    entry["evidence"]["cpu_pressure"] = pressure.share()
    return entry


def entry(scenario, verdict: str, **fields) -> dict:
    """A report entry with every key a reader expects (``fields`` over the
    defaults); ``scenario`` is a Scenario, or only its id when the test never
    got as far as building one."""
    if isinstance(scenario, str):
        family, fixture, owner, _ = (scenario.split("/", 3) + ["?"] * 4)[:4]
        sid, components, ops = scenario, [], ""
    else:
        family, fixture, owner = scenario.family, scenario.fixture, scenario.owner
        sid, components, ops = scenario.id, list(scenario.components), scenario.describe()
    return {"id": sid, "family": family, "fixture": fixture, "owner": owner,
            "components": components, "verdict": verdict, "oracles": [], "unsupported": [],
            "unsupported_features": [], "not_built": [], "not_checked": [], "unknown": [], "findings": [], "evidence": {},
            "repro": "", "duration": 0, "ops": ops, **fields}


def _op_notes(ops: list[dict], status: str) -> list[str]:
    """One line per op of the history that ended with ``status``."""
    return [f"op {r['i']} {r['op']['verb']} {r['op'].get('target') or ''}: "
            f"{r['status']}: {r['result'].get('reason')}".replace("  ", " ")
            for r in ops if r.get("status") == status]


def skip_entry(scenario, impl_name: str, missing: list[str]) -> dict:
    """A scenario the implementation cannot run: the features it lacks."""
    return entry(scenario, "skip", evidence={
        "reason": f"{impl_name} does not support {', '.join(missing)}",
        "missing_features": list(missing)})


def result_entry(scenario, impl, run, decision, duration, address=None) -> dict:
    """The report entry of a judged run (``decision``: ``verdict.decide``'s)."""
    convention_gaps = conventions.gaps(scenario, run.features)
    return entry(
        scenario, decision.verdict,
        oracles=sorted(decision.violations),
        # coverage: ops not done because the implementation lacks a feature
        # (unsupported), and ops on a component that was never built (e.g. a
        # constructor allowed to fail with its defaults, that did): two
        # different things, counted apart; and the rules left unchecked
        # because of a missing feature
        unsupported=_op_notes(run.history.ops, "unsupported"),
        # the feature each of those ops lacked (what a claim of it does not cover)
        unsupported_features=[optional_feature_of(Op.from_dict(r["op"]))
                              for r in run.history.ops if r.get("status") == "unsupported"],
        not_built=_op_notes(run.history.ops, "skipped"),
        not_checked=sorted({o for r in run.history.ops if r.get("status") == "unsupported"
                            for o in r["result"].get("not_checked", [])}
                           | set(convention_gaps)),
        # oracles that could not answer (and "harness": what the harness failed
        # to do); any of them without a violation makes the verdict "error"
        unknown=sorted(decision.unknown),
        # every finding as data, earliest first (conformance.judge.findings)
        findings=[f.as_dict(oracle) for oracle, f in decision.ordered()],
        evidence={
            "violations": texts(decision.violations),
            "unknown": texts(decision.unknown),
            # oracle -> why it was not checked for an op (a convention the
            # adapter does not declare, conformance.judge.conventions)
            "not_checked": convention_gaps,
            "missing": run.history.missing(),
            "history": format_history(run.history),
            "exit_code": run.exit_code,
            "signal": run.signal,
            "stderr_tail": (run.stderr or "")[-STDERR_TAIL:],
            "stack_dump": run.stack_dump,
            "leftover": run.leftover,
            "after_exit": run.after_exit,
        },
        repro=repro_command(scenario.id, impl, address),
        duration=round(duration, 2),
        # the driver's own time, up to its interpreter exit (the rest is the harness's)
        driver_time=(run.history.exiting or {}).get("t"),
    )


def phase_times(history: History, duration: float, exited: float) -> dict | None:
    """Where the wall time went, in seconds: ``setup`` (adapter, Ray init or
    connect), ``construct`` and ``ops`` (the operations), ``probes`` (after
    each op and at the end, incl. waiting for killed actors' processes),
    ``exit`` (the user's ``ray.shutdown()``, atexit handlers, the interpreter's
    exit) and
    ``sweep`` (the harness waiting for the driver's processes to go).
    ``exited``: seconds from spawn to the driver's exit status. None if the
    driver did not get to its exit."""
    if history.setup is None or history.exiting is None:
        return None
    construct = sum(r.get("duration") or 0.0 for r in history.ops if r["op"]["verb"] == "construct")
    ops = sum(r.get("duration") or 0.0 for r in history.ops) - construct
    setup, exiting = history.setup["t"], history.exiting["t"]
    times = {"setup": setup, "construct": construct, "ops": ops,
             "probes": exiting - setup - construct - ops, "exit": exited - exiting,
             "sweep": duration - exited}
    return {k: round(v, 3) for k, v in times.items()}


def format_history(history: History) -> list[str]:
    """One line per operation: index, op, outcome, duration."""
    from conformance.ops.scenario import Op

    lines = []
    if history.setup is not None:
        lines.append(f"setup: owner={history.setup.get('owner')} ray={history.setup.get('ray')}")
    for r in history.ops:
        op = str(Op.from_dict(r["op"]))
        status = r.get("status", "?")
        dur = r.get("duration")
        line = f"{r['i']:>3} {op:<48} {status:<10}" + (f" {dur:.3f}s" if dur is not None else "")
        if r.get("error"):
            line += f"  {r['error']['type']}: {r['error']['message'][:160]}"
        lines.append(line)
        peer = (r.get("result") or {}).get("history") if r["op"]["verb"] == "peer" else None
        if isinstance(peer, dict):  # the second driver's own history, indented
            res = r["result"]
            lines += [f"      second driver: {x}" for x in format_history(History(
                HistoryFile(records=peer.get("records") or [])))]
            lines.append(f"      second driver: exit code {res.get('exit_code')}"
                         + (" (killed at its deadline)" if res.get("timed_out") else ""))
    if history.final is not None:
        lines.append(f"final: ray={history.final.get('ray')}")
    return lines


def failure_message(entry: dict) -> str:
    """What a user sees when a scenario does not pass."""
    ev = entry["evidence"]
    out = [f"{entry['verdict'].upper()}: {entry['id']}", f"ops: {entry['ops']}", ""]
    if entry["verdict"] == "error":
        out += ["The harness could not observe this scenario as written: this is not a "
                "verdict on the implementation, and not a pass.", ""]
    for oracle, msgs in ev["violations"].items():
        out.append(f"[{oracle}]")
        out += [f"  - {m}" for m in msgs[:8]]
    for oracle, msgs in (ev.get("unknown") or {}).items():
        out.append(f"[{oracle}: unknown]")
        out += [f"  - {m}" for m in msgs[:8]]
    if ev.get("missing"):
        out.append(f"history incomplete: lacks {'; '.join(ev['missing'])}")
    out += ["", "history:"] + [f"  {line}" for line in ev["history"]]
    if ev.get("exit_code") is not None or ev.get("signal"):
        out.append(f"driver exit code {ev.get('exit_code')}, signal {ev.get('signal')}")
    out += describe_load(entry)
    if ev.get("stack_dump"):
        dump = ev["stack_dump"]
        cut = f" (its last 3000 of {len(dump)} characters; all of it: the report's " \
              "evidence.stack_dump)" if len(dump) > 3000 else ""
        out += ["", f"stack dump{cut}:", dump[-3000:]]
    if ev.get("stderr_tail"):
        out += ["", "stderr (tail):", ev["stderr_tail"][-2500:]]
    out += ["", f"reproduce: {entry['repro']}"]
    return "\n".join(out)
