"""Reports sit above the runner in data, not in imports: they read the run records only.

Checked two ways: statically (every import any reports module can run, function-level ones
included, followed through every assertly module it reaches) and for real (a fresh interpreter
imports every reports module and looks at `sys.modules`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import assertly
import assertly.reports
from import_graph_support import import_graph, modules_under, reachable

PACKAGE = Path(assertly.__file__).parent
REPORTS = modules_under(Path(assertly.reports.__file__).parent)


def _runner_paths(graph: dict[str, set[str]]) -> dict[str, str]:
    """Each runner module a reports module can import, with one import path to it."""
    return {
        module: " -> ".join(path)
        for module, path in reachable(graph, REPORTS).items()
        if module == "assertly.runner" or module.startswith("assertly.runner.")
    }


def _reports_graph() -> dict[str, set[str]]:
    """Every import, except the Python API's calls into the runner.

    Importing any submodule runs the root package, which re-exports `assertly.run` from
    `assertly._api`; that module imports the runner only inside `run`/`arun`. Those two
    modules count with their module-level imports, and no reports module may import
    `assertly._api` or the root package's `run`/`arun` at all (checked below).
    """
    graph = import_graph(modules_under(PACKAGE), nested=True)
    top = import_graph(modules_under(PACKAGE), nested=False)
    for module in ("assertly", "assertly._api"):
        graph[module] = top[module]
    return graph


def test_reports_import_nothing_of_the_runner_even_lazily() -> None:
    graph = _reports_graph()
    assert "assertly._records" in graph["assertly.reports._analysis"]
    assert _runner_paths(graph) == {}
    every = import_graph(modules_under(PACKAGE), nested=True)
    assert not any("assertly._api" in every[module] for module in REPORTS)
    for path in REPORTS.values():
        text = path.read_text(encoding="utf-8")
        assert "import run" not in text and "import arun" not in text, path


def test_the_static_check_finds_a_path_to_the_runner() -> None:
    # The same walk on a graph with one added edge: proof the check above can fail.
    graph = _reports_graph()
    graph["assertly.compare._sides"].add("assertly.runner._entry")
    found = _runner_paths(graph)
    assert {"assertly.runner", "assertly.runner._entry", "assertly.runner._run"} <= set(found)
    assert found["assertly.runner._entry"].endswith(
        "assertly.compare -> assertly.compare._sides -> assertly.runner._entry"
    )


def test_importing_every_reports_module_loads_no_runner_module() -> None:
    script = (
        "import importlib, sys\n"
        f"for name in {sorted(REPORTS)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('assertly.runner')))\n"
        "print('assertly._records' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines() == ["[]", "True"]
