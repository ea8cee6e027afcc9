"""Fixtures for the judge tests: a scripted fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI, serve


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server (answers ``verdict pass`` until scripted)."""
    yield from serve()
