"""Oracles: one function per lifecycle rule, each judging a recorded run.

An oracle takes a :class:`Run` and returns a list of findings
(:class:`conformance.judge.findings.Finding`; empty: the rule holds, or does not
apply to this run), written with the helpers of ``conformance.judge.findings``
(``at(r, "raised X")`` for op record r). A finding is a violation, or
``unknown``: the rule could not be judged because what it needs was not
observed (a probe that raised or timed out, a GCS that did not answer). As
in Jepsen's checkers, unknown is never valid: a run with an unknown finding
and no violation gets the ``error`` verdict, never ``pass``. ``judge`` runs
each oracle "safely": an oracle that raises, or returns anything but
findings, is unknown too (Jepsen's ``check-safe``). Oracles never execute
anything.
"""
from __future__ import annotations

import math
import re
import signal as signals
from dataclasses import dataclass, field, replace

from conformance.catalog.build import FAILING_ENV
from conformance.judge.conventions import not_checked
from conformance.judge.findings import Finding, at, in_run, label, unknown_at, unknown_in_run
from conformance.ops.history import ANY_NODE, HARNESS_EXIT_CODE, SIDE_PHASES, History, HistoryFile
from conformance.ops.runtime_watch import session_of
from conformance.ops.samples import OBSERVATION_ROW
from conformance.ops.verbs import HARNESS, UNKNOWN_ENV_ID, VERBS, raised_by_harness
from conformance.ops.scenario import Scenario
from conformance.ops.targets import kind_of
from fixtures.watchdog import WATCHDOG_LINE

LIVE_STATES = {"ALIVE", "PENDING_CREATION", "RESTARTING", "DEPENDENCIES_UNREADY"}
GENERIC_ERRORS = {
    "builtins.AttributeError", "builtins.TypeError", "builtins.KeyError",
    "builtins.IndexError", "builtins.NameError", "builtins.AssertionError",
    "builtins.UnboundLocalError", "builtins.NotImplementedError",
}
#: errors that say the implementation's code could not be loaded, never a
#: refusal of what the scenario passed: a constructor expected to fail that
#: raised one did not judge its arguments (a mutant that breaks the module's
#: syntax passed six construction_failure scenarios so, 2026-11-29)
UNLOADABLE_ERRORS = {
    "builtins.SyntaxError", "builtins.IndentationError", "builtins.TabError",
    "builtins.ImportError", "builtins.ModuleNotFoundError",
}
CLOSED_WORDS = re.compile(r"clos|shut ?down|terminat|no longer|not running", re.I)
#: how a line of an error's message says that an env id is not registered:
#: gymnasium's ``NameNotFound: Environment `RlcNoSuchEnv` doesn't exist.``
#: (what the reference, torchrl, RLlib and Tianshou raise or quote, measured
#: in their committed results), old gym's ``No registered env with id: ...``,
#: or "not found", "could not find", "not registered", "unknown env".
#: Words, not an identifier: a line that quotes a traceback's source line
#: (``raise error.NameNotFound(``) does not say what went wrong.
MISSING_WORDS = re.compile(r"does(?:n['’]?t| not) exist|\bnot found|\bcannot be found|"
                           r"could(?:n['’]?t| not) find|\bnot (?:a )?registered|"
                           r"no registered env|unregistered|unknown env|unrecognized env|\bno such env",
                           re.I)
#: how an error says that a buffer holds nothing to sample (``fail=empty``):
#: the reference's "RayReplayBuffer is empty: nothing to sample"; numpy's
#: "high <= 0" of an index drawn from no rows says nothing of the kind
EMPTY_WORDS = re.compile(r"\bempty\b|nothing to sample|\bno (?:data|frames|rows|samples|transitions)\b",
                         re.I)
#: error types that by themselves say an env id is not registered (gymnasium's
#: and old gym's), when the message names the env
MISSING_ENV_TYPES = ("NameNotFound", "NamespaceNotFound", "VersionNotFound", "UnregisteredEnv")
#: the name of the unknown env, without the version an error may leave out
UNKNOWN_ENV_NAME = UNKNOWN_ENV_ID.rsplit("-v", 1)[0]
BOUND_SLACK = 0.25
#: seconds within which what a signal raises must come out of the op it was
#: sent into: Ray's own blocking calls (ray.get, ray.wait without a timeout)
#: look at the signals once a second (a SIGINT into either surfaced 1.0 s
#: later in 4 of 4 runs here, Ray 2.60; a 0.2 s slice: 0.2 s), plus slack for load
INTERRUPT_BOUND = 2.0
#: what a driver's exit looks like when the user's program ends with the
#: signal's exception: an uncaught KeyboardInterrupt exits 1 once Ray is
#: imported (Ray's sys.excepthook; plain Python kills itself with SIGINT:
#: measured, Python 3.11, Ray 2.60); after SIGTERM, Ray's handler exits with
#: 15 (SystemExit(15)), or 1 (Ray turns it into SystemExit(1) inside ray.get/
#: ray.wait), the default action kills with SIGTERM (no handler: Ray never
#: initialized in the main thread), and Ray's C++ failure-signal handler
#: aborts a driver still running 3 s after the SIGTERM (SIGABRT; 4 of 6 runs
#: blocked in ray.get/ray.wait here, whose exit took longer)
SIGNAL_ENDS = {"SIGINT": ({1}, {signals.SIGINT}),
               "SIGTERM": ({1, 15}, {signals.SIGTERM, signals.SIGABRT})}
#: the user's own calls that end (or replace) the driver's Ray runtime
USER_RAY_VERBS = ("ray_shutdown", "ray_restart")
#: verbs whose raise a rule of their own judges (see ``calls_succeed``)
JUDGED_ELSEWHERE = {"teardown", "exhaust", "check_data", "check_alive", "check_error", "construct",
                    "use", "peer", "check_writes"}
#: what an error must name when a fault caused it (``errors_surface``), by the
#: op's ``cause``: the failing env's words (``conformance.envs.FAILURE_TEXT``,
#: kept equal by tests/conformance/test_oracles.py), or an actor's death as
#: Ray reports it (ActorDiedError, RayActorError, ActorUnavailableError) or
#: in words
CAUSES = {
    "env": re.compile(r"fails on purpose"),
    "actor": re.compile(r"Actor(Died|Unavailable)Error|RayActorError|actor\b.*\b(died|dead|killed)"
                        r"|\b(died|dead|killed)\b.*\bactor", re.I | re.S),
}


@dataclass
class Run:
    """Everything known about one scenario run."""

    scenario: Scenario
    history: History
    exit_code: int | None = None
    signal: int | None = None
    hung: bool = False
    stderr: str = ""
    stack_dump: str | None = None
    leftover: list = field(default_factory=list)
    #: the driver's jobs' actors alive after its exit (``conformance.cluster.after_exit``)
    after_exit: dict = field(default_factory=dict)
    teardown_bound: float = 10.0
    closed_errors: tuple = ()  # qualified names
    #: the adapter's ``documented_defaults`` (None: it documents none)
    documented_defaults: dict | None = None
    #: the adapter's features (None: every one); a convention it lacks makes
    #: the findings resting on it not checked (``conformance.judge.conventions``)
    features: frozenset | None = None

    def op_records(self, verb=None, target=None):
        for r in self.history.ops:
            op = r["op"]
            if verb and op.get("verb") != verb:
                continue
            if target and op.get("target") != target:
                continue
            yield r

    @property
    def spec(self):
        from conformance.adapter import Spec

        return Spec.for_scenario(self.scenario)


def _construct_args(run: Run, component: str) -> dict:
    for r in run.op_records("construct", component):
        return r["op"].get("args", {})
    return {}


def _built_with(run: Run, r: dict) -> tuple[int | None, dict]:
    """``(i, args)`` of the build ``r`` acts on: the last construct of its
    target that returned before it (an instance may be built again under
    its name); ``(None, {})`` when none did."""
    last = (None, {})
    for c in run.op_records("construct", r["op"].get("target")):
        if c["i"] < r["i"] and c["status"] == "ok":
            last = (c["i"], c["op"].get("args", {}))
    return last


def created_actors(r: dict) -> list[dict]:
    """The actors a construct op created, as its probe recorded them."""
    return (r.get("probe") or {}).get("created") or (r.get("result") or {}).get("actors") or []


def _constructed(run: Run) -> set:
    return {r["op"]["target"] for r in run.op_records("construct") if r["status"] == "ok"}


def _field(record: dict | None, key: str, what: str, op: int | None, time: float | None):
    """``record[key]`` of a probe record, or an unknown :class:`Finding`
    naming ``what`` probe is missing, raised, or lacks the field."""
    if record is None:
        return unknown_in_run(f"no {what} was recorded", time, op)
    if record.get("error"):
        e = record["error"]
        return unknown_in_run(f"the {what} raised {e['type']}: {e['message'][:200]}", time, op)
    if key not in record:
        return unknown_in_run(f"the {what} has no {key!r}", time, op)
    return record[key]


def unobserved(value) -> bool:
    """``value`` (from :func:`probe_of` or :func:`final_of`) is the unknown
    finding that stands for a fact the probe did not give."""
    return isinstance(value, Finding)


def probe_of(r: dict, key: str):
    """``r``'s probe field ``key``, or an unknown finding saying why it is missing."""
    return _field(r.get("probe"), key, f"probe after {label(r)}", r["i"], r.get("t"))


def final_of(run: Run, key: str):
    """The final probe's field ``key``, or an unknown finding."""
    final = run.history.final
    return _field(final, key, "final probe", None, (final or {}).get("t"))


def final_time(run: Run) -> float | None:
    """The history time of the final probe (None: there is none)."""
    return (run.history.final or {}).get("t")


def _unknown_state(r: dict, comp: str, aid: str, st: dict) -> Finding:
    return unknown_at(r, f": state of {comp} actor {aid[:8]} unknown "
                         f"({str(st.get('error') or 'not observed')[:200]})")


# -- where the driver was: the implementation's, or the harness's ---------------------

def in_implementation(run: Run) -> bool:
    """The history stops inside the implementation's code: one of its ops, or
    the interpreter exit (atexit handlers, finalizers, the user's ray.shutdown)."""
    where, i = run.history.position()
    if where == "exit":
        return True
    if where == "op":
        verb = run.history.begins[i]["op"]["verb"]
        return VERBS[verb].party != HARNESS if verb in VERBS else True
    return False


def position_text(run: Run) -> str:
    where, i = run.history.position()
    n = len(run.scenario.ops)
    if where == "op":
        return f"in {label(run.history.begins[i])}, op {i + 1} of {n}"
    if where == "probe":
        return f"in the harness's probe after op {i} of {n}"
    if where == "between":
        return f"in the harness, after op {i} of {n}" if i is not None else "in the harness"
    return {"start": "before the scenario started", "final": "in the harness's final probe",
            "before-exit": "after the final probe, before the exit",
            "exit": "in the interpreter exit"}[where]


def stop_point(run: Run) -> tuple[int | None, float | None]:
    """The op (if any) and the history time where the history stops: what a
    finding about the driver's end (a crash, a hang) is ordered by."""
    where, i = run.history.position()
    last = next((r for r in reversed(run.history.records)
                 if r.get("phase") and r.get("phase") not in SIDE_PHASES), None)
    op = i if where in ("op", "probe", "between") else None
    return op, (last or {}).get("t")


def watchdog_fired(run: Run) -> bool:
    """The driver's own watchdog ended it: faulthandler's exit (code 1) after
    its own first line, "Timeout (0:01:00)!" alone on a line."""
    return run.exit_code == 1 and bool(WATCHDOG_LINE.search(run.stderr))


def _ended_early(run: Run) -> bool:
    """The driver exited 0 with its history incomplete."""
    return run.exit_code == 0 and not run.hung and bool(run.history.missing())


# -- process-level rules ------------------------------------------------------

def no_crash(run: Run) -> list[Finding]:
    """The driver neither died by a signal, nor exited non-zero by itself,
    nor printed Ray's "Check failed" abort, nor stopped inside an operation
    of the implementation. (A signal or an exit code comes from native code
    or the implementation's threads, never from the harness's Python: it is a
    crash wherever the driver was.)"""
    out = []
    op, time = stop_point(run)
    if signal_end(run):
        pass  # the harness's own signal ended the user's program, as the scenario says
    elif run.signal and not run.hung:
        out.append(in_run(f"driver killed by signal {run.signal} {position_text(run)}", time, op))
    elif run.exit_code not in (0, None, HARNESS_EXIT_CODE) and not run.hung \
            and not watchdog_fired(run):
        out.append(in_run(f"driver exited with code {run.exit_code} {position_text(run)}",
                          time, op))
    elif _ended_early(run) and in_implementation(run):
        out.append(in_run(f"driver exited 0 {position_text(run)}: the scenario stopped there",
                          time, op))
    for line in run.stderr.splitlines():
        if "Check failed" in line:
            out.append(in_run(f"stderr: {line.strip()[:300]}"))
            break
    if out:
        out.extend(_gcs_lost(run))
    return out


def _gcs_lost(run: Run) -> list[Finding]:
    """Why a driver that lost its GCS exited: Ray's "Failed to connect to GCS
    within 60 seconds" ends the process (exit code 1, Ray 2.60.0); after a
    build from a thread that ended (``construct(thread=True)``), the cause is
    that thread's end (measured 2026-11-29: ``built_in_thread``)."""
    line = next((x.strip() for x in run.stderr.splitlines() if "Failed to connect to GCS" in x), None)
    if line is None:
        return []
    text = f"stderr: {line[line.find('Failed'):].split('. ')[0][:120]}"  # its first sentence
    if any(o.verb == "construct" and o.args.get("thread") for o in run.scenario.ops):
        text += (" (a component was built from a thread that then ended: Ray's GCS and "
                 "raylet die with the thread that started them, Linux's PR_SET_PDEATHSIG; "
                 "start Ray from a thread that outlives the runtime)")
    return [in_run(text)]


def no_hang(run: Run) -> list[Finding]:
    """No operation of the implementation, and not the interpreter exit,
    passed its deadline (a harness step that hangs is an ``error``)."""
    if not (run.hung or watchdog_fired(run)) or not in_implementation(run):
        return []
    u = run.history.unfinished
    if u is not None:
        return [at(u, f"did not return within {u.get('deadline')}s")]
    exiting = run.history.exiting or {}
    return [in_run(f"the interpreter exit did not finish within {exiting.get('bound')}s",
                   exiting.get("t"))]


def clean_stderr(run: Run) -> list[Finding]:
    """No traceback or ignored exception printed by the driver itself
    (lines forwarded from Ray workers start with "(" and are not judged),
    but the one of a KeyboardInterrupt the user's program ends with
    (``signal_end``: the interpreter prints it)."""
    out = []
    lines = run.stderr.splitlines()
    expected = _uncaught_traceback(lines) if signal_end(run) else None
    for n, line in enumerate(lines):
        s = line.strip()
        if s.startswith("(") or n == expected:
            continue
        if s.startswith("Traceback (most recent call last)") or s.startswith("Exception ignored"):
            out.append(in_run(f"stderr: {s[:200]}"))
    return out[:3]


def _uncaught_traceback(lines: list[str]) -> int | None:
    """The line number of the last traceback's first line, if that traceback
    ends with a bare KeyboardInterrupt (its exception line, the first line
    after it that is not indented)."""
    starts = [n for n, line in enumerate(lines)
              if line.startswith("Traceback (most recent call last)")]
    if not starts:
        return None
    last = next((line for line in lines[starts[-1] + 1:] if line and not line[0].isspace()),
                None)
    return starts[-1] if last == "KeyboardInterrupt" else None


# -- signals the harness sends the driver (``interrupt``) ------------------------------

def signal_end(run: Run) -> str | None:
    """Why the driver's end is the harness's own signal's doing, or None: a
    signal that ends the user's program (SIGTERM; a SIGINT the user does not
    catch) was sent, and the driver ended as such a program does
    (``SIGNAL_ENDS``; a KeyboardInterrupt only once its op let it out:
    the exit record says the program ends with it)."""
    sent = [r for r in run.history.signals if r.get("ends_program")]
    if not sent or run.hung or watchdog_fired(run):
        return None
    name = sent[-1].get("signal")
    codes, sigs = SIGNAL_ENDS.get(name, (set(), set()))
    if name == "SIGINT" and (run.history.exiting or {}).get("uncaught") \
            != "builtins.KeyboardInterrupt":
        return None
    if run.exit_code in codes or run.signal in sigs:
        how = f"exit code {run.exit_code}" if run.exit_code is not None else \
            f"signal {run.signal}"
        return f"the harness's {name} ended the program ({how})"
    return None


def _interrupted_ops(run: Run):
    """(record, signal info) of every op a signal was sent into (or armed
    for): its end record's ``interrupt``, or, for an op the driver died in,
    the ``signal`` side record."""
    seen = set()
    for r in run.history.ops:
        info = r.get("interrupt")
        if info is not None:
            seen.add(r["i"])
            yield r, info
    for sig in run.history.signals:
        if sig.get("i") not in seen and sig.get("i") in run.history.begins:
            r = {**run.history.begins[sig["i"]], "status": "unfinished"}
            yield r, {"signal": sig.get("signal"), "sent": True, "in_op": None, "died": True}


def _landing(r: dict, info: dict) -> str | None:
    """Why the signal of op ``r`` did not land inside it (None: it did, or
    that is not known from the harness's side)."""
    sig = info.get("signal")
    if info.get("error"):
        e = info["error"]
        return f"the harness could not send the {sig}: {e['type']}: {e['message'][:200]}"
    if not info.get("sent"):
        return f"the {sig} armed for it was not sent inside it ({info.get('not_sent')})"
    if info.get("in_op") is False:
        return (f"the {sig} reached the driver's main thread only after the op returned "
                f"({info.get('handled_after')}s after it was sent; not raised)")
    if info.get("handler") == "harness" and info.get("in_op") is None and not info.get("died"):
        return f"the {sig} never reached the driver's handler while the op ran"
    return None


def signal_not_landed(run: Run) -> int | None:
    """The first op whose signal did not land inside it (the race the
    scenario sets up did not happen: the run is not the scenario as written)."""
    return next((r["i"] for r, info in _interrupted_ops(run) if _landing(r, info)), None)


def interrupt_prompt(run: Run) -> list[Finding]:
    """What a signal sent into an op raises in a user's program comes out of
    that op promptly: a SIGINT as KeyboardInterrupt, a SIGTERM as Ray's
    SystemExit, within INTERRUPT_BOUND (2 s) of the signal; not swallowed
    (the op returning normally), not turned into another error.

    A signal that did not land inside its op is unknown (``error``), never a
    pass, and so is a SIGTERM whose handler ran inside it where Python itself
    discards the ``SystemExit`` (a finalizer: ``conformance.ops.interrupts``);
    a driver Ray aborted while still in the op (3 s after a SIGTERM) fails
    it."""
    out = []
    bound = INTERRUPT_BOUND + BOUND_SLACK
    for r, info in _interrupted_ops(run):
        sig = info.get("signal")
        raises = "KeyboardInterrupt" if sig == "SIGINT" else "SystemExit"
        took = info.get("returned_after") or 0.0
        missed = _landing(r, info)
        if missed:
            out.append(unknown_at(r, f": {missed}: the race did not happen"))
        elif info.get("died"):
            if sig == "SIGTERM" and run.signal == signals.SIGABRT:
                out.append(at(r, f": still running when Ray aborted the driver (SIGABRT, 3 s "
                                 f"after the SIGTERM): no {raises} came out of it"))
        elif r["status"] == "interrupted":
            if took > bound:
                out.append(at(r, f": {raises} came out {took:.2f}s after the {sig} "
                                 f"(bound {INTERRUPT_BOUND}s)"))
        elif r["status"] == "ok":
            if info.get("in_op") and info.get("dropped"):
                out.append(unknown_at(r, f": the {sig}'s handler ran inside it, in code where "
                                         f"Python discards its {raises} ({info['dropped']}): "
                                         "not the implementation's doing"))
            elif info.get("in_op") or took > bound:
                out.append(at(r, f": the {sig} sent {info.get('after')}s into it "
                                 + (f"raised {raises} inside it, "
                                    if info.get("in_op") else "")
                                 + f"and the op returned normally {took:.2f}s after the "
                                   f"signal: no {raises} came out (swallowed)"))
            else:
                out.append(unknown_at(r, f": returned {took:.2f}s after the {sig}: whether "
                                         "its handler ran inside the op is not known"))
        elif r["status"] == "raised":
            e = r.get("error") or {}
            out.append(at(r, f": the {sig} came out as {e.get('type')}: "
                             f"{str(e.get('message'))[:200]} (a user's `except {raises}` "
                             "misses it)"))
    return out


def no_leftover_process(run: Run) -> list[Finding]:
    """No process of the driver outlives it, and no actor Ray reports DEAD
    still has a running process (a zombie actor, ray-project/ray#52322)."""
    out = [in_run(f"process left running after the driver exited: {p}") for p in run.leftover]
    if run.leftover and run.history.missing() and not in_implementation(run):
        # the driver stopped in the harness's code: Ray's own cleanup never ran
        out = [replace(f, text=f"{f.text}, after the driver stopped {position_text(run)}",
                       unknown=True) for f in out]
    zombies = final_of(run, "zombie_pids")
    if unobserved(zombies):
        return out + [zombies] if run.history.final is not None else out
    for aid, pid in zombies.items():
        comp = next((r["op"]["target"] for r in run.op_records("construct")
                     for a in created_actors(r) if a["id"] == aid), "?")
        out.append(in_run(f"{comp} actor {aid[:8]}: Ray reports it DEAD, its worker process "
                          f"(pid {pid}) is still running", final_time(run)))
    return out


# -- every op -------------------------------------------------------------------

def calls_succeed(run: Run) -> list[Finding]:
    """Every call of the implementation the scenario does not expect to fail
    returns without raising (iterate, start, wait_frames, sample, extend,
    submit, poll, ray_shutdown, drop; the other verbs have rules of their own)."""
    out = []
    for r in run.history.ops:
        verb = r["op"]["verb"]
        v = VERBS.get(verb)
        if r["status"] != "raised" or v is None or raised_by_harness(r) or verb in JUDGED_ELSEWHERE:
            continue
        if v.expects_raise(_op(r)):
            continue
        e = r.get("error") or {}
        out.append(at(r, f"raised {e.get('type')}: {str(e.get('message'))[:200]}"))
    return out


def harness_steps_succeed(run: Run) -> list[Finding]:
    """Every step of the harness did what the scenario says (a kill that could
    not be injected, a name lookup the GCS did not answer): otherwise the run
    was not observed as written, and the verdict is ``error``."""
    out = []
    for r in run.history.ops:
        if raised_by_harness(r):
            e = r.get("error") or {}
            out.append(unknown_at(r, f": the harness could not do it: {e.get('type')}: "
                                     f"{str(e.get('message'))[:300]}"))
    return out


def _op(r: dict):
    from conformance.ops.scenario import Op

    return Op.from_dict(r["op"])


# -- teardown rules --------------------------------------------------------------

def teardown_never_raises(run: Run) -> list[Finding]:
    """Every teardown call (shutdown() or close(), or leaving a ``with``
    block), whatever the order, the number of calls, the thread or what
    happened to the actors before, returns without raising."""
    out = []
    for r in run.op_records("teardown"):
        for c in r.get("result", {}).get("calls", []) or []:
            if c["status"] != "ok":
                e = c["error"]
                out.append(at(r, f"raised {e['type']}: {e['message'][:200]}"))

        if r["status"] == "raised" and not r.get("result", {}).get("calls"):
            e = r["error"]
            out.append(at(r, f"raised {e['type']}: {e['message'][:200]}"))
    return out


def with_block_error_comes_out(run: Run) -> list[Finding]:
    """Leaving a ``with`` block whose body raised (``teardown(via="with",
    body_raises=True)``) tears the component down and lets the body's own
    error out of the ``with`` statement: an ``__exit__`` that returns a true
    value swallows it (another error in its place is ``teardown_never_raises``'s)."""
    out = []
    for r in run.op_records("teardown"):
        for c in r.get("result", {}).get("calls", []) or []:
            if c.get("body_error") == "swallowed":
                out.append(at(r, ": leaving the with block swallowed the error its body "
                                 "raised (__exit__ returned a true value): the user's own "
                                 "error never came out"))
    return out


def teardown_within_bound(run: Run) -> list[Finding]:
    """Every teardown call returns within the implementation's teardown
    bound (plus a small slack), also when its actors hang or are dead."""
    out = []
    for r in run.op_records("teardown"):
        for c in r.get("result", {}).get("calls", []) or []:
            if c["duration"] > run.teardown_bound + BOUND_SLACK:
                out.append(at(r, f"took {c['duration']:.2f}s (bound {run.teardown_bound}s)"))
    return out


def _closed_components(run: Run) -> set:
    closed = set()
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] == "teardown" and r["status"] == "ok":
            closed.add(op["target"])
    return closed


def _runtime_of(run: Run, component: str):
    """The Ray runtime ``component`` was built on (the probe after its
    constructor), or None."""
    for r in run.op_records("construct", component):
        if r["status"] == "ok":
            ray = (r.get("probe") or {}).get("ray")
            return ray if isinstance(ray, str) else None
    return None


def _killed_by_harness(run: Run) -> tuple[set, set]:
    """Ids of the actors a harness kill ended (a hung one lives on: the
    teardown ends it), and of the nodes it removed (with every actor there)."""
    actors, nodes = set(), set()
    for r in run.op_records("kill"):
        res = r.get("result") or {}
        if r["status"] != "ok" or res.get("how") == "hang":
            continue
        actors.add((res.get("actor") or {}).get("id"))
        if res.get("how") == "remove_node":
            nodes.add((res.get("actor") or {}).get("node_id"))
    return actors - {None}, nodes - {None}


def at_return(run: Run, r: dict):
    """``(before, at_return)``, the readings around a teardown (``Verb.releases``)
    when it began on the runtime its component was built on and Ray was still
    up at its return; None when it did not (Ray down before it, the user's
    restart, a teardown that ended the runtime: other rules judge those);
    an unknown finding when a reading failed."""
    probe = r.get("probe") or {}
    before, after = probe.get("before"), probe.get("at_return")
    for reading, when in ((before, "before"), (after, "at the return of")):
        if isinstance(reading, dict) and reading.get("error"):
            e = reading["error"]
            return unknown_at(r, f": the reading {when} it raised {e['type']}: "
                                 f"{e['message'][:200]}")
    if not before or not after or before.get("ray") is None:
        return None
    if before["ray"] != _runtime_of(run, r["op"]["target"]) or after.get("ray") != before["ray"]:
        return None
    return before, after


def call_readings(r: dict, runtime: str | None = None):
    """``(call, reading)`` for each of a concurrent teardown's calls that
    returned normally with a reading at its return (``verbs.teardown``),
    taken on ``runtime`` if one is given; ``(call, unknown finding)`` for a
    reading that failed, or that a concurrent call lacks."""
    concurrent = int((r["op"].get("args") or {}).get("concurrent", 1)) > 1
    for k, call in enumerate((r.get("result") or {}).get("calls") or []):
        reading = call.get("at_return")
        if call.get("status") != "ok" or not (reading or concurrent):
            continue
        if not reading:
            yield call, unknown_at(r, f": its call {k} ({call.get('thread')}) returned with no "
                                      "reading at its return")
        elif reading.get("error"):
            e = reading["error"]
            yield call, unknown_at(r, f": the reading at the return of its call {k} "
                                      f"({call.get('thread')}) raised {e['type']}: "
                                      f"{e['message'][:200]}")
        elif runtime is None or reading.get("ray") == runtime:
            yield call, reading


def _early_returns(r: dict, comp: str, readings, killed, removed) -> list[Finding]:
    """The actors of ``comp`` still live at the return of one of its
    concurrent teardown calls and dead at the op's own reading (after every
    call returned): that call returned while another call still tore the
    component down. One still live at the op's reading is the op's finding
    (``own_actors_dead_after_teardown``), not each call's again."""
    out = []
    at_op = readings[1].get("actors") or {}
    for call, reading in call_readings(r, readings[0]["ray"]):
        if isinstance(reading, Finding):
            out.append(reading)
            continue
        for aid, st in (reading.get("actors") or {}).items():
            if aid in killed or st.get("node_id") in removed or \
                    (at_op.get(aid) or {}).get("state") in LIVE_STATES:
                continue
            if st.get("state") in ("unknown", None):
                out.append(_unknown_state(r, comp, aid, st))
            elif st.get("state") in LIVE_STATES:
                out.append(at(r, f": actor {aid[:8]} still {st['state']} when its call in "
                                 f"{call.get('thread')} returned (another thread's call was "
                                 "still tearing it down)"))
    return out


def own_actors_dead_after_teardown(run: Run) -> list[Finding]:
    """When a teardown returns, its component's actors are DEAD: read at its
    return, before any wait, when it began on the runtime the component was
    built on (``at_return``; ``ray.kill`` is asynchronous, the teardown waits
    for it). Otherwise (the user shut Ray down or restarted it first: Ray ends
    them, not the teardown), and for an actor a harness kill hit (a removed
    node's actors are DEAD only once the GCS declares the node dead), after the
    probe's settle wait (up to SETTLE_SECONDS). A non-owning handle's teardown
    leaves the owner's actors ALIVE."""
    out = []
    killed, removed = _killed_by_harness(run)
    for r in run.op_records("teardown"):
        comp = r["op"]["target"]
        if r["status"] != "ok":
            continue
        actors = probe_of(r, "actors")
        if unobserved(actors):
            out.append(actors)
            continue
        non_owner = _construct_args(run, comp).get("connect")
        built = [r2 for r2 in run.op_records("construct", comp) if r2["status"] == "ok"]
        if built and not created_actors(built[0]) and "created" in (built[0].get("probe") or {}):
            out.append(unknown_at(r, f": the adapter listed no actor for the {comp}: "
                                     "its actors cannot be observed"))
        readings = None if non_owner else at_return(run, r)
        if unobserved(readings):
            out.append(readings)
            continue
        if readings:
            out.extend(_early_returns(r, comp, readings, killed, removed))
        returned = readings[1]["actors"] if readings else {}
        for aid, st in actors.get(comp, {}).items():
            when = "after teardown"
            if aid in returned and aid not in killed \
                    and returned[aid].get("node_id") not in removed:
                st, when = returned[aid], "when its teardown returned"
            state = st.get("state")
            if state in ("unknown", None):
                out.append(_unknown_state(r, comp, aid, st))
            elif non_owner and state != "ALIVE":
                out.append(at(r, f": a non-owning handle's teardown ended the "
                                 f"owner's actor {aid[:8]} ({state})"))
            elif not non_owner and state in LIVE_STATES:
                out.append(at(r, f": actor {aid[:8]} still {state} {when}"))
    return out


#: resource amounts closer than this are equal (Ray keeps 4 decimals)
RESOURCE_SLACK = 1e-3


def _taken_by_others(before: dict, after: dict, node, key: str, total: dict) -> float:
    """How much of ``key`` other jobs' actors (``others`` in a release
    reading) may have taken on ``node`` between the readings: each one on the
    node at the return and not there before; and each one pending without a
    worker at the return that the node could host (``total`` has every
    resource it needs): the GCS shows no worker until it started, and a
    lease is taken before (under load, a second or more), so it may hold one
    there (``ANY_NODE``). One no node can host (the catalog's
    ``rlc_infeasible``) is never counted. 0 when either reading lacks
    ``others`` or its query failed: then nobody else is counted."""
    was, now = before.get("others") or {}, after.get("others") or {}
    if "actors" not in was or "actors" not in now:
        return 0.0
    was, now = was["actors"], now["actors"]
    taken = 0.0
    for aid, rec in now.items():
        need = rec.get("resources") or {}
        if key not in need:
            continue
        earlier = (was.get(aid) or {}).get("node")
        if rec.get("node") == node and earlier != node:
            taken += need[key]
        elif rec.get("node") == ANY_NODE and all(total.get(k, 0.0) >= v for k, v in need.items()):
            taken += need[key]
    return taken


def resources_released_at_teardown(run: Run) -> list[Finding]:
    """When a teardown returns, what its component's actors held is back in
    ``ray.available_resources()``, so that a component built right after finds
    it free. Per node, for the actors ALIVE in the GCS just before the
    teardown (each holds its ``required_resources``): available at its return
    >= available before it + what they held. "Before" counts at most what the
    node could have free while they held theirs (total - held): the GCS's view
    lags an actor's start as it lags its death (measured: 36 ms after a new
    actor answered, available still showed its CPU free). Judged when the
    teardown began on its component's runtime and Ray was up at its return
    (``at_return``), on nodes live in both readings, for the actors no
    harness kill ended (a removed node's view is stale until the GCS declares
    it dead). What other jobs' actors took on the node meanwhile is not
    expected back (``others``, ``_taken_by_others``)."""
    out = []
    killed, removed = _killed_by_harness(run)
    for r in run.op_records("teardown"):
        comp = r["op"]["target"]
        if r["status"] != "ok" or _construct_args(run, comp).get("connect"):
            continue
        readings = at_return(run, r)
        if readings is None:
            continue
        if unobserved(readings):
            out.append(readings)
            continue
        before, after = readings
        held: dict = {}
        for aid, st in (before.get("actors") or {}).items():
            if aid in killed or st.get("node_id") in removed:
                continue  # dead already, or its node is: not the teardown's to release
            if st.get("state") in ("unknown", None):
                out.append(unknown_at(r, f": in the reading before it, the state of {comp} "
                                         f"actor {aid[:8]} is unknown "
                                         f"({str(st.get('error') or 'not observed')[:200]})"))
            elif st.get("state") == "ALIVE":
                node = held.setdefault(st.get("node_id"), {})
                for key, amount in (st.get("required_resources") or {}).items():
                    node[key] = node.get(key, 0.0) + amount
        for node, need in sorted(held.items(), key=lambda kv: str(kv[0])):
            was, now = before["resources"].get(node), after["resources"].get(node)
            if was is None or now is None:
                continue  # the node is gone: so is what it held
            for key, amount in sorted(need.items()):
                free_before = min(was["available"].get(key, 0.0),
                                  was["total"].get(key, 0.0) - amount)
                taken = _taken_by_others(before, after, node, key, now["total"])
                want, got = free_before + amount - taken, now["available"].get(key, 0.0)
                if got + RESOURCE_SLACK < want:
                    out.append(at(r, f": {key} {amount:g} held by its actors on node "
                                     f"{str(node)[:8]} not back in ray.available_resources() "
                                     f"when it returned: {got:g} available, {want:g} expected"))
    return out


#: verbs that end their target's actors: a teardown, and a collector's
#: exhaustion (it tears itself down at total_frames)
ENDING_VERBS = ("teardown", "exhaust")


def _faulted(run: Run, upto: int) -> set:
    """Component instances hit by a kill before op ``upto``, or torn down
    (or exhausted); all of them after the user's ray.shutdown() or restart
    (the job's actors end with it, on a connected driver asynchronously)."""
    hit = set()
    for r in run.history.ops:
        if r["i"] >= upto:
            break
        if r["op"]["verb"] in USER_RAY_VERBS:
            hit |= set(run.scenario.components)
        elif r["op"]["verb"] in ("kill", *ENDING_VERBS) and r["status"] in (
                "ok", "raised", "interrupted"):
            hit.add(r["op"]["target"])
    return hit


def others_untouched(run: Run) -> list[Finding]:
    """A component instance's teardown (or a collector's exhaustion) leaves
    the actors of every other live instance, of its own kind or not, as they
    were: one ALIVE stays ALIVE, one still starting or restarting
    (PENDING_CREATION, RESTARTING, ...) does not end. One whose state before
    the teardown was never observed (every earlier reading unknown, or none)
    and that is not live after it is unknown, never fine."""
    out = []
    before: dict = {}  # actor id -> its last known state, "unknown" if never known
    for r in run.history.ops:
        probe = (r.get("probe") or {}).get("actors")
        if probe is None:
            if r["op"]["verb"] in ENDING_VERBS and r["status"] != "unfinished" and before \
                    and not r.get("probe_skipped"):
                out.append(probe_of(r, "actors"))  # unobserved: unknown, never fine
            continue
        if r["op"]["verb"] in ENDING_VERBS:
            hit = _faulted(run, r["i"])
            for comp, states in probe.items():
                if comp.startswith("_") or comp == r["op"]["target"] or comp in hit:
                    continue
                for aid, st in states.items():
                    out += _touched(r, comp, aid, before.get(aid, "unknown"), st)
        for comp, states in probe.items():
            if comp.startswith("_"):
                continue
            for aid, st in states.items():
                if st.get("state") not in ("unknown", None):
                    before[aid] = st["state"]
                else:
                    before.setdefault(aid, "unknown")
    return out


def _touched(r: dict, comp: str, aid: str, was: str, st: dict) -> list[Finding]:
    """Whether the teardown of op record ``r`` ended ``comp``'s actor ``aid``,
    that was ``was`` before it and is ``st`` after it."""
    now = st.get("state")
    if was not in LIVE_STATES and was != "unknown":
        return []  # it had ended before this teardown
    if now in ("unknown", None):
        return [_unknown_state(r, comp, aid, st)]
    if was == "unknown":
        return [] if now in LIVE_STATES else [unknown_at(
            r, f": {comp} actor {aid[:8]} is {now} after it, and its state before was never "
               "observed: whether this teardown ended it is unknown")]
    if (was == "ALIVE" and now != "ALIVE") or now not in LIVE_STATES:
        return [at(r, f"ended {comp} actor {aid[:8]} ({now}; it was {was})")]
    return []


def runtime_threads(run: Run) -> dict:
    """Thread key -> the Ray runtime it started: the thread in which a
    ``ray.init()`` of the implementation's (not the harness's as the user)
    started a runtime (``conformance.ops.runtime_watch`` records the caller).
    It may live as long as that runtime, not only as long as the component:
    Ray's GCS and raylet die with the thread that started them (Linux's
    PR_SET_PDEATHSIG), so an implementation that starts Ray from a thread of
    the user's that ends does it in a thread it keeps (``built_in_thread``)."""
    return {r["thread_key"]: r["after"] for r in run.history.runtime
            if r.get("call") == "ray.init" and r.get("by") != "user" and r.get("thread_key")
            and session_of(r.get("after")) and r.get("after") != r.get("before")}


def threads_joined(run: Run) -> list[Finding]:
    """A component's teardown joins the threads it started: read in the probe
    right after that teardown (a thread seen first after an op on component C
    is C's, whatever module runs it; the driver records neither the
    harness's threads nor Ray's own, ``conformance.ops.threads``). The
    thread that started a Ray runtime (``runtime_threads``) is not the
    component's: ``no_leftover_thread`` judges it with its runtime."""
    out = []
    owner: dict = {}
    of_runtime = runtime_threads(run)
    for r in run.history.ops:
        probe = r.get("probe") or {}
        threads = probe.get("threads")
        target = r["op"].get("target")
        if threads is None:
            if r["op"]["verb"] == "teardown" and r["status"] == "ok" and any(
                    c == target for c in owner.values()):
                out.append(probe_of(r, "threads"))
            continue
        live = {t["key"]: t for t in threads if t["key"] not in of_runtime}
        for key in live:
            if key not in owner and target and r["op"]["verb"] != "teardown":
                owner[key] = target
        if r["op"]["verb"] == "teardown" and r["status"] == "ok":
            for key, t in live.items():
                if owner.get(key) == target:
                    out.append(at(r, f": thread {t['name']} ({t['module']}) of the "
                                     f"{target} still running right after its teardown returned"))
            out.extend(_threads_at_each_return(r, target, owner, set(live)))
    return out


def _threads_at_each_return(r: dict, target: str, owner: dict, at_op: set) -> list[Finding]:
    """The threads of ``target`` still running at the return of one of its
    concurrent teardown calls (``verbs.teardown``'s ``at_return``) and gone
    at the op's probe (``at_op``: one still running then is the op's finding)."""
    out = []
    for call, reading in call_readings(r):
        if isinstance(reading, Finding):
            out.append(reading)
            continue
        for t in reading.get("threads") or []:
            if owner.get(t["key"]) == target and t["key"] not in at_op:
                out.append(at(r, f": thread {t['name']} ({t['module']}) of the {target} still "
                                 f"running when its call in {call.get('thread')} returned "
                                 "(another thread's call was still tearing it down)"))
    return out


def _buffer_read(r: dict) -> str:
    """The buffer instance an op read: its target, or for ``check_writes``
    the buffer its collector writes into."""
    return r["result"]["buffer"] if r["op"]["verb"] == "check_writes" else r["op"]["target"]


def _suspect(run: Run, r: dict, writer: str) -> str:
    """The last op before ``r`` that ended or faulted another instance:
    what a writer that stopped writing was harmed by."""
    for prev in reversed([p for p in run.history.ops if p["i"] < r["i"]]):
        op = prev["op"]
        if op["verb"] in ("kill", *ENDING_VERBS, *USER_RAY_VERBS) and op.get("target") != writer:
            return f", after {label(prev)}"
    return ""


def _sampled_rows_written(r: dict) -> list[Finding]:
    res = r.get("result") or {}
    if "entry_missing" in res:
        return [at(r, f": the rows sample() returned have no {res['entry_missing']!r} entry, "
                      f"which every row written had (keys: {', '.join(res.get('keys', []))}): "
                      "what was written is lost, or the adapter's sample() does not convert "
                      "the buffer's rows (conformance/adapter.py)")]
    if "unwritten" not in res:
        return [unknown_at(r, f": its rows could not be read: "
                              f"{res.get('rows_unreadable', 'not recorded')} (the adapter's "
                              "sample() returns a TensorDict or a mapping of arrays, "
                              "conformance/adapter.py)")]
    if "observation_row" in res:
        return [at(r, f": the rows sample() returned have observations of shape "
                      f"{res['observation_row']} each, where every row written had one of "
                      f"{list(OBSERVATION_ROW)} (CartPole's): they are not the rows written")]
    if res["unwritten"]:
        return [at(r, f": {res['unwritten']} of the {res['rows']} rows sample() returned "
                      f"were never written ({', '.join(res.get('keys', []))} all zero: no "
                      "CartPole step and no extend() writes such a row; a slot of the "
                      "storage no write filled)")]
    return []


def data_kept(run: Run) -> list[Finding]:
    """Each buffer instance never holds fewer frames than at any earlier
    reading of it (the count it reported before the op under test), nor
    fewer than ``at_least``; and per writer: a collector whose writes are
    checked (``check_writes``) still gets ``more`` frames into its buffer,
    whatever happened to the other instances. And every row ``sample()``
    returns was written: none is a slot no write filled
    (``conformance.ops.samples``)."""
    out = []
    seen: dict = {}  # buffer instance -> (frames, the record that read them)
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if verb == "sample" and r["status"] == "ok":
            out.extend(_sampled_rows_written(r))
        if verb not in ("check_data", "wait_frames", "check_writes"):
            continue
        if r["status"] == "raised" and verb != "wait_frames":  # wait_frames: calls_succeed
            e = r.get("error") or {}
            what = "buffer" if verb == "check_data" else \
                f"the buffer {r['op']['target']} writes into"
            out.append(at(r, f": {what} unreadable: {e.get('type')}: "
                             f"{str(e.get('message'))[:200]}"))
        if r["status"] != "ok":
            continue
        buffer, got = _buffer_read(r), int(r["result"].get("frames", 0))
        before, before_at = seen.get(buffer, (0, None))
        if verb == "check_data":
            at_least = int(r["result"].get("at_least", 1))
            if got < before:
                out.append(at(r, f": {buffer} holds {got} frames; it held {before} at "
                                 f"{label(before_at)}"))
            elif got < at_least:
                out.append(at(r, f": {buffer} holds {got} frames, at least {at_least} "
                                 "expected"))
        elif verb == "check_writes":
            res, writer = r["result"], r["op"]["target"]
            grew = got - int(res.get("from", 0))
            if grew < int(res.get("more", 1)):
                out.append(at(r, f": the writes of {writer} no longer land in {buffer}"
                                 f"{_suspect(run, r, writer)}: it grew by {grew} of "
                                 f"{res.get('more')} frames in {res.get('timeout')} s"))
        if got > before:
            seen[buffer] = (got, r)
    return out


def exhaustion_auto_shutdown(run: Run) -> list[Finding]:
    """A collector iterated to its total_frames shuts its actors down by
    itself: the iteration ends without raising and its actors are dead
    after it (a later teardown is then a no-op)."""
    out = []
    for r in run.op_records("exhaust"):
        if r["status"] != "ok":
            if r["status"] == "raised":
                e = r.get("error") or {}
                out.append(at(r, f"raised {e.get('type')}: {str(e.get('message'))[:200]}"))
            continue
        actors = probe_of(r, "actors")
        if unobserved(actors):
            out.append(actors)
            continue
        collector = r["op"]["target"]
        for aid, st in actors.get(collector, {}).items():
            if st.get("state") in ("unknown", None):
                out.append(_unknown_state(r, collector, aid, st))
            elif st.get("state") in LIVE_STATES:
                out.append(at(r, f": {collector} actor {aid[:8]} still {st['state']} "
                                 "after exhaustion"))
    return out


def batch_counts(run: Run) -> list[Finding]:
    """``iterate`` yields exactly the k batches asked for; ``exhaust`` yields
    ceil(total_frames / frames_per_batch) batches and, where the batches say
    how many frames they hold, exactly total_frames frames; and a buffer a
    collector with a budget wrote into holds no more than that budget
    (``check_data`` with ``at_most``: a collector that asks its actors for
    batches past total_frames writes them into the buffer, yielded or not)."""
    out = []
    spec = run.spec
    for r in run.history.ops:
        verb = r["op"]["verb"]
        at_most = r["op"].get("args", {}).get("at_most")
        if verb == "check_data" and at_most is not None and r["status"] == "ok":
            frames = (r.get("result") or {}).get("frames")
            if frames is not None and frames > at_most:
                out.append(at(r, f": the buffer holds {frames} frames; the collector's budget "
                                 f"(total_frames) is {at_most}"))
            continue
        if r["status"] != "ok" or verb not in ("iterate", "exhaust"):
            continue
        if r["op"].get("args", {}).get("cause"):
            continue  # a batch that had to fail: errors_surface
        res = r.get("result") or {}
        if verb == "iterate":
            want = int(r["op"].get("args", {}).get("batches", 1))
            if want > 0 and res.get("batches") != want:
                out.append(at(r, f": the collector yielded {res.get('batches')} batches "
                                 f"before it stopped; {want} were asked for"))
            continue
        # an instance may be built with a total_frames of its own
        total = int(_built_with(run, r)[1].get("total_frames", spec.total_frames))
        if total < 0:
            continue
        want = math.ceil(total / spec.frames_per_batch)
        if res.get("batches") != want:
            out.append(at(r, f": {res.get('batches')} batches until total_frames="
                             f"{total}; {want} expected (frames_per_batch="
                             f"{spec.frames_per_batch})"))
        frames = res.get("frames")
        if frames is not None and frames != total:
            out.append(at(r, f": {frames} frames collected; total_frames is {total}"))
    return out


def batch_sizes(run: Run) -> list[Finding]:
    """Each batch a collector yields holds ``frames_per_batch`` frames (with
    ``sync`` the whole batch's), the last of a ``total_frames`` budget the
    rest of it, counted from each build of the instance. A batch that does
    not say its frames (``verbs.frames_of``) is unknown, but in buffer mode,
    where the contract lets a collector yield None. Not judged while a fault
    meant to break the collection is under way (``may_fail``, ``cause``:
    ``errors_surface`` and ``calls_succeed`` judge those ops); after one the
    count is lost, and a short batch is no longer held to the budget's rest."""
    out = []
    fpb = run.spec.frames_per_batch
    collected: dict = {}  # build -> frames yielded since it was built; None: not known
    for r in run.history.ops:
        op = r["op"]
        if r["status"] != "ok" or op["verb"] not in ("iterate", "exhaust"):
            continue
        build, built_args = _built_with(run, r)
        key = (op["target"], build)
        if op.get("args", {}).get("may_fail") or op.get("args", {}).get("cause"):
            collected[key] = None
            continue
        total = int(built_args.get("total_frames", run.spec.total_frames))
        for b, f in enumerate((r.get("result") or {}).get("sizes", []), 1):
            before = collected.get(key, 0)
            if f is None:
                if not built_args.get("buffer"):
                    out.append(unknown_at(r, f": batch {b} does not say its frames (a TensorDict's "
                                             "numel, RLlib's episode chunks: verbs.frames_of)"))
                collected[key] = None
                continue
            rest = f < fpb and total > 0 and (before is None or before + f == total)
            if f != fpb and not rest:
                after = "" if before is None else f" after {before}"
                out.append(at(r, f": batch {b} holds {f} frames{after}; frames_per_batch is "
                                 f"{fpb}, total_frames {total}"))
            collected[key] = None if before is None else before + f
    return out


def batches_hold_steps(run: Run) -> list[Finding]:
    """With ``transition_batches``, the rows of each batch a collector
    yields are env steps in torchrl's layout (``conformance.ops.transitions``):
    reward 1.0 a step, the reward and done flags one wide, done = terminated
    | truncated, consecutive steps of one env. A batch the harness could not
    read is unknown."""
    out = []
    for r in run.history.ops:
        if r["status"] != "ok" or r["op"]["verb"] not in ("iterate", "exhaust"):
            continue
        for reading in (r.get("result") or {}).get("steps", []):
            where = f": batch {reading.get('batch')}"
            if "unreadable" in reading:
                out.append(unknown_at(r, f"{where} could not be read as env steps: "
                                         f"{reading['unreadable']}"))
            elif reading.get("faults"):
                rows = "" if reading.get("rows") is None else f" of {reading['rows']} rows"
                out.append(at(r, f"{where}{rows}: {'; '.join(reading['faults'])}"))
    return out


def eval_episode_consistent(run: Run) -> list[Finding]:
    """Each evaluation ``poll`` returns is one episode
    (``Adapter.episode``): a whole number of steps, at least one and at
    most the ``eval_max_steps`` that ``submit`` asked for; its return equals
    its steps (every catalog env pays 1.0 a step); in an env that never
    terminates (``conformance.envs.NEVER_TERMINATE``) it ran every step
    asked for, or to the env's TimeLimit. An episode the harness could not
    read is unknown."""
    out = []
    for r in run.op_records("poll"):
        res = r.get("result") or {}
        ep = res.get("episode")
        if r["status"] != "ok" or ep is None:
            continue
        if "unreadable" in ep:
            out.append(unknown_at(r, f": the evaluation's result could not be read as an "
                                     f"episode: {ep['unreadable']}"))
            continue
        try:
            steps, ret = float(ep["steps"]), float(ep["return"])
        except (TypeError, ValueError, KeyError) as exc:
            out.append(unknown_at(r, f": the episode's steps and return are not numbers: "
                                     f"{type(exc).__name__}: {exc} ({str(ep)[:200]})"))
            continue
        most = run.spec.eval_max_steps  # submit's bound
        due = min(most, res.get("episode_limit") or most)  # a TimeLimit truncates sooner
        said = f": the evaluation reports {ep['steps']} steps and a return of {ep['return']}"
        if not 1 <= steps <= most or steps != int(steps):
            out.append(at(r, f"{said}; it was asked for 1 to {most} whole steps"))
        elif ret != steps:
            out.append(at(r, f"{said}; every catalog env pays 1.0 a step, so the return "
                             "is the steps"))
        elif res.get("never_terminates") and steps != due:
            why = "asked for" if due == most else "of its TimeLimit"
            out.append(at(r, f"{said}; its env never terminates, so the episode runs the "
                             f"{due} steps {why}"))
    return out


# -- policy weights ------------------------------------------------------------

#: the action of the policy a collector is built with (``policy=module``):
#: ``conformance.policies.BUILT_ACTION``, which imports torch, kept equal by
#: tests/conformance/test_weights.py
BUILT_ACTION = 0
#: why an actor acts as expected: the policy it was built with, or weights sent
WHY_BUILT = "the policy it was built with (policy=module)"
WHY_SENT = "the weights it was sent last"


def _weights_sent(expected: dict, r: dict) -> dict | None:
    """The (action, why) of each actor's policy after the weights op ``r``
    (``expected``: before it, ``{"every": (action, why), index: (action, why)}``);
    None when no longer known (the op raised without being expected to: which
    actors hold what is unknown)."""
    args = r["op"].get("args", {})
    if r["status"] != "ok":
        # a refused form (fail) must change nothing; any other outcome: unknown
        return expected if args.get("fail") and r["status"] == "raised" else None
    action, workers = int(args.get("action", 1)), args.get("workers")
    if workers is None:
        return {"every": (action, WHY_SENT)}
    named = [workers] if isinstance(workers, int) else workers
    return {**expected, **{int(i): (action, WHY_SENT) for i in named}}


def _actions_judged(r: dict, b: int, rows: list, expected: dict, actors: int) -> list[Finding]:
    """Batch ``b`` of the iterate record ``r``: its distinct actions per row
    (``verbs.actions_of``) against what each actor was expected to act. Row
    i is actor i's when there is one row per actor; other rows are judged
    only while every actor is expected to act alike."""
    wants = [expected.get(i, expected["every"]) for i in range(actors)]
    per_actor = len(rows) == actors
    if not per_actor and len({action for action, _ in wants}) > 1:
        return [unknown_at(r, f": batch {b} has {len(rows)} row{'s' * (len(rows) != 1)} of actions for {actors} "
                              "actors (a sync batch of one row per actor is read): the actors "
                              "hold different weights, and which one acted how is unknown")]
    out = []
    for i, seen in enumerate(rows):
        want, why = wants[i] if per_actor else wants[0]
        if seen != [want]:
            who = f"actor {i}" if per_actor else f"row {i} of {len(rows)}"
            out.append(at(r, f"batch {b}, {who}: actions {seen}, expected only {want}, the "
                             f"action of {why}"))
    return out


def weights_take_effect(run: Run) -> list[Finding]:
    """Once ``update_policy_weights_`` returned, every batch the collector
    yields is collected with those weights: each actor the weights went to
    acts as their policy does, every other one as before; weights it refused
    (a form it does not accept) change nothing. Judged on the batches of an
    ``iterate(read_actions=True)`` of a sync collector (one row per actor; an
    async collector's batches requested before the weights may still come)
    built with ``policy=module``: a ``conformance.policies.CartPolePolicy``,
    whose weights fix its action. A batch whose rows are not one per actor
    is judged only while every actor holds the same weights (else unknown)."""
    if run.features is not None and "weights" not in run.features:
        return []  # its collector runs the adapter's own policy (conformance.adapter)
    actors = run.spec.num_collectors
    out, expected = [], {}  # collector instance -> {"every": (action, why), index: ...}
    for r in run.history.ops:
        o = r["op"]
        args, target = o.get("args", {}), o.get("target")
        if o["verb"] == "construct" and args.get("policy"):
            if r["status"] == "ok" and args.get("sync"):
                expected[target] = {"every": (BUILT_ACTION, WHY_BUILT)}
            continue
        if target not in expected:
            continue
        if o["verb"] == "weights":
            now = _weights_sent(expected[target], r)
            if now is None:
                del expected[target]
            else:
                expected[target] = now
            continue
        if o["verb"] != "iterate" or not args.get("read_actions") or r["status"] != "ok":
            continue
        batches = (r.get("result") or {}).get("actions")
        if batches is None:
            out.append(unknown_at(r, ": no actions were recorded: which weights collected its "
                                     "batches is unknown"))
            continue
        for b, rows in enumerate(batches):
            if rows is None:
                out.append(unknown_at(r, f": batch {b} has no action entry: which weights "
                                         "collected it is unknown"))
                continue
            out += _actions_judged(r, b, rows, expected[target], actors)
    return out


# -- Ray runtime ownership -------------------------------------------------------

def _ray_after(r: dict):
    return probe_of(r, "ray")


def _watch_unknown(run: Run) -> Finding | None:
    """Why the runtime was not watched during the ops (None: it was)."""
    setup = run.history.setup
    if setup is None:
        return None  # a setup failure, judged by itself
    watch = setup.get("runtime_watch")
    if watch is None:
        return unknown_in_run("the driver did not watch the Ray runtime during the ops (its "
                              "setup record has no runtime_watch)", setup.get("t"))
    if watch.get("error"):
        return unknown_in_run(f"the driver could not watch the Ray runtime during the ops: "
                              f"{watch['error']}", setup.get("t"))
    return None


def runtime_changes(run: Run) -> list[dict]:
    """Every start and end of a Ray runtime the driver saw while the scenario
    ran (``conformance.ops.runtime_watch``), in order: a public ``ray.init`` or
    ``ray.shutdown`` call that connected or disconnected the driver, and a
    GCS process of the driver's that appeared or went with no such call
    (a path around them: ``_call_explains``). Each: ``kind`` (start, end),
    ``i`` (the op it happened in, None: between ops), ``last`` (the last op
    begun), ``identity``, ``session``, ``source`` (call, process), ``what``,
    ``by_user`` (the harness's own calls as the user), ``t`` (history
    seconds); a process change also ``unsure`` (only a call whose runtime
    could not be read might explain it), ``shutdown_under_way`` (a
    ray.shutdown() of it still running when the watch stopped) and
    ``connected`` (the driver's ``ray.is_initialized()`` at the watch's poll
    that saw the GCS gone; None: not recorded)."""
    calls = [r for r in run.history.runtime if r.get("call")]
    out = []
    for r in run.history.runtime:
        where = {"i": r.get("i"), "last": r.get("last"), "t": r.get("t0", r.get("t")),
                 "by_user": r.get("by") == "user"}
        if r.get("call"):
            before, after = r.get("before"), r.get("after")
            what = f"{r['call']}() from thread {r.get('thread')}"
            if r.get("unfinished"):
                continue  # still running when the watch stopped: it changed nothing seen
            if session_of(after) and after != before:
                out.append({**where, "kind": "start", "identity": after, "what": what,
                            "session": session_of(after), "source": "call"})
            if session_of(before) and after != before:
                out.append({**where, "kind": "end", "identity": before, "what": what,
                            "session": session_of(before), "source": "call"})
        elif r.get("process") == "gcs_server":
            session, pid = r.get("session"), r.get("pid")
            kind = {"appeared": "start", "gone": "end"}.get(r.get("change"))
            why = _call_explains(calls, kind, session, r.get("t")) if kind else "yes"
            if why == "yes":
                continue
            found = {**where, "kind": kind, "identity": f"a local runtime, {session}",
                     "session": session, "source": "process", "unsure": why == "unsure",
                     "shutdown_under_way": why == "under way", "connected": r.get("connected")}
            if kind == "start":
                out.append({**found, "what": f"a GCS process (pid {pid}), with no ray.init() "
                                             "call,"})
            else:
                out.append({**found, "what": f"the end of its GCS process (pid {pid}), with no "
                                             "ray.shutdown() call,"})
    return out


def _call_explains(calls: list, kind: str, session: str | None, t: float | None) -> str | None:
    """Whether a ``ray.init`` / ``ray.shutdown`` call begun by time ``t``
    explains a GCS process of ``session`` appearing (``kind`` start) or going
    (end): "yes"; "under way" when a ray.shutdown() of it was still running
    when the watch stopped; "unsure" when only a call whose runtime could not
    be read might; else None. A call explains only what it changed (after != before:
    a ray.shutdown(wait_for_processes=True) on Ray 2.50.1, which lacks the
    parameter, raised TypeError and shut nothing down; mutation analysis,
    runtime.py:193); a call begun after the change explains nothing (a
    ray.shutdown() of a runtime whose GCS had died already)."""
    side = "after" if kind == "start" else "before"
    call = "ray.init" if kind == "start" else "ray.shutdown"
    answer = None
    for r in calls:
        if t is not None and r.get("t0") is not None and r["t0"] > t:
            continue
        if r.get("unfinished"):
            # still running when the watch stopped: a ray.shutdown() of this runtime under
            # way (owned_runtime_not_lost's explanation only: for the others the change
            # stands, as when such calls were not recorded); a ray.init() explains nothing
            if kind == "end" and r["call"] == call and session_of(r.get("before")) == session:
                answer = "under way"
            continue
        if r.get("after") == r.get("before"):
            continue
        read = r.get(side)
        if session_of(read) == session:
            return "yes"
        if str(read or "").startswith("unreadable") and r["call"] == call and answer is None:
            answer = "unsure"
    return answer


def _changed_at(c: dict) -> int:
    """The op whose probe first shows a change: its own, or the next op's."""
    if c["i"] is not None:
        return c["i"]
    return 0 if c["last"] is None else c["last"] + 1


def _change(run: Run, c: dict, text: str, unknown: bool = False) -> Finding:
    """A finding about runtime change ``c``: "op N (verb): <what> 0.40s into it
    <text>", after op N returned, or before the first op."""
    i = c["i"] if c["i"] is not None else c["last"]
    r = run.history.ends.get(i) or run.history.begins.get(i)
    if r is None:
        return in_run(f"before the first op, {c['what']} {text}", c.get("t"))
    if c["i"] is None:
        return replace(at(r, f": after it returned, {c['what']} {text}", unknown),
                       time=c.get("t"))
    begun = (run.history.begins.get(i) or {}).get("t")
    into = f" {c['t'] - begun:.2f}s into it" if begun is not None and c.get("t") is not None \
        else ""
    return replace(at(r, f": {c['what']}{into} {text}", unknown), time=c.get("t"))


def _ray_before_each_op(run: Run) -> dict:
    """``{op index: the runtime the op began with}``, as the probe before it
    read it (the setup's for the first; "?": not known)."""
    before_op, before = {}, (run.history.setup or {}).get("ray")
    for r in run.history.ops:
        before_op[r["i"]] = before
        probe = r.get("probe") or {}
        before = probe["ray"] if "ray" in probe and not probe.get("error") else "?"
    return before_op


def user_shutdown_ends_ray(run: Run) -> list[Finding]:
    """The user's own ``ray.shutdown()`` returns with the driver no longer
    connected to the runtime it had (the probe after it). An implementation
    may wrap the public name, to stop its own threads first as the reference
    does; the wrapped call must still end that connection. A new runtime
    after it (a thread that restarted Ray) is ``no_ray_restart``'s."""
    out, before_op = [], _ray_before_each_op(run)
    for r in run.op_records("ray_shutdown"):
        if r["status"] != "ok" or r.get("probe_skipped"):
            continue
        ray, before = probe_of(r, "ray"), before_op.get(r["i"])
        if unobserved(ray):
            out.append(ray)
        elif ray is not None and before == "?":
            out.append(unknown_at(r, f": Ray is initialized after the user's ray.shutdown() "
                                     f"({ray}), and the runtime before it is not known"))
        elif ray is not None and ray == before:
            out.append(at(r, f": Ray is still initialized after the user's ray.shutdown() "
                             f"returned, connected to the runtime it had ({ray}): the call did "
                             "not shut it down"))
    return out


def ray_not_shut_down_by_non_owner(run: Run) -> list[Finding]:
    """No call of the implementation, constructors included, shuts down the
    user's Ray runtime: the one a ``user``-owner driver started, and for
    either owner the one the user started by restarting Ray.

    Judged during each op (every end of a runtime the driver saw,
    ``runtime_changes``) and by the runtime the probe after it reads."""
    out = []
    users = run.scenario.owner == "user"
    before = (run.history.setup or {}).get("ray")
    ends: dict = {}
    for c in runtime_changes(run):
        if c["kind"] == "end" and not c["by_user"]:
            ends.setdefault(_changed_at(c), []).append(c)
    for r in run.history.ops:
        if r["status"] == "unfinished" or r.get("probe_skipped"):
            continue
        verb = r["op"]["verb"]
        user_rt = before if users and verb not in USER_RAY_VERBS else None
        seen = [c for c in ends.get(r["i"], []) if user_rt and (
            c["identity"] == user_rt or c["identity"].endswith(f", {session_of(user_rt)}"))]
        out += [_change(run, c, f"shut down the user's Ray runtime ({c['identity']})")
                for c in seen]
        after = _ray_after(r)
        if unobserved(after):
            if verb not in USER_RAY_VERBS and before and users:
                out.append(after)
            before = None  # unknown from here: judge no later op against a guess
            continue
        if user_rt and after is None and not seen:
            out.append(at(r, "shut down the user's Ray runtime"))
        if verb in USER_RAY_VERBS and r["status"] == "ok":
            users = verb == "ray_restart"
        before = after
    return out


def owned_runtime_not_lost(run: Run) -> list[Finding]:
    """A local runtime the implementation started ends only by a
    ``ray.shutdown()``: its own (a teardown asked to end it, or the end of
    the runtime's last holder) or the user's. Its GCS process going, with no
    such call begun before, while the driver is still connected
    (``ray.is_initialized()`` True), leaves the user's process on a dead
    runtime, where every later Ray call blocks until Ray gives up on the GCS
    and ends the process: a runtime started from a thread that then ends
    dies with it (``PR_SET_PDEATHSIG``, per thread on Linux: Tianshou
    2.0.1's ``RayVectorEnv`` built in such a thread; the reference's keeper
    thread prevents it). Judged from the runtime watch's records of the
    driver's GCS processes (``runtime_changes``: local runtimes only); the end
    of the user's runtime is ``ray_not_shut_down_by_non_owner``'s. The
    harness's next reading of the dead runtime blocks and ends the run as
    the harness's failure: this finding, made at the op the GCS went in,
    stands (``verdict._split_at``). Unknown when only a ``ray.shutdown()``
    whose runtime could not be read might have ended it, when the watch
    could not read whether the driver was still connected, and on the local
    fixture when the driver's processes were not watched."""
    unwatched = _watch_unknown(run)
    if unwatched:
        return [unwatched]
    setup = run.history.setup or {}
    processes = str((setup.get("runtime_watch") or {}).get("processes", ""))
    if run.scenario.fixture == "local" and processes.startswith("not watched"):
        return [unknown_in_run(f"the driver's GCS processes were {processes}: whether a runtime "
                               "the implementation started died under it is not known",
                               setup.get("t"))]
    changes = runtime_changes(run)
    user_sessions = {session_of(setup.get("ray"))} if run.scenario.owner == "user" else set()
    user_sessions |= {c["session"] for c in changes if c["kind"] == "start" and c["by_user"]}
    out = []
    for c in changes:
        if c["kind"] != "end" or c["source"] != "process" or c["session"] in user_sessions:
            continue  # the user's runtime: ray_not_shut_down_by_non_owner's
        if c["connected"] is False or c["shutdown_under_way"]:
            continue  # the driver had left it, or a ray.shutdown() of it was under way
        lost = f"ended the runtime the implementation started ({c['identity']})"
        if c["unsure"]:
            out.append(_change(run, c, f"{lost}, or a ray.shutdown() begun before it whose "
                                       "runtime could not be read did", unknown=True))
        elif c["connected"] is None:  # the watch could not read the driver's flag
            out.append(_change(run, c, f"{lost}; whether the driver was still connected to "
                                       "it is not known", unknown=True))
        else:
            out.append(_change(run, c, f"{lost}, the driver still connected to it "
                                       "(ray.is_initialized() True): Ray calls after it block "
                                       "on a GCS that is gone"))
    return out


def builds_running(run: Run) -> dict:
    """Op index -> the index of the op that started a build left running
    (``construct(thread=True, wait=False)``) that may still run during it:
    from that op to its ``join_build``. A constructor that finds Ray down may
    start it then (the probes between may already show it)."""
    out, started = {}, {}
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] == "construct" and (op.get("args") or {}).get("wait") is False:
            started[op.get("target")] = r["i"]
        elif op["verb"] == "join_build" and op.get("target") in started:
            first = started.pop(op.get("target"))
            out.update({i: min(first, out.get(i, first)) for i in range(first, r["i"] + 1)})
    for first in started.values():  # never joined (the run ended first): to the end
        out.update({i: min(first, out.get(i, first)) for i in range(first, len(run.scenario.ops))})
    return out


def no_ray_restart(run: Run) -> list[Finding]:
    """No call starts or restarts a Ray runtime, except a constructor that
    finds none running (the implementation then owns it; once; a build left
    running, ``builds_running``, while it runs) and the user's own restart
    (``ray_restart``).

    Judged during each op, from every start the driver saw
    (``runtime_changes``: a runtime started and shut down again within one op
    counts), and by the runtime the probe after each op reads (its identity,
    GCS address, session, job, also changes on a silent reconnect)."""
    unwatched = _watch_unknown(run)
    out = [unwatched] if unwatched else []
    before_op = _ray_before_each_op(run)
    changes = runtime_changes(run)
    explained, started_in, building = set(), set(), builds_running(run)
    started_in_window: set = set()  # a build left running may start one runtime, once
    for c in changes:
        if c["kind"] != "start":
            continue
        explained.add(_changed_at(c))
        if c["by_user"]:
            continue
        r = run.history.ends.get(c["i"]) or run.history.begins.get(c["i"]) or {}
        prior = before_op.get(c["i"])
        if prior == "?":
            out.append(_change(run, c, f"started a Ray runtime ({c['identity']}); whether "
                                       "one ran before is not known", unknown=True))
            continue
        during = c["i"] if c["i"] is not None else c["last"]  # between ops: the one before
        window = building.get(during)
        if window is not None:  # a build left running: Ray as it was when that build began
            prior = before_op.get(window)
        allowed = ((r.get("op") or {}).get("verb") == "construct" or window is not None) \
            and prior is None and c["i"] not in started_in \
            and (window is None or window not in started_in_window)
        if window is not None:
            started_in_window.add(window)
        started_in.add(c["i"])
        if not allowed:
            again = c["i"] is not None and any(
                e["kind"] == "end" and e["identity"] == c["identity"] and e["i"] == c["i"]
                for e in changes)
            out.append(_change(run, c, f"started a Ray runtime ({c['identity']})"
                                       + (", which the same op shut down again: the probe "
                                          "after it saw no change" if again else "")))
    before = (run.history.setup or {}).get("ray")
    known = True
    for r in run.history.ops:
        if r["status"] == "unfinished" or r.get("probe_skipped"):
            continue
        after = _ray_after(r)
        if unobserved(after):
            out.append(after)
            known = False
            continue
        if known and after and after != before and r["i"] not in explained:
            may_start = ((r["op"]["verb"] == "construct" or r["i"] in building)
                         and before is None) or (
                r["op"]["verb"] == "ray_restart" and r["status"] == "ok")
            if not may_start:
                why = "started a Ray runtime" if before is None else "restarted Ray"
                out.append(at(r, f"{why} ({after})"))
        before, known = after, True
    final = final_of(run, "ray")
    if unobserved(final):
        if run.history.final is not None:
            out.append(final)
    elif known and final and final != before and len(run.scenario.ops) not in explained:
        out.append(in_run(f"Ray was started again after the last operation ({final})",
                          final_time(run)))
    return out


def _owned_runtime_teardowns(run: Run):
    """Each teardown that returned, of an ``impl``-owner run (the runtime is
    the implementation's), until the user ends or replaces the runtime (then
    it is not the implementation's doing): ``(record, asked, last)``, with
    the first teardown so far that asked to end it (``shutdown_ray=True``;
    None) and whether it released the runtime's last hold (every component
    built, a ``from_name`` connection aside, torn down)."""
    if run.scenario.owner != "impl":
        return
    holders: set = set()
    asked = None
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] in USER_RAY_VERBS:
            return
        if r["status"] != "ok":
            continue
        if op["verb"] == "construct" and not op.get("args", {}).get("connect"):
            holders.add(op["target"])
        if op["verb"] != "teardown":
            continue
        if op.get("args", {}).get("shutdown_ray") and asked is None:
            asked = r
        holders.discard(op["target"])
        yield r, asked, not holders


def owned_runtime_ended(run: Run) -> list[Finding]:
    """A Ray runtime the implementation started (the ``impl`` owner: the
    driver never calls ray.init; on a cluster, its connection and job) that
    a teardown asked to end (``shutdown_ray=True``) is gone once the last
    component holding it is torn down, however many asked and in whatever
    order (a request deferred while another component held it takes effect
    then): after that teardown Ray is not initialized in the driver and
    nothing of the runtime is left: none of its processes (GCS, raylet,
    agents, workers, read after each constructor), and on a cluster its job
    is dead with no live actor. Ray 2.60's ``ray.shutdown()`` returns once
    they are gone (measured, 8 of 8 each: a local runtime's processes, 1.1-1.4 s;
    a connected driver's job and actors, 0.26 s), so it is read at once."""
    out: list = []
    for r, asked, last in _owned_runtime_teardowns(run):
        if asked is None or not last:
            continue
        why = (f"released the last hold on the Ray runtime the implementation started, "
               f"which {label(asked)} asked to end (shutdown_ray=True)")
        ray = probe_of(r, "ray")
        if unobserved(ray):
            return out + [ray]
        if ray is not None:
            return out + [at(r, f"{why}, and Ray is still up ({ray})")]
        end = (r.get("probe") or {}).get("runtime_end")
        if end is None:
            return out
        for p in end.get("processes_left") or []:
            out.append(at(r, f"{why}: its process {p['pid']} ({p['name']}) still runs after "
                             "it returned"))
        job = end.get("job") or {}
        if job.get("error"):
            e = job["error"]
            out.append(unknown_at(r, f"{why}: its job could not be read: {e['type']}: "
                                     f"{e['message'][:200]}"))
        elif job:
            if job.get("dead") is not True:
                out.append(at(r, f"{why}: its job {job['id']} is not dead after it returned"))
            for aid, a in sorted((job.get("live_actors") or {}).items()):
                out.append(at(r, f"{why}: its job's actor {aid[:8]} ({a.get('class_name')}) "
                                 f"still {a['state']}"))
        return out
    return out


def owned_runtime_kept(run: Run) -> list[Finding]:
    """A Ray runtime the implementation started (the ``impl`` owner) stays
    up until a teardown asks to end it: the last holder's teardown, when no
    teardown asked (``shutdown_ray=True``), returns with Ray still
    initialized in the driver, as a user who never called ``ray.init`` but
    goes on with ``ray.get`` or an actor of their own needs it. Rests on the
    ``keeps_own_runtime`` convention: ending the runtime one started
    breaks no rule of ownership, so only a library that declares it keeps
    its runtime is judged by this."""
    for r, asked, last in _owned_runtime_teardowns(run):
        if asked is not None:
            return []  # asked: owned_runtime_ended's
        if not last:
            continue
        ray = probe_of(r, "ray")
        if unobserved(ray):
            return [ray]
        if ray is None:
            return [at(r, "released the last hold on the Ray runtime the implementation "
                          "started, and Ray is not initialized any more, though no teardown "
                          "asked to end it (shutdown_ray=True)")]
        return []
    return []


# -- use after close, liveness, construction -------------------------------------

def use_after_close_clear_error(run: Run) -> list[Finding]:
    """A call after teardown raises, within the teardown bound, an error
    that says the component is closed (its declared closed error, or one
    whose message says closed, shut down, terminated, no longer or not
    running), never succeeds and never raises a generic error."""
    out = []
    for r in run.op_records("use"):
        what = f"{r['op']['args']['call']}() after teardown"
        if r["status"] == "ok":
            out.append(at(r, f"{what} succeeded instead of raising a closed error"))
            continue
        if r["status"] != "raised":
            continue
        e = r["error"]
        if e["type"] in run.closed_errors:
            pass
        elif e["type"] in GENERIC_ERRORS or not CLOSED_WORDS.search(e["message"]):
            out.append(at(r, f"{what} raised an unclear {e['type']}: {e['message'][:200]}"))
        if r["duration"] > run.teardown_bound + BOUND_SLACK:
            out.append(at(r, f"{what} took {r['duration']:.2f}s"))
    return out


#: how a component's repr says it is closed (the reference's "closed after
#: shutdown()", a socket's "[closed]"): a word, not an identifier's part
#: (``shutdown_timeout=10`` of an open one says nothing of the kind), and not
#: a flag set false (``closed=False``)
CLOSED_STATE = re.compile(r"\b(?:closed|shut ?down)\b(?!\s*[=:]\s*(?:False|0)\b)", re.I)
#: the calls after which a component not torn down is surely still open: no
#: fault, no runtime change, no frame budget, no background work that may end it
KEEP_OPEN = ("construct", "describe", "extend", "sample", "check_data", "submit", "poll",
             "check_alive")


def repr_names_state(run: Run) -> list[Finding]:
    """A component's ``repr()`` (the ``describe`` op) tells whether it is
    closed: after its teardown returned it says so (closed, shut down), and
    before anything ended it, it does not. A repr that
    calls a closed component open, or a live one closed, misleads whoever
    reads a log line or a debugger to find out why a call failed. Not
    judged once anything else may have ended it (an op outside ``KEEP_OPEN``
    on it, or on no component: a kill, ``ray.shutdown()``, its frame budget,
    background work). Rests on the ``repr_names_state`` convention."""
    out = []
    ended: set = set()
    torn: set = set()
    for r in run.history.ops:
        op = r["op"]
        target = op.get("target")
        if op["verb"] == "construct" and r["status"] == "ok":
            torn.discard(target)  # built again: open again
            ended.discard(target)
        elif op["verb"] == "teardown" and r["status"] == "ok":
            torn.add(target)
        elif op["verb"] not in KEEP_OPEN or r["status"] != "ok":
            ended.add(target)  # None: every component (the user's ray calls)
        if op["verb"] != "describe" or r["status"] != "ok":
            continue
        text = r["result"]["text"]
        says_closed = bool(CLOSED_STATE.search(text))
        if target in torn and not says_closed:
            out.append(at(r, f": repr() of {target} after its teardown returned does not say "
                             f"it is closed: {text[:200]!r}"))
        elif target not in torn and not ended & {target, None} and says_closed:
            out.append(at(r, f": repr() of {target}, open and never ended, says it is closed: "
                             f"{text[:200]!r}"))
    return out


def _held(resources: dict | None) -> dict:
    """The amounts an actor holds (Ray's ``required_resources``), zeros left out."""
    return {k: float(v) for k, v in (resources or {}).items() if v > RESOURCE_SLACK}


#: what a constructor raises when it refuses its own arguments (its defaults,
#: in a default build), as against failing to schedule or start its actors
ARGUMENT_ERRORS = ("builtins.ValueError", "builtins.TypeError")


def _fixture_cpus(fixture: str) -> list[float] | None:
    """The CPUs of each node of a fixture the suite starts itself (None: a
    cluster it does not know, ``external``)."""
    from fixtures.clusters import LocalCluster, MultinodeCluster

    if fixture == LocalCluster.kind:
        return [float(LocalCluster.NUM_CPUS)]
    if fixture == MultinodeCluster.kind:
        return [float(a["num_cpus"]) for a in MultinodeCluster.NODE_ARGS.values()]
    return None


def _fits(resources: dict, actors: int, fixture: str) -> bool:
    """Documented actor resources (CPUs only) that the fixture hosts for
    ``actors`` actors at once, packed onto its nodes."""
    cpus = _fixture_cpus(fixture)
    need = resources.get("CPU", 0.0)
    if cpus is None or not set(resources) <= {"CPU"}:
        return False
    return need == 0 or sum(math.floor(n / need + 1e-9) for n in cpus) >= actors


def defaults_as_documented(run: Run) -> list[Finding]:
    """A component left to its defaults is what the implementation documents
    (the adapter's ``documented_defaults``): each actor of one built without
    actor options (``Spec.defaults``) holds the resources documented for
    its kind, no more and no less (a replay buffer that reserves a CPU
    leaves the collector's actors unschedulable on a small machine; one that
    reserves none where a CPU is documented oversubscribes it), and a
    collector built with neither ``num_collectors`` nor a list of env ids
    (``Spec.minimal_build``) starts the documented number of actors. A
    build with defaults whose documented resources the fixture can host (its
    CPUs only, packed onto the nodes of a fixture the suite starts, nothing
    built before it) must not refuse them (``ARGUMENT_ERRORS``): the defaults
    family lets a build fail for what the fixture cannot give, never for
    defaults its own constructor rejects. A build whose actors were not
    observed is unknown. Rests on the ``documented_defaults`` convention."""
    spec = run.spec
    if not (spec.defaults or spec.minimal_build):
        return []
    out = []
    built = False  # a component built earlier may hold what a later one needs
    for r in run.op_records("construct"):
        built_earlier, built = built, built or r["status"] == "ok"
        if r["status"] not in ("ok", "raised") or r["op"].get("args", {}).get("connect") \
                or r["op"].get("args", {}).get("fail"):
            continue
        kind = kind_of(r["op"]["target"])
        documented = (run.documented_defaults or {}).get(kind)
        if documented is None:
            out.append(unknown_at(r, f": the adapter documents no defaults of a {kind} "
                                     "(Adapter.documented_defaults)"))
            continue
        if r["status"] == "raised":
            need = _held(documented.get("actor_resources"))
            actors = spec.num_collectors if kind == "collector" else 1
            refused = (r.get("error") or {}).get("type") in ARGUMENT_ERRORS
            if spec.defaults and "actor_resources" in documented and not built_earlier \
                    and refused and _fits(need, actors, run.scenario.fixture):
                e = r.get("error") or {}
                out.append(at(r, f": built with its defaults, it refused them, {e.get('type')}: "
                                 f"{str(e.get('message'))[:200]}, though its documented "
                                 f"resources ({need or 'nothing'} for each of {actors} actor(s)) "
                                 f"fit the {run.scenario.fixture} fixture, nothing else built"))
            continue
        created = probe_of(r, "created")
        if unobserved(created):
            out.append(created)
            continue
        if not created:
            out.append(unknown_at(r, f": no actor of the {kind} was observed: what it holds, "
                                     "and how many it started, is unknown"))
            continue
        if spec.defaults and "actor_resources" in documented:
            want = _held(documented["actor_resources"])
            for a in created:
                got = _held(a.get("required_resources"))
                if a.get("required_resources") is None:
                    out.append(unknown_at(r, f": the resources of {kind} actor "
                                             f"{str(a.get('id'))[:8]} were not observed"))
                elif set(got) != set(want) or any(abs(got[k] - want[k]) > RESOURCE_SLACK
                                                   for k in want):
                    out.append(at(r, f": {kind} actor {str(a.get('id'))[:8]}, built with its "
                                     f"defaults, holds {got or 'nothing'}; documented: "
                                     f"{want or 'nothing'}"))
        if spec.minimal_build and kind == "collector" and "actors" in documented \
                and len(created) != documented["actors"]:
            out.append(at(r, f": a collector built with neither num_collectors nor a list of "
                             f"env ids started {len(created)} actors; documented: "
                             f"{documented['actors']}"))
    return out


#: seconds past its documented ready bound a build may take to give up: what
#: comes before the wait (the lease, the actors' creation sent) and the undoing
#: of the build (the kill of actors that never started). The reference gave
#: up after 30.05 s of its 30 (collector, local fixture, 2026-11-29, once it
#: stopped asking never-started actors to close their envs and what they
#: hold: 32.5 s before; 30.03-30.05 s with two busy loops on the 2 cores).
#: Under a second: a bound changed by a second either way (29 or 31 s,
#: ci/results/mutation/answers.txt) shows
READY_SLACK = 0.9


def ready_bound_as_documented(run: Run) -> list[Finding]:
    """On a busy cluster (``occupy``: the harness holds every CPU of every
    node), a component built with its defaults (``Spec.defaults``) whose
    documented actors need a CPU cannot start them: the build gives up no
    sooner than its documented ready bound (``documented_defaults[kind]
    ["ready_timeout"]``: a user on a shared cluster relies on it) and at
    most ``READY_SLACK`` after it (that the error is clear and leaves no
    actor, whose pending creation would take the first CPU freed, is
    ``fails_clearly``'s); one that returned at once did not wait at all. One
    documented to need no CPU builds there. A bound documented as None (the
    constructor does not wait) is not judged; none documented is unknown.
    Rests on the ``documented_defaults`` convention."""
    if not run.spec.defaults:
        return []
    out, busy = [], False
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if verb in ("occupy", "vacate"):
            busy = verb == "occupy" and r["status"] == "ok"
            continue
        if verb != "construct" or not busy or r["status"] not in ("ok", "raised"):
            continue
        kind = kind_of(r["op"]["target"])
        documented = (run.documented_defaults or {}).get(kind) or {}
        if "actor_resources" not in documented:
            out.append(unknown_at(r, f": the adapter documents no actor resources for the {kind} "
                                     "(Adapter.documented_defaults)"))
            continue
        need = _held(documented["actor_resources"])
        e = r.get("error") or {}
        raised = f"{e.get('type')}: {str(e.get('message'))[:200]}"
        if not need.get("CPU"):
            if r["status"] == "raised":
                out.append(at(r, f": documented to need no CPU ({need or 'nothing'}), it failed "
                                 f"to build on a cluster with no CPU free: {raised}"))
            continue
        if "ready_timeout" not in documented:
            out.append(unknown_at(r, f": the adapter documents no ready bound for the {kind} "
                                     "(Adapter.documented_defaults ready_timeout)"))
            continue
        bound = documented["ready_timeout"]
        if bound is None:
            continue  # documented not to wait: it may return with its actors pending
        if r["status"] == "ok":
            out.append(at(r, f": returned in {r['duration']:.2f}s on a cluster with no CPU "
                             f"free, its actors documented to need {need}: it did not wait the "
                             f"documented {bound}s for them to start"))
        elif r["duration"] < bound:  # "in", not "after": a machine cannot make it early
            out.append(at(r, f": on a cluster with no CPU free, it gave up in "
                             f"{r['duration']:.2f}s, before its documented ready bound {bound}s: "
                             f"{raised}"))
        elif r["duration"] > bound + READY_SLACK:
            out.append(at(r, f": on a cluster with no CPU free, it took {r['duration']:.2f}s to "
                             f"give up, past its documented ready bound {bound}s "
                             f"(+{READY_SLACK}s): {raised}"))
    return out


def ready_batches_not_held_back(run: Run) -> list[Finding]:
    """Asynchronous collection is first ready, first served (feature
    ``async``): an actor whose batch was yielded is asked for its next one
    at once, so a slow actor holds back none of a fast one's batches. An
    ``iterate`` given ``within`` (a collector whose first actor steps a very
    slow env, ``construct(per_actor_envs=<slow env id>)``: a batch of it
    takes 12.8 s) yields its batches after the first within that many
    seconds of the first (the actors' start-up before the first batch is not
    counted); a collector that asks an actor again only once every actor
    returned takes the slow actor's time for the second. Fewer batches than
    asked, or no times recorded: unknown."""
    out = []
    for r in run.op_records("iterate"):
        args = r["op"].get("args") or {}
        if "within" not in args or r["status"] != "ok":
            continue
        res, within = r.get("result") or {}, float(args["within"])
        times, want = res.get("times"), int(args.get("batches", 1))
        if not times or len(times) < want:
            out.append(unknown_at(r, f": {len(times or [])} of the {want} batches asked came "
                                     "(with their times): whether a slow actor held them back "
                                     "is unknown"))
            continue
        spread = times[want - 1] - times[0]
        if spread > within:
            out.append(at(r, f"took {spread:.2f}s from the first of {want} batches to the last, "
                             f"beside a slow actor; the ready actor's come within {within:g}s "
                             f"(first ready, first served: asked again at once)"))
    return out


def seeded_batches_repeat(run: Run) -> list[Finding]:
    """Collectors built with one seed (``Spec.seed``, feature ``seed``) and
    the adapter's usual policy (the action space's random actions) yield the
    same batches: the digests (``verbs.digest_of``: observations, actions,
    next observations, rewards) of every ``iterate`` with ``digest`` agree
    with the first one's, batch by batch, over the batches both yielded. A
    seed that misses an actor's env or its action sampling (a fresh random
    stream in every build) shows as a batch that differs. A batch without a
    digest (no TensorDict of those entries) is unknown."""
    if run.spec.seed is None:
        return []
    out: list = []
    first = None
    for r in run.op_records("iterate"):
        if r["status"] != "ok" or not r["op"].get("args", {}).get("digest"):
            continue
        digests = (r.get("result") or {}).get("digests") or []
        if any(d is None for d in digests):
            out.append(unknown_at(r, ": a batch has no digest (not a TensorDict with observation, "
                                     "action, next observation and reward: verbs.digest_of)"))
            continue
        if first is None:
            first = (r, digests)
            continue
        differ = [b for b, (mine, theirs) in enumerate(zip(digests, first[1]), 1) if mine != theirs]
        if differ:
            out.append(at(r, f": batch {differ[0]} differs from batch {differ[0]} of "
                             f"{label(first[0])}, a collector built with the same seed "
                             f"({run.spec.seed}): the seed does not fix what it yields"))
    return out


def _answers(res: dict) -> list:
    """``[[seconds, value], ...]``: each change of a check_alive's answer
    (a record without them: its one final answer)."""
    return res.get("answers") or [[res["elapsed"], res["value"]]]


def liveness_reports_death(run: Run) -> list[Finding]:
    """``is_alive()`` over time. Expected True (a healthy component): its
    first answer is True, within ``within`` seconds. Expected False (after a
    fault): it answers False within ``within`` seconds of the op's start.
    Then it keeps that answer for ``stays`` seconds: a death is for good (an
    actor Ray restarted has lost its state). Timed around the calls: one
    call that blocks past the bound is a violation even if it then answers
    right."""
    out = []
    for r in run.op_records("check_alive"):
        if r["status"] == "skipped":
            continue
        if r["status"] == "raised":
            e = r["error"]
            out.append(at(r, f": is_alive() raised {e['type']}: {e['message'][:200]}"))
            continue
        if r["status"] != "ok":
            continue
        res = r["result"]
        expect, within = res["expect"], res["within"]
        answers = _answers(res)
        first_at, first = answers[0]
        reached = next((t for t, v in answers if v == expect), None)
        if expect and not first:
            out.append(at(r, f": is_alive() answered False for a healthy component "
                             f"(its first answer, after {first_at}s)"))
            continue
        if reached is None:
            out.append(at(r, f": is_alive() still {res['value']} after {res['elapsed']}s "
                             f"(expected {expect} within {within}s)"))
            continue
        if reached > within + BOUND_SLACK:
            out.append(at(r, f": is_alive() answered {expect} only after "
                             f"{reached}s (bound {within}s)"))
        back = next((t for t, v in answers if t > reached and v != expect), None)
        if back is not None:
            out.append(at(r, f": is_alive() answered {not expect} again {back}s into the "
                             f"check, {round(back - reached, 3)}s after it answered {expect} (it "
                             f"must stay {expect} for {res.get('stays', 0)}s)"))
    return out


def errors_surface(run: Run) -> list[Finding]:
    """The error of the work behind a call reaches the user at the next call,
    never only a log line: an op with a ``cause`` (an ``iterate`` whose env
    fails midway; a ``check_error`` after the background work of ``start()``
    failed) raises within ``within`` seconds (default 5) an error that is not a
    generic Python one and names its cause (``CAUSES``) in its message or in
    the exceptions it is chained to."""
    out = []
    for r in run.history.ops:
        cause = r["op"].get("args", {}).get("cause")
        if not cause or r["status"] not in ("ok", "raised"):
            continue
        within = float(r["op"]["args"].get("within", 5.0))
        what = f"({cause} failure)"
        if r["status"] == "ok":
            res = r.get("result") or {}
            silent = (f"returned {res['returned']} time(s) in {res['elapsed']}s"
                      if "returned" in res else "returned")
            out.append(at(r, f"{what}: {silent} without raising: the error was not surfaced "
                             "to the caller"))
            continue
        e = r.get("error") or {}
        if e.get("type") in GENERIC_ERRORS:
            out.append(at(r, f"{what} raised an unclear {e['type']}: "
                             f"{str(e.get('message'))[:200]}"))
        chain = [e, *(e.get("causes") or [])]
        if not any(CAUSES[cause].search(f"{c.get('type')}: {c.get('message')}") for c in chain):
            out.append(at(r, f"{what} raised {e.get('type')}: {str(e.get('message'))[:200]}, "
                             f"which names neither in itself nor in its chain the {cause} "
                             "failure that caused it"))
        if r["duration"] > within + BOUND_SLACK:
            out.append(at(r, f"{what} raised only after {r['duration']:.2f}s (bound {within}s)"))
    return out


#: the verbs of a run in which nothing fails (``unraised_error_logged``): the
#: user's plain calls, on healthy components, each op ok. Not a kill, a
#: signal, the user's ray.shutdown(), a check that expects an error, nor
#: background work (``start``: a buffer closed under its thread ends its
#: work with no op failing, ``background/*/*/buffer-closed-under-thread``)
PLAIN_VERBS = ("construct", "iterate", "exhaust", "sample", "extend", "check_data", "submit",
               "poll", "teardown", "wait_frames", "await_actors", "weights", "check_name",
               "check_clean", "check_writes", "drop", "peer", "check_alive", "describe", "add")
ERROR_LEVELS = ("ERROR", "CRITICAL")


def _log_op(run: Run, record: dict):
    """The op record a log record was made in (or, between ops, after)."""
    i = record.get("i") if record.get("i") is not None else record.get("after")
    return run.history.ends.get(i) if i is not None else None


def _nothing_failed(run: Run, verbs: tuple = PLAIN_VERBS, closed_calls: bool = False) -> bool:
    """Only plain verbs (``PLAIN_VERBS``), each ok; no component built
    infeasible, unready or to fail, none expected dead (``check_alive``
    with ``expect=False``), no with block whose body raised (the user's
    error passes through its ``__exit__``); the suite's healthy envs only (not the
    one that fails, hangs, needs a helper or is slow: the catalog's ``env_id``
    unset or CartPole, and so any actor's own env id). ``closed_calls``: a
    call after teardown (``use``) that raised the adapter's closed error
    counts as ok, the contract's outcome."""
    envs = {run.scenario.spec.get("env_id")} | {  # and an actor's own env
        r["op"]["args"]["per_actor_envs"] for r in run.op_records("construct")
        if isinstance(r["op"].get("args", {}).get("per_actor_envs"), str)}
    return (envs <= {None, "CartPole-v1"}
            and all((r["op"]["verb"] in verbs and r["status"] == "ok"
                     or closed_calls and _raised_closed(run, r))
                    and not {"fail", "infeasible"} & set(r["op"].get("args", {}))
                    and r["op"].get("args", {}).get("ready", True) is not False
                    and r["op"].get("args", {}).get("expect", True) is not False
                    and not r["op"].get("args", {}).get("body_raises")
                    for r in run.history.ops))


def _surfaced(r: dict, cause: str) -> bool:
    """Op ``r`` raised an error naming ``cause`` (``CAUSES``), in itself or
    in its chain: the user saw that failure."""
    e = r.get("error") or {}
    return any(CAUSES[cause].search(f"{c.get('type')}: {c.get('message')}")
               for c in [e, *(e.get("causes") or [])])


def unraised_error_logged(run: Run) -> list[Finding]:
    """An error nobody raised is not lost, and nothing that did not fail is
    reported as an error. The error that stopped a collector's background
    work (``start()``; the env that fails on purpose, seen by ``is_alive()``
    answering False before the teardown) when no call raised it to the user,
    is logged at ERROR by the collector's first teardown, once, naming the
    failure; when a call raised it, that teardown does not log it at ERROR
    again; and a run where nothing failed (``_nothing_failed``: plain calls
    on healthy components, each ok, no background work) logs nothing at
    ERROR. Read from what the implementation logged in the driver
    (``conformance.ops.log_capture``); rests on the ``logs_unraised_errors``
    convention."""
    if run.features is not None and "logs_unraised_errors" not in run.features:
        return []  # its findings tied to no op too: judged only under the convention
    out = []
    errors = [rec for rec in run.history.logs if rec.get("level") in ERROR_LEVELS]
    if _nothing_failed(run):
        for rec in errors:
            r = _log_op(run, rec)
            text = f"logged at ERROR ({rec.get('logger')}: {str(rec.get('message'))[:200]}) " \
                   "in a run where nothing failed"
            out.append(at(r, f": {text}") if r is not None else in_run(text))
        return out
    if run.scenario.spec.get("env_id") != FAILING_ENV["env_id"]:
        return out
    for comp in sorted({r["op"]["target"] for r in run.op_records("start") if r["status"] == "ok"}):
        teardowns = [r for r in run.op_records("teardown", comp) if r["status"] in ("ok", "raised")]
        if not teardowns:
            continue
        first = teardowns[0]
        before = [r for r in run.op_records(target=comp) if r["i"] < first["i"]]
        if not any(r["op"]["verb"] == "check_alive" and r["status"] == "ok"
                   and r["op"].get("args", {}).get("expect") is False
                   and (r.get("result") or {}).get("reached") is not None for r in before):
            continue  # not seen to have failed before its teardown
        raised = next((r for r in before if r["status"] == "raised" and _surfaced(r, "env")),
                      None)
        about = [rec for rec in errors if CAUSES["env"].search(str(rec.get("message")))]
        by_first = [rec for rec in about if rec.get("i") == first["i"]]
        by_teardowns = [rec for rec in about if rec.get("i") in {r["i"] for r in teardowns}]
        if raised is not None and by_first:
            out.append(at(first, f": logged at ERROR the background error op {raised['i']} "
                                 f"({raised['op']['verb']}) had raised to the user already: "
                                 f"{str(by_first[0].get('message'))[:200]}"))
        elif raised is None and not by_first:
            out.append(at(first, ": the error that stopped start()'s work (the env's failure) "
                                 "was raised by no call, and this teardown did not log it at "
                                 "ERROR: the user never hears of it"))
        elif raised is None and len(by_teardowns) > 1:
            out.append(at(first, f": the unraised background error was logged at ERROR "
                                 f"{len(by_teardowns)} times by the teardowns, not once"))
    return out


def _pending_submit(run: Run, upto: int) -> bool:
    """An evaluation was submitted before op ``upto`` and not polled since."""
    pending = False
    for r in run.history.ops:
        if r["i"] >= upto:
            break
        if r["op"]["verb"] == "submit" and r["status"] == "ok":
            pending = True
        elif r["op"]["verb"] == "poll" and (r.get("result") or {}).get("ready"):
            pending = False  # a poll that returned None leaves it pending
    return pending


def _raised_closed(run: Run, r: dict) -> bool:
    """Op record ``r`` is a call after teardown that raised the adapter's
    closed error (``Adapter.closed_errors``)."""
    return (r["op"]["verb"] == "use" and r["status"] == "raised"
            and (r.get("error") or {}).get("type") in run.closed_errors)


def _healthy(run: Run) -> bool:
    """Nothing failed (``_nothing_failed``), background work allowed, and
    nothing asked that the implementation may rightly warn it does not do:
    no ``shutdown_ray`` (ignored on a runtime the user started), no buffer
    torn down before a collector started into it had stopped (its thread's
    writes then fail). The user's own ``ray.shutdown()`` before the
    teardowns is a program's normal end (the components' actors end with
    the runtime), unless a named eval worker was built (its actor is
    detached: that it may outlive the runtime is worth a warning),
    background work started (its thread loses Ray under it), an evaluation
    was still pending (its result is lost), or the runtime was the
    implementation's own (ended under it). A call after
    teardown that raised the declared closed error is the contract's normal
    outcome, nothing to warn about either."""
    if not _nothing_failed(run, PLAIN_VERBS + ("start", "ray_shutdown"), closed_calls=True):
        return False
    if any(r["op"].get("args", {}).get("shutdown_ray") for r in run.history.ops):
        return False
    shutdowns = [r["i"] for r in run.op_records("ray_shutdown")]
    if shutdowns and (run.scenario.owner == "impl" or _pending_submit(run, shutdowns[0]) or any(
            r["op"]["verb"] == "start" or (r["op"]["verb"] == "construct"
                                           and r["op"].get("args", {}).get("named"))
            for r in run.history.ops)):
        return False
    started = {r["op"]["target"] for r in run.op_records("start")}
    stopped: set = set()
    for r in run.history.ops:
        if r["op"]["verb"] != "teardown":
            continue
        if kind_of(r["op"]["target"]) == "buffer" and started - stopped:
            return False
        stopped.add(r["op"]["target"])
    return True


#: seconds a teardown in a healthy run may take (``teardown_prompt_when_healthy``).
#: Measured here (quick profile, -n 2, 2026-11-28 05:58 UTC): every healthy
#: teardown of the reference returned within 0.9 s (two started collectors,
#: one stopped while the other ran), most within 0.15 s; the ones near 2 s
#: were all hangs, kills or long batches, which a healthy run has none of
PROMPT_TEARDOWN = 1.5


def teardown_prompt_when_healthy(run: Run) -> list[Finding]:
    """In a run where nothing failed and nothing was refused (``_healthy``),
    every teardown call returns within ``PROMPT_TEARDOWN``: with nothing
    hung or dead, a teardown that takes seconds waited out a bounded wait of
    its own for something that had already happened (a release it misread, a
    concurrent call's end it never heard of) and makes every user's
    shutdown slow. A call past the bound is ``teardown_within_bound``'s
    alone. Rests on the ``prompt_teardown`` convention."""
    if not _healthy(run):
        return []
    out = []
    for r in run.op_records("teardown"):
        for n, c in enumerate((r.get("result") or {}).get("calls") or []):
            # past the bound: teardown_within_bound's
            if c.get("status") == "ok" and PROMPT_TEARDOWN < c["duration"] \
                    <= run.teardown_bound + BOUND_SLACK:
                who = f"call {n + 1} " if len(r["result"]["calls"]) > 1 else ""
                out.append(at(r, f": {who}took {c['duration']:.2f}s in a healthy run (nothing "
                                 f"hung, dead or failed; prompt: {PROMPT_TEARDOWN}s)"))
    return out


def quiet_when_healthy(run: Run) -> list[Finding]:
    """A run where nothing failed and nothing was refused (``_healthy``:
    plain calls on healthy components, each ok, background work included)
    logs no WARNING: a warning on every normal teardown (a thread "not
    stopped in time" that was, a note about a request nobody made) buries
    the ones that matter. Read from what the implementation logged in the
    driver, and the Python warnings attributed to its code there
    (``conformance.ops.log_capture``); ERROR is ``unraised_error_logged``'s. Rests on the ``quiet_when_healthy``
    convention."""
    if run.features is not None and "quiet_when_healthy" not in run.features:
        return []  # its findings tied to no op too: judged only under the convention
    if not _healthy(run):
        return []
    out = []
    for rec in run.history.logs:
        if rec.get("level") != "WARNING":
            continue
        r = _log_op(run, rec)
        text = (f"logged a WARNING ({rec.get('logger')}: {str(rec.get('message'))[:200]}) in a "
                "run where nothing failed and nothing was refused")
        out.append(at(r, f": {text}") if r is not None else in_run(text))
    return out


def calls_within_timeout(run: Run) -> list[Finding]:
    """A call that takes a timeout (``poll(timeout)``, the ``wait_frames``
    wait) returns within it, work in flight or not (``Verb.timeout_of``)."""
    out = []
    for r in run.history.ops:
        v = VERBS.get(r["op"]["verb"])
        if v is None or r["status"] not in ("ok", "raised"):
            continue
        limit = v.timeout_of(_op(r))
        if limit is not None and r["duration"] > limit + BOUND_SLACK:
            out.append(at(r, f"took {r['duration']:.2f}s; its timeout is {limit}s"))
    return out


#: seconds a poll that returned None may fall short of its timeout (the
#: driver's clock around the call reads at least the implementation's wait)
POLL_SHORTFALL = 0.1


def poll_waits_its_timeout(run: Run) -> list[Finding]:
    """``poll(timeout)`` returns the evaluation's result, or None when it is
    not done within ``timeout``: a poll that returns None while an evaluation
    it could wait for is pending (submitted, its result not returned yet,
    the eval worker neither torn down nor hit by a fault since) has waited
    its whole timeout, not returned early. A poll a signal was sent into is
    ``interrupt_prompt``'s to judge. Rests on the ``async_eval`` convention."""
    out = []
    pending: dict = {}
    for r in run.history.ops:
        verb, comp = r["op"]["verb"], r["op"].get("target")
        if verb == "submit" and r["status"] == "ok":
            pending[comp] = r["i"]
        elif verb == "poll" and r["status"] == "ok" and comp in pending and not r.get("interrupt"):
            ready = (r.get("result") or {}).get("ready")
            timeout = float(r["op"].get("args", {}).get("timeout", 0))
            if ready:
                del pending[comp]
            elif ready is False and comp not in _faulted(run, r["i"]) \
                    and r["duration"] + POLL_SHORTFALL < timeout:
                out.append(at(r, f"returned None after {r['duration']:.2f}s of its {timeout:g}s "
                                 f"timeout, with the evaluation of op {pending[comp]} pending: "
                                 "it did not wait for the result"))
    return out


def poll_returns_each_result_once(run: Run) -> list[Finding]:
    """An evaluation's result is returned once: a poll after the one that
    returned it, with no submit between, returns None (there is nothing
    pending), not the same result again. Rests on the ``async_eval``
    convention."""
    out = []
    returned: dict = {}
    for r in run.history.ops:
        verb, comp = r["op"]["verb"], r["op"].get("target")
        if verb == "submit":
            returned.pop(comp, None)
        elif verb == "poll" and r["status"] == "ok" and (r.get("result") or {}).get("ready"):
            if comp in returned:
                out.append(at(r, f"returned a result again: op {returned[comp]} had returned "
                                 "the evaluation's result, and nothing was submitted since"))
            returned[comp] = r["i"]
    return out


def fails_clearly(run: Run) -> list[Finding]:
    """An operation the scenario expects to fail (``args.fail``), or allows
    to (``args.may_fail``: a constructor with the implementation's defaults
    on a cluster that may not fit them, a call whose actor is killed under
    it), that raises does so with a clear error; a constructor also within
    its bound and leaving no actor behind."""
    out = []
    for r in run.history.ops:
        args = r["op"].get("args", {})
        if not (args.get("fail") or args.get("may_fail")):
            continue
        if r["status"] == "ok" and args.get("fail"):
            out.append(at(r, f"with {args['fail']} did not raise"))
            continue
        if r["status"] != "raised":
            continue
        e = r["error"]
        # a TypeError is a clear answer to bad arguments (fail=invalid:...), not
        # to defaults or a killed actor (may_fail)
        unclear = GENERIC_ERRORS - ({"builtins.TypeError"} if args.get("fail") else set())
        if e["type"] in UNLOADABLE_ERRORS:
            out.append(at(r, f"raised {e['type']}: the implementation's code could not be "
                             f"loaded, which is no answer to what it was given: "
                             f"{e['message'][:200]}"))
        elif e["type"] in unclear:
            out.append(at(r, f"raised an unclear {e['type']}: {e['message'][:200]}"))
        elif args.get("fail") in ("unknown_env", "one_unknown_env") and not names_the_missing_env(e):
            out.append(at(r, f"raised {e['type']} without saying that env {UNKNOWN_ENV_ID!r} does not "
                             f"exist (the cause the user must fix): {e['message'][:200]}"))
        elif args.get("fail") == "empty" and not any(
                EMPTY_WORDS.search(line) for line in e["message"].splitlines()
                if line and not line[0].isspace()):  # not a traceback's quoted source
            out.append(at(r, f"raised {e['type']} without saying that the buffer is empty (what the "
                             f"user must know): {e['message'][:200]}"))
        if not args.get("fail") and r["op"]["verb"] != "construct":
            continue  # a call allowed to fail (a killed actor): clear is all it must be
        bound = run.teardown_bound + BOUND_SLACK
        if args.get("fail") == "infeasible" or args.get("may_fail"):
            # detected by a readiness wait: the spec's, or, for a build left to its
            # defaults, the documented one (ready_bound_as_documented judges it closer)
            documented = ((run.documented_defaults or {}).get(kind_of(r["op"]["target"])) or {}) \
                .get("ready_timeout") if run.spec.defaults else None
            bound += documented + READY_SLACK if documented is not None \
                else run.spec.ready_timeout or 0.0
        if r["duration"] > bound:
            out.append(at(r, f"took {r['duration']:.2f}s to fail (bound {bound:.2f}s)"))
        job = probe_of(r, "job_actors")
        if unobserved(job) or "unknown" in job:
            out.append(job if unobserved(job) else unknown_at(r, f": {job['unknown']}"))
            continue
        known = {a["id"] for infos in _actor_ids_before(run, r["i"]) for a in infos} \
            | harness_actors(run)
        stray, unsure = [], []
        for aid, st in job["actors"].items():
            if aid in known or not isinstance(st, dict):
                continue
            if st.get("state") in LIVE_STATES:
                stray.append(aid[:8])
            elif st.get("state") in ("unknown", None):
                unsure.append(aid[:8])
        if stray:
            out.append(at(r, f"left actors behind: {stray}"))
        if unsure:
            out.append(unknown_at(r, f": state of actors {unsure} unknown"))
    return out


def failed_build_leaves_ray_as_found(run: Run) -> list[Finding]:
    """A constructor that raises leaves the driver's Ray as it found it:
    not initialized if it was not (a runtime it started for the build that
    failed is ended: no object is left whose teardown could end it, and the
    user's own ``ray.init()`` would then meet a runtime nobody asked for),
    and still up if it was (the one an earlier component holds, or the
    user's). A constructor that fails by design (``fail``) or by the fixture
    (``may_fail``) alike. Judged by the probes before and after the op: a
    failed constructor either of them did not observe is unknown; a runtime
    replaced is ``no_ray_restart``'s. Rests on the ``leaves_ray_as_found``
    convention."""
    out = []
    unknown = object()
    before = (run.history.setup or {}).get("ray", unknown)
    for r in run.history.ops:
        probe = unknown if r["status"] == "unfinished" or r.get("probe_skipped") else _ray_after(r)
        after = unknown if probe is unknown or unobserved(probe) else probe
        if r["op"]["verb"] == "construct" and r["status"] == "raised":
            if before is unknown or after is unknown:
                out.append(probe if unobserved(probe) else unknown_at(
                    r, ": raised, and Ray before or after it was not observed (a probe that "
                       "did not answer): whether it left Ray as it found it is unknown"))
            elif before is None and after is not None:
                out.append(at(r, "raised, and left running the Ray runtime it started for the "
                                 f"build ({after}): nothing but ray.shutdown() can end it now"))
            elif before is not None and after is None:
                out.append(at(r, f"raised, and ended the Ray runtime it found running ({before})"))
        before = after
    return out


def names_the_missing_env(error: dict) -> bool:
    """The error's message (what a log line of ``str(error)`` shows) has a
    line that names the unknown env and says it does not exist, or the error
    is of a type that says so (gymnasium's ``NameNotFound``) and names it:
    "failed to start" with the actor's error type alone does not tell the
    user what to fix, nor does a cause only chained to the error (``raise
    ... from``), which a log of the message does not show."""
    named = [line for line in error["message"].splitlines() if UNKNOWN_ENV_NAME in line]
    if error["type"].rsplit(".", 1)[-1] in MISSING_ENV_TYPES:
        return bool(named)
    return any(MISSING_WORDS.search(line) for line in named)


def _actor_ids_before(run: Run, upto: int):
    for r in run.history.ops:
        if r["i"] < upto and r["op"]["verb"] == "construct" and r["status"] == "ok":
            yield created_actors(r)


def _all_closed(run: Run) -> bool:
    built = _constructed(run)
    done = _closed_components(run) | {
        r["op"]["target"] for r in run.op_records("exhaust") if r["status"] == "ok"
    }
    return bool(built) and built <= done


def _clean_checks(run: Run):
    """Each ``check_clean`` op record: what was left between two generations
    of a sweep, once everything built so far was torn down (a reading taken
    with a component still open is not judged)."""
    for r in run.op_records("check_clean"):
        if r["status"] != "ok":
            continue
        before = [p for p in run.history.ops if p["i"] < r["i"]]
        built = {p["op"]["target"] for p in before
                 if p["op"]["verb"] == "construct" and p["status"] == "ok"}
        done = {p["op"]["target"] for p in before
                if p["op"]["verb"] in ENDING_VERBS and p["status"] == "ok"}
        if built <= done:
            yield r


def _leftover_threads(threads, found) -> list[Finding]:
    """``found(text)``: a finding where the threads were read."""
    return [found(f"thread {t['name']} ({t['module']}) still running after teardown")
            for t in threads]


def no_leftover_thread(run: Run) -> list[Finding]:
    """Once every component is torn down, no thread of the implementation
    runs: at the end, and between two generations of a sweep (``check_clean``).
    The thread that started a Ray runtime (``runtime_threads``) may run as
    long as that runtime does (the final probe's), no longer."""
    out = []
    for r in _clean_checks(run):
        out += _leftover_threads(r["result"].get("threads") or [],
                                 lambda text, r=r: at(r, ": " + text))
    if run.history.final is None or not _all_closed(run):
        return out
    threads = final_of(run, "threads")
    if unobserved(threads):
        return out + [threads]
    of_runtime, ray_now = runtime_threads(run), run.history.final.get("ray")
    threads = [t for t in threads if ray_now is None or of_runtime.get(t.get("key")) != ray_now]
    return out + _leftover_threads(threads, lambda text: in_run(text, final_time(run)))


def harness_actors(run: Run) -> set:
    """Ids of the harness's own actors in the driver's job: the occupiers
    of a busy cluster (``occupy``), never the implementation's."""
    return {aid for r in run.op_records("occupy") if r["status"] == "ok"
            for aid in (r.get("result") or {}).get("occupiers") or ()}


def _live_job_actors(job: dict, found, unknown, skip: set = frozenset()) -> list[Finding]:
    """The live (or unknown) actors of a ``job_actors`` reading, those in
    ``skip`` (the harness's) aside; ``found`` and ``unknown`` make a
    finding of a text where it was read."""
    if "unknown" in job:
        return [unknown(job["unknown"])]
    out = []
    for aid, st in (job.get("actors") or {}).items():
        if not isinstance(st, dict) or aid in skip:
            continue
        if st.get("state") in LIVE_STATES:
            out.append(found(f"actor {aid[:8]} ({st.get('class_name', '?')}) still "
                             f"{st['state']}"))
        elif st.get("state") in ("unknown", None):
            out.append(unknown(f"state of actor {aid[:8]} unknown "
                               f"({str(st.get('error'))[:200]})"))
    return out


def no_leftover_actor(run: Run) -> list[Finding]:
    """Once every component is torn down, no actor of the driver's job is left
    alive (both owners; on a local runtime the implementation shut down, the
    actors are read by process, and the runner finds any process left): at
    the end, and between two generations of a sweep (``check_clean``)."""
    out = []
    for r in _clean_checks(run):
        out += _live_job_actors(r["result"].get("job_actors") or {},
                                lambda text, r=r: at(r, ": " + text),
                                lambda text, r=r: unknown_at(r, ": " + text), harness_actors(run))
    if run.history.final is None:
        return out
    built = _constructed(run)
    if not built or not built <= _closed_components(run):
        return out
    job = final_of(run, "job_actors")
    if unobserved(job):
        return out + [job]
    t = final_time(run)
    return out + _live_job_actors(job, lambda text: in_run(text, t),
                                  lambda text: unknown_in_run(f"final probe: {text}", t),
                                  harness_actors(run))


def no_actor_outlives_driver(run: Run) -> list[Finding]:
    """On a cluster that outlives the driver (a connected driver), no actor of
    its jobs is alive after it exited: a detached actor left there lives on,
    whether the components were torn down or left open at the exit."""
    after = run.after_exit or {}
    if "unknown" in after:
        return [unknown_in_run(f"after the exit: {after['unknown']}")]
    left, how = after.get("left") or {}, after.get("how_left") or {}
    return [in_run(f"{rec.get('class_name', '?')} actor {aid[:8]}"
                   f"{' (detached)' if rec.get('detached') else ''} still {rec['state']} "
                   "after the driver exited"
                   + (f"; the harness could not remove it ({left[aid]} after: {how.get(aid)}): "
                      "it is still on the cluster" if aid in left else ""))
            for aid, rec in sorted((after.get("actors") or {}).items())]


def name_freed(run: Run) -> list[Finding]:
    """A named eval worker's name is registered until its owner's teardown
    and freed by it. Per name (``named``: True or a second name's suffix);
    its owner is the instance that built it (a second one asking for a taken
    name, which must fail, owns nothing), and a later owner of a freed name
    (a sweep's next generation) owns it anew."""
    out = []
    owner: dict = {}  # named -> the target that owns the name now
    closed: dict = {}  # named -> its owner was torn down
    for r in run.history.ops:
        op, args = r["op"], r["op"].get("args", {})
        if op["verb"] == "construct" and args.get("named") and not args.get("connect") \
                and r["status"] == "ok" and (args["named"] not in owner
                                             or closed.get(args["named"])):
            owner[args["named"]], closed[args["named"]] = op["target"], False
        named = [n for n, t in owner.items() if t == op.get("target")]
        if op["verb"] == "teardown" and named and r["status"] == "ok":
            closed[named[0]] = True
        if op["verb"] == "check_name" and r["status"] == "ok":
            found, which = r["result"]["found"], args.get("named", True)
            whose = "" if which is True else f" {r['result'].get('name')!r}"
            if closed.get(which) and found:
                out.append(at(r, f": the name{whose} is still registered after the owner's "
                                 "teardown"))
            if not closed.get(which) and not found:
                out.append(at(r, f": the named eval worker{whose} is gone before its owner's "
                                 "teardown"))
    return out


def peer_ok(run: Run) -> list[Finding]:
    """The second driver of each ``peer`` op ran as the scenario says: its
    constructors worked, and its history is complete and readable, not cut
    short in the harness's code. Everything else about it (its exit, its
    calls, its teardowns' bounds, its Ray runtime, its stderr, what it left
    behind) is judged by the very oracles that judge this driver, run over
    its history (``peer_runs``, merged by ``judge``)."""
    out = []
    for r, peer in peer_runs(run):
        res, who = r["result"], ": the second driver"
        for c in peer.op_records("construct"):
            args = c["op"].get("args", {})
            if c["status"] == "raised" and not (args.get("fail") or args.get("may_fail")):
                e = c.get("error") or {}
                out.append(at(r, f"{who}'s {label(c)} raised {e.get('type')}: "
                                 f"{str(e.get('message'))[:200]}"))
        hf = peer.history.file
        for n, text in hf.corrupt:
            out.append(unknown_at(r, f"{who}'s history line {n} is not a JSON record: {text!r}"))
        raised = next((x for x in hf.records if x.get("phase") == "harness-error"), None)
        if raised is not None or peer.exit_code == HARNESS_EXIT_CODE:
            e = (raised or {}).get("error") or {}
            out.append(unknown_at(r, f"{who}'s harness raised {e.get('type', '?')} "
                                     f"{position_text(peer)}: "
                                     f"{str(e.get('message', 'see its stderr'))[:300]}"))
        elif peer.history.missing() and not in_implementation(peer) and (
                peer.exit_code == 0 or res.get("timed_out")):
            out.append(unknown_at(r, f"{who} stopped {position_text(peer)}, in the harness's "
                                     f"code; its history lacks {'; '.join(peer.history.missing())}"))
    return out


def peer_runs(run: Run) -> list[tuple[dict, Run]]:
    """(the ``peer`` op's record, the second driver's run) of each peer op the
    harness ran: its whole history and stderr, as the driver recorded them."""
    out = []
    for r in run.op_records("peer"):
        res = r.get("result") or {}
        recorded = res.get("history")
        if r["status"] != "ok" or not isinstance(recorded, dict):
            continue  # the harness could not run it: harness_steps_succeed
        scenario = run.scenario.peer_of(_op(r))
        history = History(HistoryFile(
            records=list(recorded.get("records") or []),
            corrupt=[tuple(c) for c in recorded.get("corrupt") or []],
            torn=bool(recorded.get("torn")), missing=bool(recorded.get("missing"))),
            expected_ops=len(scenario.ops))
        code = res.get("exit_code")
        out.append((r, Run(
            scenario=scenario, history=history,
            exit_code=code if code is None or code >= 0 else None,
            signal=-code if code is not None and code < 0 else None,
            hung=bool(res.get("timed_out")), stderr=res.get("stderr") or "",
            teardown_bound=run.teardown_bound, closed_errors=run.closed_errors,
            documented_defaults=run.documented_defaults, features=run.features)))
    return out


ORACLES = {
    f.__name__: f
    for f in (
        no_crash, no_hang, clean_stderr, no_leftover_process, calls_succeed,
        harness_steps_succeed, teardown_never_raises, with_block_error_comes_out,
        teardown_within_bound,
        own_actors_dead_after_teardown, resources_released_at_teardown, others_untouched,
        threads_joined, data_kept, exhaustion_auto_shutdown, batch_counts, batch_sizes,
        batches_hold_steps, eval_episode_consistent, seeded_batches_repeat, defaults_as_documented,
        ready_bound_as_documented, ready_batches_not_held_back,
        user_shutdown_ends_ray, ray_not_shut_down_by_non_owner, no_ray_restart, owned_runtime_ended,
        owned_runtime_kept, owned_runtime_not_lost,
        interrupt_prompt,
        use_after_close_clear_error, repr_names_state, liveness_reports_death, errors_surface,
        unraised_error_logged, quiet_when_healthy, teardown_prompt_when_healthy,
        calls_within_timeout, poll_waits_its_timeout,
        poll_returns_each_result_once, fails_clearly, failed_build_leaves_ray_as_found,
        weights_take_effect,
        no_leftover_thread, no_leftover_actor, no_actor_outlives_driver, name_freed, peer_ok,
    )
}


@dataclass
class Judgement:
    """Per oracle (in the order of ``ORACLES``): the violations found, and
    what could not be judged (unknown findings), each a list of findings."""

    violations: dict = field(default_factory=dict)
    unknown: dict = field(default_factory=dict)


def _findings_of(oracle, run: Run) -> list[Finding]:
    found = list(oracle(run))
    wrong = [f for f in found if not isinstance(f, Finding)]
    if wrong:
        raise TypeError(f"it returned {type(wrong[0]).__name__} {str(wrong[0])[:100]!r}, "
                        "not a conformance.judge.findings.Finding")
    return found


def judge(run: Run) -> Judgement:
    """Every oracle's findings, run safely: an oracle that raises (or returns
    anything but findings) is unknown. A second driver's run (``peer_runs``)
    is judged by the same oracles; its findings join the oracle's, as
    findings about the ``peer`` op ("op 2 (peer): second driver: ...")."""
    out = Judgement()
    _judge_into(out, run, None)
    for r, peer in peer_runs(run):
        _judge_into(out, peer, r)
    out.violations = {k: out.violations[k] for k in ORACLES if k in out.violations}
    out.unknown = {k: out.unknown[k] for k in ORACLES if k in out.unknown}
    return out


def _judge_into(out: Judgement, run: Run, peer_op: dict | None) -> None:
    """Add ``run``'s findings to ``out``; a second driver's (``peer_op``: the
    op record that ran it) as findings about that op, at its time."""
    def placed(f: Finding) -> Finding:
        if peer_op is None:
            return f
        return Finding(peer_op["i"], peer_op.get("t"),
                       f"{label(peer_op)}: second driver: {f.text}", f.unknown)
    unchecked = not_checked(run.scenario, run.features)
    for name, oracle in ORACLES.items():
        try:
            found = _findings_of(oracle, run)
        except Exception as exc:  # noqa: BLE001 - Jepsen's check-safe
            found = [unknown_in_run(f"the oracle raised {type(exc).__name__}: {exc}")]
        found = [placed(f) for f in found if name not in unchecked.get(f.op, {})]
        bad = [f for f in found if not f.unknown]
        unsure = [f for f in found if f.unknown]
        if bad:
            out.violations.setdefault(name, []).extend(bad)
        if unsure:
            out.unknown.setdefault(name, []).extend(unsure)
