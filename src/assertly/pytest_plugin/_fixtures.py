"""The plugin's fixtures: ``assertly_target`` calls agents, ``assertly_check`` judges."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from ._session import State, state_of

if TYPE_CHECKING:
    from ..engine import CheckResult
    from ..runner import Runner
    from ..targets import TargetResponse

__all__ = ["TargetCaller", "assertly_check", "assertly_target"]


class TargetCaller:
    """Calls the project's agents from test code, through the configured targets.

    ``caller(agent, input)`` waits for the response (from sync tests, and from async ones
    too: the call runs on assertly's own event loop thread); ``await caller.acall(agent,
    input)`` does not block an async test's loop. ``--assertly-target`` overrides the config.
    """

    def __init__(self, state: State) -> None:
        self._state = state

    def __call__(
        self, agent: str, payload: Any, *, timeout_s: float | None = None
    ) -> TargetResponse:
        """Call ``agent`` with ``payload`` and return its response.

        Raises:
            TargetError: No target is configured for ``agent``, or the call failed.
        """
        runner = self._state.runner()
        return self._state.loop.run(_call_target(runner, agent, payload, timeout_s))

    async def acall(
        self, agent: str, payload: Any, *, timeout_s: float | None = None
    ) -> TargetResponse:
        """`__call__` for async code."""
        runner = self._state.runner()
        return await self._state.loop.arun(_call_target(runner, agent, payload, timeout_s))


async def _call_target(
    runner: Runner, agent: str, payload: Any, timeout_s: float | None
) -> TargetResponse:
    from dataclasses import replace

    from .._exceptions import TargetError

    target = runner.target_for(agent)
    if isinstance(target, TargetError):
        raise target
    from ..targets import TargetRequest

    timeout = timeout_s or target.timeout_s or runner.timeout_s
    started = time.perf_counter()
    response = await target.call(TargetRequest(payload, timeout))
    if response.latency_ms is None:
        response = replace(response, latency_ms=(time.perf_counter() - started) * 1000)
    return response


@pytest.fixture(scope="session")
def assertly_target(pytestconfig: pytest.Config) -> TargetCaller:
    """A `TargetCaller` for the project's agents.

    ``response = assertly_target("search", {"q": "x"})`` returns the target's response
    (``.output``, ``.model``, ``.cost_usd``, ``.latency_ms``);
    ``assertly_check(response, expectation)`` judges it with its cost and latency.
    """
    return TargetCaller(state_of(pytestconfig))


@pytest.fixture(scope="session")
def assertly_check() -> Callable[..., CheckResult]:
    """`assertly.assert_response`: ``assertly_check(response, expectation)``."""
    from .._assert import assert_response

    return assert_response
