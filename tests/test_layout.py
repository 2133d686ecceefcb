"""The package's import graph: no cycle inside rag/, and nothing outside the edges (rag.api,
rag.cli) imports the web or command-line libraries or those layers. Read from the source with
ast, imports inside functions included, so a deferred import cannot hide an arrow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rag"
EDGES = ("rag.api", "rag.cli")
EDGE_LIBRARIES = {"litestar", "click", "uvicorn", "msgspec"}
# msgspec's JSON codec parses as json does (the stored analyses); its Structs stay the HTTP
# layer's schemas
CORE_MAY_IMPORT = {"msgspec.json"}


def _module_name(path: Path) -> str:
    parts = path.with_suffix("").relative_to(PACKAGE.parent).parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> set[str]:
    """Every module name an ``import`` or ``from ... import`` in the module names."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _internal(target: str) -> str | None:
    """The rag module ``target`` resolves to (a name imported from a module is that module)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


GRAPH = {
    name: {t for t in map(_internal, _imports(name)) if t and t != name and t != "rag"}
    for name in MODULES
}


def _is_edge(name: str) -> bool:
    return any(name == e or name.startswith(e + ".") for e in EDGES)


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(GRAPH):
        if name not in index:
            visit(name)
    return found


def test_the_graph_is_read() -> None:
    # The checks below mean something only if the graph has the package's real arrows.
    assert len(MODULES) > 40
    assert "rag.search.relevance" in GRAPH["rag.answer.engine"]
    assert "rag.cli.query" in GRAPH["rag.cli.main"]


def test_no_import_cycle() -> None:
    cycles = _cycles()
    assert not cycles, "import cycles inside rag/:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not _is_edge(n)))
def test_core_module_does_not_import_the_edges(name: str) -> None:
    imported = _imports(name)
    libraries = sorted(
        {t.split(".")[0] for t in imported if t not in CORE_MAY_IMPORT} & EDGE_LIBRARIES
    )
    layers = sorted(t for t in map(_internal, imported) if t and _is_edge(t))
    assert not libraries and not layers, f"{name} imports {libraries + layers}"


def test_no_module_sits_flat_beside_the_packages() -> None:
    # The top of rag/ holds what every package uses: settings, errors, the database, the store,
    # logs and metrics. Everything else belongs to a package.
    flat = sorted(n for n, p in MODULES.items() if p.parent == PACKAGE and n != "rag")
    assert flat == [
        "rag.db",
        "rag.db_health",
        "rag.errors",
        "rag.logs",
        "rag.metrics",
        "rag.settings",
        "rag.store",
    ], flat
