"""Fixtures for the runner tests (helpers live in ``runner_support``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import HttpAgent, Project, serve


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project directory that is also the working directory (config and store live there)."""
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


@pytest.fixture
def http_server() -> Iterator[HttpAgent]:
    """A real HTTP agent on 127.0.0.1."""
    yield from serve()
