"""The code's structure: no import cycle among the project's modules, lazy
imports (inside functions) included, and the layering impl <- fixtures <-
conformance (pytest only at the edge)."""
import ast
import pathlib

from fixtures.rayenv import REPO_ROOT

PACKAGES = ("impl", "fixtures", "conformance")


def _modules() -> dict:
    out = {}
    for pkg in PACKAGES:
        for path in (pathlib.Path(REPO_ROOT) / pkg).rglob("*.py"):
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _imports(name: str, path: pathlib.Path, known: dict) -> set:
    """Project modules ``name`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # a submodule imported by name
    return {m for m in found if m in known and m != name}


def import_graph() -> dict:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_among_the_project_s_modules():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_layering_impl_fixtures_conformance_and_pytest_only_at_the_edge():
    graph = import_graph()
    for name, deps in graph.items():
        if name.startswith("impl"):
            assert not {d for d in deps if not d.startswith("impl")}, name
        if name.startswith("fixtures"):
            assert not {d for d in deps if d.startswith("conformance")}, name
    # pytest itself: only the plugin, the pytest entry points and conftest files
    for name, path in _modules().items():
        text = path.read_text()
        if "import pytest" in text or "from _pytest" in text:
            assert name in ("conformance.plugin", "conformance.test_lifecycle",
                            "conformance.conftest") or name.endswith("conftest"), name
