"""Fixtures for the reliability tests (helpers live in ``reliability_support``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away project directory that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
