"""What a workflow eval section's run produces: one record per case, one per section.

Plain data with `to_json`/`from_json` like every record (`_records` re-exports them), kept
apart so each module stays one job. This module imports only the standard library and the
check records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._check_records import CheckRecord
from ._verdicts import Status

__all__ = ["EvalCaseRecord", "EvalRecord"]


@dataclass(slots=True)
class EvalCaseRecord:
    """One eval case's verdict."""

    key: str
    id: str
    status: Status
    score: float
    blocks: dict[str, CheckRecord] = field(default_factory=dict)
    error: str | None = None
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the store keeps this in its eval's ``cases``)."""
        return {
            "key": self.key,
            "id": self.id,
            "status": self.status,
            "score": self.score,
            "blocks": {block: check.to_json() for block, check in self.blocks.items()},
            "error": self.error,
            "description": self.description,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalCaseRecord:
        """Rebuild from `to_json` output."""
        blocks = data.get("blocks") or {}
        return cls(**{**data, "blocks": {k: CheckRecord.from_json(v) for k, v in blocks.items()}})


@dataclass(slots=True)
class EvalRecord:
    """A workflow eval section's verdict: suite score = mean of case scores."""

    file: str
    score: float
    threshold: float
    passed: bool
    cases: list[EvalCaseRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the store keeps this; `to_dict` is the report's shape)."""
        return {
            "file": self.file,
            "score": self.score,
            "threshold": self.threshold,
            "passed": self.passed,
            "cases": [case.to_json() for case in self.cases],
        }

    def to_dict(self) -> dict[str, Any]:
        """The pinned shape of an eval in ``run -o report.json`` (plus its cases)."""
        return {
            "file": self.file,
            "score": self.score,
            "threshold": self.threshold,
            "passed": self.passed,
            "cases": [
                {
                    "id": case.id,
                    "status": case.status,
                    "score": case.score,
                    **({"error": case.error} if case.error else {}),
                    "blocks": {block: check.to_json() for block, check in case.blocks.items()},
                }
                for case in self.cases
            ],
        }
