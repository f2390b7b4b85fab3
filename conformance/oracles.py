"""Oracles: one function per lifecycle rule, each judging a recorded run.

An oracle takes a :class:`Run` and returns a list of findings (empty: the
rule holds, or does not apply to this run). A finding is a violation (a
plain ``str``) or an :class:`Unknown`: the rule could not be judged because
what it needs was not observed (a probe that raised or timed out, a GCS that
did not answer). As in Jepsen's checkers, unknown is never valid: a run with
an unknown finding and no violation gets the ``error`` verdict, never
``pass``. ``judge`` runs each oracle "safely": an oracle that raises is
unknown too (Jepsen's ``check-safe``). Oracles never execute anything.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from conformance.history import HARNESS_EXIT_CODE, RAY_THREAD_MODULES, History
from conformance.verbs import HARNESS, VERBS
from conformance.scenario import Scenario
from conformance.targets import writes_into

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
JUDGED_ELSEWHERE = {"teardown", "exhaust", "check_data", "check_alive", "construct", "use", "peer",
                    "check_writes"}


class Unknown(str):
    """A finding that says: this rule could not be judged here, and why."""


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


def _label(r: dict) -> str:
    op = r["op"]
    tgt = f" {op['target']}" if op.get("target") else ""
    return f"op {r['i']} ({op['verb']}{tgt})"


def _construct_args(run: Run, component: str) -> dict:
    for r in run.op_records("construct", component):
        return r["op"].get("args", {})
    return {}


def created_actors(r: dict) -> list[dict]:
    """The actors a construct op created, as its probe recorded them."""
    return (r.get("probe") or {}).get("created") or (r.get("result") or {}).get("actors") or []


def _constructed(run: Run) -> set:
    return {r["op"]["target"] for r in run.op_records("construct") if r["status"] == "ok"}


def _field(record: dict | None, key: str, what: str):
    """``record[key]`` of a probe record, or an :class:`Unknown` naming ``what``
    probe is missing, raised, or lacks the field."""
    if record is None:
        return Unknown(f"no {what} was recorded")
    if record.get("error"):
        e = record["error"]
        return Unknown(f"the {what} raised {e['type']}: {e['message'][:200]}")
    if key not in record:
        return Unknown(f"the {what} has no {key!r}")
    return record[key]


def probe_of(r: dict, key: str):
    """``r``'s probe field ``key``, or an :class:`Unknown` saying why it is missing."""
    return _field(r.get("probe"), key, f"probe after {_label(r)}")


def final_of(run: Run, key: str):
    """The final probe's field ``key``, or an :class:`Unknown`."""
    return _field(run.history.final, key, "final probe")


def _unknown_state(where: str, comp: str, aid: str, st: dict) -> Unknown:
    return Unknown(f"{where}: state of {comp} actor {aid[:8]} unknown "
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
        return f"in {_label(run.history.begins[i])}, op {i + 1} of {n}"
    if where == "probe":
        return f"in the harness's probe after op {i} of {n}"
    if where == "between":
        return f"in the harness, after op {i} of {n}" if i is not None else "in the harness"
    return {"start": "before the scenario started", "final": "in the harness's final probe",
            "before-exit": "after the final probe, before the exit",
            "exit": "in the interpreter exit"}[where]


WATCHDOG_LINE = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$", re.M)


def watchdog_fired(run: Run) -> bool:
    """The driver's own watchdog ended it: faulthandler's exit (code 1) after
    its own first line, "Timeout (0:01:00)!" alone on a line."""
    return run.exit_code == 1 and bool(WATCHDOG_LINE.search(run.stderr))


def _ended_early(run: Run) -> bool:
    """The driver exited 0 with its history incomplete."""
    return run.exit_code == 0 and not run.hung and bool(run.history.missing())


# -- process-level rules ------------------------------------------------------

def no_crash(run: Run) -> list[str]:
    """The driver neither died by a signal, nor exited non-zero by itself,
    nor printed Ray's "Check failed" abort, nor stopped inside an operation
    of the implementation. (A signal or an exit code comes from native code
    or the implementation's threads, never from the harness's Python: it is a
    crash wherever the driver was.)"""
    out = []
    if run.signal and not run.hung:
        out.append(f"driver killed by signal {run.signal} {position_text(run)}")
    elif run.exit_code not in (0, None, HARNESS_EXIT_CODE) and not run.hung \
            and not watchdog_fired(run):
        out.append(f"driver exited with code {run.exit_code} {position_text(run)}")
    elif _ended_early(run) and in_implementation(run):
        out.append(f"driver exited 0 {position_text(run)}: the scenario stopped there")
    for line in run.stderr.splitlines():
        if "Check failed" in line:
            out.append(f"stderr: {line.strip()[:300]}")
            break
    return out


def no_hang(run: Run) -> list[str]:
    """No operation of the implementation, and not the interpreter exit,
    passed its deadline (a harness step that hangs is an ``error``)."""
    if not (run.hung or watchdog_fired(run)) or not in_implementation(run):
        return []
    u = run.history.unfinished
    if u is not None:
        return [f"{_label(u)} did not return within {u.get('deadline')}s"]
    bound = (run.history.exiting or {}).get("bound")
    return [f"the interpreter exit did not finish within {bound}s"]


def clean_stderr(run: Run) -> list[str]:
    """No traceback or ignored exception printed by the driver itself
    (lines forwarded from Ray workers start with "(" and are not judged)."""
    out = []
    for line in run.stderr.splitlines():
        s = line.strip()
        if s.startswith("("):
            continue
        if s.startswith("Traceback (most recent call last)") or s.startswith("Exception ignored"):
            out.append(f"stderr: {s[:200]}")
    return out[:3]


def no_leftover_process(run: Run) -> list[str]:
    """No process of the driver outlives it, and no actor Ray reports DEAD
    still has a running process (a zombie actor, ray-project/ray#52322)."""
    out = [f"process left running after the driver exited: {p}" for p in run.leftover]
    if run.leftover and run.history.missing() and not in_implementation(run):
        # the driver stopped in the harness's code: Ray's own cleanup never ran
        out = [Unknown(f"{m}, after the driver stopped {position_text(run)}") for m in out]
    zombies = final_of(run, "zombie_pids")
    if isinstance(zombies, Unknown):
        return out + [zombies] if run.history.final is not None else out
    for aid, pid in zombies.items():
        comp = next((r["op"]["target"] for r in run.op_records("construct")
                     for a in created_actors(r) if a["id"] == aid), "?")
        out.append(f"{comp} actor {aid[:8]}: Ray reports it DEAD, its worker process "
                   f"(pid {pid}) is still running")
    return out


# -- every op -------------------------------------------------------------------

def calls_succeed(run: Run) -> list[str]:
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
        out.append(f"{_label(r)} raised {e.get('type')}: {str(e.get('message'))[:200]}")
    return out


def harness_steps_succeed(run: Run) -> list[str]:
    """Every step of the harness did what the scenario says (a kill that could
    not be injected, a name lookup the GCS did not answer): otherwise the run
    was not observed as written, and the verdict is ``error``."""
    out = []
    for r in run.history.ops:
        v = VERBS.get(r["op"]["verb"])
        if v is not None and v.party == HARNESS and r["status"] == "raised":
            e = r.get("error") or {}
            out.append(Unknown(f"{_label(r)}: the harness could not do it: {e.get('type')}: "
                               f"{str(e.get('message'))[:300]}"))
    return out


def _op(r: dict):
    from conformance.scenario import Op

    return Op.from_dict(r["op"])


# -- teardown rules --------------------------------------------------------------

def teardown_never_raises(run: Run) -> list[str]:
    out = []
    for r in run.op_records("teardown"):
        for c in r.get("result", {}).get("calls", []) or []:
            if c["status"] != "ok":
                e = c["error"]
                out.append(f"{_label(r)} raised {e['type']}: {e['message'][:200]}")
        if r["status"] == "raised" and not r.get("result", {}).get("calls"):
            e = r["error"]
            out.append(f"{_label(r)} raised {e['type']}: {e['message'][:200]}")
    return out


def teardown_within_bound(run: Run) -> list[str]:
    out = []
    for r in run.op_records("teardown"):
        for c in r.get("result", {}).get("calls", []) or []:
            if c["duration"] > run.teardown_bound + BOUND_SLACK:
                out.append(
                    f"{_label(r)} took {c['duration']:.2f}s (bound {run.teardown_bound}s)"
                )
    return out


def _closed_components(run: Run) -> set:
    closed = set()
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] == "teardown" and r["status"] == "ok":
            closed.add(op["target"])
    return closed


def own_actors_dead_after_teardown(run: Run) -> list[str]:
    out = []
    for r in run.op_records("teardown"):
        comp = r["op"]["target"]
        if r["status"] != "ok":
            continue
        actors = probe_of(r, "actors")
        if isinstance(actors, Unknown):
            out.append(actors)
            continue
        non_owner = _construct_args(run, comp).get("connect")
        built = [r2 for r2 in run.op_records("construct", comp) if r2["status"] == "ok"]
        if built and not created_actors(built[0]) and "created" in (built[0].get("probe") or {}):
            out.append(Unknown(f"{_label(r)}: the adapter listed no actor for the {comp}: "
                               "its actors cannot be observed"))
        for aid, st in actors.get(comp, {}).items():
            state = st.get("state")
            if state in ("unknown", None):
                out.append(_unknown_state(_label(r), comp, aid, st))
            elif non_owner and state != "ALIVE":
                out.append(f"{_label(r)}: a non-owning handle's teardown ended the "
                           f"owner's actor {aid[:8]} ({state})")
            elif not non_owner and state in LIVE_STATES:
                out.append(f"{_label(r)}: actor {aid[:8]} still {state} after teardown")
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
        elif r["op"]["verb"] in ("kill", *ENDING_VERBS) and r["status"] in ("ok", "raised"):
            hit.add(r["op"]["target"])
    return hit


def others_untouched(run: Run) -> list[str]:
    """A component instance's teardown (or a collector's exhaustion) leaves
    the actors of every other live instance alive, of its own kind or not."""
    out = []
    prev_alive: dict = {}
    for r in run.history.ops:
        probe = (r.get("probe") or {}).get("actors")
        if probe is None:
            if r["op"]["verb"] in ENDING_VERBS and r["status"] != "unfinished" and prev_alive:
                out.append(probe_of(r, "actors"))  # unobserved: unknown, never fine
            continue
        if r["op"]["verb"] in ENDING_VERBS:
            hit = _faulted(run, r["i"])
            for comp, states in probe.items():
                if comp.startswith("_") or comp == r["op"]["target"] or comp in hit:
                    continue
                for aid, st in states.items():
                    if not prev_alive.get(aid):
                        continue
                    if st.get("state") in ("unknown", None):
                        out.append(_unknown_state(_label(r), comp, aid, st))
                    elif st.get("state") != "ALIVE":
                        out.append(f"{_label(r)} ended {comp} actor {aid[:8]} ({st.get('state')})")
        for comp, states in probe.items():
            if comp.startswith("_"):
                continue
            for aid, st in states.items():
                if st.get("state") not in ("unknown", None):
                    prev_alive[aid] = st.get("state") == "ALIVE"
    return out


def threads_joined(run: Run) -> list[str]:
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
                    out.append(f"{_label(r)}: thread {t['name']} ({t['module']}) of the "
                               f"{target} still running right after its teardown returned")
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
            return f", after {_label(prev)}"
    return ""


def data_kept(run: Run) -> list[str]:
    """Each buffer instance never holds fewer frames than at any earlier
    reading of it (the count it reported before the op under test), nor
    fewer than ``at_least``; and per writer: a collector whose writes are
    checked (``check_writes``) still gets ``more`` frames into its buffer,
    whatever happened to the other instances."""
    out = []
    seen: dict = {}  # buffer instance -> (frames, the record that read them)
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if verb not in ("check_data", "wait_frames", "check_writes"):
            continue
        if r["status"] == "raised" and verb != "wait_frames":
            e = r.get("error") or {}
            what = "buffer" if verb == "check_data" else f"the buffer {r['op']['target']} writes into"
            out.append(f"{_label(r)}: {what} unreadable: {e.get('type')}: "
                       f"{str(e.get('message'))[:200]}")
        if r["status"] != "ok":
            continue
        buffer, got = _buffer_read(r), int(r["result"].get("frames", 0))
        before, before_at = seen.get(buffer, (0, None))
        if verb == "check_data":
            at_least = int(r["result"].get("at_least", 1))
            if got < before:
                out.append(f"{_label(r)}: {buffer} holds {got} frames; it held {before} at "
                           f"{_label(before_at)}")
            elif got < at_least:
                out.append(f"{_label(r)}: {buffer} holds {got} frames, at least {at_least} "
                           "expected")
        elif verb == "check_writes":
            res, writer = r["result"], r["op"]["target"]
            grew = got - int(res.get("from", 0))
            if grew < int(res.get("more", 1)):
                out.append(f"{_label(r)}: the writes of {writer} no longer land in {buffer}"
                           f"{_suspect(run, r, writer)}: it grew by {grew} of "
                           f"{res.get('more')} frames in {res.get('timeout')} s")
        if got > before:
            seen[buffer] = (got, r)
    return out


def exhaustion_auto_shutdown(run: Run) -> list[str]:
    out = []
    for r in run.op_records("exhaust"):
        if r["status"] != "ok":
            if r["status"] == "raised":
                e = r.get("error") or {}
                out.append(f"{_label(r)} raised {e.get('type')}: {str(e.get('message'))[:200]}")
            continue
        actors = probe_of(r, "actors")
        if isinstance(actors, Unknown):
            out.append(actors)
            continue
        collector = r["op"]["target"]
        for aid, st in actors.get(collector, {}).items():
            if st.get("state") in ("unknown", None):
                out.append(_unknown_state(_label(r), collector, aid, st))
            elif st.get("state") in LIVE_STATES:
                out.append(f"{_label(r)}: {collector} actor {aid[:8]} still {st['state']} "
                           "after exhaustion")
    return out


def batch_counts(run: Run) -> list[str]:
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
                out.append(f"{_label(r)}: the collector yielded {res.get('batches')} batches "
                           f"before it stopped; {want} were asked for")
            continue
        # an instance may be built with a total_frames of its own
        total = int(_construct_args(run, r["op"]["target"]).get("total_frames",
                                                                  spec.total_frames))
        if total < 0:
            continue
        want = math.ceil(total / spec.frames_per_batch)
        if res.get("batches") != want:
            out.append(f"{_label(r)}: {res.get('batches')} batches until total_frames="
                       f"{total}; {want} expected (frames_per_batch="
                       f"{spec.frames_per_batch})")
        frames = res.get("frames")
        if frames is not None and frames != total:
            out.append(f"{_label(r)}: {frames} frames collected; total_frames is "
                       f"{total}")
    return out


# -- Ray runtime ownership -------------------------------------------------------

def _ray_after(r: dict):
    return probe_of(r, "ray")


def ray_not_shut_down_by_non_owner(run: Run) -> list[str]:
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
        if isinstance(after, Unknown):
            if verb not in USER_RAY_VERBS and before and users:
                out.append(after)
            before = None  # unknown from here: judge no later op against a guess
            continue
        if verb not in USER_RAY_VERBS and users and before and after is None:
            out.append(f"{_label(r)} shut down the user's Ray runtime")
        if verb in USER_RAY_VERBS and r["status"] == "ok":
            users = verb == "ray_restart"
        before = after
    return out


def no_ray_restart(run: Run) -> list[str]:
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
        if isinstance(after, Unknown):
            out.append(after)
            known = False
            continue
        if known and after and after != before:
            may_start = (r["op"]["verb"] == "construct" and before is None) or (
                r["op"]["verb"] == "ray_restart" and r["status"] == "ok")
            if not may_start:
                why = "started a Ray runtime" if before is None else "restarted Ray"
                out.append(f"{_label(r)} {why} ({after})")
        before, known = after, True
    final = final_of(run, "ray")
    if isinstance(final, Unknown):
        if run.history.final is not None:
            out.append(final)
    elif known and final and final != before:
        out.append(f"Ray was started again after the last operation ({final})")
    return out


# -- use after close, liveness, construction -------------------------------------

def use_after_close_clear_error(run: Run) -> list[str]:
    out = []
    for r in run.op_records("use"):
        call = r["op"]["args"]["call"]
        what = f"{_label(r)} {call}() after teardown"
        if r["status"] == "ok":
            out.append(f"{what} succeeded instead of raising a closed error")
            continue
        if r["status"] != "raised":
            continue
        e = r["error"]
        if e["type"] in run.closed_errors:
            pass
        elif e["type"] in GENERIC_ERRORS or not CLOSED_WORDS.search(e["message"]):
            out.append(f"{what} raised an unclear {e['type']}: {e['message'][:200]}")
        if r["duration"] > run.teardown_bound + BOUND_SLACK:
            out.append(f"{what} took {r['duration']:.2f}s")
    return out


def liveness_reports_death(run: Run) -> list[str]:
    """``is_alive()`` returns the expected value within ``within`` seconds of
    the op's start, timed around the calls (one call that blocks past the
    bound is a violation even if it then answers right)."""
    out = []
    for r in run.op_records("check_alive"):
        if r["status"] == "skipped":
            continue
        if r["status"] == "raised":
            e = r["error"]
            out.append(f"{_label(r)}: is_alive() raised {e['type']}: {e['message'][:200]}")
            continue
        if r["status"] != "ok":
            continue
        res = r["result"]
        if res["value"] != res["expect"]:
            out.append(f"{_label(r)}: is_alive() still {res['value']} after {res['elapsed']}s "
                       f"(expected {res['expect']} within {res['within']}s)")
        elif res["elapsed"] > res["within"] + BOUND_SLACK:
            out.append(f"{_label(r)}: is_alive() answered {res['value']} only after "
                       f"{res['elapsed']}s (bound {res['within']}s)")
    return out


def fails_clearly(run: Run) -> list[str]:
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
            out.append(f"{_label(r)} with {args['fail']} did not raise")
            continue
        if r["status"] != "raised":
            continue
        e = r["error"]
        # a TypeError is a clear answer to bad arguments (fail=invalid:...), not
        # to defaults or a killed actor (may_fail)
        unclear = GENERIC_ERRORS - ({"builtins.TypeError"} if args.get("fail") else set())
        if e["type"] in unclear:
            out.append(f"{_label(r)} raised an unclear {e['type']}: {e['message'][:200]}")
        if not args.get("fail") and r["op"]["verb"] != "construct":
            continue  # a call allowed to fail (a killed actor): clear is all it must be
        bound = run.teardown_bound + BOUND_SLACK
        if args.get("fail") == "infeasible" or args.get("may_fail"):
            bound += run.spec.ready_timeout or 0.0  # detected by a readiness wait
        if r["duration"] > bound:
            out.append(f"{_label(r)} took {r['duration']:.2f}s to fail (bound {bound:.2f}s)")
        job = probe_of(r, "job_actors")
        if isinstance(job, Unknown) or "unknown" in job:
            out.append(job if isinstance(job, Unknown) else
                       Unknown(f"{_label(r)}: {job['unknown']}"))
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
            out.append(f"{_label(r)} left actors behind: {stray}")
        if unsure:
            out.append(Unknown(f"{_label(r)}: state of actors {unsure} unknown"))
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


def _clean_checks(run: Run):
    """(record, what it read) of each ``check_clean`` op: what was left
    between two generations of a sweep, once everything built so far was
    torn down (a check taken with a component still open is not judged)."""
    for r in run.op_records("check_clean"):
        if r["status"] != "ok":
            continue
        before = [p for p in run.history.ops if p["i"] < r["i"]]
        built = {p["op"]["target"] for p in before
                 if p["op"]["verb"] == "construct" and p["status"] == "ok"}
        done = {p["op"]["target"] for p in before
                if p["op"]["verb"] in ENDING_VERBS and p["status"] == "ok"}
        if built <= done:
            yield r, r["result"]


def _leftover_threads(threads, where: str) -> list[str]:
    left = [t for t in threads if not str(t.get("module", "")).startswith(RAY_THREAD_MODULES)]
    return [f"{where}thread {t['name']} ({t['module']}) still running after teardown"
            for t in left]


def no_leftover_thread(run: Run) -> list[str]:
    """Once every component is torn down, no thread of the implementation
    runs: at the end, and between two generations of a sweep (``check_clean``)."""
    out = []
    for r, seen in _clean_checks(run):
        out += _leftover_threads(seen.get("threads") or [], f"{_label(r)}: ")
    if run.history.final is None or not _all_closed(run):
        return out
    threads = final_of(run, "threads")
    if isinstance(threads, Unknown):
        return out + [threads]
    return out + _leftover_threads(threads, "")


def _live_job_actors(job: dict, where: str) -> list[str]:
    """The live (or unknown) actors of a ``job_actors`` reading."""
    if "unknown" in job:
        return [Unknown(f"{where}: {job['unknown']}")]
    out = []
    for aid, st in (job.get("actors") or {}).items():
        if not isinstance(st, dict):
            continue
        if st.get("state") in LIVE_STATES:
            out.append(f"{'' if where == 'final probe' else where + ': '}actor {aid[:8]} "
                       f"({st.get('class_name', '?')}) still {st['state']}")
        elif st.get("state") in ("unknown", None):
            out.append(Unknown(f"{where}: state of actor {aid[:8]} unknown "
                               f"({str(st.get('error'))[:200]})"))
    return out


def no_leftover_actor(run: Run) -> list[str]:
    """Once every component is torn down, no actor of the driver's job is left
    alive (both owners; on a local runtime the implementation shut down, the
    actors are read by process, and the runner finds any process left): at
    the end, and between two generations of a sweep (``check_clean``)."""
    out = []
    for r, seen in _clean_checks(run):
        out += _live_job_actors(seen.get("job_actors") or {}, _label(r))
    if run.history.final is None:
        return out
    built = _constructed(run)
    if not built or not built <= _closed_components(run):
        return out
    job = final_of(run, "job_actors")
    if isinstance(job, Unknown):
        return out + [job]
    return out + _live_job_actors(job, "final probe")


def no_actor_outlives_driver(run: Run) -> list[str]:
    """On a cluster that outlives the driver (a connected driver), no actor of
    its jobs is alive after it exited: a detached actor left there lives on,
    whether the components were torn down or left open at the exit."""
    after = run.after_exit or {}
    if "unknown" in after:
        return [Unknown(f"after the exit: {after['unknown']}")]
    return [f"{rec.get('class_name', '?')} actor {aid[:8]}"
            f"{' (detached)' if rec.get('detached') else ''} still {rec['state']} "
            "after the driver exited" for aid, rec in sorted((after.get("actors") or {}).items())]


def name_freed(run: Run) -> list[str]:
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
                out.append(f"{_label(r)}: the name{whose} is still registered after the "
                           "owner's teardown")
            if not closed.get(which) and not found:
                out.append(f"{_label(r)}: the named eval worker{whose} is gone before its "
                           "owner's teardown")
    return out


def peer_ok(run: Run) -> list[str]:
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
            if p.get("status") == "unfinished":
                msg = f"{_label(r)} peer {_label(p)} did not return"
                out.append(Unknown(msg + " (a harness step)") if party == HARNESS else msg)
            elif p.get("status") not in ("ok", "skipped", "unsupported"):
                e = p.get("error") or {}
                msg = f"{_label(r)} peer {_label(p)} {p.get('status')}: {e.get('type')}: " \
                      f"{str(e.get('message'))[:200]}"
                out.append(Unknown(msg) if party == HARNESS else msg)
        if res.get("timed_out"):
            if not any(p.get("status") == "unfinished" for p in peer_ops):
                out.append(Unknown(f"{_label(r)}: the second driver ran past its deadline "
                                   "outside any of its ops"))
        elif res.get("exit_code") != 0:
            lines = [x for x in res.get("stderr_tail", "").splitlines() if x.strip()]
            last = lines[-1].strip() if lines else "(no stderr)"
            msg = f"{_label(r)}: second driver exited {res.get('exit_code')}: {last[:300]}"
            out.append(Unknown(msg + " (it stopped in the harness's code)")
                       if res.get("stopped_in_harness") else msg)
        elif res.get("missing"):
            out.append(Unknown(f"{_label(r)}: the second driver's history lacks "
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
    """Per oracle: the violations found, and what could not be judged."""

    violations: dict = field(default_factory=dict)
    unknown: dict = field(default_factory=dict)


def judge(run: Run) -> Judgement:
    """Every oracle's findings, run safely: an oracle that raises is unknown."""
    out = Judgement()
    for name, oracle in ORACLES.items():
        try:
            findings = oracle(run)
        except Exception as exc:  # noqa: BLE001 - Jepsen's check-safe
            out.unknown[name] = [f"the oracle raised {type(exc).__name__}: {exc}"]
            continue
        bad = [str(f) for f in findings if not isinstance(f, Unknown)]
        unsure = [str(f) for f in findings if isinstance(f, Unknown)]
        if bad:
            out.violations[name] = bad
        if unsure:
            out.unknown[name] = unsure
    return out
