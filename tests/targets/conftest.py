"""Fixtures for the target tests (helpers live in ``targets_support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from targets_support import ScriptedServer, serve


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted HTTP server on 127.0.0.1."""
    yield from serve()
