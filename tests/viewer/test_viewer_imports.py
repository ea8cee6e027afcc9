"""The viewer reads runs through the store's public names only (issue 30, a store seam).

Read from the source with `ast`: no viewer module imports a private module of the runner or
the store (``runner._verdict``, ``store._postgres``…), even inside a function, and none reads
a private attribute of the store's objects (``store._db``, ``store._pg``, ``store._record``…).
"""

from __future__ import annotations

import ast
from pathlib import Path

import assertly.viewer
from import_graph_support import modules_under, origin

VIEWER = modules_under(Path(assertly.viewer.__file__).parent)
LOWER = ("assertly.runner", "assertly.store")


def _imported(module: str, path: Path) -> set[str]:
    """Every name ``module`` imports anywhere (functions and type-only blocks included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            found |= {f"{origin(module, path, node)}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _private_lower(names: set[str]) -> set[str]:
    return {
        name
        for name in names
        if name.startswith(LOWER) and any(part.startswith("_") for part in name.split(".")[2:])
    }


def test_the_viewer_imports_nothing_private_of_the_runner_or_the_store() -> None:
    seen: set[str] = set()
    for module, path in VIEWER.items():
        imported = _imported(module, path)
        seen |= imported
        assert _private_lower(imported) == set(), module
    assert "assertly.store.RunQueries" in seen  # the check reads the imports it means to


def test_the_check_finds_a_private_import() -> None:
    assert _private_lower({"assertly.store._read_model._test_record"}) != set()
    assert _private_lower({"assertly.runner._verdict.build_run"}) != set()
    assert _private_lower({"assertly.store.open_store", "assertly.reports._json.x"}) == set()


def _store_private_names() -> set[str]:
    """The private attributes and methods of the store's classes (``_db``, ``_record``…)."""
    import assertly.store

    names: set[str] = set()
    for path in modules_under(Path(assertly.store.__file__).parent).values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                names.add(node.attr)  # self._db = …
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_the_viewer_reads_no_private_attribute_of_the_store() -> None:
    private = _store_private_names()
    assert {"_db", "_pg", "_meta", "_record", "_Connection", "_reader"} <= private
    for module, path in VIEWER.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                raise AssertionError(f"{module}:{node.lineno} reads the store's .{node.attr}")
