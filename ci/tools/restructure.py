"""Move the flat modules of ``conformance/`` into folders that show the
pipeline (issue #28, item 2; the layout and why: docs/layout.md).

    python ci/tools/restructure.py            # from the repository's root
    python ci/tools/restructure.py --dry-run  # say what it would do, change nothing
    python ci/tools/restructure.py --graph    # the import graph of conformance/'s rooms

It (1) ``git mv``s each module of LAYOUT into its folder (writing the
folder's ``__init__.py``), (2) rewrites every reference to a moved module in
the repository's tracked text files: imports (``from conformance import a, b``
is split per folder), dotted names in code, strings and docs
(``conformance.verbs``, ``python -m conformance.cleanup``, preload lists,
``monkeypatch`` targets), paths (``conformance/verbs.py``) and the lazy
command table of ``conformance/__main__.py``, and (3) checks the result: every
Python file still parses, no folder of ``conformance/`` reaches itself through
another (a circle), and no old name is left.

Run it again and it does nothing more (every step looks at the tree first).
It stops, changing nothing, when a module it expects is missing, when a
module it would move is in both places, or when ``conformance/`` holds a
module it has no place for (add it to LAYOUT or KEEP first; --allow-unplaced
leaves it where it is). Python standard library only.

Not rewritten on purpose: ``ci/results/`` (recorded evidence: stack traces
and findings name the modules as they were when measured), this script, and
docs/layout.md (it names the old paths). ``ci/catalog_dump.py`` must also run
against an older, flat checkout (ci/catalog-unchanged.sh), so its imports get
the new path with the flat one as a fallback.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

PKG = "conformance"

#: folder -> (what it holds, its modules). A module given as "old:new" is
#: renamed as it moves. Bottom of the pipeline first (docs/layout.md).
LAYOUT = {
    "ops": ("The operations a scenario is made of, and what a run of them records: "
            "targets, verbs, scenarios, budgets, the history, and what the driver "
            "watches while an op runs (threads, interrupts, Ray runtimes).",
            ["targets", "budgets", "verbs", "scenario", "history", "threads",
             "interrupts", "runtime_watch"]),
    "adapters": ("One adapter per implementation under test, the helpers of their "
                 "standalone-script snippets, and the registry that resolves --impl.",
                 ["snippets", "registry"]),
    "judge": ("Judging a recorded run: the oracles (pure functions over the history), "
              "their findings, the adapter's conventions, the verdict.",
              ["findings", "conventions", "oracles", "verdict"]),
    "cluster": ("What drivers leave on a cluster that outlives them, found and removed.",
                ["cleanup", "after_exit"]),
    "run": ("Running one scenario: the isolated driver (and its peer), the parent that "
            "starts it and turns the run into a result, a rerun alone, the CPU "
            "pressure meanwhile, the throughput benchmark.",
            ["driver", "peer", "execute", "load:cpu_pressure", "rerun", "bench"]),
    "reports": ("Results of many runs: the JSON report, claims, known failures, the "
                "ruling and the gate, the summary, shards and their merge, the matrix, "
                "drift against a committed report.",
                ["report", "claims", "known_failures", "varies", "ruling", "summary",
                 "gate", "shard", "merge", "matrix", "write_known_failures", "compare"]),
    "repro": ("A failure reproduced outside the suite: the scenario shrunk, a "
              "standalone script, an issue body, checked alone.",
              ["shrink", "script", "upstream", "upstream_check"]),
    "releases": ("The suite over the library's releases: cached environments, the "
                 "verdict matrix over releases, the bisection.",
                 ["venvs", "releases", "bisection"]),
}

#: modules that stay at conformance/'s top: the ways in (CLI, pytest, a Ray
#: job), the adapter contract forks import, and the environments whose ids
#: ("conformance.envs:RlcSlowCartPole-v0") are part of every scenario's spec
KEEP = {"__init__", "__main__", "plugin", "conftest", "test_lifecycle", "job",
        "adapter", "envs"}
#: sub-packages that stay as they are
KEEP_PACKAGES = {"catalog", "adapters", "mutation"}

#: test files renamed with their module
TEST_RENAMES = {"tests/conformance/test_load.py": "tests/conformance/test_cpu_pressure.py"}

#: never rewritten (see the docstring)
SKIP_PREFIXES = ("ci/results/",)
SKIP_FILES = {"ci/tools/restructure.py", "docs/layout.md"}
#: files that must also import from a flat checkout: new import, flat fallback
FLAT_COMPAT = {"ci/catalog_dump.py"}

#: a test appended to tests/conformance/test_structure.py: the folders stay a DAG
STRUCTURE_TEST = "tests/conformance/test_structure.py"
FOLDER_TEST_NAME = "test_no_import_cycle_among_the_folders_of_conformance"
FOLDER_TEST = '''

def conformance_rooms(graph: dict) -> dict:
    """The import graph of conformance/'s rooms: each folder (``conformance.run``)
    and each module at the top (``conformance.plugin``) is one node."""
    def room(name):
        return ".".join(name.split(".")[:2])
    rooms = {}
    for name, deps in graph.items():
        if name.startswith("conformance."):
            mine = rooms.setdefault(room(name), set())
            for dep in deps:
                if dep.startswith("conformance.") and room(dep) != room(name):
                    mine.add(room(dep))
                    rooms.setdefault(room(dep), set())
    return rooms


def FOLDER_TEST_NAME():
    """The folders of conformance/ show the pipeline one way (docs/layout.md):
    no folder reaches itself through another."""
    assert cycles(conformance_rooms(import_graph())) == []


def test_the_room_graph_puts_a_folder_s_modules_in_one_room():
    graph = {"conformance.up.a": {"conformance.down.b", "fixtures.gcs"},
             "conformance.down.b": {"conformance.up.c"},
             "conformance.up.c": set(), "conformance.top": {"conformance.up.a"}}
    rooms = conformance_rooms(graph)
    assert rooms == {"conformance.up": {"conformance.down"},
                     "conformance.down": {"conformance.up"},
                     "conformance.top": {"conformance.up"}}
    assert cycles(rooms) == [["conformance.down", "conformance.up"]]
'''.replace("FOLDER_TEST_NAME", FOLDER_TEST_NAME)


class Refused(SystemExit):
    def __init__(self, text: str):
        super().__init__(f"restructure: {text}")


def moves() -> dict:
    """{old module name: (folder, new module name)}"""
    out = {}
    for folder, (_, mods) in LAYOUT.items():
        for m in mods:
            old, _, new = m.partition(":")
            out[old] = (folder, new or old)
    return out


MOVES = moves()


def sh(*cmd, root: Path) -> str:
    return subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------- the plan

def plan(root: Path, allow_unplaced: bool) -> list:
    """The moves still to do, [(old path, new path)]; refuses a tree it cannot read."""
    pkg = root / PKG
    if not (pkg / "__main__.py").is_file():
        raise Refused(f"run me from the repository's root ({pkg}/__main__.py not found)")
    todo, problems = [], []
    for old, (folder, new) in MOVES.items():
        src, dst = pkg / f"{old}.py", pkg / folder / f"{new}.py"
        if src.exists() and dst.exists():
            problems.append(f"{src.relative_to(root)} and {dst.relative_to(root)} both exist")
        elif src.exists():
            todo.append((src, dst))
        elif not dst.exists():
            problems.append(f"expected module {PKG}/{old}.py is missing (nor is it at "
                            f"{PKG}/{folder}/{new}.py): has it been renamed? mend LAYOUT")
    for name in KEEP:
        if not (pkg / f"{name}.py").exists():
            problems.append(f"{PKG}/{name}.py (kept at the top) is missing: mend KEEP")
    for folder in LAYOUT:
        clash = pkg / f"{folder}.py"
        if clash.exists() and folder not in MOVES:
            problems.append(f"{clash.relative_to(root)} would clash with the folder {folder}/")
    unplaced = sorted(p.name for p in pkg.glob("*.py")
                      if p.stem not in MOVES and p.stem not in KEEP)
    unplaced += sorted(p.name + "/" for p in pkg.iterdir()
                       if p.is_dir() and (p / "__init__.py").exists()
                       and p.name not in LAYOUT and p.name not in KEEP_PACKAGES)
    if unplaced and not allow_unplaced:
        problems.append(f"no place for {', '.join(unplaced)} in conformance/: add it to "
                        "LAYOUT (a folder) or KEEP (the top), or pass --allow-unplaced")
    for test_old, test_new in TEST_RENAMES.items():
        if (root / test_old).exists() and (root / test_new).exists():
            problems.append(f"{test_old} and {test_new} both exist")
    for src, _ in todo:  # a module that finds files from __file__: can it move?
        try:
            fix_file_paths(src.read_text(), str(src.relative_to(root)))
        except Refused as exc:
            problems.append(str(exc.code).removeprefix("restructure: "))
    if problems:
        raise Refused("nothing changed:\n  " + "\n  ".join(problems))
    if unplaced:
        print(f"left at the top of conformance/ (--allow-unplaced): {', '.join(unplaced)}")
    todo += [(root / a, root / b) for a, b in TEST_RENAMES.items() if (root / a).exists()]
    return todo


# ------------------------------------------------------------- the rewrite

def _alternatives(names) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


def _members(folder: str) -> set:
    return {new for f, new in MOVES.values() if f == folder}


def dotted_pattern() -> re.Pattern:
    """``conformance.verbs`` / ``conformance/verbs``: a moved module named from
    the package's root. Not ``tests/conformance/...`` nor a path of another
    tree; not the package-qualified name of a folder's own module, so that a
    second run changes nothing (``conformance.releases.venvs``)."""
    guards = ""
    for old in MOVES:
        if old in LAYOUT:  # an old module named like a new folder (releases)
            inside = _alternatives(_members(old))
            guards += (rf"(?!(?<=[./]{re.escape(old)})(?:[./](?:{inside})\b|/(?!\w)"
                       rf"| import (?:{inside})\b))")
    return re.compile(rf"(?<![\w./\-]){PKG}(?P<sep>[./])(?P<old>{_alternatives(MOVES)})"
                      rf"(?![\w]){guards}")


DOTTED = dotted_pattern()


def _dotted_sub(m: re.Match) -> str:
    folder, new = MOVES[m["old"]]
    return f"{PKG}{m['sep']}{folder}{m['sep']}{new}"


def rewrite_from_imports(text: str, path: str) -> str:
    """``from conformance import a, b as c`` with a moved: one statement per
    package, each name bound as before (a renamed module keeps its old name)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text  # not Python 3 source (a template, a snippet): the regex pass only
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if any(a.name in MOVES for a in node.names) or (node.module or "") in MOVES:
                raise Refused(f"{path}:{node.lineno}: a relative import of a moved module: "
                              "write it absolute first")
            continue
        if node.module != PKG or not any(a.name in MOVES for a in node.names):
            continue
        first, last = node.lineno - 1, node.end_lineno - 1
        head, tail = lines[first][:node.col_offset], lines[last][node.end_col_offset:]
        if head.strip() or (tail.strip() and not tail.strip().startswith("#")):
            raise Refused(f"{path}:{node.lineno}: an import sharing its line with other "
                          "code; split it first")
        groups = {}
        for a in node.names:
            if a.name in MOVES:
                folder, new = MOVES[a.name]
                bound = a.asname or (a.name if new != a.name else None)
                groups.setdefault(f"{PKG}.{folder}", []).append(
                    new + (f" as {bound}" if bound else ""))
            else:
                groups.setdefault(PKG, []).append(a.name + (f" as {a.asname}" if a.asname else ""))
        comment = tail.strip()
        new_lines = [f"{head}from {mod} import {', '.join(names)}\n" for mod, names in groups.items()]
        if comment:
            new_lines[0] = new_lines[0][:-1] + "  " + comment + "\n"
        if not lines[last].endswith("\n"):
            new_lines[-1] = new_lines[-1][:-1]
        edits.append((first, last, new_lines))
    for first, last, new_lines in sorted(edits, reverse=True):
        lines[first:last + 1] = new_lines
    return "".join(lines)


FROM_PKG = re.compile(rf"(?P<line>^[ \t]*)?(?:(?<![\w.])|(?<=\\n))from {PKG} import "
                      r"(?P<names>\w+(?: as \w+)?(?:, *\w+(?: as \w+)?)*)", re.M)


def _from_pkg_sub(m: re.Match) -> str:
    """``from conformance import a, b`` inside a string or a doc (the code a
    test hands to ``python -c``): one statement per package, on lines of
    their own where it stood on its own line, else joined by ``; ``."""
    names = [n.strip().partition(" as ") for n in m["names"].split(",")]
    if not any(old in MOVES for old, _, _ in names):
        return m[0]
    groups = {}
    for old, _, alias in names:
        if old in MOVES:
            folder, new = MOVES[old]
            bound = alias or (old if new != old else "")
            groups.setdefault(f"{PKG}.{folder}", []).append(new + (f" as {bound}" if bound else ""))
        else:
            groups.setdefault(PKG, []).append(old + (f" as {alias}" if alias else ""))
    indent = m["line"]
    stmts = [f"from {mod} import {', '.join(n)}" for mod, n in groups.items()]
    return (indent + ("\n" + indent).join(stmts)) if indent is not None else "; ".join(stmts)


BARE = re.compile(rf"`(?P<old>{_alternatives(MOVES)})\.py`")
#: set by main: moved module names another tracked file also bears (impl/bench.py)
AMBIGUOUS: set = set()


def _bare_sub(line: str, path: str) -> str:
    """```execute.py``` in a Markdown page (docs/design.md walks the modules by
    their bare names): ```run/execute.py```. A name another file bears too is
    left where the line speaks of ``impl`` or ``mutation``."""
    def sub(m):
        if m["old"] in AMBIGUOUS and re.search(r"impl|mutation", line):
            print(f"left as it is (ambiguous): {path}: {line.strip()}")
            return m[0]
        folder, new = MOVES[m["old"]]
        return f"`{folder}/{new}.py`"
    return BARE.sub(sub, line)


#: the README's Layout block: the lines of conformance/ (docs/layout.md has more)
README_LAYOUT = """\
conformance/            the suite, in the order of its pipeline (docs/layout.md)
  ops/                  the operations (verbs), the scenario, the history they record
  catalog/              the scenarios, by family (data)
  adapters/             reference, torchrl, rllib, tianshou, regression variants
  run/                  the driver that runs a scenario into a history, and its parent
  judge/                the oracles over a history, the findings, the verdict
  cluster/              what drivers leave on a cluster, removed
  reports/              reading and deciding reports: summary, ruling, gate, shards, matrix
  repro/                a failure shrunk, scripted and written up for a library
  releases/             the suite over a library's releases (bisect, matrix)
  mutation/             mutation analysis of impl/
  adapter.py, envs.py   the adapter contract; the environments scenarios name
  plugin.py, test_lifecycle.py          the pytest edge: one test per scenario
  __main__.py, job.py   the CLI (python -m conformance); the suite as a Ray job
"""


def rewrite_readme_layout(text: str) -> str:
    """The conformance/ lines of README.md's ``## Layout`` block, when they
    still name a moved module; else the text as it is (a warning if none)."""
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, ln in enumerate(lines) if re.match(rf"{PKG}/\s", ln)
                     and any(x.startswith("## Layout") for x in lines[:i]))
    except StopIteration:
        print("warning: README.md has no conformance/ line under ## Layout: update it by hand")
        return text
    end = start + 1
    while end < len(lines) and lines[end].startswith((" ", "\t")):
        end += 1
    if not re.search(rf"\b(?:{_alternatives(MOVES)})\.py\b", "".join(lines[start:end])):
        return text
    return "".join(lines[:start]) + README_LAYOUT + "".join(lines[end:])


LAZY = re.compile(r'_lazy\("(?P<old>\w+)"\)')


def rewrite_text(text: str, path: str) -> str:
    if path.endswith(".py"):
        text = rewrite_from_imports(text, path)
    text = FROM_PKG.sub(_from_pkg_sub, text)
    text = DOTTED.sub(_dotted_sub, text)
    if path == f"{PKG}/__main__.py":  # _lazy("gate"): import_module(f"conformance.{module}")
        text = LAZY.sub(lambda m: (f'_lazy("{".".join(MOVES[m["old"]])}")'
                                   if m["old"] in MOVES else m[0]), text)
    for test_old, test_new in TEST_RENAMES.items():
        text = re.sub(rf"(?<![\w/]){re.escape(test_old)}", test_new, text)
    if path == "README.md":
        text = rewrite_readme_layout(text)
    if path.endswith(".md"):
        text = "".join(_bare_sub(ln, path) for ln in text.splitlines(keepends=True))
    return text


COMPAT_NOTE = "# conformance/ in folders; the flat fallback: ci/catalog-unchanged.sh"


def rewrite_flat_compat(text: str, path: str) -> str:
    """Each top-level import of a moved module: the new import, the flat one
    as the fallback."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        first, last = node.lineno - 1, node.end_lineno - 1
        old = "".join(lines[first:last + 1])
        new = rewrite_text(old, path)
        if new != old:
            edits.append((first, last, ["try:  " + COMPAT_NOTE + "\n"]
                          + ["    " + ln for ln in new.splitlines(keepends=True)]
                          + ["except ImportError:\n"]
                          + ["    " + ln for ln in old.splitlines(keepends=True)]))
    for first, last, new_lines in sorted(edits, reverse=True):
        lines[first:last + 1] = new_lines
    return "".join(lines)


#: a moved module one folder deeper: its way up to the root grows by one step
PARENTS = re.compile(r"(Path\(__file__\)(?:\.resolve\(\)|\.absolute\(\))?\.parents\[)(\d+)\]")
DIRNAME = re.compile(r"(?<=dirname\()os\.path\.(?:abspath|realpath)\(__file__\)")


def fix_file_paths(text: str, path: str) -> str:
    """A moved module that finds the repository from ``__file__``."""
    out = PARENTS.sub(lambda m: f"{m[1]}{int(m[2]) + 1}]", text)
    out = DIRNAME.sub(lambda m: f"os.path.dirname({m[0]})", out)
    handled = len(PARENTS.findall(out)) + len(DIRNAME.findall(out))
    if len(re.findall(r"(?<![\w.])__file__", out)) != handled:
        raise Refused(f"{path}: uses __file__ in a way this script cannot follow when the file "
                      "moves one folder deeper (a sibling file?); mend it by hand, then rerun")
    return out


def compat_fallbacks(text: str) -> set:
    """Line numbers of the flat fallbacks that rewrite_flat_compat wrote."""
    lines = text.splitlines()
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Try) and COMPAT_NOTE in lines[node.lineno - 1]:
            for h in node.handlers:
                out |= set(range(h.body[0].lineno, h.body[-1].end_lineno + 1))
    return out


def unignore(root: Path, folder: str) -> None:
    """A folder that a .gitignore pattern hides (``reports/`` hides
    conformance/reports/): re-include it, so that files added there later are
    not silently left out of commits."""
    probe = f"{folder}/__init__.py"
    if subprocess.run(["git", "check-ignore", "-q", probe], cwd=root).returncode != 0:
        return
    text = (root / ".gitignore").read_text() if (root / ".gitignore").exists() else ""
    with open(root / ".gitignore", "a") as f:
        f.write("\n" if text and not text.endswith("\n") else "")
        f.write(f"# a folder of code, not a run's reports (docs/layout.md)\n!/{folder}/\n")
    if subprocess.run(["git", "check-ignore", "-q", probe], cwd=root).returncode == 0:
        raise Refused(f"{folder}/ stays ignored by git after un-ignoring it in .gitignore: "
                      f"see git check-ignore -v {probe}")
    sh("git", "add", ".gitignore", root=root)


def text_files(root: Path) -> list:
    out = []
    for rel in sh("git", "ls-files", "-z", root=root).split("\0"):
        if not rel or rel in SKIP_FILES or rel.startswith(SKIP_PREFIXES):
            continue
        p = root / rel
        if p.is_symlink() or not p.is_file():
            continue
        data = p.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append(rel)
    return out


# ------------------------------------------------------------ the checks

def structure_test(root: Path):
    """tests/conformance/test_structure.py, loaded from ``root``: its import
    graph (lazy imports included) and its cycle finder are the ones the
    checks here use."""
    sys.path.insert(0, str(root))
    try:
        spec = importlib.util.spec_from_file_location("rlc_structure", root / STRUCTURE_TEST)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(root))
    return module


def rooms(graph: dict) -> dict:
    """Each folder of conformance/ and each top module as one room."""
    def room(n):
        return ".".join(n.split(".")[:2])
    out = {}
    for name, deps in graph.items():
        if not name.startswith(PKG + "."):
            continue
        mine = out.setdefault(room(name), set())
        mine |= {room(d) for d in deps if d.startswith(PKG + ".") and room(d) != room(name)}
    return out


def floors(graph: dict, cycles) -> dict:
    """{room: floor}: floor 1 imports nothing, a room stands above all it
    imports; the rooms of one circle share a floor."""
    same = {v: tuple(c) for c in cycles(graph) for v in c}
    memo = {}

    def floor(n):
        key = same.get(n, (n,))
        if key not in memo:
            memo[key] = 0  # a circle's own arrows do not lift it
            memo[key] = 1 + max((floor(d) for m in key for d in graph.get(m, ())
                                 if d not in key), default=0)
        return memo[key]
    return {n: floor(n) for n in graph}


def report_graph(root: Path) -> bool:
    structure = structure_test(root)
    r = rooms(structure.import_graph())
    f = floors(r, structure.cycles)
    arrows = sum(len(d) for d in r.values())
    circled = structure.cycles(r)
    top = max(f.values(), default=0)
    print(f"conformance/: {len(r)} rooms (folders and top modules), {arrows} arrows between "
          f"them, {top} floors, {len(circled)} circles {circled or ''}")
    for n in sorted(r, key=lambda n: (-f[n], n)):
        print(f"  floor {f[n]:>2}  {n[len(PKG) + 1:]:<22} -> "
              + " ".join(sorted(d[len(PKG) + 1:] for d in r[n])))
    return not circled


def check(root: Path, files: list) -> list:
    problems = []
    for rel in files:
        if rel.endswith(".py"):
            try:
                ast.parse((root / rel).read_text())
            except SyntaxError as exc:
                problems.append(f"{rel}: does not parse after the rewrite: {exc}")
        text = (root / rel).read_text()
        skip = compat_fallbacks(text) if rel in FLAT_COMPAT else set()
        left = [m[0] for i, ln in enumerate(text.splitlines(), 1) if i not in skip
                for m in list(DOTTED.finditer(ln)) + [
                    f for f in FROM_PKG.finditer(ln) if _from_pkg_sub(f) != f[0]]]
        if left:
            problems.append(f"{rel}: still names {sorted(set(left))}")
    if not report_graph(root):
        problems.append("the folders of conformance/ import each other in a circle")
    return problems


# ------------------------------------------------------------------ main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    ap.add_argument("--graph", action="store_true",
                    help="print the import graph of conformance/'s rooms and stop")
    ap.add_argument("--allow-unplaced", action="store_true",
                    help="leave a module LAYOUT does not place at the top, instead of stopping")
    args = ap.parse_args(argv)
    root = Path.cwd()
    if args.graph:
        return 0 if report_graph(root) else 1
    todo = plan(root, args.allow_unplaced)
    tracked = sh("git", "ls-files", root=root).splitlines()
    AMBIGUOUS.update(old for old, (folder, new) in MOVES.items()
                     if any(Path(t).name in (f"{old}.py", f"{new}.py")
                            and t not in (f"{PKG}/{old}.py", f"{PKG}/{folder}/{new}.py")
                            and not t.startswith(SKIP_PREFIXES) for t in tracked))
    for src, dst in todo:
        print(f"git mv {src.relative_to(root)} {dst.relative_to(root)}")
    if args.dry_run:
        changed = [rel for rel in text_files(root)
                   if rewrite_text((root / rel).read_text(), rel) != (root / rel).read_text()]
        print(f"would rewrite {len(changed)} files: {' '.join(changed)}")
        return 0
    for folder, (says, _) in LAYOUT.items():
        init = root / PKG / folder / "__init__.py"
        unignore(root, f"{PKG}/{folder}")
        if not init.exists():
            init.parent.mkdir(exist_ok=True)
            init.write_text(textwrap.fill(f'"""{says}"""', 79) + "\n")  # no imports
        sh("git", "add", str(init.relative_to(root)), root=root)
    moved = set()
    for src, dst in todo:
        sh("git", "mv", str(src.relative_to(root)), str(dst.relative_to(root)), root=root)
        if dst.parent != src.parent:
            moved.add(str(dst.relative_to(root)))
    files = text_files(root)
    changed = []
    for rel in files:
        p = root / rel
        before = p.read_text()
        after = (rewrite_flat_compat(before, rel) if rel in FLAT_COMPAT
                 else rewrite_text(before, rel))
        if rel in moved:
            after = fix_file_paths(after, rel)
        if rel == STRUCTURE_TEST and FOLDER_TEST_NAME not in after:
            after = after.rstrip("\n") + "\n" + FOLDER_TEST
        if after != before:
            p.write_text(after)
            changed.append(rel)
    if changed:  # staged with the moves: `git diff --cached` shows the whole change
        sh("git", "add", "--", *changed, root=root)
    print(f"moved {len(todo)} files; rewrote {len(changed)} files")
    problems = check(root, files)
    if problems:
        print("restructure: check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print("check: every file parses, no old module name is left, no circle among the folders")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
