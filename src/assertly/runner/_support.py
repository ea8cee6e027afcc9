"""The parts of a run around the runner's loop.

The rate limit, hooks, batching, cancellation, and what the store keeps of a test.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from .._test_meta import TestMeta
from ..loading import ConfigModel, Conversation, TestCase
from ..targets._command import _end

__all__ = [
    "NOT_RUN",
    "RateLimiter",
    "batches",
    "kept_trials",
    "now_iso",
    "raise_if_cancelled",
    "run_hook",
    "test_meta",
]

NOT_RUN = "not run: --fail-fast stopped the run after a failure"


class RateLimiter:
    """At most ``rate`` calls per second, spaced evenly."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def run_hook(
    config: ConfigModel, name: str, timeout_s: float, env: dict[str, str] | None = None
) -> str | None:
    """Run a named hook of the config (in its directory); the reason it failed, or None.

    ``env``: variables added to the hook's environment (``ASSERTLY_TARGET`` in a matrix run).
    """
    command = config.hooks.get(name)
    if command is None:
        return f"unknown hook '{name}' (hooks in config: {', '.join(config.hooks) or 'none'})"
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=config.directory,
            env={**os.environ, **env} if env else None,
            start_new_session=True,
        )
        _, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        await _end(process)  # the hook and everything it started
        return f"hook '{name}' timed out after {timeout_s:g} s"
    except OSError as error:
        return f"hook '{name}' could not start: {error.strerror}"
    if process.returncode != 0:
        tail = stderr.decode("utf-8", errors="replace").strip()[-500:]
        return f"hook '{name}' exited with code {process.returncode}" + (
            f": {tail}" if tail else ""
        )
    return None


def kept_trials(stored: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """A resumed test's stored trials that count: those --fail-fast never ran do not."""
    return {number: trial for number, trial in stored.items() if trial.get("reason") != NOT_RUN}


# Tests judged inline between two yields to the event loop.
_YIELD_EVERY = 64

# Tests whose metadata is written in one transaction, just before they are scheduled.
_META_BATCH = 256


def batches(tests: Iterable[TestCase], size: int) -> Iterator[list[TestCase]]:
    batch: list[TestCase] = []
    for test in tests:
        batch.append(test)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def raise_if_cancelled() -> None:
    """Honour a Ctrl-C whose cancellation an inner ``wait_for`` swallowed.

    On Python 3.11 ``asyncio.wait_for`` can lose a cancellation that races with the call it
    waits for finishing; the cancel request is still counted on the task, so check it.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def test_meta(test: TestCase, definition: str | None, threshold: str) -> dict[str, Any]:
    """What the store keeps of a test for reports (``pass_threshold``: the one its verdict uses).

    A test of steps (more than one, or one named apart from the test) has ``multi_step`` and
    the input ``[{step, input}, ...]``, one per step in order.
    """
    multi_step = len(test.steps) > 1 or bool(test.steps and test.steps[0].name != test.id)
    if test.conversation is not None:
        sent: Any = conversation_input(test.conversation)
    elif multi_step:
        sent = [{"step": step.name, "input": step.input} for step in test.steps]
    else:
        sent = test.steps[0].input if test.steps else None
    return TestMeta(
        key=test.key,
        id=test.id,
        name=test.name,
        suite=test.suite,
        file=test.file,
        line=test.line,
        tags=test.tags,
        priority=test.priority,
        description=test.description,
        definition=definition,
        agent=test.agent,
        target=test.target,
        pass_threshold=threshold,
        input=sent,
        multi_step=multi_step,
        conversation=test.conversation is not None,
    ).to_json()


def conversation_input(conversation: Conversation) -> dict[str, Any]:
    """What a conversation test sends, as reports show it: its input, turns and persona."""
    sent: dict[str, Any] = {}
    if conversation.input is not None:
        sent["input"] = conversation.input
    if conversation.turns:
        sent["turns"] = [turn.user for turn in conversation.turns]
    simulated = conversation.simulated_user
    if simulated is not None:
        sent["simulated_user"] = {
            "persona": simulated.persona,
            **({"first_message": simulated.first_message} if simulated.first_message else {}),
            "max_turns": simulated.max_turns,
        }
    return sent
