"""The engine's import graph is a tree: no module imports, directly or not, one that imports it.

Read from the source with `ast` (nothing is imported, tests/import_graph_support.py). Two
graphs are checked: the imports at module level, which run when a module is first imported,
and every import a module can run, including those inside functions (lazy imports of heavy
dependencies). Imports under ``if TYPE_CHECKING:`` never run and are left out. A package's
``__init__`` is not counted as an import of its submodules: Python initialises a parent
package before its children.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import assertly.engine
from import_graph_support import find_cycle, modules_under, origin
from import_graph_support import import_graph as graph_of

ENGINE = Path(assertly.engine.__file__).parent
MODULES = modules_under(ENGINE)


# The packages that hold assertion families: the two dialects and the subsystems that
# register assertions of their own. Their public modules are the families.
FAMILY_PACKAGES = ("expect", "typed", "trajectory", "graded", "spans")
FAMILY_MODULES = {
    name
    for name in MODULES
    if name.startswith(tuple(f"assertly.engine.{package}." for package in FAMILY_PACKAGES))
    and not name.rsplit(".", 1)[-1].startswith("_")
}


def _origin(module: str, node: ast.ImportFrom) -> str:
    """The absolute module name a ``from … import`` statement imports from."""
    return origin(module, MODULES[module], node)


def import_graph(*, nested: bool) -> dict[str, set[str]]:
    """Each engine module and the engine modules it imports."""
    return graph_of(MODULES, nested=nested)


def test_the_graph_covers_the_engine() -> None:
    graph = import_graph(nested=False)
    assert "assertly.engine._registry" in graph
    assert "assertly.engine._entries" in graph["assertly.engine.expect.arrays"]
    assert "assertly.engine._compile" in graph["assertly.engine"]


@pytest.mark.parametrize("nested", [False, True], ids=["module-level", "with-function-level"])
def test_the_engine_import_graph_is_acyclic(nested: bool) -> None:
    cycle = find_cycle(import_graph(nested=nested))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _type_only_imports(module: str) -> set[str]:
    """The engine modules ``module`` imports under a module-level ``if TYPE_CHECKING:``."""
    path = MODULES[module]
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        test = getattr(node, "test", None)
        if not isinstance(node, ast.If) or getattr(test, "id", getattr(test, "attr", "")) != (
            "TYPE_CHECKING"
        ):
            continue
        for child in ast.walk(node):
            if isinstance(child, ast.ImportFrom):
                source = _origin(module, child)
                for alias in child.names:
                    submodule = f"{source}.{alias.name}"
                    found.add(submodule if submodule in MODULES else source)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
    return {name for name in found if name in MODULES and name != module}


def test_the_engine_has_no_cycle_counting_type_only_imports() -> None:
    # mypy reads the imports under `if TYPE_CHECKING:`; a cycle through them is still a
    # knot in the design (two modules that need each other's types).
    graph = import_graph(nested=False)
    for module in graph:
        graph[module] |= _type_only_imports(module)
    assert "assertly.engine._response" in graph["assertly.engine._base"]  # counted
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_family_modules_import_only_the_leaf_for_registration() -> None:
    graph = import_graph(nested=True)
    for module, targets in graph.items():
        if module in FAMILY_MODULES:
            assert "assertly.engine._registry" not in targets, module
            assert "assertly.engine._compile" not in targets, module


def test_the_entries_module_is_a_leaf() -> None:
    assert import_graph(nested=True)["assertly.engine._entries"] == set()


def test_the_manifest_names_every_family_module() -> None:
    from assertly.engine._manifest import FAMILIES

    assert set(FAMILIES) == FAMILY_MODULES
    assert len(FAMILIES) == len(set(FAMILIES))


def test_the_engine_imports_nothing_above_it() -> None:
    # Only the package-level leaves below every layer: errors, the JSON codec, the reading
    # of Python values as JSON, and the span records (standard library only).
    allowed = (
        "assertly.engine",
        "assertly._exceptions",
        "assertly._json",
        "assertly._python_values",
        "assertly._spans",
    )
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


def _defined_and_imported(path: Path) -> tuple[set[str], set[str]]:
    """The names a module defines at module level, and those it imports there."""
    defined: set[str] = set()
    imported: set[str] = set()
    pending = list(ast.parse(path.read_text(encoding="utf-8"), str(path)).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.If | ast.Try):
            pending.extend([*node.body, *node.orelse, *getattr(node, "finalbody", [])])
    return defined, imported


def test_each_engine_name_has_one_import_path() -> None:
    # An engine module imports a name from the module that defines it, never through one
    # that imports it (the package's `__init__` is the public API, not a path inside).
    names = {module: _defined_and_imported(path) for module, path in MODULES.items()}
    relayed = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom) or _origin(module, node) not in MODULES:
                continue
            source = _origin(module, node)
            defined, imported = names[source]
            for alias in node.names:
                if f"{source}.{alias.name}" not in MODULES and alias.name not in defined:
                    relayed.append(f"{module} imports {alias.name} through {source}")
                    assert alias.name in imported, relayed[-1]
    assert relayed == []
