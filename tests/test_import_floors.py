"""The engine's floors: subpackages import downward only, and never in a cycle.

The rule (STYLE.md, "Engine floors"), checked on the source with ``ast``:

- A *unit* is what comes right after ``tablerag_agents.``: a subpackage
  (``solve``, ``tools``...) or a top-level module (``qa``, ``cli``...). The
  package's own ``__init__`` is the unit ``tablerag_agents``.
- Every import of a first-party module counts, wherever it is written: at module
  level, inside a function, under ``if TYPE_CHECKING:``. A lazy import only hides
  a cycle from the interpreter, and a type-only import still ties the floors.
- A unit imports units on its own floor or below, never above; imports between
  units (sideways included) never form a cycle.
- The package ``__init__`` runs before any submodule, so it sits on the bottom
  floors: it may import only from them.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass

from package_layout import PACKAGE, REPO, Module, iter_modules

FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(units.split())
    for units in (
        "config errors prompts",  # imports nothing of the package
        "tables sandbox bounded models tablerag_agents",
        "retrieval",
        "table_index",
        "solve",
        "filtering clarify",
        "resources",  # the shared models, sandbox, indexes and tables
        "graphs tools server mcp_server evaluation qa cli",
    )
)
FLOOR_OF = {unit: n for n, units in enumerate(FLOORS) for unit in units}


@dataclass(frozen=True)
class Edge:
    """One import of a module of another unit."""

    source: str
    target: str
    where: str
    """``path:line`` of the import."""

    def __str__(self) -> str:
        src, dst = unit_of(self.source), unit_of(self.target)
        return (
            f"{self.where}: {self.source} imports {self.target} "
            f"({src}, floor {FLOOR_OF.get(src)} -> {dst}, floor {FLOOR_OF.get(dst)})"
        )


def unit_of(module: str) -> str:
    """``tablerag_agents.solve.sql`` -> ``solve``; the package itself -> ``tablerag_agents``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imported(node: ast.AST, module: Module, known: set[str]) -> list[str]:
    """First-party modules an import statement loads (``from m import x``: ``m.x`` if a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.name.split(".")
        if not module.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        name = ".".join([*base, *([node.module] if node.module else [])])
    else:
        name = node.module or ""
    if name.split(".")[0] != PACKAGE:
        return []
    subs = [f"{name}.{a.name}" for a in node.names if f"{name}.{a.name}" in known]
    return subs if len(subs) == len(node.names) else [name, *subs]


def import_edges() -> list[Edge]:
    """Every import between different units, from the source files."""
    modules = list(iter_modules())
    known = {m.name for m in modules}
    edges = []
    for module in modules:
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        for node in ast.walk(tree):
            for target in _imported(node, module, known):
                if unit_of(target) != unit_of(module.name):
                    where = f"{module.path.relative_to(REPO)}:{node.lineno}"
                    edges.append(Edge(module.name, target, where))
    return edges


def unit_cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected groups of more than one unit (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[unit_of(e.source)].add(unit_of(e.target))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            group.append(v)
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_every_unit_has_a_floor() -> None:
    units = {unit_of(m.name) for m in iter_modules()}
    assert units - FLOOR_OF.keys() == set(), "place the new subpackage on a floor in FLOORS"


def test_no_import_goes_up_a_floor() -> None:
    up = [
        str(e)
        for e in import_edges()
        if FLOOR_OF.get(unit_of(e.target), -1) > FLOOR_OF.get(unit_of(e.source), -1)
    ]
    assert up == [], "imports above their floor:\n" + "\n".join(up)


def test_no_import_cycle_between_units() -> None:
    edges = import_edges()
    groups = unit_cycles(edges)
    detail = [
        str(e)
        for group in groups
        for e in edges
        if unit_of(e.source) in group and unit_of(e.target) in group
    ]
    assert groups == [], f"import cycles between {groups}:\n" + "\n".join(detail)


def test_the_checker_sees_lazy_type_only_and_relative_imports() -> None:
    """The rule covers imports inside functions and TYPE_CHECKING blocks, and relative ones."""
    edges = {(e.source, e.target) for e in import_edges()}
    # inside a function (graphs/nodes/refine.py: `from tablerag_agents import filtering`)
    assert ("tablerag_agents.graphs.nodes.refine", "tablerag_agents.filtering") in edges
    # under TYPE_CHECKING (solve/factory.py: the Sandbox type)
    assert ("tablerag_agents.solve.factory", "tablerag_agents.sandbox") in edges
    # relative (sandbox/process.py: `from ..errors import SandboxError`)
    assert ("tablerag_agents.sandbox.process", "tablerag_agents.errors") in edges
    assert unit_cycles([Edge("p.a.x", "p.b.y", "-"), Edge("p.b.z", "p.a.w", "-")]) == [["a", "b"]]
