"""Plain chat completions through the judge's client: the simulated user's replies (issue 32).

`JudgeClient.chat` asks the same endpoint as a judgement does, with the same settings, retries,
rate limit, budget and secret redaction, but asks for no verdict format and reads no verdict:
the reply is the message's text. It shares the judge cache, keyed as a judgement's first
sample (`JudgeClient.cache_key` with sample 0), so ``--judge-cache`` governs it exactly as it
governs the judge. This module holds what the client's method reads and writes (kept here so
`_client` stays under the size the project allows); it imports nothing of the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["MAX_REPLY_CHARS", "ChatReply", "cached_chat", "kept_chat"]

# A longer reply is a model gone astray (a user's message is not a book): an error, not kept.
MAX_REPLY_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A chat completion's reply, or why there is none.

    Attributes:
        text: The reply's text (None when there is none).
        error: Why there is no reply (None when there is one).
        cost_usd: What the call cost (0 for a reply from the cache).
        tokens: The call's prompt and completion tokens (0 from the cache).
        cached: Whether the reply came from the judge cache.
    """

    text: str | None = None
    error: str | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    cached: bool = False


def cached_chat(store: RunStore | None, cache: str, key: str) -> ChatReply | None:
    """The reply the judge cache keeps for ``key`` in ``cache`` mode; None: ask the endpoint.

    A kept reply that would not be kept now (no text, too long: a store written by something
    else) is a miss. In ``replay`` a miss is the error, and nothing is asked.
    """
    found = store.judge_reply(key) if store is not None and cache != "off" else None
    if found is not None and found.strip() and len(found) <= MAX_REPLY_CHARS:
        return ChatReply(found, cached=True)
    if cache == "replay":
        return ChatReply(
            error=f"no cached reply for this request (--judge-cache replay; cache key "
            f"{key[:16]}…): run once with --judge-cache rw to record it"
        )
    return None


def kept_chat(
    store: RunStore | None,
    key: str,
    reply: Any,
    settings: dict[str, Any],
    tokens: int,
    cost_usd: float,
    saved_at: str,
) -> ChatReply:
    """A new reply as `JudgeClient.chat` returns it, kept in ``store`` (None: not kept).

    Only a reply with text, of at most `MAX_REPLY_CHARS`, is kept: another is an error now,
    and kept it would answer every later run without the endpoint being asked again.
    """
    why = None
    if not isinstance(reply, str) or not reply.strip():
        why = f"the model's reply has no text: {reply!r}"
    elif len(reply) > MAX_REPLY_CHARS:
        why = (
            f"the model's reply is {len(reply):,} characters long (at most "
            f"{MAX_REPLY_CHARS:,}): {reply[:80]!r}…"
        )
    if why is not None:
        return ChatReply(error=why, cost_usd=cost_usd, tokens=tokens)
    if store is not None:
        store.save_judge_reply(key, reply, str(settings["model"]), tokens, cost_usd, saved_at)
    return ChatReply(reply, cost_usd=cost_usd, tokens=tokens)
