"""The Python package's layout: its modules import each other without a cycle, and every import
sits at the top of its module, where a reader (and this test) sees it.

The graph is read from the source with `ast`, not by importing: an edge is a module-level
`import`/`from` of one of the package's own modules, or a module's name in a string outside
functions, as `lazy.module("slowstart.X")` (slowstart/lazy.py) names it: imported on first use,
the edge is there all the same. Imports under `if TYPE_CHECKING:` count too: they never run,
but a cycle through them is two modules that each need the other to be read (issue #38: one
stood between running/api.py and running/swarm_results.py). Imports inside a function or method
are not allowed at all (heavy libraries go through `lazy.module`). The subpackages are layers,
each importing only from those below it (LAYERS).

grimp (3.19) builds the same graph from the import statements, but it does not see the
`lazy.module` edges, through which a cycle could come back unseen; reading the source is forty
lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "python" / "slowstart"


def module_names() -> dict[str, Path]:
    """Each module's dotted name (`slowstart.running.api`; `slowstart` for the package) → its
    file."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements at a module's top, through `if`/`try`/`with` blocks (`if TYPE_CHECKING:`
    included), not inside a function or class body's functions."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out += top_level(node.body)
            out += top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                out += top_level(block)
            for handler in node.handlers:
                out += top_level(handler.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            out += top_level(node.body)
    return out


def imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, own: set[str]) -> set[str]:
    """The package's own modules that one import statement names."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        if node.level:
            base = base[: len(base) - node.level + 1] + ([node.module] if node.module else [])
            source = ".".join(base)
        else:
            source = node.module or ""
        # `from slowstart.running import api` names the module slowstart.running.api, and so
        # does `from slowstart.running.api import run`.
        targets = [
            f"{source}.{a.name}" if f"{source}.{a.name}" in own else source for a in node.names
        ]
    return {t for t in targets if t in own and t != name}


def lazy_modules(nodes: list[ast.stmt], own: set[str]) -> set[str]:
    """The own modules named in strings outside functions: `lazy.module("slowstart.lazy")`,
    and the package's table of lazily loaded names (slowstart/__init__.py `_LAZY`)."""
    out = set()
    for stmt in nodes:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Constant) and node.value in own:
                out.add(node.value)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    own = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        body = top_level(ast.parse(path.read_text(), str(path)).body)
        edges = lazy_modules(body, own)
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= imported(name, path, node, own)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), each as
    the path that closes it, so a failure names the modules to pull apart."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
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
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [closing_path(graph, c, min(c)) for c in components if len(c) > 1]


def closing_path(graph: dict[str, set[str]], component: set[str], start: str) -> list[str]:
    """The shortest way from `start` back to itself inside its component (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{start} is in a component but on no cycle")


def test_the_package_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_no_import_inside_a_function():
    found = []
    for path in module_names().values():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        found.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert not found, "imports inside functions: " + ", ".join(sorted(set(found)))


def test_the_checks_see_what_they_look_for(tmp_path):
    """The graph reader and the cycle finder on a made-up package: a cycle through a lazy
    module and a `from . import`, and an import under TYPE_CHECKING, which counts."""
    graph = {
        "p": set(),
        "p.a": {"p.b"},
        "p.b": {"p.c"},
        "p.c": {"p.a"},
        "p.d": {"p.a"},
    }
    assert cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    own = {"p.a", "p.b", "p.c", "p.d"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from p import lazy\n"
        "from . import b\n"
        "c = lazy.module('p.c')\n"
        "if TYPE_CHECKING:\n"
        "    from p.d import x\n"
    )
    body = top_level(ast.parse(source).body)
    path = tmp_path / "a.py"
    edges = lazy_modules(body, own)
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            edges |= imported("p.a", path, node, own)
    assert edges == {"p.b", "p.c", "p.d"}
    # A cycle only a type checker follows is a cycle.
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import x\n"
    body = top_level(ast.parse(typed).body)
    edges = set()
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            edges |= imported("p.b", tmp_path / "b.py", node, own)
    assert edges == {"p.a"}
    assert cycles({"p.a": {"p.b"}, "p.b": edges}) == [["p.a", "p.b", "p.a"]]


# The subpackages from the bottom up (docs/contributing.md, "Layout"): a module may
# import from its own layer and the ones before it, never from a later one. The top-level
# modules not named here (units, lazy, paths, tables, plot ...) are the base; the CLI is the top.
LAYERS = (
    "slowstart.loading",
    "slowstart.running",
    "slowstart.real",
    "slowstart.reproductions",
    "slowstart.reports",
    "slowstart.cli",
)


def layer(module: str) -> int:
    """0 for the base, then 1 + the position of the layer the module is in."""
    for i, name in enumerate(LAYERS):
        if module == name or module.startswith(name + "."):
            return i + 1
    return len(LAYERS) + 1 if module in ("slowstart.launch", "slowstart.__main__") else 0


def test_each_layer_imports_only_from_the_layers_below_it():
    graph = import_graph()
    upward = [
        f"{a} ({LAYERS[layer(a) - 1] if layer(a) else 'base'}) imports {b}"
        for a, targets in sorted(graph.items())
        for b in sorted(targets)
        if a != "slowstart" and layer(b) > layer(a)  # the package re-exports every layer's names
    ]
    assert not upward, "imports from a later layer: " + "; ".join(upward)
