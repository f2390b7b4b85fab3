"""Findings written for the library's own tracker: one issue body per cause.

    python -m conformance upstream ID --impl NAME [--report R.json] [--no-shrink] [-o FILE]
    python -m conformance upstream --report R.json --impl NAME --out-dir DIR [--no-shrink]
    python -m conformance upstream --check DIR --python RELEASE-VENV/bin/python [--save-outputs D]
    python -m conformance upstream --check DIR --from-outputs D

A finding is a scenario that did not pass. Its body says, in the words a
maintainer reads: the versions (library, Ray, Python, OS), the minimal
standalone script (the scenario shrunk with ``conformance.repro.shrink``, then
written by ``conformance.repro.script``: it needs no part of this project), what
the contract expects against what happened (each failing rule's own
statement, its oracle's docstring, beside what it saw), the evidence
excerpt, and the command that reruns the scenario in the suite.

With ``--out-dir DIR`` every finding of the report is grouped by cause and one
body is written per cause, and one per rule that only ever broke after
another violation (``causes``): ``DIR/NN-<slug>.md``, plus ``DIR/README.md``
listing them; ``--check DIR`` runs each body's script alone in the given
Python and reads its output for the finding (``conformance.repro.upstream_check``).
Two findings share a cause when they have the same verdict
and the same earliest violation once the op's position, ids, numbers and
addresses are left out (``cause_of``): the same teardown raising the same
error in 14 teardown orders is one issue upstream, its other scenarios
listed in it. The body's scenario is the group's simplest: the ``local``
fixture before ``multinode``, the user's Ray before the implementation's,
then the fewest operations.
"""
from __future__ import annotations

import os
import platform
import re
import sys
from dataclasses import dataclass, field

from conformance.reports.summary import finding_line, first_violation
from conformance.repro.upstream_check import BODY_NAME, named_finding, over_a_bound

FIXTURE_ORDER = {"local": 0, "multinode": 1, "external": 2}
OWNER_ORDER = {"user": 0, "impl": 1}
BAD = ("fail", "crash", "hang", "setup-error")


def named_violation(entry: dict) -> str:
    """``[oracle] text`` of the finding a body is about (``named_finding``: the
    earliest violation that is no duration over a bound, else the earliest), else
    ``summary.first_violation``'s reading (an unknown, how the driver ended)."""
    found = named_finding(entry)
    return first_violation(entry) if found is None else finding_line(found)


def cause_of(entry: dict) -> str:
    """The cause of a finding: its verdict and the violation it is about
    (``named_violation``) with what varies between runs and scenarios (op
    positions, ids, numbers, addresses, paths) left out."""
    text = named_violation(entry)
    text = re.sub(r"\bop \d+ (?=\()", "", text)
    text = re.sub(r"\bop \d+ of \d+", "op", text)
    text = re.sub(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?", "<addr>", text)
    text = re.sub(r"/[\w./-]+", "<path>", text)
    text = re.sub(r"\b[0-9a-f]{8,}\b", "<id>", text)
    text = re.sub(r"\d+(\.\d+)?", "<n>", text)
    return f"{entry['verdict']}: {' '.join(text.split())[:140]}"


@dataclass
class Cause:
    key: str
    entries: list = field(default_factory=list)

    @property
    def representative(self) -> dict:
        """The simplest scenario of the group (see the module docstring)."""
        return min(self.entries, key=lambda e: (
            FIXTURE_ORDER.get(e.get("fixture"), 9), OWNER_ORDER.get(e.get("owner"), 9),
            len(str(e.get("ops", "")).split(" ; ")), e["id"]))


def undecided(entry: dict) -> str | None:
    """Why a failure is not one to file (None: it is): every violation is a
    bound on time or a wait, under CPU pressure, and it was never rerun
    alone. The suite itself reruns such a failure alone before it stands
    (``conformance.run.rerun``); a report from before that did not, and a
    busy machine alone may have made it."""
    from conformance.run.cpu_pressure import timing_violation
    from conformance.run.rerun import needs_rerun

    why = needs_rerun(entry)
    violations = (entry.get("evidence") or {}).get("violations") or {}
    if why and all(timing_violation(o, m) for o, msgs in violations.items() for m in msgs):
        return f"only timing: {why}, never rerun alone"
    return None


#: the file in a bodies' folder naming the findings not to write (by hand, from
#: ``--check``'s CHECKED.md): ``SCENARIO_ID: why``, one per line, ``#`` comments
WITHHELD = "withheld.txt"


def withheld_in(out_dir: str) -> dict[str, str]:
    """``{scenario id: why}`` of ``out_dir``'s ``WITHHELD`` file ({}: none):
    findings whose script, run alone in a fresh venv of the release, did not
    show them (a race the suite's load makes; the check's runs are the why)."""
    try:
        with open(os.path.join(out_dir, WITHHELD)) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    out = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        sid, sep, why = line.partition(": ")
        if not sep or not why.strip():
            raise ValueError(f"{os.path.join(out_dir, WITHHELD)}:{n}: not 'SCENARIO_ID: why': "
                             f"{line!r}")
        out[sid.strip()] = why.strip()
    return out


def about(entry: dict, finding: dict) -> dict:
    """``entry`` as a body about ``finding``, one of its other violations:
    ``named_finding`` then names it (its title, cause and what ``--check``
    looks for), and its oracle is listed first."""
    oracles = [finding["oracle"]] + [o for o in entry.get("oracles") or []
                                     if o != finding["oracle"]]
    return {**entry, "findings": [finding], "oracles": oracles}


#: rules whose violation restates another's: actors a teardown left alive (or
#: a failed constructor left behind) are the actors left at the end, a thread
#: a teardown did not join is the thread left at the end, and two effects of
#: an actor another call ended (below). A later
#: violation of such a rule, in a scenario that fails the rule it restates,
#: is that finding again, not a cause of its own (Tianshou 2.0.1's
#: ``close()`` leaving its env actors ALIVE: one defect, NOTES.md).
RESTATES = {"no_leftover_actor": ("own_actors_dead_after_teardown", "fails_clearly"),
            "no_leftover_thread": ("threads_joined",),
            # a buffer another component's teardown ended is unreadable after it
            # (torchrl 0.14.1's shutdown(shutdown_ray=True), 2026-11-27)
            "data_kept": ("others_untouched", "ray_not_shut_down_by_non_owner"),
            # a named worker a borrowed handle's teardown ended is gone by name
            "name_freed": ("own_actors_dead_after_teardown",)}


def causes(entries: list[dict], withheld=()) -> list[Cause]:
    """The findings (verdicts other than pass, skip and the harness's error;
    not ``undecided``, not ``withheld``) grouped by ``cause_of``, the largest
    group first; then, for each rule some finding breaks that no group's
    named violation is about (a finding that came after another in every
    scenario it fails, as torchrl's helper processes an env leaves behind
    after its teardown already failed to give the CPUs back), that does not
    restate a rule the scenario fails (``RESTATES``) and is no duration over
    a bound, one group of the scenarios that break it, each as a body about
    that violation (``about``), the largest first."""
    from conformance.reports.summary import findings_of

    groups: dict[str, Cause] = {}
    filed = [e for e in entries
             if e["verdict"] in BAD and not undecided(e) and e["id"] not in withheld]
    for e in filed:
        groups.setdefault(cause_of(e), Cause(cause_of(e))).entries.append(e)
    named = {(named_finding(e) or {}).get("oracle") for e in filed}
    later: dict[str, Cause] = {}
    for e in filed:
        for f in findings_of(e):
            restated = set(RESTATES.get(f["oracle"], ())) & set(e.get("oracles") or [])
            if f.get("unknown") or f["oracle"] in named or restated or over_a_bound(f):
                continue  # a duration over a bound: never a body's own (``named_finding``)
            view = about(e, f)
            cause = later.setdefault(f["oracle"], Cause(""))
            if all(x["id"] != e["id"] for x in cause.entries):
                cause.entries.append(view)
    for cause in later.values():  # keyed by its simplest scenario's violation
        cause.key = cause_of(cause.representative)
    order = lambda c: (-len(c.entries), c.key)  # noqa: E731
    return sorted(groups.values(), key=order) + sorted(later.values(), key=order)


def contract_of(oracle: str) -> str:
    """What the rule ``oracle`` says, in the contract's words: its docstring's
    first paragraph."""
    from conformance.judge.oracles import ORACLES

    if oracle == "setup":
        return "A constructor the scenario expects to work builds the component."
    doc = (ORACLES.get(oracle).__doc__ or "") if oracle in ORACLES else ""
    para = doc.strip().split("\n\n")[0]
    return " ".join(para.split()) or f"The suite's rule `{oracle}` holds."


def environment(doc_versions: dict) -> list[str]:
    """The versions table's rows: the report's (library, Ray, torch, ...) and
    where it ran."""
    rows = [f"| {k} | {v} |" for k, v in sorted(doc_versions.items()) if k != "python"]
    rows.append(f"| Python | {doc_versions.get('python') or platform.python_version()} |")
    rows.append(f"| OS | {platform.system()} {platform.release()} ({platform.machine()}) |")
    return ["| | version |", "| --- | --- |", *rows]


def _fence(text: str, lang: str = "") -> list[str]:
    ticks = "````" if "```" in text else "```"
    return [f"{ticks}{lang}", text.rstrip("\n"), ticks]


def title(cause: Cause, impl: str, doc_versions: dict) -> str:
    entry = cause.representative
    version = doc_versions.get(impl.split(":")[-1]) or doc_versions.get("ray", "")
    words = re.sub(r"^\[\w+\] ", "", named_violation(entry))
    words = re.sub(r"\bop \d+ \((\w+) ?([\w.]*)\)", lambda m: f"{m.group(1)} {m.group(2)}".strip(),
                   words)
    return f"{impl} {version}: {words[:150]}".strip()


def body(cause: Cause, impl: str, doc_versions: dict, script_text: str | None,
         shrunk: str | None) -> str:
    """The Markdown issue body of one cause."""
    entry = cause.representative
    ev = entry.get("evidence") or {}
    out = [f"# {title(cause, impl, doc_versions)}", "",
           f"Found by the Ray lifecycle conformance suite: scenario `{entry['id']}` "
           f"ends `{entry['verdict']}`"
           + (f" (and {len(cause.entries) - 1} other scenario(s) with the same cause, listed "
              "below)." if len(cause.entries) > 1 else "."), "",
           "## Versions", "", *environment(doc_versions), "",
           "## Steps to reproduce", "",
           f"The scenario's operations: `{entry.get('ops', '')}`.", ""]
    if shrunk:
        out += [f"Shrunk to the operations that still fail the same way: `{shrunk}`.", ""]
    if script_text:
        out += ["A standalone script (Ray, torch, tensordict, gymnasium and the library only); "
                "each operation prints its outcome, and a hang dumps every thread's stack:", "",
                "<details><summary>repro.py</summary>", "", *_fence(script_text, "python"), "",
                "</details>", ""]
    out += ["## Expected and observed", ""]
    violations = ev.get("violations") or {}
    for oracle in entry.get("oracles") or list(violations):
        out += [f"- **Expected** (`{oracle}`): {contract_of(oracle)}",
                "  **Observed**:"] + [f"  - {m}" for m in (violations.get(oracle) or [])[:5]]
    out += ["", "## Evidence", "", "What the suite recorded, operation by operation:", "",
            *_fence("\n".join(ev.get("history") or []))]
    if ev.get("stack_dump"):
        out += ["", "Stack dump at the deadline:", "", *_fence(ev["stack_dump"][-4000:])]
    stderr = (ev.get("stderr_tail") or "").strip()
    if stderr:
        out += ["", "The driver's stderr (tail):", "", *_fence(stderr[-2500:])]
    out += ["", "## Rerun in the suite", "", *_fence(entry.get("repro", ""), "bash")]
    if len(cause.entries) > 1:
        out += ["", "## Same cause in", ""] + [
            f"- `{e['id']}` ({e['verdict']}: {', '.join(e.get('oracles') or [])})"
            for e in sorted(cause.entries, key=lambda e: e["id"]) if e is not entry]
    from conformance.repro.upstream_check import marker

    out += ["", marker(entry)]  # what `upstream --check` looks for in the script's output
    return "\n".join(out) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def _script_for(scenario, adapter, impl: str) -> str | None:
    from conformance.repro.script import ScriptError, generate

    try:
        return generate(scenario, adapter, impl_name=impl)
    except ScriptError:
        return None


def _minimal(entry: dict, impl: str, adapter, shrink: bool, log):
    """The scenario of ``entry``, shrunk when asked (a run per candidate), and
    its ops as text when shrinking removed any."""
    from conformance import catalog

    scenario = catalog.find(entry["id"])
    if not shrink:
        return scenario, None
    from conformance.repro.shrink import shrink_against

    log(f"shrinking {entry['id']} against {impl}")
    found = shrink_against(scenario, impl, adapter, log)
    if found.first["verdict"] != entry["verdict"] or len(found.small.ops) == len(scenario.ops):
        return scenario, None  # it did not fail the same way again: keep it whole
    return found.small, found.small.describe()


def write_all(doc: dict, impl: str, adapter, out_dir: str, shrink: bool, log=print) -> list[str]:
    """One body per cause of the report ``doc`` into ``out_dir``, and its index.
    The bodies of an earlier run (``NN-*.md``) go first: a cause that is gone
    or renamed leaves no stale body for ``--check`` to run. Other files stay."""
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        if BODY_NAME.match(name):
            os.remove(os.path.join(out_dir, name))
    written, index = [], ["# Findings to file upstream", "",
                          f"Generated by `python -m conformance upstream --report ... --impl "
                          f"{impl} --out-dir ...` from the report of {doc.get('generated', '?')}; "
                          "one issue body per cause (findings with the same verdict and the "
                          "same violation named, the earliest that is no duration over a bound, are "
                          "one cause), then one per rule broken only after another violation "
                          "(about that rule's violation, in the scenarios that break it). Never "
                          "edited by hand.", "",
                          "| # | cause | scenarios | body |", "| --- | --- | ---: | --- |"]
    withheld = withheld_in(out_dir)
    for n, cause in enumerate(causes(doc["scenarios"], withheld), 1):
        entry = cause.representative
        scenario, shrunk = _minimal(entry, impl, adapter, shrink, log)
        text = body(cause, impl, doc.get("versions") or {}, _script_for(scenario, adapter, impl),
                    shrunk)
        name = f"{n:02d}-{_slug(cause.key)}.md"
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
        written.append(name)
        index.append(f"| {n} | {cause.key.replace('|', '/')} | {len(cause.entries)} | "
                     f"[{name}]({name}) |")
    left = [(e, undecided(e)) for e in doc["scenarios"] if e["verdict"] in BAD and undecided(e)]
    if left:
        index += ["", "Not written: failures a busy machine alone may have made (rerun each alone: "
                  "its command):", ""]
        index += [f"- `{e['id']}`: {why}; `{e.get('repro') or 'python -m conformance repro ' + e['id']}`"
                  for e, why in left]
    held = [e for e in doc["scenarios"] if e["verdict"] in BAD and e["id"] in withheld]
    if held:
        index += ["", f"Not written: findings whose script, run alone in a fresh venv of the "
                  f"release, did not show them ({WITHHELD}, by hand from `--check`'s "
                  "CHECKED.md; rerun each in the suite: its command):", ""]
        index += [f"- `{e['id']}` ({e['verdict']}: {named_violation(e)}): {withheld[e['id']]}; "
                  f"`{e.get('repro') or 'python -m conformance repro ' + e['id']}`" for e in held]
    unknown = sorted(set(withheld) - {e["id"] for e in doc["scenarios"] if e["verdict"] in BAD})
    if unknown:
        log(f"upstream: {WITHHELD} names no finding of the report: {', '.join(unknown)}")
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(index) + "\n")
    return written


def main(args) -> int:
    from conformance.reports import report
    from conformance.adapters.registry import UsageError, load_adapter

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        adapter = load_adapter(args.impl)
        doc = report.load(args.report) if args.report else None
    except (UsageError, OSError, ValueError, KeyError) as exc:
        print(f"upstream: {exc}", file=sys.stderr)
        return 2
    if args.check:
        from conformance.repro.upstream_check import check_dir

        missed = check_dir(args.check, args.python, log, save=args.save_outputs,
                           replay=args.from_outputs, varies_from=args.varies_from)
        print(f"upstream --check: {missed} body(ies) whose script did not show the finding; "
              f"{os.path.join(args.check, 'CHECKED.md')}")
        return 1 if missed else 0
    if args.out_dir:
        if doc is None or args.scenario_id:
            print("upstream: --out-dir DIR writes every cause of --report R.json (no ID)",
                  file=sys.stderr)
            return 2
        try:
            names = write_all(doc, args.impl, adapter, args.out_dir, not args.no_shrink, log)
        except ValueError as exc:  # a malformed withheld.txt
            print(f"upstream: {exc}", file=sys.stderr)
            return 2
        print(f"upstream: {len(names)} issue bodies in {args.out_dir}")
        return 0
    if not args.scenario_id:
        print("upstream: name a scenario ID, or --report R.json --out-dir DIR", file=sys.stderr)
        return 2
    if doc is not None:
        entry = next((e for e in doc["scenarios"] if e["id"] == args.scenario_id), None)
        if entry is None:
            print(f"upstream: {args.scenario_id} is not in {args.report}", file=sys.stderr)
            return 2
        versions = doc.get("versions") or {}
    else:
        entry, versions = _run(args.scenario_id, args.impl, adapter)
    if entry["verdict"] not in BAD:
        print(f"upstream: {args.scenario_id} is {entry['verdict']} against {args.impl}: "
              "no finding to write", file=sys.stderr)
        return 1
    scenario, shrunk = _minimal(entry, args.impl, adapter, not args.no_shrink, log)
    text = body(Cause(cause_of(entry), [entry]), args.impl, versions,
                _script_for(scenario, adapter, args.impl), shrunk)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _run(scenario_id: str, impl: str, adapter) -> tuple[dict, dict]:
    """One run of the scenario now: its entry and the versions it ran with."""
    import tempfile

    from conformance import catalog
    from conformance.run.execute import run_scenario
    from conformance.run.execute import preload_modules
    from conformance.reports.report import versions
    from fixtures.session import SessionResources

    session = SessionResources(preload=preload_modules(adapter))
    try:
        with tempfile.TemporaryDirectory(prefix="rlc-upstream-") as workdir:
            entry = run_scenario(catalog.find(scenario_id), impl, adapter, session, workdir)
    finally:
        session.close()
    return entry, versions(adapter)
