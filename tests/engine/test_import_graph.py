"""The engine's import graph is a tree: no module imports, directly or not, one that imports it.

Read from the source with `ast` (nothing is imported). Two graphs are checked: the imports at
module level, which run when a module is first imported, and every import a module can run,
including those inside functions (lazy imports of heavy dependencies). Imports under
``if TYPE_CHECKING:`` never run and are left out. A package's ``__init__`` is not counted as
an import of its submodules: Python initialises a parent package before its children.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import assertly.engine

ENGINE = Path(assertly.engine.__file__).parent
SRC = ENGINE.parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(ENGINE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(nodes: list[ast.stmt], *, nested: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``nodes``: top level only, or also inside functions."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _imports(node.orelse, nested=nested)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if nested or isinstance(node, ast.ClassDef):
                yield from _imports(node.body, nested=nested)
        else:  # if/try/with blocks at module level run at import time
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    for child in children:
                        if isinstance(child, ast.ExceptHandler):
                            yield from _imports(child.body, nested=nested)
                        elif isinstance(child, ast.stmt):
                            yield from _imports([child], nested=nested)


def _origin(module: str, node: ast.ImportFrom) -> str:
    """The absolute module name a ``from … import`` statement imports from."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if MODULES[module].name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The engine modules an import statement imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in MODULES}
    origin = _origin(module, node)
    found = set()
    for alias in node.names:
        submodule = f"{origin}.{alias.name}"
        found.add(submodule if submodule in MODULES else origin)
    return {name for name in found if name in MODULES}


def import_graph(*, nested: bool) -> dict[str, set[str]]:
    """Each engine module and the engine modules it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets: set[str] = set()
        for node in _imports(tree.body, nested=nested):
            targets |= _targets(module, node)
        targets.discard(module)
        graph[module] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, …, a]``, or None when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_the_graph_covers_the_engine() -> None:
    graph = import_graph(nested=False)
    assert "assertly.engine._registry" in graph
    assert "assertly.engine._entries" in graph["assertly.engine.expect.arrays"]
    assert "assertly.engine._compile" in graph["assertly.engine"]


@pytest.mark.parametrize("nested", [False, True], ids=["module-level", "with-function-level"])
def test_the_engine_import_graph_is_acyclic(nested: bool) -> None:
    cycle = find_cycle(import_graph(nested=nested))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_family_modules_import_only_the_leaf_for_registration() -> None:
    graph = import_graph(nested=True)
    for module, targets in graph.items():
        if module.startswith(("assertly.engine.expect.", "assertly.engine.typed.")):
            assert "assertly.engine._registry" not in targets, module
            assert "assertly.engine._compile" not in targets, module


def test_the_entries_module_is_a_leaf() -> None:
    assert import_graph(nested=True)["assertly.engine._entries"] == set()


def test_the_manifest_names_every_family_module() -> None:
    from assertly.engine._manifest import FAMILIES

    families = {
        name
        for name in MODULES
        if name.startswith(("assertly.engine.expect.", "assertly.engine.typed."))
        and not name.rsplit(".", 1)[-1].startswith("_")
    }
    assert set(FAMILIES) == families
    assert len(FAMILIES) == len(set(FAMILIES))


def test_the_engine_imports_nothing_above_it() -> None:
    # Only the package-level leaves below every layer: errors and the JSON codec.
    allowed = ("assertly.engine", "assertly._exceptions", "assertly._json")
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [_origin(module, node)]
            else:
                continue
            for name in names:
                if name == "assertly" or name.startswith("assertly."):
                    assert name.startswith(allowed), f"{module} imports {name}"


def test_a_cycle_is_reported_with_its_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
