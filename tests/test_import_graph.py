"""No import circle in src/: the project's modules import one another as a tree-like graph.

The graph is read statically with `ast`: every `import` and `from ... import` statement at any
depth of a module (imports inside functions too; the body of `if TYPE_CHECKING:` never runs and
is left out). `from pkg import name` is an edge to the submodule `pkg.name` when there is one,
else to `pkg` (the name is the package's attribute); relative imports are resolved. Importing a
submodule runs its parent packages first, but that is Python's doing for every submodule and is
not an edge here. Registries that import their entries by name on first use (`regula.roles`,
`regula.stages`, `regula.envs`, the params' `SYSTEMS`) are not statements and not edges.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo = [ast.parse(path.read_text(), str(path))]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.If) and _type_checking(node.test):
                todo += node.orelse
                continue
            todo.extend(ast.iter_child_nodes(node))
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in modules else base
                    if target in modules and target != name:
                        graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm;
    iterative, since the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
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
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_src_has_no_import_circle():
    graph = import_graph()
    assert "regula.params" in graph and "regula.schema" in graph["regula.params"]
    assert circles(graph) == []


def test_the_check_sees_a_circle_and_its_edge_rules(tmp_path):
    files = {
        "pkg/__init__.py": "from .a import f\n",
        "pkg/a.py": "from . import b\n\ndef f():\n    from pkg.c import g\n",
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import g\n",
        "pkg/c.py": "from pkg import a\n",
        "pkg/d.py": "from pkg import f\n",  # the package's attribute: an edge to the package
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    graph = import_graph(tmp_path)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b", "pkg.c"}, "pkg.b": set(), "pkg.c": {"pkg.a"},
                     "pkg.d": {"pkg"}}
    assert circles(graph) == [["pkg.a", "pkg.c"]]
