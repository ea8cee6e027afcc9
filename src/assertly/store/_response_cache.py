"""The agent-response cache of a run store (``assertly run --cache``, issue 34).

Shared by every run of the store: a digest of a call (the target's spec as configured, the
request as sent, the trial, the conversation turn; `assertly.runner._response_cache`) names
the response the agent gave, with its latency and what it reported (cost, model, tokens, tool
calls). The spec is never stored: only the digest, since a spec may hold a secret.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from .._json import to_json_bytes
from .._secrets import redact_value
from ._reads import loads_record

__all__ = ["RESPONSE_SCHEMA", "RESPONSE_SCHEMA_POSTGRES", "ResponseCache"]

# Part of the SQLite store's schema (`_sqlite._SCHEMA`).
RESPONSE_SCHEMA = """
-- The agent-response cache, shared by every run of the store: a digest of a call -> the
-- response (JSON: output, latency_ms, model, cost_usd, tokens, tool_calls, metadata).
CREATE TABLE IF NOT EXISTS agent_cache (
    key        TEXT PRIMARY KEY,
    response   TEXT NOT NULL,
    saved_at   TEXT NOT NULL
);
"""
# The same table in PostgreSQL, added to stores made before it when opened to write.
RESPONSE_SCHEMA_POSTGRES = """
CREATE TABLE IF NOT EXISTS agent_cache (
    key TEXT PRIMARY KEY, response TEXT NOT NULL, saved_at TEXT NOT NULL
);
"""


class ResponseCache:
    """The ``agent_cache`` table of a run store."""

    redact: set[str]

    def _write(self) -> AbstractContextManager[Any]:
        raise NotImplementedError  # the store's own transaction

    def _judge_row(self, sql: str, params: tuple[Any, ...]) -> Any:
        """One row of a cache read (``?`` placeholders); None when the table is missing."""
        raise NotImplementedError

    def cached_response(self, key: str) -> dict[str, Any] | None:
        """The cached response for a call digest, or None."""
        row = self._judge_row("SELECT response FROM agent_cache WHERE key = ?", (key,))
        if row is None:
            return None
        value = loads_record(row[0])
        return value if isinstance(value, dict) else None

    def save_response(self, key: str, response: dict[str, Any], saved_at: str) -> None:
        """Keep a response under its call digest (secrets redacted like everything)."""
        text = to_json_bytes(redact_value(response, self.redact), keep_surrogates=True).decode()
        with self._write() as db:
            db.execute(
                "INSERT INTO agent_cache (key, response, saved_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET response = excluded.response, "
                "saved_at = excluded.saved_at",
                (key, text, saved_at),
            )
