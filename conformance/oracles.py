"""Oracles: one function per lifecycle rule, each judging a recorded run.

An oracle takes a :class:`Run` and returns a list of violation messages
(empty: the rule holds, or does not apply to this run). Oracles never execute
anything; they read the history, the probes and the driver's outcome.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from conformance.history import History
from conformance.scenario import Scenario

LIVE_STATES = {"ALIVE", "PENDING_CREATION", "RESTARTING", "DEPENDENCIES_UNREADY"}
GENERIC_ERRORS = {
    "builtins.AttributeError", "builtins.TypeError", "builtins.KeyError",
    "builtins.IndexError", "builtins.NameError", "builtins.AssertionError",
    "builtins.UnboundLocalError", "builtins.NotImplementedError",
}
CLOSED_WORDS = re.compile(r"clos|shut ?down|terminat|no longer|not running", re.I)
BOUND_SLACK = 0.25
RAY_THREAD_MODULES = ("ray", "grpc", "concurrent.futures", "asyncio")


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


def _label(r: dict) -> str:
    op = r["op"]
    tgt = f" {op['target']}" if op.get("target") else ""
    return f"op {r['i']} ({op['verb']}{tgt})"


def _construct_args(run: Run, component: str) -> dict:
    for r in run.op_records("construct", component):
        return r["op"].get("args", {})
    return {}


def _constructed(run: Run) -> set:
    return {r["op"]["target"] for r in run.op_records("construct") if r["status"] == "ok"}


# -- process-level rules ------------------------------------------------------

def no_crash(run: Run) -> list[str]:
    out = []
    if run.signal:
        out.append(f"driver killed by signal {run.signal}")
    elif run.exit_code not in (0, None) and not run.hung and not watchdog_fired(run):
        out.append(f"driver exited with code {run.exit_code}")
    for line in run.stderr.splitlines():
        if "Check failed" in line:
            out.append(f"stderr: {line.strip()[:300]}")
            break
    return out


def watchdog_fired(run: Run) -> bool:
    """The driver's own watchdog ended it: an op, or the interpreter exit, hung."""
    hung_somewhere = run.history.unfinished is not None or run.history.exiting is not None
    return hung_somewhere and "Timeout (" in run.stderr


def no_hang(run: Run) -> list[str]:
    if run.hung:
        where = run.history.unfinished
        at = f" in {_label(where)}" if where else ""
        return [f"driver passed its deadline{at} and was killed"]
    if watchdog_fired(run):
        u = run.history.unfinished
        if u is not None:
            return [f"{_label(u)} did not return within {u.get('deadline')}s"]
        bound = run.history.exiting.get("bound")
        return [f"the interpreter exit did not finish within {bound}s"]
    return []


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
    out = [f"process left running after the driver exited: {p}" for p in run.leftover]
    final = run.history.final or {}
    closed = _closed_components(run)
    for comp in closed:
        states = final.get("actors", {}).get(comp, {})
        for aid, alive in final.get("actor_pids_alive", {}).items():
            if aid in states and alive:
                out.append(f"{comp} actor {aid[:8]}: its worker process is still running")
    return out


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
        states = r.get("probe", {}).get("actors", {}).get(comp, {})
        non_owner = _construct_args(run, comp).get("connect")
        for aid, st in states.items():
            if non_owner and st.get("state") != "ALIVE":
                out.append(f"{_label(r)}: a non-owning handle's teardown ended the "
                           f"owner's actor {aid[:8]} ({st.get('state')})")
            if not non_owner and st.get("state") in LIVE_STATES:
                out.append(f"{_label(r)}: actor {aid[:8]} still {st['state']} after teardown")
    return out


def _faulted(run: Run, upto: int) -> set:
    """Components hit by a kill before op ``upto``, or torn down."""
    hit = set()
    for r in run.history.ops:
        if r["i"] >= upto:
            break
        if r["op"]["verb"] in ("kill", "teardown") and r["status"] in ("ok", "raised"):
            hit.add(r["op"]["target"])
            if r["op"]["verb"] == "kill" and r["op"].get("args", {}).get("how") == "remove_node":
                hit.add("*node")
    return hit


def others_untouched(run: Run) -> list[str]:
    """A component's teardown leaves the actors of every other live component alive."""
    out = []
    prev_alive: dict = {}
    for r in run.history.ops:
        probe = r.get("probe", {}).get("actors")
        if probe is None:
            continue
        if r["op"]["verb"] == "teardown":
            hit = _faulted(run, r["i"])
            for comp, states in probe.items():
                if comp.startswith("_") or comp == r["op"]["target"] or comp in hit:
                    continue
                for aid, st in states.items():
                    if prev_alive.get(aid) and st.get("state") not in ("ALIVE",):
                        out.append(
                            f"{_label(r)} ended {comp} actor {aid[:8]} ({st.get('state')})"
                        )
        for comp, states in probe.items():
            if comp.startswith("_"):
                continue
            for aid, st in states.items():
                prev_alive[aid] = st.get("state") == "ALIVE"
    return out


def data_kept(run: Run) -> list[str]:
    """The buffer still holds at least the frames it held before (check_data)."""
    out = []
    seen = 0
    for r in run.history.ops:
        verb = r["op"]["verb"]
        if verb == "wait_frames" and r["status"] == "ok":
            seen = max(seen, r["result"].get("frames", 0))
        if verb == "check_data":
            if r["status"] != "ok":
                e = r.get("error") or {}
                out.append(f"{_label(r)}: buffer unreadable: {e.get('type')}: "
                           f"{str(e.get('message'))[:200]}")
                continue
            want = max(seen, int(r["result"].get("at_least", 1)))
            got = r["result"].get("frames", 0)
            if got < want:
                out.append(f"{_label(r)}: buffer holds {got} frames, held {want} before")
            seen = max(seen, got)
    return out


def exhaustion_auto_shutdown(run: Run) -> list[str]:
    out = []
    for r in run.op_records("exhaust"):
        if r["status"] != "ok":
            e = r.get("error") or {}
            out.append(f"{_label(r)} raised {e.get('type')}: {str(e.get('message'))[:200]}")
            continue
        states = r.get("probe", {}).get("actors", {}).get("collector", {})
        live = [a[:8] for a, st in states.items() if st.get("state") in LIVE_STATES]
        if live:
            out.append(f"{_label(r)}: collector actors {live} still alive after exhaustion")
    return out


# -- Ray runtime ownership -------------------------------------------------------

def ray_not_shut_down_by_non_owner(run: Run) -> list[str]:
    if run.scenario.owner != "user":
        return []
    out = []
    before = (run.history.setup or {}).get("ray")
    for r in run.history.ops:
        after = r.get("probe", {}).get("ray")
        verb = r["op"]["verb"]
        if verb == "ray_shutdown":
            before = after
            continue
        if before and after is None and r["status"] != "unfinished":
            out.append(f"{_label(r)} shut down the user's Ray runtime")
        before = after
    return out


def no_ray_restart(run: Run) -> list[str]:
    out = []
    before = (run.history.setup or {}).get("ray")
    for r in run.history.ops:
        after = r.get("probe", {}).get("ray")
        if r["op"]["verb"] != "construct" and after and after != before and r["status"] != "unfinished":
            why = "started a Ray runtime" if before is None else "restarted Ray"
            out.append(f"{_label(r)} {why} ({after})")
        before = after
    final = (run.history.final or {}).get("ray")
    if final and final != before:
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
    out = []
    for r in run.op_records("check_alive"):
        if r["status"] == "skipped":
            continue
        if r["status"] != "ok":
            e = r["error"]
            out.append(f"{_label(r)}: is_alive() raised {e['type']}: {e['message'][:200]}")
            continue
        res = r["result"]
        if res["value"] != res["expect"]:
            out.append(f"{_label(r)}: is_alive() still {res['value']} after {res['elapsed']}s "
                       f"(expected {res['expect']} within {res['within']}s)")
    return out


def fails_clearly(run: Run) -> list[str]:
    """An operation the scenario expects to fail (args.fail) raises a clear
    error within the bound and leaves no actor behind."""
    out = []
    for r in run.history.ops:
        args = r["op"].get("args", {})
        if not args.get("fail"):
            continue
        if r["status"] == "ok":
            out.append(f"{_label(r)} with {args['fail']} did not raise")
            continue
        if r["status"] != "raised":
            continue
        e = r["error"]
        if e["type"] in GENERIC_ERRORS - {"builtins.TypeError"}:
            out.append(f"{_label(r)} raised an unclear {e['type']}: {e['message'][:200]}")
        if r["duration"] > run.teardown_bound + BOUND_SLACK and args["fail"] != "infeasible":
            out.append(f"{_label(r)} took {r['duration']:.2f}s to fail")
        live = {a: s for a, s in (r.get("probe", {}).get("job_actors") or {}).items()
                if isinstance(s, dict) and s.get("state") in LIVE_STATES}
        known = {a["id"] for infos in _actor_ids_before(run, r["i"]) for a in infos}
        stray = [a[:8] for a in live if a not in known]
        if stray:
            out.append(f"{_label(r)} left actors behind: {stray}")
    return out


def _actor_ids_before(run: Run, upto: int):
    for r in run.history.ops:
        if r["i"] < upto and r["op"]["verb"] == "construct" and r["status"] == "ok":
            yield r.get("result", {}).get("actors", [])


def no_leftover_thread(run: Run) -> list[str]:
    final = run.history.final
    if not final:
        return []
    built = _constructed(run)
    done = _closed_components(run) | {
        r["op"]["target"] for r in run.op_records("exhaust") if r["status"] == "ok"
    }
    if not built or not built <= done:
        return []
    left = [t for t in final.get("threads", [])
            if not str(t.get("module", "")).startswith(RAY_THREAD_MODULES)]
    return [f"thread {t['name']} ({t['module']}) still running after teardown" for t in left]


def no_leftover_actor(run: Run) -> list[str]:
    """Once every component is torn down, no actor of the job is left alive."""
    final = run.history.final
    if not final or run.scenario.owner != "user":
        return []
    built = _constructed(run)
    if not built or not built <= _closed_components(run):
        return []
    out = []
    for aid, st in (final.get("job_actors") or {}).items():
        if isinstance(st, dict) and st.get("state") in LIVE_STATES and not st.get("detached_peer"):
            out.append(f"actor {aid[:8]} ({st.get('class_name', '?')}) still {st['state']}")
    return out


def name_freed(run: Run) -> list[str]:
    out = []
    closed_owner = False
    for r in run.history.ops:
        op = r["op"]
        if op["verb"] == "teardown" and op["target"] == "evaluator" and r["status"] == "ok":
            closed_owner = not _construct_args(run, "evaluator").get("connect")
        if op["verb"] == "check_name" and r["status"] == "ok":
            found = r["result"]["found"]
            if closed_owner and found:
                out.append(f"{_label(r)}: the name is still registered after the owner's teardown")
            if not closed_owner and not found:
                out.append(f"{_label(r)}: the named eval worker is gone before its owner's teardown")
    return out


def peer_ok(run: Run) -> list[str]:
    out = []
    for r in run.op_records("peer"):
        res = r.get("result", {})
        if r["status"] != "ok":
            e = r["error"]
            out.append(f"{_label(r)}: second driver failed: {e['type']}: {e['message'][:200]}")
            continue
        if res.get("exit_code") != 0:
            lines = [x for x in res.get("stderr_tail", "").splitlines() if x.strip()]
            last = lines[-1].strip() if lines else "(no stderr)"
            out.append(f"{_label(r)}: second driver exited {res.get('exit_code')}: {last[:300]}")
        for p in res.get("ops", []):
            if p.get("status") != "ok":
                e = p.get("error") or {}
                out.append(f"{_label(r)} peer {_label(p)} {p.get('status')}: "
                           f"{e.get('type')}: {str(e.get('message'))[:200]}")
    return out


ORACLES = {
    f.__name__: f
    for f in (
        no_crash, no_hang, clean_stderr, no_leftover_process,
        teardown_never_raises, teardown_within_bound,
        own_actors_dead_after_teardown, others_untouched, data_kept,
        exhaustion_auto_shutdown, ray_not_shut_down_by_non_owner, no_ray_restart,
        use_after_close_clear_error, liveness_reports_death, fails_clearly,
        no_leftover_thread, no_leftover_actor, name_freed, peer_ok,
    )
}


def judge(run: Run) -> dict[str, list[str]]:
    """Every oracle's violations, keyed by oracle name (only failing ones)."""
    out = {}
    for name, oracle in ORACLES.items():
        violations = oracle(run)
        if violations:
            out[name] = violations
    return out
