"""Shared fixtures for the typed-dialect and custom-assertion tests."""

from __future__ import annotations

import pytest

import assertly
from assertly.engine import REGISTRY


@pytest.fixture
def registry() -> assertly.Registry:
    """A private registry holding every built-in assertion, so tests never touch the global one."""
    private = assertly.Registry()
    for dialect in ("expect", "typed"):
        for entry in REGISTRY.entries(dialect):
            private.add(dialect, entry)
    return private
