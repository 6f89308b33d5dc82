"""No import cycles across fedlib's files.

The import graph has one node per module of ``fedlib/**/*.py`` (a package is its ``__init__.py``) and an edge for
every import statement of a module, at module level or inside a function (an import inside a function that dodges
a cycle at load time is still the cycle). Relative imports are resolved; ``from pkg import name`` is an edge to the
submodule ``pkg.name`` where ``name`` is a submodule and to ``pkg`` otherwise; ``import a.b.c`` is an edge to
``a.b.c``. Imports of modules outside fedlib are left out. A cycle is a strongly connected component of more than
one module, or a module that imports itself; each is named in the failure.
"""
from __future__ import annotations

import ast
from pathlib import Path

FEDLIB = Path(__file__).resolve().parents[1] / "fedlib"

def module_name(path: Path, root: Path) -> str:
    """The dotted name of ``path`` under ``root``'s parent (``root`` is the top package's folder)."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over every ``*.py`` below ``root`` (imports at any depth of the file)."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                for alias in node.names:
                    sub = f"{mod}.{alias.name}"
                    edges.add(sub if sub in files else mod)
        graph[name] = {e for e in edges if e in files}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Every strongly connected component of more than one module, and every module that imports itself
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(frozenset(component))
    return found


def _describe(component: frozenset[str], graph: dict[str, set[str]]) -> str:
    inside = {m: sorted(graph[m] & component) for m in sorted(component)}
    return " | ".join(f"{m} -> {', '.join(t)}" for m, t in inside.items())


def test_fedlib_has_no_import_cycle():
    # no cycle is known or allowed: the three the method layer held (split models / resnet_cifar, data datasets /
    # folders, hist engine / run) were broken by moving the shared piece into a module both import (split.blocks,
    # data.tensors, hist.engine's Prepared), with one checked re-key of the stores (notebooks/RUN_LOG.md, 2026-12-07)
    graph = import_graph(FEDLIB)
    found = cycles(graph)
    print(f"\nimport graph: {len(graph)} modules, {sum(map(len, graph.values()))} edges, {len(found)} cycles")
    assert found == [], "import cycles:\n" + "\n".join(_describe(c, graph) for c in found)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_planted_cycle_is_named(tmp_path):
    # the checker's own test: a three-module cycle through a relative import, a function-level import and a
    # ``from package import submodule``; a self-import; and an acyclic module beside them
    root = _tree(tmp_path, {"sub/__init__.py": "", "sub/a.py": "from . import b\n",
                            "sub/b.py": "def f():\n    import pkg.c\n", "c.py": "from pkg.sub import a\n",
                            "d.py": "from pkg import d\n", "e.py": "import pkg.c\nimport json\n"})
    graph = import_graph(root)
    assert graph["pkg.sub.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.sub.a"}
    assert graph["pkg.e"] == {"pkg.c"}
    assert sorted(map(sorted, cycles(graph))) == [["pkg.c", "pkg.sub.a", "pkg.sub.b"], ["pkg.d"]]
    assert "pkg.sub.b -> pkg.c" in _describe(frozenset({"pkg.c", "pkg.sub.a", "pkg.sub.b"}), graph)


def test_a_name_imported_from_a_package_is_an_edge_to_the_package(tmp_path):
    # ``from pkg.sub import f`` (f defined in sub/__init__.py) is an edge to pkg.sub, not to a module pkg.sub.f
    root = _tree(tmp_path, {"sub/__init__.py": "from pkg.x import g\n\ndef f():\n    pass\n",
                            "x.py": "from pkg.sub import f\n\ndef g():\n    pass\n"})
    graph = import_graph(root)
    assert graph["pkg.x"] == {"pkg.sub"} and cycles(graph) == [frozenset({"pkg.sub", "pkg.x"})]
