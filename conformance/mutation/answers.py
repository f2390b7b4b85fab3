"""``answers.txt`` kept in step with the survivors of a new analysis.

    python -m conformance mutate answers [--profile quick] [--previous OLD.json] [--write]

Every survivor gets exactly one answer (``report``: ``killed since by
scenario X`` / ``equivalent because ...`` / ``open ...``). After an
analysis is run again (``impl/`` changed, so the keys, which are positions,
moved), each survivor's answer is found as follows:

1. **the same key's answer**, when that survivor's diff is the one the
   answer was written for (``--previous``: the results it was written
   against; by default the mutants file as last committed);
2. **carried by its diff**: an answer written for a survivor of
   ``--previous`` whose change (its diff without line numbers, in the same
   module) is this one's, and no other's on either side: the same change
   to the same code, moved;
3. **the run's own state**, never a judgement: a first-pass (shallow)
   survivor says which scenarios are still to run (``--deep``); a mutant of
   lines no scenario of the profile executes says which function no
   scenario runs.

What is left needs reading: it is listed, not answered (the CI test
``test_every_survivor_has_exactly_one_answer`` fails until it is).
Answers of mutants that no longer survive are dropped. ``--write``
rewrites ``answers.txt`` (its comment header kept); without it the new
file is printed.
"""
from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

from conformance.mutation.report import change_of as body, load_answers
from conformance.mutation.distributor import SHALLOW

UNCOVERED = "survived: no scenario of the profile executes these lines"


@functools.lru_cache(maxsize=None)
def measured_source(root: Path, module: str) -> str:
    """``module``'s text as the committed results measured it: from the
    ``impl/`` tree their provenance names (``score.json``), read with git;
    today's file where no provenance says or git does not have that tree.
    A survivor's line number is of that tree: read against today's file, it
    named the function that moved there since."""
    score = root / "ci" / "results" / "mutation" / "score.json"
    trees = {p.get("provenance", {}).get("impl_tree")
             for p in (json.loads(score.read_text()).values() if score.exists() else ())}
    for tree in sorted(t for t in trees if t):
        inside = Path(module).relative_to("impl").as_posix()
        done = subprocess.run(["git", "show", f"{tree}:{inside}"], cwd=root,
                              capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout
    return (root / module).read_text()


def function_at(module: str, line: int, root: Path) -> str:
    """``Class.method`` (or ``function``) whose body holds ``line`` of
    ``module`` (as the results measured it: ``measured_source``)."""
    best, best_span = "module level", None
    tree = ast.parse(measured_source(root, module))

    def visit(node, prefix):
        nonlocal best, best_span
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if child.lineno <= line <= child.end_lineno and not isinstance(child, ast.ClassDef):
                    span = child.end_lineno - child.lineno
                    if best_span is None or span <= best_span:
                        best, best_span = name, span
                visit(child, f"{name}.")
    visit(tree, "")
    return best


def drafted(row: dict, root: Path) -> str | None:
    """The answer the run's own state gives (a shallow or an uncovered
    survivor), or None: it needs reading."""
    first = (row.get("output") or "").splitlines()[0] if row.get("output") else ""
    if first.startswith(SHALLOW):
        m = re.match(r"survived-shallow: (\d+) of (\d+)", first)
        ran, of = (m.group(1), m.group(2)) if m else ("?", "?")
        return (f"open [mut]: a shallow survivor ({ran} of {of} covering scenarios passed in the "
                "first pass); `mutate run --deep` runs the rest")
    if first.startswith(UNCOVERED):
        where = function_at(row["module"], row["line"], root)
        return (f"open [uncovered]: no scenario of the profile runs this line of {where} "
                f"({row['module']}:{row['line']}); a scenario that does would judge it")
    return None


def answer_all(rows: list[dict], answers: dict, previous: list[dict] | None,
               root: Path) -> tuple[dict, list[str], dict]:
    """``({key: answer} for every survivor that has one, [keys left to
    read], {how: count})``."""
    from collections import Counter

    old = {r["key"]: r for r in previous or []}
    new_changes = Counter((r["module"], body(r.get("diff") or "")) for r in rows if r["outcome"] == "survived")
    old_changes = Counter((r["module"], body(r["diff"])) for k, r in old.items()
                          if k in answers and r.get("diff"))
    by_change = {}
    for key, answer in answers.items():
        r = old.get(key)
        change = (r["module"], body(r["diff"])) if r is not None and r.get("diff") else None
        if change and old_changes[change] == 1 and new_changes[change] == 1:  # one mutant each side
            by_change[change] = answer
    out, unread, how = {}, [], {"same key": 0, "carried by its diff": 0, "drafted": 0}
    for row in rows:
        if row["outcome"] != "survived":
            continue
        key, change = row["key"], (row["module"], body(row.get("diff") or ""))
        same = key in answers and (previous is None or (
            key in old and body(old[key].get("diff") or "") == change[1]))
        if same and not _stale_state(answers[key], row, root):
            out[key], how["same key"] = answers[key], how["same key"] + 1
        elif change in by_change and not _stale_state(by_change[change], row, root):
            out[key], how["carried by its diff"] = by_change[change], how["carried by its diff"] + 1
        elif drafted(row, root):
            out[key], how["drafted"] = drafted(row, root), how["drafted"] + 1
        else:
            unread.append(key)
    return out, unread, how


def _stale_state(answer: str, row: dict, root: Path) -> bool:
    """An answer that states a run's state (a shallow or an uncovered
    survivor's) other than this run's: written again from the run. One that
    states this run's and goes on (a reading appended to it: "...; read
    2026-11-27, not run deeper: [...]") is kept whole."""
    stated = "a shallow survivor" in answer or answer.startswith("open [uncovered]")
    state = drafted(row, root)
    return stated and (state is None or not answer.startswith(state))


def write(path: Path, answers: dict) -> str:
    """``answers.txt``'s text: its comment header, then one line per survivor."""
    header = [line for line in path.read_text().splitlines() if line.startswith("#")] \
        if path.exists() else []
    return "\n".join(header + [f"{k}  {a}" for k, a in sorted(answers.items())]) + "\n"


def committed(root: Path, profile: str) -> list[dict] | None:
    """The mutants file as last committed (what answers.txt was written
    against when the results were committed with it), or None."""
    done = subprocess.run(["git", "show", f"HEAD:ci/results/mutation/mutants-{profile}.json"],
                          cwd=root, capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else None


def main(args, results: Path, root: Path) -> int:
    rows = json.loads((results / f"mutants-{args.profile}.json").read_text())
    path = results / "answers.txt"
    previous = json.loads(Path(args.previous).read_text()) if args.previous else committed(root, args.profile)
    answered, unread, how = answer_all(rows, load_answers(path), previous, root)
    text = write(path, answered)
    if args.write:
        path.write_text(text)
    else:
        print(text, end="")
    print(f"mutate answers: {len(answered)} survivors answered ("
          + ", ".join(f"{v} {k}" for k, v in how.items()) + f"); {len(unread)} left to read"
          + (":" if unread else ""), file=sys.stderr)
    for key in unread:
        print(f"  {key}", file=sys.stderr)
    return 0
