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


def _imported(name: str, path: pathlib.Path) -> set:
    """Every module name ``name`` imports, anywhere in the file (lazy imports
    included), absolute."""
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
    return found


def _imports(name: str, path: pathlib.Path, known: dict) -> set:
    """Project modules ``name`` imports, anywhere in the file."""
    return {m for m in _imported(name, path) if m in known and m != name}


def import_graph() -> dict:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def reaches(graph: dict, start: str) -> set:
    """The project modules ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for dep in graph[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


def third_party(name: str, path: pathlib.Path) -> set:
    """Top-level names of what ``name`` imports from outside the project."""
    return {m.split(".")[0] for m in _imported(name, path)} - set(PACKAGES) - {""}


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


#: the pytest edge: the plugin, the test module it parametrizes, conftest files
PYTEST_EDGE = ("conformance.plugin", "conformance.test_lifecycle", "conformance.conftest")


def modules_reaching_pytest() -> dict:
    """{module: the modules through which it reaches pytest} for every module
    that imports pytest, directly or through the project modules it reaches."""
    known = _modules()
    graph = import_graph()
    direct = {n for n, p in known.items() if third_party(n, p) & {"pytest", "_pytest"}}
    out = {}
    for name in known:
        via = ({name} | reaches(graph, name)) & direct
        if via:
            out[name] = sorted(via)
    return out


def test_pytest_is_reached_only_at_the_edge():
    """No module but the plugin, its test module and conftest files reaches
    pytest, through any chain of imports, lazy ones included: the CLI, the
    report readers the gate job runs (with pytest absent) and the driver do
    without it."""
    beyond = {n: via for n, via in modules_reaching_pytest().items()
              if n not in PYTEST_EDGE and not n.endswith("conftest")}
    assert beyond == {}
    assert "conformance.__main__" not in modules_reaching_pytest()


def test_the_reach_check_follows_imports_through_other_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": set()}
    assert reaches(graph, "a") == {"b", "c"} and reaches(graph, "d") == set()


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


def test_no_import_cycle_among_the_folders_of_conformance():
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
