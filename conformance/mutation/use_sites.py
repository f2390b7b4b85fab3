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

Where that cannot be told from the source (a value read only at import
itself, as by a class decorator; an assignment to an attribute or an item;
no read found), ``use_lines`` answers None and the line stands for itself,
as before.
"""
from __future__ import annotations

import ast
from pathlib import Path

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _start(stmt) -> int:
    """A statement's first line: its first decorator's, if it has any."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])


def _spans(stmt, line: int) -> bool:
    return _start(stmt) <= line <= (stmt.end_lineno or stmt.lineno)


def _innermost(tree: ast.Module, line: int) -> tuple[ast.stmt | None, list]:
    """The innermost statement spanning ``line`` and its enclosing
    statements, outermost first."""
    chain: list = []
    body = tree.body
    found = None
    while True:
        here = next((s for s in body if _spans(s, line)), None)
        if here is None:
            return found, chain[:-1] if chain else []
        chain.append(here)
        found = here
        inner = [b for f in ("body", "orelse", "finalbody", "handlers") for b in getattr(here, f, [])]
        if not inner or isinstance(here, _DEFS) and not any(_spans(s, line) for s in here.body):
            return found, chain[:-1]
        body = inner


def _runs_when_called(tree: ast.Module, line: int) -> bool:
    """``line`` is inside a function's body: it runs when the function is
    called, not at import."""
    stmt, outer = _innermost(tree, line)
    return any(isinstance(s, _DEFS) for s in [*outer, stmt]) and not (
        isinstance(stmt, _DEFS) and not any(_spans(s, line) for s in stmt.body))


def _body_lines(fn) -> set[int]:
    """The first line of each statement of ``fn``'s body but a docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                              ast.Constant):
        body = body[1:]
    return {s.lineno for s in body}


def _assigned_names(stmt) -> set[str] | None:
    """The names ``stmt`` binds, or None when a target is no plain name
    (``ray.shutdown = ...``, ``os.environ[k] = ...``)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = set()
    for t in targets:
        parts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for p in parts:
            p = p.value if isinstance(p, ast.Starred) else p
            if not isinstance(p, ast.Name):
                return None
            names.add(p.id)
    return names


def _header_to_body(tree: ast.Module, lines: set[int]) -> set[int]:
    """A read in a ``def``'s header (a default) stands for that function's body."""
    for fn in ast.walk(tree):
        if isinstance(fn, _DEFS):
            header = {n for n in lines if _start(fn) <= n < fn.body[0].lineno}
            if header:
                lines = (lines - header) | _body_lines(fn)
    return lines


def _name_loads(tree: ast.Module, names: set[str]) -> set[int]:
    """Lines of ``tree`` that load one of ``names`` as a plain name."""
    return {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names
            and isinstance(n.ctx, ast.Load)}


def _attribute_loads(tree: ast.Module, names: set[str], bases: set[str] | None = None) -> set[int]:
    """Lines of ``tree`` that load ``x.name`` for a name of ``names``: any
    ``x`` (``bases`` None: a class attribute, read as ``self.name``, by a
    base class too), or ``x`` one of ``bases`` (the names bound to the
    module defining it)."""
    return {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in names
            and isinstance(n.ctx, ast.Load)
            and (bases is None or isinstance(n.value, ast.Name) and n.value.id in bases)}


def _imported(tree: ast.Module, module: str, names: set[str]) -> tuple[set[str], set[str]]:
    """What ``tree`` binds of ``module`` (``impl.resources``): the local names
    of ``from impl.resources import NAME [as alias]`` for NAME in ``names``,
    and the names bound to the module itself (``from impl import
    resources [as r]``, ``import impl.resources as r``)."""
    package, _, leaf = module.rpartition(".")
    aliases, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == module:
            aliases |= {a.asname or a.name for a in node.names if a.name in names}
        elif isinstance(node, ast.ImportFrom) and node.module == package:
            modules |= {a.asname or a.name for a in node.names if a.name == leaf}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == module and a.asname}
    return aliases, modules


def _at_run_time(tree: ast.Module, lines: set[int]) -> set[int]:
    return {n for n in lines if _runs_when_called(tree, n)}


def use_lines(module: str, line: int, root: Path = Path(), source: str | None = None
              ) -> dict[str, set[int]] | None:
    """``{module: lines}`` whose coverage stands for a mutant at ``line`` of
    ``module`` when that line runs at import time; None when it runs when
    its function is called (its own coverage says it all), when the value's
    uses cannot be told (see the module's docstring), or when the file is
    not there. ``source``: the module's text (the unmutated one, when a
    mutant is on disk: a mutant may move lines). A module constant: the
    lines that read it, in its module and in the package's modules that
    import it or the module; a class attribute: the ``x.name`` reads of the
    package; a ``def`` header (defaults, decorators): its body."""
    path = root / module
    if source is None:
        if not path.is_file():
            return None
        source = path.read_text()
    tree = ast.parse(source)
    stmt, outer = _innermost(tree, line)
    if stmt is None or any(isinstance(s, _DEFS) for s in outer):
        return None  # inside a function: runs when called
    if isinstance(stmt, _DEFS):
        body = _body_lines(stmt)
        return {module: body} if body else None
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return None
    names = _assigned_names(stmt)
    if not names:
        return None
    in_class = any(isinstance(s, ast.ClassDef) for s in outer)
    dotted = module[:-3].replace("/", ".")
    own = (_attribute_loads(tree, names) if in_class else _name_loads(tree, names)) \
        - set(range(stmt.lineno, stmt.end_lineno + 1))
    out = {module: _at_run_time(tree, _header_to_body(tree, own))}
    for other in sorted(path.parent.glob("*.py")) if path.parent.is_dir() else []:
        if other == path:
            continue
        theirs = ast.parse(other.read_text())
        if in_class:
            found = _attribute_loads(theirs, names)
        else:
            aliases, modules = _imported(theirs, dotted, names)
            found = _name_loads(theirs, aliases) | _attribute_loads(theirs, names, modules)
        found = _at_run_time(theirs, _header_to_body(theirs, found))
        if found:
            out[str(other.relative_to(root))] = found
    out = {m: lines for m, lines in out.items() if lines}
    return out or None
