"""Records built by hand for tests of what renders them."""

from __future__ import annotations

from typing import Any

from assertly._check_records import AssertionRecord


def given(failures: list[dict[str, Any]]) -> list[AssertionRecord]:
    """Failures given as they are, not rebuilt from steps (as a report or an older store has)."""
    return [AssertionRecord.from_json(item) for item in failures]
