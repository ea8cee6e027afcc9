"""Recorded responses: no calls.

A JSONL file of ``{"id": test_id, "output": ...}`` lines
(optionally ``input`` to match on instead of id, plus ``model``, ``cost_usd``, ``latency_ms``,
``tool_calls``).
Lines are indexed by offset, not loaded, so a million recorded responses stay on disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from .._exceptions import TargetError
from .._json import loads
from ._base import BaseTarget, TargetRequest, TargetResponse, metadata_from

__all__ = ["FixtureTarget"]


class FixtureTarget(BaseTarget):
    """Answer from a JSONL of recorded responses, keyed by test id (or by input)."""

    recorded = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"fixtures:{self.path}"
        self._by_key: dict[str, int] = {}
        try:
            handle = self.path.open("rb")
        except OSError as error:
            raise TargetError(f"cannot read fixtures {self.path}: {error.strerror}") from None
        with handle:
            offset = 0
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    try:
                        record = loads(line)  # exact: integers beyond 64 bits stay integers
                    except ValueError as error:
                        reason = getattr(error, "msg", str(error))
                        raise TargetError(f"{self.path}:{number}: invalid JSON: {reason}") from None
                    if not isinstance(record, dict) or "output" not in record:
                        raise TargetError(f"{self.path}:{number}: expected an object with output")
                    key = self._key(record.get("id"), record.get("input"))
                    self._by_key.setdefault(key, offset)
                offset += len(line)
        self._handle = self.path.open("rb")

    @staticmethod
    def _key(test_id: Any, payload: Any) -> str:
        if test_id is not None:
            return f"id:{test_id}"
        try:
            return "input:" + orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()
        except (TypeError, orjson.JSONEncodeError):  # beyond 64-bit integers or 255 levels
            try:
                return "input:" + json.dumps(payload, sort_keys=True, separators=(",", ":"))
            except (TypeError, ValueError, RecursionError) as error:
                raise TargetError(f"the input cannot be matched as JSON: {error}") from None

    def lookup(self, test_id: str | None, payload: Any) -> TargetResponse:
        """The recorded response for a test id or an input."""
        offset = self._by_key.get(self._key(test_id, None)) if test_id is not None else None
        if offset is None:
            offset = self._by_key.get(self._key(None, payload))
        if offset is None:
            raise TargetError(f"no recorded response for test {test_id!r} in {self.path}")
        self._handle.seek(offset)
        record = loads(self._handle.readline())
        response = TargetResponse(output=record["output"], **metadata_from(record))
        if "trace" in record:  # the recorded call's spans (docs/traces.md)
            from ..loading._trace_files import recorded_trace

            spans = recorded_trace(record["trace"], self.path.parent, None)
            if isinstance(spans, str):
                raise TargetError(f"{self.path}: test {test_id!r}: {spans}")
            response.spans = spans
        return response

    async def call(self, request: TargetRequest) -> TargetResponse:
        """The recorded response for the request's test id, else for its input."""
        return self.lookup(request.key, request.input)

    async def aclose(self) -> None:
        """Close the file."""
        self._handle.close()
