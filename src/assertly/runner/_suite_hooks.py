"""Suite-level ``setup``/``cleanup`` hooks: once before a suite's first trial, once after it.

A suite's tests are contiguous in a run's plan (a file's suites in order, then each dataset),
so a suite is finished when the plan has moved on to another suite and none of its tests is
still running; with ``-j`` the setup is shared (every test of the suite waits for the one
setup) and the cleanup waits for the last test of the suite to finish. Setup is lazy: it runs
when the suite's first trial needs it, so a suite whose tests are all skipped, already judged
(``--resume``) or invalid runs no hook. Cleanup runs only after a setup was attempted (also
when it failed, which may leave something half made), and at the end of the run for every
suite still open (a ``--fail-fast`` stop, Ctrl-C).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass

from ..loading import SuiteHooks

__all__ = ["SuiteHookState"]

RunHook = Callable[[str], Awaitable[str | None]]


@dataclass(slots=True)
class _Suite:
    hooks: SuiteHooks
    setup: asyncio.Future[str | None] | None = None
    in_flight: int = 0  # tests of the suite taken from the plan and not finished
    closed: bool = False  # the plan has moved past the suite


class SuiteHookState:
    """The suites of one run with hooks: which ones are set up, running, finished.

    Args:
        run_hook: Runs one named hook; returns why it failed, or None.
    """

    def __init__(self, run_hook: RunHook) -> None:
        self._run_hook = run_hook
        self._suites: dict[str, _Suite] = {}
        self._current: _Suite | None = None  # the suite the plan is in
        self._finished: list[_Suite] = []  # closed with nothing in flight: clean up next
        self.problems: list[str] = []  # failed cleanups (the run fails: exit code 1)

    def enter(self, hooks: SuiteHooks | None) -> None:
        """A worker took a test from the plan (``hooks``: its suite's, None without any).

        Synchronous on purpose: taking the test and counting it happen without a turn of the
        event loop in between, so no cleanup can start while a test of the suite is taken.
        """
        current = self._current
        if current is not None and (hooks is None or current.hooks.key != hooks.key):
            current.closed = True
            self._current = None
            if current.in_flight == 0:
                self._finished.append(current)
        if hooks is None:
            return
        suite = self._suites.get(hooks.key)
        if suite is None:
            suite = self._suites[hooks.key] = _Suite(hooks)
        suite.in_flight += 1
        suite.closed = False
        self._current = suite

    @property
    def pending(self) -> bool:
        """Whether some finished suite still waits for its cleanup (`flush`)."""
        return bool(self._finished)

    async def flush(self) -> None:
        """Run the cleanup of every suite that finished while no test of it was running."""
        while self._finished:
            await self._cleanup(self._finished.pop())

    async def leave(self, hooks: SuiteHooks) -> None:
        """A test of the suite finished; the last one of a finished suite cleans it up."""
        suite = self._suites.get(hooks.key)
        if suite is None:
            return
        suite.in_flight -= 1
        if suite.closed and suite.in_flight == 0:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                return  # interrupted: `close_all` cleans up once every worker has stopped
            await self._cleanup(suite)

    async def ready(self, hooks: SuiteHooks) -> str | None:
        """Set the suite up once (every caller waits for the same setup); why it failed."""
        suite = self._suites.get(hooks.key)
        if suite is None:  # a caller that does not plan (the pytest plugin)
            suite = self._suites[hooks.key] = _Suite(hooks)
        if suite.setup is None:
            suite.setup = asyncio.ensure_future(self._run_all(hooks.setup))
        # Shielded: one waiter being cancelled must not cancel the setup the others wait for.
        return await asyncio.shield(suite.setup)

    async def cleanup(self, key: str) -> None:
        """Clean the suite ``key`` up now if it was set up (the pytest plugin's teardown)."""
        suite = self._suites.get(key)
        if suite is not None:
            await self._cleanup(suite)

    async def close_all(self) -> None:
        """At the end of a run: clean up every suite that was set up and is not yet clean."""
        self._finished.clear()
        self._current = None
        for suite in list(self._suites.values()):
            await self._cleanup(suite)

    async def _run_all(self, names: Sequence[str]) -> str | None:
        for name in names:
            failure = await self._run_hook(name)
            if failure:
                return failure
        return None

    async def _cleanup(self, suite: _Suite) -> None:
        if self._suites.get(suite.hooks.key) is suite:
            del self._suites[suite.hooks.key]  # a suite met again later is set up again
        if suite.setup is None:
            return  # never set up: nothing to clean
        if not suite.setup.done():
            with suppress(BaseException):  # interrupted while setting up: let it end first
                await suite.setup
        for name in suite.hooks.cleanup:
            failure = await self._run_hook(name)
            if failure:
                self.problems.append(f"suite {suite.hooks.key}: cleanup: {failure}")
