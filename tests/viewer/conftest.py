from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
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
