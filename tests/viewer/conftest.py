from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from matrix_support import matrix_project, run_matrix
from viewer_support import build_store, serving


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store the tests only read (shared by a module's tests)."""
    path = tmp_path_factory.mktemp("store") / "runs.sqlite"
    build_store(path, running=True)
    return path


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[str]:
    with serving(store) as url:
        yield url


@pytest.fixture
def live_store(tmp_path: Path) -> Path:
    """A store of its own, for a test that writes to its running run."""
    path = tmp_path / "runs.sqlite"
    build_store(path, running=True)
    return path


@pytest.fixture
def live_server(live_store: Path) -> Iterator[str]:
    with serving(live_store) as url:
        yield url


@pytest.fixture(scope="module")
def matrix_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store holding a matrix run (targets base, cand) and then a run of one target."""
    project = matrix_project(tmp_path_factory.mktemp("mx"))
    store = project / "runs.sqlite"
    matrix = run_matrix(project, str(store))
    single = run_matrix(project, str(store), single=True)
    return {"store": store, "matrix": matrix, "single": single}


@pytest.fixture(scope="module")
def matrix_server(matrix_store: dict[str, Any]) -> Iterator[str]:
    with serving(matrix_store["store"]) as url:
        yield url
