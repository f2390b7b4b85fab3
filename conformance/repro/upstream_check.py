"""Does an issue body's standalone script show its defect when run alone?

    python -m conformance upstream --check DIR --python RELEASE-VENV/bin/python [--save-outputs D]
    python -m conformance upstream --check DIR --from-outputs D

Each body of ``DIR`` (written by ``python -m conformance upstream --out-dir``)
carries its script and, in a comment block at its end, the finding it is
about: the rule, the verdict, and the operation where the suite saw it
first. The script runs in a scratch directory with the given Python (a
fresh environment of the library's release), without this project on its
path and without ``RAY_ADDRESS``; its printed trace is then read for that
same evidence at that same operation (``shows``), as the finding's text
states it: the call raised the same exception type, or returned where it
had to raise, or failed slower than its bound; the operation never ended (a
hang: the script's watchdog exits 1); a new Ray session after it (or, in
Ray's log, a runtime started and ended within it), or none left; the
actors of the component the finding names still alive, or ended; another
batch count than the one asked for; what a teardown's actors held not
available again at its return, on their nodes; live actors of the job after
a call that was to fail raised; a traceback printed. A finding about a
second driver's op (``peer``) is read in that driver's printed trace.
``DIR/CHECKED.md`` lists the outcome of every body. ``--save-outputs D``
keeps each script's output (``D/<body>.json``); ``--from-outputs D`` reads
them again instead of running the scripts.

A multinode scenario's script (it takes ``--address``) runs against a
stand-in cluster of its own: the multinode fixture's nodes (a head and
node_a / node_b, with their CPUs and custom resources), each started with
the given Python's ``ray start`` on 127.0.0.1 in the scratch directory,
and stopped after the script by the sessions they were started in
(``fixtures.raystart``). Its row in ``CHECKED.md`` says so. A stand-in that
does not start leaves its body "not checked", with the reason; so does a
script of a cluster the check does not stand in for (fixture ``external``).

A finding with nothing in the printed trace to read (the harness judged it
from what only the suite records: processes after the exit, a thread still
running when one of two concurrent teardown calls returned, a probe that
failed; or a script written before the scripts printed resources, left
actors and threads) is reported "not checked", never "shown".
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass

from conformance.judge import findings
from conformance.judge.oracles import BOUND_SLACK, LIVE_STATES, RESOURCE_SLACK
from conformance.reports.summary import findings_of
from fixtures import procs
from fixtures.raystart import ClusterStartFailed, RayStartCluster

#: the file name of an issue body (``upstream.write_all``): ``NN-<slug>.md``
BODY_NAME = re.compile(r"\d\d-.*\.md$")

MARK = "<!-- rlc-finding "
#: a script's lines for a Ray runtime the probes did not see (Ray's own log, on
#: stderr): a local one started, or a cluster joined (a new job: a multinode
#: script's ray.init(address=...), Ray 2.60's worker.py)
LOCAL_START = "Started a local Ray instance"
CLUSTER_JOINED = "Connected to Ray cluster."


def named_finding(entry: dict) -> dict | None:
    """The finding a body is about (its title, its cause, what ``--check``
    looks for): the entry's earliest violation (``summary.findings_of``) that
    is no duration over a bound (``cpu_pressure.TIMING_ORACLES``' timing
    violations; a wait of the harness that ran out, an actor "still ALIVE
    after teardown", stays a finding), else its earliest. A bound on time the
    suite's run exceeded depends on the machine it ran on; run alone the
    script may stay within it. Measured 2026-11-26: torchrl 0.14.1's
    construction_failure/local/impl/collector-one_unknown_env took 20.37 s to
    fail in the quick report's run (bound 10.25 s), within it alone in a
    fresh venv, while the actors it left behind showed. None: no violation."""
    found = [f for f in findings_of(entry) if not f.get("unknown")]
    return next((f for f in found if not over_a_bound(f)), found[0] if found else None)


def over_a_bound(finding: dict) -> bool:
    """The finding is a duration over one of the contract's bounds on time
    (``cpu_pressure.TIMING_ORACLES``' timing violations): alone, the script
    may stay within it (``named_finding``)."""
    from conformance.run.cpu_pressure import TIMING_ORACLES, timing_violation

    return finding["oracle"] in TIMING_ORACLES and timing_violation(finding["oracle"],
                                                                    finding["text"])


def marker(entry: dict) -> str:
    """The comment a body ends with: the finding the check looks for
    (``named_finding``)."""
    first = named_finding(entry)
    found = {"id": entry["id"], "verdict": entry["verdict"],
             "oracle": first["oracle"] if first else (entry.get("oracles") or ["?"])[0],
             "op": _op_name(entry, first["op"]) if first and first.get("op") is not None else None,
             "text": first["text"] if first else ""}
    return f"{MARK}{json.dumps(found)} -->"


def _op_name(entry: dict, index: int) -> str | None:
    """The op's name as the script prints it (``str(Op)``)."""
    ops = str(entry.get("ops") or "").split(" ; ")
    return ops[index] if 0 <= index < len(ops) else None


class NotChecked(Exception):
    """The script is not run: it needs a cluster the check cannot stand in
    for, its stand-in did not start, or the body must be written again."""


#: a script's argument when it runs against a cluster (``script._main_lines``)
NEEDS_ADDRESS = "p.add_argument('--address', required=True"
#: the fixture its docstring names (``script._docstring``)
FIXTURE_LINE = re.compile(r"^fixture: (\w+): ", re.M)
#: fixture -> the stand-in cluster a script of it runs against (a fresh one
#: per script): the multinode fixture's nodes, each started with ``ray start``
STAND_INS = {"multinode": RayStartCluster}


def cluster_fixture(script: str) -> str | None:
    """The fixture whose cluster ``script`` runs against (None: it starts
    its own Ray)."""
    if NEEDS_ADDRESS not in script:
        return None
    named = FIXTURE_LINE.search(script)
    return named.group(1) if named else "?"


OP_START = re.compile(r"^\[(\d+)\] (.*) \.\.\.$")
PEER_LINE = "peer| "


@dataclass
class Trace:
    """What a script printed: per op name, its outcome lines, and the probe
    lines that follow each."""

    stdout: str
    stderr: str
    returncode: int | None
    #: the stand-in cluster the script ran against (None: its own Ray)
    cluster: str | None = None
    #: the script's functions that print a reading ``READINGS`` rests on
    #: (``script._released``, ...) it has: an older script lacks some; None:
    #: every one (a script of today's generator)
    printers: frozenset | None = None

    def outcomes(self, name: str) -> list[tuple[str, list[str]]]:
        """``[(outcome, lines printed after it until the next op)]`` of every
        run of the op named ``name``; an op that started and never ended has
        the outcome "unfinished"."""
        out, lines = [], self.stdout.splitlines()
        for k, line in enumerate(lines):
            m = OP_START.match(line)
            if not m or m.group(2) != name:
                continue
            head = f"[{m.group(1)}] {name}: "
            end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith(head)), None)
            if end is None:
                out.append(("unfinished", []))
                continue
            after = []
            for later in lines[end + 1:]:
                if OP_START.match(later):
                    break
                after.append(later.strip())
            out.append((lines[end][len(head):], after))
        return out

    def name_of(self, index: int) -> str | None:
        """The name of op ``index`` as the script printed it starting."""
        return next((m.group(2) for m in map(OP_START.match, self.stdout.splitlines())
                     if m and int(m.group(1)) == index), None)

    def peer(self, name: str) -> Trace:
        """The second driver's trace: the ``peer| `` lines op ``name`` printed
        (its stdout, then the tail of its stderr), from the op's start to the
        next op's: relayed as the peer ran, before the op's outcome line (the
        scripts of 2026-11-25, run 2026-11-26), or after it."""
        lines, inside = [], False
        for line in self.stdout.splitlines():
            m = OP_START.match(line)
            if m:
                inside = m.group(2) == name
            elif inside and line.strip().startswith(PEER_LINE):
                lines.append(line.strip()[len(PEER_LINE):])
        return Trace("\n".join(lines), "", None, printers=self.printers)

    def sessions(self) -> list[tuple[str, str | None, str | None]]:
        """``(op name, Ray session before it, after it)`` of every op that
        ran (not skipped), as the probes printed them (None: not printed yet)."""
        out, session, current, skipped = [], None, None, None
        for line in self.stdout.splitlines():
            m = OP_START.match(line)
            if m:
                if current:
                    out.append((*current, session))
                current, skipped = (m.group(2), session), f"[{m.group(1)}] {m.group(2)}: skipped"
            elif skipped and line.startswith(skipped):
                current = None
            elif line.strip().startswith("ray: "):
                session = line.strip()[len("ray: "):]
        if current:
            out.append((*current, session))
        return out


def _duration(outcome: str) -> float | None:
    """The seconds an outcome line ends with (``... (3.748s)``)."""
    m = re.search(r"\((\d+(?:\.\d+)?)s\)$", outcome)
    return float(m.group(1)) if m else None


def _actors(after: list[str]) -> dict[str, list[str]] | None:
    """``{component: [state, ...]}`` of the actors line among ``after``."""
    line = next((a for a in after if a.startswith("actors: ")), None)
    if line is None:
        return None
    out = {}
    for part in line[len("actors: "):].split("  "):
        comp, _, states = part.partition("=")
        out[comp.strip()] = [s for s in states.split(",") if s and s != "-"]
    return out


def _ray_lines(after: list[str]) -> list[str]:
    return [a for a in after if a.startswith("ray: ")]


# -- what a finding claims, and what in the output shows it ---------------------------
# Each reader: (the claim's match, the op's component, its outcome, the lines after
# it) -> the line of the output that shows the claim, or None.

def _returned(m, comp, outcome, after):
    return outcome if outcome.startswith("ok") else None


def _raised(m, comp, outcome, after):
    return outcome if outcome.startswith(f"raised {m.group('type')}:") else None


def _slow_failure(m, comp, outcome, after):
    took = _duration(outcome)
    if outcome.startswith("raised") and took is not None and took > float(m.group("bound")):
        return f"{outcome} (bound {m.group('bound')}s)"
    return None


def _still_live(m, comp, outcome, after):
    states = (_actors(after) or {}).get(comp) or []
    return f"actors: {comp}={','.join(states)}" if set(states) & LIVE_STATES else None


def _owner_ended(m, comp, outcome, after):
    states = (_actors(after) or {}).get(comp) or []
    ended = [s for s in states if s not in LIVE_STATES and not s.startswith("unknown")]
    return f"actors: {comp}={','.join(states)}" if ended else None


def _other_ended(m, comp, outcome, after):
    other, was = m.group("comp"), m.group("was")
    if "ray: not initialized" in after:
        return "ray: not initialized (every actor of the runtime ended with it)"
    states = (_actors(after) or {}).get(other) or []
    ended = [s for s in states if not s.startswith("unknown")
             and (s not in LIVE_STATES or (was == "ALIVE" and s != "ALIVE"))]
    return f"actors: {other}={','.join(states)}" if ended else None


def _over_timeout(m, comp, outcome, after):
    """The call returned (or raised) later than its own timeout allows (the
    oracle's slack, ``oracles.BOUND_SLACK``)."""
    took = _duration(outcome)
    if took is not None and took > float(m.group("timeout")) + BOUND_SLACK:
        return f"{outcome} (its timeout {m.group('timeout')}s)"
    return None


def _count(m, comp, outcome, after):
    got = re.match(r"ok -> (\d+) batches", outcome)
    if got and int(got.group(1)) != int(m.group("want")):
        return f"{outcome} ({m.group('want')} expected)"
    return None


def _new_session(m, comp, outcome, after):
    return next((a for a in _ray_lines(after) if a != "ray: not initialized"), None)


def _session_gone(m, comp, outcome, after):
    return next(iter(_ray_lines(after)), None)


RESOURCES_LINE = re.compile(r"^resources: node \w+ \((?P<comp>[\w.]+): ")
#: a resource's reading on a ``resources:`` line (``script._released``)
RESOURCE_READING = r"(?:\): |; ){key} (?P<held>[\d.e+-]+) held, (?P<before>[\d.e+-]+) available " \
                   r"before, (?P<now>[\d.e+-]+) at return, of (?P<total>[\d.e+-]+)"


def _resource_readings(comp: str, key: str, after: list[str]) -> list[tuple]:
    """``(line, held, before, now, total)`` of ``key`` on each node ``comp``'s
    actors held it on, as the script read them at the teardown's return."""
    out = []
    for line in after:
        head = RESOURCES_LINE.match(line)
        got = head and head.group("comp") == comp and re.search(
            RESOURCE_READING.format(key=re.escape(key)), line)
        if got:
            out.append((line, *(float(got.group(g)) for g in ("held", "before", "now", "total"))))
    return out


def _not_released(m, comp, outcome, after):
    """What ``comp``'s actors held on a node (as the script read it) is not
    back at the teardown's return: the oracle's rule, at least what was free
    before (capped by total - held) plus what they held."""
    if not outcome.startswith("ok"):
        return None
    for line, held, before, now, total in _resource_readings(comp, m.group("key"), after):
        want = min(before, total - held) + held
        if now + RESOURCE_SLACK < want:
            return f"{line} ({want:g} expected)"
    return None


def _left_behind(m, comp, outcome, after):
    line = next((a for a in after if a.startswith(LEFT_LINE)), None)
    if outcome.startswith("raised") and line and not line.endswith(": 0"):
        return line
    return None


LEFT_LINE = "job actors not of any component: "
THREADS_LINE = "threads: "
#: a thread on a ``threads:`` line (``script._threads_left``): its name, then its module
LISTED_THREAD = re.compile(r"(?P<name>.+?) \((?P<module>[\w.]+)\)(?:, |$)")


def _listed_threads(after: list[str]) -> list[tuple[str, str]] | None:
    """``(name, module)`` of each thread the ``threads:`` line among ``after``
    lists (None: no such line)."""
    line = next((a for a in after if a.startswith(THREADS_LINE)), None)
    if line is None:
        return None
    rest = line[len(THREADS_LINE):]
    return [] if rest == "none" else [(m.group("name"), m.group("module"))
                                      for m in LISTED_THREAD.finditer(rest)]


def _thread_left(m, comp, outcome, after):
    """The thread the finding names (by its module and its name, whose number
    may differ between two processes) still runs at the teardown's return."""
    if not outcome.startswith("ok"):
        return None
    for name, module in _listed_threads(after) or []:
        if module == m.group("module") and _same_thread(name, m.group("name")):
            return f"{THREADS_LINE}{name} ({module})"
    return None


RAISING = {"teardown_never_raises", "calls_succeed", "use_after_close_clear_error",
           "peer_ok", "setup", "fails_clearly"}
#: (oracles, what their finding's text says, its reader); the first that matches
CLAIMS = [
    (RAISING, r"^op \d+ \([^)]*\) (?:\S+ after teardown succeeded instead of raising|with \S+ "
              r"did not raise)", _returned),
    ({"fails_clearly"}, r"took [\d.]+s to fail \(bound (?P<bound>[\d.]+)s\)", _slow_failure),
    (RAISING, r"\braised (?:an unclear )?(?P<type>[^\s:]+):", _raised),
    ({"own_actors_dead_after_teardown", "exhaustion_auto_shutdown"},
     r"actor \w+ still [A-Z_]+", _still_live),
    ({"own_actors_dead_after_teardown"}, r"ended the owner's actor", _owner_ended),
    ({"others_untouched"}, r"ended (?P<comp>[\w.]+) actor \w+ \(\w+; it was (?P<was>\w+)\)",
     _other_ended),
    ({"resources_released_at_teardown"}, r"(?P<key>\S+) (?P<held>[\d.]+) held by its actors on "
                                          r"node \w+ not back", _not_released),
    ({"fails_clearly"}, r"left actors behind: \[", _left_behind),
    ({"threads_joined"}, r"thread (?P<name>.+) \((?P<module>[\w.]+)\) of the [\w.]+ still running "
                         r"right after its teardown returned", _thread_left),
    ({"errors_surface"}, r"returned \d+ time\(s\) in [\d.]+s without raising", _returned),
    ({"batch_counts"}, r"batches before it stopped; (?P<want>\d+) were asked for", _count),
    ({"batch_counts"}, r"batches until total_frames=\d+; (?P<want>\d+) expected", _count),
    ({"calls_within_timeout"}, r"took [\d.]+s; its timeout is (?P<timeout>[\d.]+)s",
     _over_timeout),
    ({"no_ray_restart"}, r"started a Ray runtime", _new_session),
    ({"ray_not_shut_down_by_non_owner"}, r"shut down the user's Ray runtime", _session_gone),
]
#: readers of what only newer scripts print: (the script's function that prints
#: it, is there a reading at the op?, the lines that say the reading failed, why
#: there is none when the script ran as it should)
READINGS = {
    _not_released: (
        "_released", lambda m, comp, outcome, after: outcome.startswith("ok") and bool(
            _resource_readings(comp, m.group("key"), after)), ("resources: unknown",),
        "no reading of {key} held by {comp}'s actors at its return (it did not return ok, or "
        "no actor of it held {key} before it)"),
    _thread_left: (
        "_threads_left", lambda m, comp, outcome, after: outcome.startswith("ok")
        and _listed_threads(after) is not None, (),
        "no reading of the threads at its return (it did not return ok)"),
    _left_behind: (
        "_left_behind", lambda m, comp, outcome, after: outcome.startswith("raised") and any(
            a.startswith(LEFT_LINE) for a in after), ("job actors: unknown", "job actors: not read"),
        "no reading of the job's actors after it (it did not raise)"),
}


#: the label a finding's text starts with: its op's verb and target
LABEL = re.compile(r"op \d+ \((\w+)(?: ([\w.]+))?\)")
#: a finding at a ``peer`` op about one of the second driver's ops
PEER_OP = re.compile(r"second driver(?:'s|:) (?=op \d+ \()")


def _claim(oracle: str, text: str):
    """``(match, reader)`` of the first of ``CLAIMS`` that reads the finding
    ``text`` of ``oracle`` (None: none does)."""
    for oracles, pattern, read in CLAIMS:
        m = re.search(pattern, text) if oracle in oracles else None
        if m:
            return m, read
    return None


#: a script's line for a ray.init() call that changed the runtime
#: (``script._watch_runtime_calls``), and a finding's words for a start by a thread
INIT_CALL = re.compile(r"^runtime: ray\.init\(\) from thread (?P<thread>.+): "
                          r"(?P<before>.+) -> (?P<after>.+)$")
THREAD_START = re.compile(r"ray\.init\(\) from thread (?P<thread>.+?) started a Ray runtime")


def _same_thread(a: str, b: str) -> bool:
    """Two thread names of the same thread in two processes: Python numbers
    unnamed threads in the order each process made them ("Thread-3
    (_run_collection_loop)"), so the number is left out where a target follows."""
    unnumbered = re.compile(r"^Thread-\d+ (?=\()")
    return unnumbered.sub("", a) == unnumbered.sub("", b)


def _runtime_call(trace: Trace, name: str, text: str) -> str | None:
    """The script's line for the ray.init() the finding names (the same thread)
    starting a runtime, printed when that call returned: from op ``name``'s
    start to the end of the output (a thread's call after the op returned
    prints during a later op)."""
    claim = THREAD_START.search(text)
    if claim is None:
        return None
    lines = [line.strip() for line in trace.stdout.splitlines()]
    start = next((k for k, line in enumerate(lines)
                  if (m := OP_START.match(line)) and m.group(2) == name), None)
    if start is None:
        return None
    for line in lines[start:]:
        m = INIT_CALL.match(line)
        if m and _same_thread(m.group("thread"), claim.group("thread")) \
                and m.group("after") != "not initialized":
            return line
    return None


def _unseen_start(trace: Trace, name: str) -> str | None:
    """Ray's log says it started a local runtime (or joined the cluster: a
    new job) more often than the probes printed a session: a runtime
    started and shut down within one op. The op ``name`` did it when it is
    the only op that ran with Ray down before and after it."""
    starts = trace.stderr.count(LOCAL_START) + trace.stderr.count(CLUSTER_JOINED)
    seen = sum(1 for line in trace.stdout.splitlines()
               if line.strip().startswith("ray: ") and line.strip() != "ray: not initialized")
    if starts <= seen:
        return None
    quiet = [op for op, before, after in trace.sessions()
             if before == after == "not initialized"]
    if quiet != [name]:
        return None
    return (f"stderr: {starts} x '{LOCAL_START}' or '{CLUSTER_JOINED}' for {seen} session(s) "
            "the probes printed; the only op that ran with Ray down before and after it")


def shows(finding: dict, trace: Trace) -> tuple[bool | None, str]:
    """(True: the trace shows the finding / False: it does not / None: the
    finding leaves nothing in the trace to read), and the line that says so.

    The finding's text says what its op did (``CLAIMS``, in the words of its
    oracle): the output must show that very thing at that op (the same
    exception type, the same component's actors, a count that differs from
    the one asked for, a new session), not merely any outcome."""
    oracle, name, verdict = finding["oracle"], finding.get("op"), finding["verdict"]
    text = finding.get("text") or ""
    # a hang: its op never returned. A scenario whose verdict is a hang but
    # whose first finding is another claim (a constructor that left actors
    # behind, then hung at a later op) is read for that claim
    if oracle == "no_hang" or (verdict == "hang" and _claim(oracle, text) is None):
        runs = trace.outcomes(name) if name else []
        if any(o == "unfinished" for o, _ in runs) and trace.returncode == 1 \
                and "Timeout" in trace.stderr:
            return True, f"{name}: never returned; the watchdog's 'Timeout' and exit 1"
        return False, f"{name}: returned, or the script did not time out (exit {trace.returncode})"
    if verdict == "crash" or oracle == "no_crash":
        died = trace.returncode is not None and (trace.returncode < 0 or "Check failed" in trace.stderr)
        return (True, f"exit {trace.returncode}") if died else (False, f"exit {trace.returncode}")
    if oracle == "clean_stderr":
        line = next((x for x in trace.stderr.splitlines() if x.startswith("Traceback")), None)
        return (True, "stderr: a traceback") if line else (False, "no traceback on stderr")
    if name is None:
        return None, f"{oracle}: no operation to read"
    inner = PEER_OP.search(text) if name == "peer" else None
    if inner:  # about the second driver's op: read the second driver's own trace
        text = text[inner.end():]
        trace = trace.peer(name)
        name = trace.name_of(findings.from_text(text).op)
        if name is None:
            return False, f"peer: the second driver never started {LABEL.match(text).group(0)}"
    claim = _claim(oracle, text)
    if claim is None:
        return None, f"{oracle}: the script prints nothing this finding rests on (only the " \
                     "suite records it)"
    runs = trace.outcomes(name)
    if not runs:
        return False, f"{name}: not in the script's output"
    m, read = claim
    label = LABEL.match(text)
    comp = (label.group(2) if label else None) or name.split(" ")[-1].split("(")[0]
    if read in READINGS:
        printer, readable, failed, why = READINGS[read]
        if trace.printers is not None and printer not in trace.printers:
            return None, (f"{name}: the script was written before the scripts printed what this "
                          "finding rests on: regenerate the body")
        if all(o == "unfinished" for o, _ in runs):
            return False, f"{name}: never returned; the finding: {m.group(0)}"
        if not any(readable(m, comp, outcome, after) for outcome, after in runs):
            broken = next((a for _, after in runs for a in after if a.startswith(failed)), None)
            if broken:
                return None, f"{name}: the script's reading failed: {broken[:200]}"
            return False, f"{name}: {runs[0][0][:120]}; " + why.format(comp=comp, **m.groupdict())
    where = f"peer: {name}" if inner else name
    for outcome, after in runs:
        line = read(m, comp, outcome, after)
        if line:
            return True, f"{where}: {line[:200]}"
    if oracle == "no_ray_restart":
        line = _runtime_call(trace, name, text) or _unseen_start(trace, name)
        if line:
            return True, f"{name}: {line}"
    return False, f"{where}: {runs[0][0][:200]}; the finding: {m.group(0)}"


def read_body(path: str) -> tuple[dict, str]:
    """The finding (its marker) and the script of the body at ``path``."""
    with open(path) as f:
        text = f.read()
    script = re.search(r"```python\n(.*?)\n```", text, re.S)
    found = re.search(re.escape(MARK) + r"(.*?) -->", text)
    if not script or not found:
        raise ValueError(f"{path}: no script or no finding marker")
    return json.loads(found.group(1)), script.group(1)


def _needs_no_regeneration(finding: dict, script: str) -> None:
    """``NotChecked`` (not checked) for a script that names the suite's envs
    without carrying them (a body written before ``script_envs``): run alone
    its actors would fail at import, which is not the finding."""
    if "conformance.envs:" in script and "ENVS_SOURCE" not in script:
        raise NotChecked(f"{finding['id']}: its script names the suite's envs "
                           "(conformance.envs:...) without carrying them: written before "
                           "they were embedded; regenerate the body")


def run_body(path: str, python: str, timeout: float = 900.0) -> tuple[dict, Trace, float]:
    """Run the script of the body at ``path`` alone (a multinode scenario's
    against a stand-in cluster of its own); its finding and trace."""
    finding, script = read_body(path)
    _needs_no_regeneration(finding, script)
    fixture = cluster_fixture(script)
    if fixture and fixture not in STAND_INS:
        raise NotChecked(f"{finding['id']}: its script needs a cluster of fixture {fixture} "
                           "(--address), which the check does not stand in for")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    with tempfile.TemporaryDirectory(prefix="rlc-upstream-check-") as scratch:
        env["RAY_TMPDIR"] = scratch
        with open(os.path.join(scratch, "repro.py"), "w") as f:
            f.write(script + "\n")
        if not fixture:
            return (finding, *_run_script(python, scratch, env, [], timeout))
        cluster = STAND_INS[fixture](python, scratch)
        try:
            with cluster:  # started, and stopped after the script
                trace, seconds = _run_script(python, scratch, env,
                                             ["--address", cluster.address], timeout)
        except ClusterStartFailed as exc:
            raise NotChecked(f"{finding['id']}: its stand-in cluster did not start: "
                               f"{exc}") from None
        trace.cluster = f"run against a stand-in cluster of its own: {cluster.describe()}"
        return finding, trace, seconds


def _run_script(python: str, scratch: str, env: dict, args: list[str],
                timeout: float) -> tuple[Trace, float]:
    """Run ``scratch/repro.py`` with ``args``; its trace and duration."""
    t0 = time.monotonic()
    # Output to files, not pipes: a process the script leaves behind would
    # hold a pipe open, and reading it would wait for that process.
    out_path, err_path = os.path.join(scratch, "stdout"), os.path.join(scratch, "stderr")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([python, "repro.py", *args], cwd=scratch, env=env, stdout=out,
                                stderr=err, start_new_session=True)
        left = []
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            left = procs.terminate(procs.find_session(proc.pid))
            proc.wait()
            code = None
        except BaseException:  # Ctrl-C: the script's session goes too
            procs.kill_session(proc.pid)
            raise
    # What the script left in its session (its own: start_new_session) is
    # stopped here, by session, twice (a process forked during the first
    # sweep is in the second). Seen 2026-11-26: after the RLlib scripts, a
    # DashboardAgent and a RuntimeEnvAgent of a script's runtime outlived it
    # in its deleted scratch directory.
    left += procs.kill_session(proc.pid)
    said = "; ".join(f"pid {p['pid']} {p['cmdline'] or p['name']}" for p in left)
    with open(out_path) as out, open(err_path) as err:
        trace = Trace(out.read(), err.read() + (
            f"\nupstream --check: stopped {len(left)} process(es) the script left "
            f"behind: {said}\n" if left else ""), code)
    return trace, time.monotonic() - t0


def _output_path(folder: str, body: str, run: int = 1) -> str:
    """Where run ``run`` of ``body``'s script is kept (a race's further runs:
    ``NN-....run2.json``)."""
    return os.path.join(folder, body[:-len(".md")] + ("" if run == 1 else f".run{run}") + ".json")


def script_sha256(script: str) -> str:
    import hashlib

    return hashlib.sha256(script.encode()).hexdigest()


def save_output(folder: str, body: str, trace: Trace, seconds: float, run: int = 1,
                script: str | None = None) -> None:
    """Keep what the script of ``body`` printed (``--save-outputs``), with the
    script's hash, so that a later reading (a fixed ``shows``) needs no rerun:
    ``--from-outputs``. Run 1 replaces every kept run of the body."""
    os.makedirs(folder, exist_ok=True)
    if run == 1:
        stem = body[:-len(".md")]
        for name in os.listdir(folder):
            if re.fullmatch(re.escape(stem) + r"\.run\d+\.json", name):
                os.remove(os.path.join(folder, name))
    with open(_output_path(folder, body, run), "w") as f:
        json.dump({"stdout": trace.stdout, "stderr": trace.stderr,
                   "returncode": trace.returncode, "cluster": trace.cluster,
                   "seconds": round(seconds, 1),
                   "script_sha256": script_sha256(script) if script is not None else None}, f, indent=1)


def load_output(folder: str, body: str, run: int = 1, script: str | None = None) -> tuple[Trace, float]:
    """What ``save_output`` kept of ``body``'s script; FileNotFoundError if
    none; NotChecked if it was printed by another script than ``script``."""
    with open(_output_path(folder, body, run)) as f:
        kept = json.load(f)
    if script is not None and kept.get("script_sha256") != script_sha256(script):
        raise NotChecked(f"{body}: the output kept in {folder} was printed by another script "
                         "(the body was written again since, or it was kept before outputs "
                         "carried their script's hash): run the check again")
    return (Trace(kept["stdout"], kept["stderr"], kept["returncode"], kept.get("cluster")),
            kept.get("seconds", 0.0))


#: a race's runs: enough that all miss a declared rate q with probability <= MISS ...
MISS = 0.05
#: ... but at most this many (a rate of 1/7 would need 20)
MAX_RUNS = 10


def declared_rate(finding: dict, rates: dict) -> tuple[int, int] | None:
    """The rate (K, N) at which the finding's scenario showed it in the
    suite's runs, as a races file declares it (``varies:ORACLE@K/N``, or a
    verdict's ``flaky:K/N``, N-K of N for its ``otherwise:`` outcome); None:
    not declared, it is expected every run."""
    varying, flaky = rates.get("varying", {}), rates.get("flaky", {})
    rate = (varying.get(finding["id"]) or {}).get(finding["oracle"])
    race = flaky.get(finding["id"]) if rate is None else None
    if race is not None:
        k, n = race.rate
        for cell, k_n in ((race.outcome, (k, n)), (race.otherwise, (n - k, n))):
            verdict, _, oracles = cell.partition(" ")  # "crash", or "fail [oracle, ...]"
            if verdict == finding["verdict"] and (not oracles or finding["oracle"] in re.findall(r"\w+", oracles)):
                rate = k_n
                break
    return tuple(rate) if rate else None


def runs_for(rate: tuple[int, int] | None) -> int:
    """How many runs a script gets to show a finding of that rate."""
    import math

    if rate is None or rate[0] >= rate[1]:
        return 1
    if rate[0] <= 0:
        return MAX_RUNS
    return min(MAX_RUNS, math.ceil(math.log(MISS) / math.log(1 - rate[0] / rate[1])))


def _check_one(path: str, python: str, save: str | None, replay: str | None, rates: dict):
    """(the finding's verdict, why, seconds) of the body at ``path``: its script
    run now, or its output as saved in ``replay``. A finding declared a race
    (``rates``) gets up to ``runs_for`` runs, until one shows it."""
    name = os.path.basename(path)
    try:
        finding, script = read_body(path)
        _needs_no_regeneration(finding, script)
        rate = declared_rate(finding, rates)
        runs, total, why, done = runs_for(rate), 0.0, "", 0
        for run in range(1, runs + 1):
            if replay:
                try:
                    trace, seconds = load_output(replay, name, run, script)
                except FileNotFoundError:
                    if run == 1:
                        return None, f"no saved output in {replay}", 0.0
                    break
            else:
                finding, trace, seconds = run_body(path, python)
                if save:
                    save_output(save, name, trace, seconds, run, script)
            total, done = total + seconds, run
            trace.printers = frozenset(p for p, *_ in READINGS.values() if f"def {p}(" in script)
            try:
                shown, why = shows(finding, trace)
            except (ValueError, KeyError, IndexError) as exc:  # a reading this check cannot parse
                return None, f"the output could not be read: {type(exc).__name__}: {exc}", total
            why = f"{why} ({trace.cluster})" if trace.cluster else why
            if rate is not None:
                why = (f"{why} [run {run} of up to {runs}: a race, "
                       f"{rate[0]}/{rate[1]} of the suite's runs]")
            if shown is not False:
                return shown, why, total
        if rate is not None:
            miss = (1 - rate[0] / rate[1]) ** done
            kept = f" (only {done} kept of up to {runs})" if replay and done < runs else ""
            why += f"; not in any of {done} run(s){kept} (at that rate, {100 * miss:.0f} % likely)"
        return False, why, total
    except NotChecked as exc:
        return None, str(exc), 0.0
    except (OSError, ValueError) as exc:  # nothing ran: a bad --python, a body without its marker
        return None, f"not run: {exc}", 0.0


def check_dir(out_dir: str, python: str, log=print, save: str | None = None,
              replay: str | None = None, varies_from: str | None = None) -> int:
    """Every body of ``out_dir``; writes ``CHECKED.md``; the number not shown.
    ``save``: a folder to keep each script's output in; ``replay``: read the
    outputs kept there instead of running the scripts; ``varies_from``: the
    races file whose rates give a race's finding more than one run."""
    rates = {}
    if varies_from:
        from conformance.reports.known_failures import load_flaky, load_varying

        rates = {"varying": load_varying(varies_from), "flaky": load_flaky(varies_from)}
    rows, missed = [], 0
    for name in sorted(n for n in os.listdir(out_dir) if BODY_NAME.match(n)):
        ok, why, seconds = _check_one(os.path.join(out_dir, name), python, save, replay, rates)
        missed += ok is False
        mark = {True: "shown", False: "NOT shown", None: "not checked"}[ok]
        log(f"{name}: {mark}: {why}")
        cell = why.replace("|", "/").replace("\n", " / ")
        rows.append(f"| [{name}]({name}) | {mark} | {cell} | {seconds:.0f} s |")
    how = (f"--from-outputs {replay}`: the outputs saved there, read again"
           if replay else f"--python PY` with `{python}`")
    if varies_from:
        how = how.replace("`", f" --varies-from {varies_from}`", 1)
    with open(os.path.join(out_dir, "CHECKED.md"), "w") as f:
        f.write("\n".join([
            "# Each body's script, run alone", "",
            f"Generated by `python -m conformance upstream --check DIR {how} "
            f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): each script in "
            "a scratch directory, without this project on its path (a multinode scenario's "
            "against a stand-in cluster of its own: the multinode fixture's nodes, each "
            "started with that Python's `ray start` on 127.0.0.1), its output read for the "
            "finding at the operation the suite saw it first "
            "(`conformance/repro/upstream_check.py`).", "",
            "| body | outcome | evidence in the script's output | time |",
            "| --- | --- | --- | ---: |", *rows]) + "\n")
    return missed
