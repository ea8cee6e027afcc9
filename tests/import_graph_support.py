"""Import graphs of assertly's modules, read from the source with `ast` (nothing is imported).

Two kinds of graph: the imports at module level, which run when a module is first imported,
and every import a module can run, including those inside functions (lazy imports of heavy
dependencies). Imports under ``if TYPE_CHECKING:`` never run and are left out, except in a
module with a module ``__getattr__`` (PEP 562, `assertly._lazy`): there they name what
``__getattr__`` imports on first use, and the graph of every import counts them. A package's
``__init__`` is not an edge to its submodules: Python initialises a parent package before its
children (`reachable` adds those parents, since importing a submodule runs them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import assertly

SRC = Path(assertly.__file__).parent.parent


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a file under src/)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_under(directory: Path) -> dict[str, Path]:
    """Every module in ``directory`` and below, by dotted name."""
    return {module_name(path): path for path in sorted(directory.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(
    nodes: list[ast.stmt], *, nested: bool, type_only: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``nodes``: top level only, or also inside functions.

    ``type_only`` counts the imports under ``if TYPE_CHECKING:`` too: they never run, but a
    cycle through them is still two modules that cannot be read one without the other.
    """
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            if type_only:
                yield from imports(node.body, nested=nested, type_only=type_only)
            yield from imports(node.orelse, nested=nested, type_only=type_only)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if nested or isinstance(node, ast.ClassDef):
                yield from imports(node.body, nested=nested, type_only=type_only)
        else:  # if/try/with blocks at module level run at import time
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    for child in children:
                        if isinstance(child, ast.ExceptHandler):
                            yield from imports(child.body, nested=nested, type_only=type_only)
                        elif isinstance(child, ast.stmt):
                            yield from imports([child], nested=nested, type_only=type_only)


def origin(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name a ``from … import`` statement in ``module`` imports from."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if path.name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _targets(
    module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]
) -> set[str]:
    """The modules of ``modules`` an import statement imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    source = origin(module, path, node)
    found = set()
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        found.add(submodule if submodule in modules else source)
    return {name for name in found if name in modules}


def import_graph(
    modules: dict[str, Path], *, nested: bool, type_only: bool = False
) -> dict[str, set[str]]:
    """Each module of ``modules`` and the modules of ``modules`` it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets: set[str] = set()
        lazy = nested and _has_module_getattr(tree)
        for node in imports(tree.body, nested=nested, type_only=type_only or lazy):
            targets |= _targets(module, path, node, modules)
        targets.discard(module)
        graph[module] = targets
    return graph


def _has_module_getattr(tree: ast.Module) -> bool:
    """Whether a module defines ``__getattr__`` (a function, or one made by `attributes`)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__getattr__" for target in node.targets
        ):
            return True
    return False


def every_import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Like `import_graph`, counting every import in the source: type-only ones included.

    ``from a import b`` is an edge to ``a.b`` when that is a module of ``modules``, else to ``a``.
    """
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                source = origin(module, path, node)
                for alias in node.names:
                    name = f"{source}.{alias.name}"
                    targets.add(name if name in modules else source)
        graph[module] = {target for target in targets if target in modules} - {module}
    return graph


def reachable(graph: dict[str, set[str]], start: Iterable[str]) -> dict[str, list[str]]:
    """Every module importing ``start`` can import, each with one import path leading to it.

    Importing ``a.b.c`` first runs ``a`` and ``a.b``: a module's parent packages are reached
    with it.
    """
    paths: dict[str, list[str]] = {}
    pending = [[name] for name in sorted(start)]
    while pending:
        path = pending.pop()
        module = path[-1]
        if module in paths:
            continue
        paths[module] = path
        parts = module.split(".")
        parents = {".".join(parts[:end]) for end in range(1, len(parts))}
        for target in sorted((graph.get(module, set()) | parents) & graph.keys()):
            if target not in paths:
                pending.append([*path, target])
    return paths


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
