"""The judge cache and spend of a run store (model-graded assertions, `assertly.judge`).

The cache is shared by every run of the store: a digest of a judge request (endpoint, model,
messages, parameters; never the key) names the judge's reply. ``judge_spend`` keeps what each
run spent on the judge, summed over its resumptions, and (under the run's id with
``SIMULATOR_SPEND`` after it) what it spent on the simulated user of conversation tests.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from .._secrets import redact_value

__all__ = ["JUDGE_SCHEMA", "JUDGE_SCHEMA_POSTGRES", "JudgeCache"]

# The simulated user's spend is a judge_spend row of its own: the run's id and this (issue 32).
SIMULATOR_SPEND = "#simulator"

# Part of the SQLite store's schema (`_sqlite._SCHEMA`).
JUDGE_SCHEMA = """
-- The judge cache, shared by every run of the store: a digest of the request (endpoint,
-- model, messages, parameters; never the key) -> the judge's reply.
CREATE TABLE IF NOT EXISTS judge_cache (
    key        TEXT PRIMARY KEY,
    reply      TEXT NOT NULL,
    model      TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    cost_usd   REAL NOT NULL,
    saved_at   TEXT NOT NULL
);
-- What a run spent on the judge (summed over its resumptions).
CREATE TABLE IF NOT EXISTS judge_spend (
    run_id   TEXT PRIMARY KEY,
    cost_usd REAL NOT NULL,
    tokens   INTEGER NOT NULL,
    calls    INTEGER NOT NULL,
    cached   INTEGER NOT NULL
);
"""
# The same tables in PostgreSQL, added to stores made before them when opened to write.
JUDGE_SCHEMA_POSTGRES = """
CREATE TABLE IF NOT EXISTS judge_cache (
    key TEXT PRIMARY KEY, reply TEXT NOT NULL, model TEXT NOT NULL, tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL, saved_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judge_spend (
    run_id TEXT PRIMARY KEY, cost_usd DOUBLE PRECISION NOT NULL, tokens BIGINT NOT NULL,
    calls BIGINT NOT NULL, cached BIGINT NOT NULL
);
"""


class JudgeCache:
    """The ``judge_cache`` and ``judge_spend`` tables of a run store."""

    redact: set[str]

    def _write(self) -> AbstractContextManager[Any]:
        raise NotImplementedError  # the store's own transaction

    def _judge_row(self, sql: str, params: tuple[Any, ...]) -> Any:
        """One row of a read (``?`` placeholders); None when there is none (each kind's)."""
        raise NotImplementedError

    def judge_reply(self, key: str) -> str | None:
        """The cached judge reply for a request digest, or None."""
        row = self._judge_row("SELECT reply FROM judge_cache WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def save_judge_reply(
        self, key: str, reply: str, model: str, tokens: int, cost_usd: float, saved_at: str
    ) -> None:
        """Keep a judge reply under its request digest (secrets redacted like everything)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO judge_cache (key, reply, model, tokens, cost_usd, saved_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                "reply = excluded.reply, model = excluded.model, tokens = excluded.tokens, "
                "cost_usd = excluded.cost_usd, saved_at = excluded.saved_at",
                (
                    key,
                    redact_value(reply, self.redact),
                    redact_value(model, self.redact),
                    tokens,
                    cost_usd,
                    saved_at,
                ),
            )

    def add_judge_spend(
        self, run_id: str, cost_usd: float, tokens: int, calls: int, cached: int
    ) -> None:
        """Add what this invocation of a run spent on the judge to the run's total."""
        with self._write() as db:
            db.execute(
                "INSERT INTO judge_spend (run_id, cost_usd, tokens, calls, cached) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                "cost_usd = judge_spend.cost_usd + excluded.cost_usd, "
                "tokens = judge_spend.tokens + excluded.tokens, "
                "calls = judge_spend.calls + excluded.calls, "
                "cached = judge_spend.cached + excluded.cached",
                (run_id, cost_usd, tokens, calls, cached),
            )

    def judge_spend(self, run_id: str) -> dict[str, Any] | None:
        """``{cost_usd, tokens, calls, cached}`` of a run that used a judge, else None."""
        row = self._judge_row(
            "SELECT cost_usd, tokens, calls, cached FROM judge_spend WHERE run_id = ?", (run_id,)
        )
        if row is None:
            return None
        return {"cost_usd": row[0], "tokens": row[1], "calls": row[2], "cached": row[3]}

    def add_simulator_spend(
        self, run_id: str, cost_usd: float, tokens: int, calls: int, cached: int
    ) -> None:
        """Add what this invocation spent on the simulated user (issue 32), apart from the judge."""
        self.add_judge_spend(run_id + SIMULATOR_SPEND, cost_usd, tokens, calls, cached)

    def simulator_spend(self, run_id: str) -> dict[str, Any] | None:
        """``{cost_usd, tokens, calls, cached}`` of a run that used a simulated user, else None."""
        return self.judge_spend(run_id + SIMULATOR_SPEND)
