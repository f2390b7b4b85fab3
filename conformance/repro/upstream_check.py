"""Does an issue body's standalone script show its defect when run alone?

    python -m conformance upstream --check DIR --python /path/to/release-venv/bin/python

Each body of ``DIR`` (written by ``python -m conformance upstream --out-dir``)
carries its script and, in a comment block at its end, the finding it is
about: the rule, the verdict, and the operation where the suite saw it
first. The script runs in a scratch directory with the given Python (a
fresh environment of the library's release), without this project on its
path and without ``RAY_ADDRESS``; its printed trace is then read for that
same evidence at that same operation (``shows``): the call raised, the
operation never ended (a hang: the script's watchdog exits 1), the Ray
session changed after it, the component's actors were still alive after
its teardown, a traceback was printed. ``DIR/CHECKED.md`` lists the
outcome of every body.

A rule with no printed trace to read (the harness judged it from what only
the suite records: threads, processes after the exit) is reported "not
checkable from the script's output", never "shown".
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass

MARK = "<!-- rlc-finding "
#: rules whose evidence is the operation's outcome line: it raised
RAISES = {"teardown_never_raises", "calls_succeed", "use_after_close_clear_error",
          "peer_ok", "setup"}
#: rules whose evidence is the Ray session printed after the operation
SESSION = {"no_ray_restart", "ray_not_shut_down_by_non_owner"}
#: rules whose evidence is the actor states printed after the operation
ACTORS = {"own_actors_dead_after_teardown", "others_untouched", "no_leftover_actor"}


def marker(entry: dict) -> str:
    """The comment a body ends with: the finding the check looks for."""
    first = next((f for f in entry.get("findings") or [] if not f.get("unknown")), None)
    if first is None:  # a report from before findings were data: its first violation's text
        violations = (entry.get("evidence") or {}).get("violations") or {}
        oracle = next((o for o in entry.get("oracles") or [] if violations.get(o)), None)
        if oracle:
            text = violations[oracle][0]
            index = re.match(r"op (\d+) \(", text)
            first = {"oracle": oracle, "text": text,
                     "op": int(index.group(1)) if index else None}
    found = {"id": entry["id"], "verdict": entry["verdict"],
             "oracle": first["oracle"] if first else (entry.get("oracles") or ["?"])[0],
             "op": _op_name(entry, first["op"]) if first and first.get("op") is not None else None,
             "text": first["text"] if first else ""}
    return f"{MARK}{json.dumps(found)} -->"


def _op_name(entry: dict, index: int) -> str | None:
    """The op's name as the script prints it (``str(Op)``)."""
    ops = str(entry.get("ops") or "").split(" ; ")
    return ops[index] if 0 <= index < len(ops) else None


class NeedsCluster(Exception):
    """The script runs against a cluster (a multinode scenario): not run here."""


@dataclass
class Trace:
    """What a script printed: per op name, its outcome lines, and the probe
    lines that follow each."""

    stdout: str
    stderr: str
    returncode: int | None

    def outcomes(self, name: str) -> list[tuple[str, list[str]]]:
        """``[(outcome, lines printed after it until the next op)]`` of every
        run of the op named ``name``; an op that started and never ended has
        the outcome "unfinished"."""
        out, lines = [], self.stdout.splitlines()
        start = re.compile(r"^\[(\d+)\] (.*) \.\.\.$")
        for k, line in enumerate(lines):
            m = start.match(line)
            if not m or m.group(2) != name:
                continue
            head = f"[{m.group(1)}] {name}: "
            end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith(head)), None)
            if end is None:
                out.append(("unfinished", []))
                continue
            after = []
            for later in lines[end + 1:]:
                if start.match(later):
                    break
                after.append(later.strip())
            out.append((lines[end][len(head):], after))
        return out


def shows(finding: dict, trace: Trace) -> tuple[bool | None, str]:
    """(True: the trace shows the finding / False: it does not / None: the
    rule leaves nothing in the trace to read), and the line that says so."""
    oracle, name, verdict = finding["oracle"], finding.get("op"), finding["verdict"]
    if verdict == "hang" or oracle == "no_hang":
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
    runs = trace.outcomes(name)
    if not runs:
        return False, f"{name}: not in the script's output"
    for outcome, after in runs:
        if oracle in RAISES and outcome.startswith("raised"):
            return True, f"{name}: {outcome[:200]}"
        if oracle == "fails_clearly":
            if outcome.startswith("raised") or outcome.startswith("ok"):
                return True, f"{name}: {outcome[:200]}"
        if oracle in SESSION and any(a.startswith("ray: ") for a in after):
            return True, f"{name}: then {next(a for a in after if a.startswith('ray: '))[:200]}"
        if oracle in ACTORS and any(a.startswith("actors: ") and "ALIVE" in a for a in after):
            return True, f"{name}: then {next(a for a in after if a.startswith('actors: '))[:200]}"
        if oracle == "batch_counts" and outcome.startswith("ok"):
            return True, f"{name}: {outcome[:200]}"
    if oracle not in RAISES | SESSION | ACTORS | {"fails_clearly", "batch_counts"}:
        return None, f"{oracle}: judged from what only the suite records"
    return False, f"{name}: {runs[0][0][:200]}"


def run_body(path: str, python: str, timeout: float = 900.0) -> tuple[dict, Trace, float]:
    """Run the script of the body at ``path`` alone; its finding and trace."""
    with open(path) as f:
        text = f.read()
    script = re.search(r"```python\n(.*?)\n```", text, re.S)
    found = re.search(re.escape(MARK) + r"(.*?) -->", text)
    if not script or not found:
        raise ValueError(f"{path}: no script or no finding marker")
    finding = json.loads(found.group(1))
    if "p.add_argument('--address', required=True" in script.group(1):
        raise NeedsCluster(f"{finding['id']}: its script needs a cluster (--address)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    with tempfile.TemporaryDirectory(prefix="rlc-upstream-check-") as scratch:
        env["RAY_TMPDIR"] = scratch
        with open(os.path.join(scratch, "repro.py"), "w") as f:
            f.write(script.group(1) + "\n")
        t0 = time.monotonic()
        try:
            done = subprocess.run([python, "repro.py"], cwd=scratch, env=env, timeout=timeout,
                                  capture_output=True, text=True, start_new_session=True)
            trace = Trace(done.stdout, done.stderr, done.returncode)
        except subprocess.TimeoutExpired as exc:
            trace = Trace(exc.stdout or "", exc.stderr or "", None)
    return finding, trace, time.monotonic() - t0


def check_dir(out_dir: str, python: str, log=print) -> int:
    """Every body of ``out_dir``; writes ``CHECKED.md``; the number not shown."""
    rows, missed = [], 0
    for name in sorted(n for n in os.listdir(out_dir) if re.match(r"\d\d-.*\.md$", n)):
        try:
            finding, trace, seconds = run_body(os.path.join(out_dir, name), python)
            ok, why = shows(finding, trace)
        except NeedsCluster as exc:
            ok, why, seconds = None, str(exc), 0.0
        except (OSError, ValueError) as exc:
            ok, why, seconds = False, str(exc), 0.0
        missed += ok is False
        mark = {True: "shown", False: "NOT shown", None: "not checked"}[ok]
        log(f"{name}: {mark}: {why}")
        rows.append(f"| [{name}]({name}) | {mark} | {why.replace('|', '/')} | {seconds:.0f} s |")
    with open(os.path.join(out_dir, "CHECKED.md"), "w") as f:
        f.write("\n".join([
            "# Each body's script, run alone", "",
            f"Generated by `python -m conformance upstream --check DIR --python PY` with "
            f"`{python}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): each script in "
            "a scratch directory, without this project on its path, its output read for the "
            "finding at the operation the suite saw it first "
            "(`conformance/repro/upstream_check.py`).", "",
            "| body | outcome | evidence in the script's output | time |",
            "| --- | --- | --- | ---: |", *rows]) + "\n")
    return missed
