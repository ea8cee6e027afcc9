"""What ``assertly run`` accepts, shared by the CLI, the pytest plugin, resume and recheck."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ._verdict import PassThreshold

__all__ = ["RunOptions"]


@dataclass(slots=True)
class RunOptions:
    """Everything ``assertly run`` accepts."""

    paths: list[str] = field(default_factory=list)
    target: str | None = None
    concurrency: int | None = None
    trials: int | None = None
    pass_threshold: PassThreshold | None = None
    fail_fast: bool = False
    agents: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    test_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    keyword: str | None = None
    now: datetime | None = None
    facts: dict[str, bool] = field(default_factory=dict)
    timeout_s: float | None = None
    rate_limit: float | None = None
    resume: str | None = None
    store_path: str | None = None
    config_path: str | None = None
