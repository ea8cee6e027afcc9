"""The JSON report: the shape pinned in the runner spec (other tools parse it)."""

from __future__ import annotations

from typing import Any

from ..engine._values import to_json_bytes
from ..runner import RunRecord

__all__ = ["render_json"]


def render_json(run: RunRecord, redact: set[str] | None = None) -> bytes:
    """``run -o report.json``: run_id, summary, tests, evals (plus problems and warnings)."""
    data: Any = run.to_dict()
    text = to_json_bytes(data, indent=True)
    for secret in redact or ():
        text = text.replace(secret.encode(), b"[REDACTED]")
    return text + b"\n"
