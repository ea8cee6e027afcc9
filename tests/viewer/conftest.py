from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from viewer_support import build_store, serving


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite"
    build_store(path, running=True)
    return path


@pytest.fixture
def server(store: Path) -> Iterator[str]:
    with serving(store) as url:
        yield url
