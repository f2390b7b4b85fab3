"""Oracles: one function per lifecycle rule, each judging a recorded run.

An oracle takes a :class:`Run` and returns a list of findings
(:class:`conformance.findings.Finding`; empty: the rule holds, or does not
apply to this run), written with the helpers of ``conformance.findings``
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
from dataclasses import dataclass, field, replace

from conformance.findings import Finding, at, in_run, label, unknown_at, unknown_in_run
from conformance.history import HARNESS_EXIT_CODE, RAY_THREAD_MODULES, History
from conformance.verbs import HARNESS, VERBS
from conformance.scenario import Scenario

LIVE_STATES = {"ALIVE", "PENDING_CREATION", "RESTARTING", "DEPENDENCIES_UNREADY"}
GENERIC_ERRORS = {
    "builtins.AttributeError", "builtins.TypeError", "builtins.KeyError",
    "builtins.IndexError", "builtins.NameError", "builtins.AssertionError",
    "builtins.UnboundLocalError", "builtins.NotImplementedError",
}
CLOSED_WORDS = re.compile(r"clos|shut ?down|terminat|no longer|not running", re.I)
BOUND_SLACK = 0.25
#: the user's own calls that end (or replace) the driver's Ray runtime
USER_RAY_VERBS = ("ray_shutdown", "ray_restart")
#: verbs whose raise a rule of their own judges (see ``calls_succeed``)
JUDGED_ELSEWHERE = {"teardown", "exhaust", "check_data", "check_alive", "construct", "use", "peer"}


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
    #: the driver's jobs' actors alive after its exit (``conformance.after_exit``)
    after_exit: dict = field(default_factory=dict)
    teardown_bound: float = 10.0
    closed_errors: tuple = ()  # qualified names

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
                 if r.get("phase") and r.get("phase") != "harness-error"), None)
    op = i if where in ("op", "probe", "between") else None
    return op, (last or {}).get("t")


WATCHDOG_LINE = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$", re.M)


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
    if run.signal and not run.hung:
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
    return out


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
    (lines forwarded from Ray workers start with "(" and are not judged)."""
    out = []
    for line in run.stderr.splitlines():
        s = line.strip()
        if s.startswith("("):
            continue
        if s.startswith("Traceback (most recent call last)") or s.startswith("Exception ignored"):
            out.append(in_run(f"stderr: {s[:200]}"))
    return out[:3]


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
        if r["status"] != "raised" or v is None or v.party == HARNESS or verb in JUDGED_ELSEWHERE:
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
        v = VERBS.get(r["op"]["verb"])
        if v is not None and v.party == HARNESS and r["status"] == "raised":
            e = r.get("error") or {}
            out.append(unknown_at(r, f": the harness could not do it: {e.get('type')}: "
                                     f"{str(e.get('message'))[:300]}"))
    return out


def _op(r: dict):
    from conformance.scenario import Op

    return Op.from_dict(r["op"])


# -- teardown rules --------------------------------------------------------------

def teardown_never_raises(run: Run) -> list[Finding]:
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


def teardown_within_bound(run: Run) -> list[Finding]:
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


def own_actors_dead_after_teardown(run: Run) -> list[Finding]:
    out = []
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
        for aid, st in actors.get(comp, {}).items():
            state = st.get("state")
            if state in ("unknown", None):
                out.append(_unknown_state(r, comp, aid, st))
            elif non_owner and state != "ALIVE":
                out.append(at(r, f": a non-owning handle's teardown ended the "
                                 f"owner's actor {aid[:8]} ({state})"))
            elif not non_owner and state in LIVE_STATES:
                out.append(at(r, f": actor {aid[:8]} still {state} after teardown"))
    return out


def _faulted(run: Run, upto: int) -> set:
    """Components hit by a kill before op ``upto``, or torn down; all of them
    after the user's ray.shutdown() or restart (the job's actors end with it,
    on a connected driver asynchronously)."""
    hit = set()
    for r in run.history.ops:
        if r["i"] >= upto:
            break
        if r["op"]["verb"] in USER_RAY_VERBS:
            hit |= {"buffer", "collector", "evaluator"}
        elif r["op"]["verb"] in ("kill", "teardown") and r["status"] in ("ok", "raised"):
            hit.add(r["op"]["target"])
    return hit


def others_untouched(run: Run) -> list[Finding]:
    """A component's teardown leaves the actors of every other live component alive."""
    out = []
    prev_alive: dict = {}
    for r in run.history.ops:
        probe = (r.get("probe") or {}).get("actors")
        if probe is None:
            if r["op"]["verb"] == "teardown" and r["status"] != "unfinished" and prev_alive:
                out.append(probe_of(r, "actors"))  # unobserved: unknown, never fine
            continue
        if r["op"]["verb"] == "teardown":
            hit = _faulted(run, r["i"])
            for comp, states in probe.items():
                if comp.startswith("_") or comp == r["op"]["target"] or comp in hit:
                    continue
                for aid, st in states.items():
                    if not prev_alive.get(aid):
                        continue
                    if st.get("state") in ("unknown", None):
                        out.append(_unknown_state(r, comp, aid, st))
                    elif st.get("state") != "ALIVE":
                        out.append(at(r, f"ended {comp} actor {aid[:8]} ({st.get('state')})"))
        for comp, states in probe.items():
            if comp.startswith("_"):
                continue
            for aid, st in states.items():
                if st.get("state") not in ("unknown", None):
                    prev_alive[aid] = st.get("state") == "ALIVE"
    return out


def threads_joined(run: Run) -> list[Finding]:
    """A component's teardown joins the threads it started: read in the probe
    right after that teardown (a thread seen first after an op on component C
    is C's; the harness's and Ray's own threads are not counted)."""
    out = []
    owner: dict = {}
    for r in run.history.ops:
        probe = r.get("probe") or {}
        threads = probe.get("threads")
        target = r["op"].get("target")
        if threads is None:
            if r["op"]["verb"] == "teardown" and r["status"] == "ok" and any(
                    c == target for c in owner.values()):
                out.append(probe_of(r, "threads"))
            continue
        live = {t["ident"]: t for t in threads
                if not str(t.get("module", "")).startswith(RAY_THREAD_MODULES)}
        for ident in live:
            if ident not in owner and target and r["op"]["verb"] != "teardown":
                owner[ident] = target
        if r["op"]["verb"] == "teardown" and r["status"] == "ok":
            for ident, t in live.items():
                if owner.get(ident) == target:
                    out.append(at(r, f": thread {t['name']} ({t['module']}) of the "
                                     f"{target} still running right after its teardown returned"))
    return out


def _readings(run: Run):
    """(record, frames) of every reading of the buffer's frame count."""
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if verb in ("wait_frames", "check_data") and r["status"] == "ok":
            yield r, int(r["result"].get("frames", 0))


def data_kept(run: Run) -> list[Finding]:
    """The buffer never holds fewer frames than at any earlier reading (the
    count it reported before the op under test), nor fewer than ``at_least``."""
    out = []
    seen, seen_at = 0, None
    for r in run.history.ops:
        if r["op"]["verb"] != "check_data":
            if r["op"]["verb"] == "wait_frames" and r["status"] == "ok":
                got = int(r["result"].get("frames", 0))
                if got > seen:
                    seen, seen_at = got, r
            continue
        if r["status"] != "ok":
            if r["status"] == "raised":
                e = r.get("error") or {}
                out.append(at(r, f": buffer unreadable: {e.get('type')}: "
                                 f"{str(e.get('message'))[:200]}"))
            continue
        got = int(r["result"].get("frames", 0))
        at_least = int(r["result"].get("at_least", 1))
        if got < seen:
            out.append(at(r, f": buffer holds {got} frames; it held {seen} at "
                             f"{label(seen_at)}"))
        elif got < at_least:
            out.append(at(r, f": buffer holds {got} frames, at least {at_least} expected"))
        if got > seen:
            seen, seen_at = got, r
    return out


def exhaustion_auto_shutdown(run: Run) -> list[Finding]:
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
        for aid, st in actors.get("collector", {}).items():
            if st.get("state") in ("unknown", None):
                out.append(_unknown_state(r, "collector", aid, st))
            elif st.get("state") in LIVE_STATES:
                out.append(at(r, f": collector actor {aid[:8]} still {st['state']} "
                                 "after exhaustion"))
    return out


def batch_counts(run: Run) -> list[Finding]:
    """``iterate`` yields exactly the k batches asked for; ``exhaust`` yields
    ceil(total_frames / frames_per_batch) batches and, where the batches say
    how many frames they hold, exactly total_frames frames."""
    out = []
    spec = run.spec
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if r["status"] != "ok" or verb not in ("iterate", "exhaust"):
            continue
        res = r.get("result") or {}
        if verb == "iterate":
            want = int(r["op"].get("args", {}).get("batches", 1))
            if want > 0 and res.get("batches") != want:
                out.append(at(r, f": the collector yielded {res.get('batches')} batches "
                                 f"before it stopped; {want} were asked for"))
            continue
        if spec.total_frames < 0:
            continue
        want = math.ceil(spec.total_frames / spec.frames_per_batch)
        if res.get("batches") != want:
            out.append(at(r, f": {res.get('batches')} batches until total_frames="
                             f"{spec.total_frames}; {want} expected (frames_per_batch="
                             f"{spec.frames_per_batch})"))
        frames = res.get("frames")
        if frames is not None and frames != spec.total_frames:
            out.append(at(r, f": {frames} frames collected; total_frames is "
                             f"{spec.total_frames}"))
    return out


# -- Ray runtime ownership -------------------------------------------------------

def _ray_after(r: dict):
    return probe_of(r, "ray")


def ray_not_shut_down_by_non_owner(run: Run) -> list[Finding]:
    """No call of the implementation, constructors included, shuts down the
    user's Ray runtime: the one a ``user``-owner driver started, and for
    either owner the one the user started by restarting Ray."""
    out = []
    users = run.scenario.owner == "user"
    before = (run.history.setup or {}).get("ray")
    for r in run.history.ops:
        if r["status"] == "unfinished":
            continue
        verb = r["op"]["verb"]
        after = _ray_after(r)
        if unobserved(after):
            if verb not in USER_RAY_VERBS and before and users:
                out.append(after)
            before = None  # unknown from here: judge no later op against a guess
            continue
        if verb not in USER_RAY_VERBS and users and before and after is None:
            out.append(at(r, "shut down the user's Ray runtime"))
        if verb in USER_RAY_VERBS and r["status"] == "ok":
            users = verb == "ray_restart"
        before = after
    return out


def no_ray_restart(run: Run) -> list[Finding]:
    """No call starts or restarts a Ray runtime, except a constructor that
    finds none running (the implementation then owns it) and the user's own
    restart (``ray_restart``). The runtime's
    identity (GCS address, session, job) also changes on a silent reconnect."""
    out = []
    before = (run.history.setup or {}).get("ray")
    known = True
    for r in run.history.ops:
        if r["status"] == "unfinished":
            continue
        after = _ray_after(r)
        if unobserved(after):
            out.append(after)
            known = False
            continue
        if known and after and after != before:
            may_start = (r["op"]["verb"] == "construct" and before is None) or (
                r["op"]["verb"] == "ray_restart" and r["status"] == "ok")
            if not may_start:
                why = "started a Ray runtime" if before is None else "restarted Ray"
                out.append(at(r, f"{why} ({after})"))
        before, known = after, True
    final = final_of(run, "ray")
    if unobserved(final):
        if run.history.final is not None:
            out.append(final)
    elif known and final and final != before:
        out.append(in_run(f"Ray was started again after the last operation ({final})",
                          final_time(run)))
    return out


# -- use after close, liveness, construction -------------------------------------

def use_after_close_clear_error(run: Run) -> list[Finding]:
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


def liveness_reports_death(run: Run) -> list[Finding]:
    """``is_alive()`` returns the expected value within ``within`` seconds of
    the op's start, timed around the calls (one call that blocks past the
    bound is a violation even if it then answers right)."""
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
        if res["value"] != res["expect"]:
            out.append(at(r, f": is_alive() still {res['value']} after {res['elapsed']}s "
                             f"(expected {res['expect']} within {res['within']}s)"))
        elif res["elapsed"] > res["within"] + BOUND_SLACK:
            out.append(at(r, f": is_alive() answered {res['value']} only after "
                             f"{res['elapsed']}s (bound {res['within']}s)"))
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
        if e["type"] in unclear:
            out.append(at(r, f"raised an unclear {e['type']}: {e['message'][:200]}"))
        if not args.get("fail") and r["op"]["verb"] != "construct":
            continue  # a call allowed to fail (a killed actor): clear is all it must be
        bound = run.teardown_bound + BOUND_SLACK
        if args.get("fail") == "infeasible" or args.get("may_fail"):
            bound += run.spec.ready_timeout or 0.0  # detected by a readiness wait
        if r["duration"] > bound:
            out.append(at(r, f"took {r['duration']:.2f}s to fail (bound {bound:.2f}s)"))
        job = probe_of(r, "job_actors")
        if unobserved(job) or "unknown" in job:
            out.append(job if unobserved(job) else unknown_at(r, f": {job['unknown']}"))
            continue
        known = {a["id"] for infos in _actor_ids_before(run, r["i"]) for a in infos}
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


def no_leftover_thread(run: Run) -> list[Finding]:
    """Once every component is torn down, no thread of the implementation runs."""
    if run.history.final is None or not _all_closed(run):
        return []
    threads = final_of(run, "threads")
    if unobserved(threads):
        return [threads]
    left = [t for t in threads if not str(t.get("module", "")).startswith(RAY_THREAD_MODULES)]
    return [in_run(f"thread {t['name']} ({t['module']}) still running after teardown",
                   final_time(run)) for t in left]


def no_leftover_actor(run: Run) -> list[Finding]:
    """Once every component is torn down, no actor of the driver's job is left
    alive (both owners; on a local runtime the implementation shut down, the
    actors are read by process, and the runner finds any process left)."""
    if run.history.final is None:
        return []
    built = _constructed(run)
    if not built or not built <= _closed_components(run):
        return []
    job = final_of(run, "job_actors")
    if unobserved(job):
        return [job]
    t = final_time(run)
    if "unknown" in job:
        return [unknown_in_run(f"final probe: {job['unknown']}", t)]
    out = []
    for aid, st in (job.get("actors") or {}).items():
        if not isinstance(st, dict):
            continue
        if st.get("state") in LIVE_STATES:
            out.append(in_run(f"actor {aid[:8]} ({st.get('class_name', '?')}) still "
                              f"{st['state']}", t))
        elif st.get("state") in ("unknown", None):
            out.append(unknown_in_run(f"final probe: state of actor {aid[:8]} unknown "
                                      f"({str(st.get('error'))[:200]})", t))
    return out


def no_actor_outlives_driver(run: Run) -> list[Finding]:
    """On a cluster that outlives the driver (a connected driver), no actor of
    its jobs is alive after it exited: a detached actor left there lives on,
    whether the components were torn down or left open at the exit."""
    after = run.after_exit or {}
    if "unknown" in after:
        return [unknown_in_run(f"after the exit: {after['unknown']}")]
    return [in_run(f"{rec.get('class_name', '?')} actor {aid[:8]}"
                   f"{' (detached)' if rec.get('detached') else ''} still {rec['state']} "
                   "after the driver exited")
            for aid, rec in sorted((after.get("actors") or {}).items())]


def name_freed(run: Run) -> list[Finding]:
    out = []
    closed_owner = False
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] == "teardown" and op["target"] == "evaluator" and r["status"] == "ok":
            closed_owner = not _construct_args(run, "evaluator").get("connect")
        if op["verb"] == "check_name" and r["status"] == "ok":
            found = r["result"]["found"]
            if closed_owner and found:
                out.append(at(r, ": the name is still registered after the owner's teardown"))
            if not closed_owner and not found:
                out.append(at(r, ": the named eval worker is gone before its owner's teardown"))
    return out


def peer_ok(run: Run) -> list[Finding]:
    """The second driver ran every op to completion, none raised, and it exited 0."""
    out = []
    for r in run.op_records("peer"):
        res = r.get("result", {})
        if r["status"] != "ok":
            continue  # the harness could not run it: harness_steps_succeed
        peer_ops = res.get("ops", [])
        for p in peer_ops:
            verb = p["op"].get("verb")
            party = VERBS[verb].party if verb in VERBS else None
            harness = party == HARNESS
            if p.get("status") == "unfinished":
                out.append(at(r, f"peer {label(p)} did not return"
                                 + (" (a harness step)" if harness else ""), unknown=harness))
            elif p.get("status") not in ("ok", "skipped", "unsupported"):
                e = p.get("error") or {}
                out.append(at(r, f"peer {label(p)} {p.get('status')}: {e.get('type')}: "
                                 f"{str(e.get('message'))[:200]}", unknown=harness))
        if res.get("timed_out"):
            if not any(p.get("status") == "unfinished" for p in peer_ops):
                out.append(unknown_at(r, ": the second driver ran past its deadline "
                                         "outside any of its ops"))
        elif res.get("exit_code") != 0:
            lines = [x for x in res.get("stderr_tail", "").splitlines() if x.strip()]
            last = lines[-1].strip() if lines else "(no stderr)"
            harness = bool(res.get("stopped_in_harness"))
            out.append(at(r, f": second driver exited {res.get('exit_code')}: {last[:300]}"
                             + (" (it stopped in the harness's code)" if harness else ""),
                          unknown=harness))
        elif res.get("missing"):
            out.append(unknown_at(r, f": the second driver's history lacks "
                                     f"{'; '.join(res['missing'])}"))
    return out


ORACLES = {
    f.__name__: f
    for f in (
        no_crash, no_hang, clean_stderr, no_leftover_process, calls_succeed,
        harness_steps_succeed, teardown_never_raises, teardown_within_bound,
        own_actors_dead_after_teardown, others_untouched, threads_joined, data_kept,
        exhaustion_auto_shutdown, batch_counts, ray_not_shut_down_by_non_owner, no_ray_restart,
        use_after_close_clear_error, liveness_reports_death, fails_clearly,
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
                        "not a conformance.findings.Finding")
    return found


def judge(run: Run) -> Judgement:
    """Every oracle's findings, run safely: an oracle that raises (or returns
    anything but findings) is unknown."""
    out = Judgement()
    for name, oracle in ORACLES.items():
        try:
            found = _findings_of(oracle, run)
        except Exception as exc:  # noqa: BLE001 - Jepsen's check-safe
            out.unknown[name] = [unknown_in_run(f"the oracle raised {type(exc).__name__}: {exc}")]
            continue
        bad = [f for f in found if not f.unknown]
        unsure = [f for f in found if f.unknown]
        if bad:
            out.violations[name] = bad
        if unsure:
            out.unknown[name] = unsure
    return out
