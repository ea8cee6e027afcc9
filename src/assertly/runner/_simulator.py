"""The simulated user of a conversation test: a model playing the user (issue 32).

The model is any OpenAI-compatible endpoint: the config's ``simulator:``, else its ``judge:``.
It gets the test's ``persona`` as its system prompt, with a fixed instruction after it (it is
the user; it writes only its next message; it writes the stop token when its goal is met or it
gives up), then the conversation so far with the roles swapped: the agent's messages are the
simulator's ``user`` messages, the user's are its own ``assistant`` messages. The agent's tool
calls are not shown: a user sees what the agent says, not what it does behind it (an agent
message with no text shows as `NO_TEXT`). With nothing said yet (no ``first_message``, no
scripted turn), one fixed ``user`` message (`OPENING`) asks for the opening: most endpoints
refuse a request with no user message.

Its replies go through its own `JudgeClient` (its cost and tokens stay apart from the
judge's), so they are kept in the judge cache, keyed like judge requests, and ``--judge-cache``
governs them: a rerun against an unchanged agent replays the conversation with no call. A
reply that cannot be read (no text, an HTTP error after the retries, not JSON, too long:
`judge._chat`) is no message: `UserSimulator.next_message` returns why, and the trial is an
error naming its turn.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._secrets import safe_message
from ._model_judge import judge_counts

if TYPE_CHECKING:
    from ..judge import CacheMode
    from ..loading import ConfigModel, JudgeModel, SimulatedUser
    from ..store import RunStore

__all__ = [
    "INSTRUCTION",
    "NO_TEXT",
    "OPENING",
    "SimulatedMessage",
    "UserSimulator",
    "add_simulator_spend",
]

# After the persona, in the system prompt ({stop} is the conversation's stop token).
INSTRUCTION = (
    "You are the user in this conversation, talking with an assistant; stay the person "
    "described above. Write only your next message to the assistant: no role name, no quotes, "
    "no notes about the conversation. When your goal is met, or you give up, write {stop} "
    "(alone, or at the end of your last message)."
)
# The one message of a request when nothing has been said yet.
OPENING = "(The conversation has not started: write your first message to the assistant.)"
# An agent message with no text, as the simulator sees it.
NO_TEXT = "(no reply)"
_JUDGE = re.compile(r"\b(the judge|judge)('s)?\b(?!-)")  # not --judge-cache: a real option


@dataclass(frozen=True, slots=True)
class SimulatedMessage:
    """The simulated user's next message (`runner._conversation.SimulatedMessage`).

    Attributes:
        text: The reply, its stop token removed, stripped.
        ended: Whether the reply holds the stop token (the conversation ends; not sent).
        cost_usd: What the call cost (0 from the cache).
        tokens: The call's tokens (0 from the cache).
        cached: Whether the reply came from the judge cache.
    """

    text: str
    ended: bool
    cost_usd: float = 0.0
    tokens: int = 0
    cached: bool = False


class UserSimulator:
    """The run's simulated user: writes the user's next message of a conversation.

    Args:
        config: The config's ``simulator:``, else its ``judge:``.
        store: Where the judge cache lives.
        cache: ``--judge-cache`` (rw, ro, off, replay; None: rw).
        secrets: The run's secrets (kept out of every error).
        timeout_s: One reply's time, retries included, when the config gives none.
        wait: The runner's rate limiter, awaited before every call.
        refused: Why the run budget (``--max-cost-usd``) allows no new call, or None.
    """

    def __init__(
        self,
        config: JudgeModel,
        store: RunStore | None,
        *,
        cache: str | None,
        secrets: set[str],
        timeout_s: float,
        wait: Callable[[], Awaitable[None]] | None = None,
        refused: Callable[[], str | None] = lambda: None,
    ) -> None:
        from ..judge import JudgeClient  # made on first use: most runs simulate no user

        mode: CacheMode = cache or "rw"  # type: ignore[assignment]
        self.client = JudgeClient(
            config, store, cache=mode, secrets=secrets, timeout_s=timeout_s, wait=wait
        )
        self._store = store
        self._secrets = secrets
        self._refused = refused
        # What simulated users elsewhere spent for this run (the Ray backend's workers).
        self.elsewhere: dict[str, Any] = judge_counts(None)

    @classmethod
    def of_run(cls, runner: Any) -> UserSimulator | None:
        """The simulated user of a `Runner` (None: its config names no simulator or judge)."""
        config: ConfigModel = runner.config
        model = config.simulator or config.judge
        if model is None:
            return None
        return cls(
            model,
            runner.store,
            cache=runner.options.judge_cache,
            secrets=runner.secrets,
            timeout_s=runner.timeout_s,
            wait=runner._limiter.wait,
            refused=runner.budget.refused,
        )

    @property
    def cost_usd(self) -> float:
        """What the simulated user has cost so far in this invocation (workers' included)."""
        return self.client.cost_usd + float(self.elsewhere["cost_usd"])

    async def next_message(
        self, user: SimulatedUser, history: list[dict[str, Any]]
    ) -> SimulatedMessage | str:
        """The user's next message after ``history`` (the agent's view), or why there is none."""
        refused = self._refused()  # a call would start: the run budget, as for the judge
        if refused is not None:
            return refused
        reply = await self.client.chat(messages(user, history))
        if reply.error is None:
            return _message(user.stop_token, reply.text or "", reply)
        return safe_message(_JUDGE.sub(_simulator_word, reply.error), self._secrets)

    async def close(self, run_id: str | None) -> None:
        """Close the client; store what this invocation spent for ``run_id``."""
        client = self.client
        await client.close()
        own = judge_counts(client)
        spend = {name: own[name] + self.elsewhere[name] for name in own}
        if run_id is not None and self._store is not None and (spend["calls"] or spend["cached"]):
            self._store.add_simulator_spend(
                run_id, spend["cost_usd"], spend["tokens"], spend["calls"], spend["cached"]
            )
        client.calls = client.cached = client.tokens = 0
        client.cost_usd = 0.0
        self.elsewhere = judge_counts(None)


def add_simulator_spend(runner: Any, spend: dict[str, Any]) -> None:
    """Count what a Ray worker's simulated user spent (``simulator_*`` of a trial's spend)."""
    if not spend.get("simulator_calls") and not spend.get("simulator_cached"):
        return
    simulator = runner.simulator_for()
    if simulator is not None:
        for name in simulator.elsewhere:
            simulator.elsewhere[name] += spend.get(f"simulator_{name}") or 0


def messages(user: SimulatedUser, history: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The simulator's request: persona and instruction, then ``history`` with roles swapped."""
    system = f"{user.persona.strip()}\n\n{INSTRUCTION.format(stop=user.stop_token)}"
    sent: list[dict[str, str]] = [{"role": "system", "content": system}]
    for message in history:
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if message.get("role") == "assistant":  # the agent: the simulator's interlocutor
            sent.append({"role": "user", "content": text.strip() or NO_TEXT})
        else:
            sent.append({"role": "assistant", "content": text})
    if len(sent) == 1:
        sent.append({"role": "user", "content": OPENING})
    return sent


def _message(stop: str, text: str, reply: Any) -> SimulatedMessage | str:
    """The reply as the user's message, or why it is none."""
    ended = stop in text
    said = text.replace(stop, "").strip()
    if not said and not ended:
        return f"the simulator's reply has no text: {text!r}"
    return SimulatedMessage(said, ended, reply.cost_usd, reply.tokens, reply.cached)


def _simulator_word(match: re.Match[str]) -> str:
    """The client's word for its model (the judge), said of the simulator."""
    return ("the simulator" if match.group(1) == "the judge" else "simulator") + (
        match.group(2) or ""
    )
