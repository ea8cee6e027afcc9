"""No import cycle among all of assertly's modules, type-only imports included (issue 30).

The engine's own test (tests/engine/test_import_graph.py) checks the imports that run; this one
reads every module-level import of the whole package, those under ``if TYPE_CHECKING:`` as well:
two modules that name each other's types cannot be understood, moved or split one without the
other, so the layers stay a tree even for the type checker.
"""

from __future__ import annotations

from pathlib import Path

import assertly
from import_graph_support import find_cycle, import_graph, modules_under

PACKAGE = Path(assertly.__file__).parent


def test_the_graph_counts_type_only_imports() -> None:
    # tests/import_graph_support.py's own modules are not assertly's: check on assertly's
    # graph that a TYPE_CHECKING import is an edge only when asked for.
    graph = import_graph(modules_under(PACKAGE), nested=False, type_only=True)
    running = import_graph(modules_under(PACKAGE), nested=False)
    assert all(running[module] <= graph[module] for module in running)
    assert any(running[module] < graph[module] for module in running)


def test_no_import_cycle_counting_every_module_level_import() -> None:
    cycle = find_cycle(import_graph(modules_under(PACKAGE), nested=False, type_only=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
