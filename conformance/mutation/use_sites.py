"""Where a value made at import time is used: the lines that stand for a
mutant of it in the coverage map.

coverage.py records a line when it runs. A module's constant (``HELD_WAIT =
0.5``), a class attribute, a ``def``'s default arguments and its decorators
all run once, at import, in every process that imports ``impl``: the map
lists every scenario of the profile for them. A mutant there ran the
shortest of those, which for ``impl/resources.py``'s constants were
construction failures that never tear anything down (2026-11-28, full
profile: ``HELD_WAIT = -0.5`` passed six ``construction_failure`` scenarios
and fails ``resources_released_at_teardown`` in the first scenario that
tears a component down, ``defaults/multinode/user/evaluator``). What runs
the mutated value is what reads it: the lines that load the name, or the
body of the function whose header it is.
"""
from __future__ import annotations

import ast
from pathlib import Path

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _innermost(tree: ast.Module, line: int) -> tuple[ast.stmt | None, list]:
    """The innermost statement spanning ``line`` and its enclosing
    statements, outermost first."""
    chain: list = []
    body = tree.body
    found = None
    while True:
        here = next((s for s in body if _start(s) <= line <= (s.end_lineno or s.lineno)), None)
        if here is None:
            return found, chain[:-1] if chain else []
        chain.append(here)
        found = here
        inner = [b for f in ("body", "orelse", "finalbody", "handlers") for b in getattr(here, f, [])]
        if not inner or isinstance(here, _DEFS) and not _in_body(here, line):
            return found, chain[:-1]
        body = inner


def _start(stmt) -> int:
    """A statement's first line: its first decorator's, if it has any."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])


def _in_body(fn, line: int) -> bool:
    return any(_start(s) <= line <= (s.end_lineno or s.lineno) for s in fn.body)


def _body_lines(fn) -> set[int]:
    """The first line of each statement of ``fn``'s body but a docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                              ast.Constant):
        body = body[1:]
    return {s.lineno for s in body}


def _assigned_names(stmt) -> set[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _reads(tree: ast.Module, names: set[str], attributes: bool) -> set[int]:
    """Lines of ``tree`` that load one of ``names`` (as ``attributes`` too:
    ``self.name``, ``module.name``); a read in a ``def``'s header (a
    default) stands for that function's body."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            out.add(node.lineno)
        elif attributes and isinstance(node, ast.Attribute) and node.attr in names \
                and isinstance(node.ctx, ast.Load):
            out.add(node.lineno)
    for fn in ast.walk(tree):
        if isinstance(fn, _DEFS):
            header = {n for n in out if _start(fn) <= n < fn.body[0].lineno}
            if header:
                out = (out - header) | _body_lines(fn)
    return out


def use_lines(module: str, line: int, root: Path = Path()) -> dict[str, set[int]] | None:
    """``{module: lines}`` whose coverage stands for a mutant at ``line`` of
    ``module`` when that line runs at import time; None when it runs when
    its function is called (its own coverage says it all) or the file is
    not there. A module constant: the lines that read its name, in its
    module and, as an attribute, in the other modules of its package; a
    class attribute: the lines of its module that read it; a ``def``
    header (defaults, decorators): its body."""
    path = root / module
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text())
    stmt, outer = _innermost(tree, line)
    if stmt is None or any(isinstance(s, _DEFS) for s in outer):
        return None  # inside a function: runs when called
    if isinstance(stmt, _DEFS):
        return {module: _body_lines(stmt)}
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return None
    names = _assigned_names(stmt)
    in_class = any(isinstance(s, ast.ClassDef) for s in outer)
    own = _reads(tree, names, attributes=in_class) - set(range(stmt.lineno, stmt.end_lineno + 1))
    out = {module: own}
    if not in_class:
        for other in sorted(path.parent.glob("*.py")):
            if other != path:
                rel = str(other.relative_to(root))
                found = _reads(ast.parse(other.read_text()), names, attributes=True)
                if found:
                    out[rel] = found
    return out
