"""``py:module:function`` targets: call a Python function (sync or async) with the input.

The function returns the response (text or a JSON value) or a `TargetResponse` to report
metadata.

A stuck agent is abandoned at its timeout, never waited for (threads cannot be killed):

* a sync function runs on a daemon worker thread (reused across calls); at the timeout the
  call is an ``error`` and the thread is left to the agent (a daemon thread never keeps the
  process alive, where asyncio's default executor would be joined at exit);
* an async function runs on an event loop of its own, in a daemon thread, so one that blocks
  its loop (``time.sleep`` in an ``async def``) cannot stop the run's loop and its timeouts.
  When a call times out and that loop does not answer a ping within `_PING_S`, the loop is
  abandoned and the next calls get a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import math
import os
import queue
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from .._exceptions import TargetError
from .._python_values import PLAIN_TYPES, READABLE, NotJsonValue, as_json_value
from ._base import BaseTarget, TargetRequest, TargetResponse

__all__ = ["MAX_VALUE_NESTING", "PythonTarget"]

# Returned values are judged, stored and reported as they are; deeper ones (and cycles, which
# are infinitely deep) would exhaust the recursion of every JSON writer on the way.
MAX_VALUE_NESTING = 200


class _AgentExit(Exception):
    """The agent function raised SystemExit or KeyboardInterrupt."""


async def _contained(work: Awaitable[Any]) -> Any:
    """Await the agent, turning its ``sys.exit()`` into an ordinary exception.

    asyncio re-raises SystemExit and KeyboardInterrupt out of the event loop itself (a worker
    thread's too), which would end the whole run; caught here, they cost one verdict.
    """
    try:
        return await work
    except (SystemExit, KeyboardInterrupt) as error:
        raise _AgentExit(f"{type(error).__name__}: {error}") from None


# How long a timed-out async agent's loop has to answer a ping before it is abandoned.
_PING_S = 0.25


def _in_daemon_thread(function: Callable[[Any], Any], payload: Any) -> asyncio.Future[Any]:
    """``function(payload)`` on a daemon worker thread; its result or exception on a future."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # timed out: nobody waits any more
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def notify(outcome: tuple[bool, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the run's loop is closed: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    def work() -> Callable[[], None]:
        try:
            outcome = (True, function(payload))
        except (SystemExit, KeyboardInterrupt) as error:
            outcome = (False, _AgentExit(f"{type(error).__name__}: {error}"))
        except BaseException as error:  # handed to the caller, never lost
            outcome = (False, error)
        return lambda: notify(outcome)

    _WORKERS.submit(work)
    return future


class _Worker:
    """A daemon thread running the jobs handed to it, idle in its pool between them."""

    def __init__(self, pool: _Workers) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[Callable[[], Callable[[], None]] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="assertly-py-agent", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=_IDLE_S)
            except queue.Empty:
                with self.pool.lock:
                    if self in self.pool.idle:  # not taken meanwhile: nobody will send a job
                        self.pool.idle.remove(self)
                        return
                continue
            if job is None:  # the pool was shrunk
                return
            notify = job()
            # Back in the pool before the caller hears of the result: its next call reuses
            # this thread instead of starting another.
            with self.pool.lock:
                self.pool.idle.append(self)
            notify()


class _Workers:
    """Daemon threads for sync agents, reused across calls (a thread start costs ~0.2 ms).

    A worker stuck in a hung agent never comes back to the pool; the next calls get another.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []

    def submit(self, job: Callable[[], Callable[[], None]]) -> None:
        """Run ``job`` on an idle worker or a new one; then run what it returns."""
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        (worker or _Worker(self)).jobs.put(job)

    def shrink(self) -> None:
        """End the idle workers (a run is over: no thread outlives it but a stuck agent's)."""
        with self.lock:
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.jobs.put(None)
        for worker in idle:  # idle: each ends at once
            worker.thread.join(timeout=1.0)


# An idle worker ends after this long (a run's calls come much closer together).
_IDLE_S = 5.0
_WORKERS = _Workers()


class _AgentLoop:
    """An event loop in a daemon thread, where an async agent's calls run."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, name=f"assertly-loop {name}", daemon=True
        )
        self._thread.start()

    def _serve(self) -> None:
        try:
            self.loop.run_forever()
        finally:
            # Stopped (the run is over): end what the agent left running, release the loop.
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                gathered = asyncio.gather(*pending, return_exceptions=True)
                self.loop.run_until_complete(gathered)
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def run(self, function: Callable[[Any], Any], payload: Any) -> Awaitable[Any]:
        """Start ``function(payload)`` on this loop; a future of the run's loop for its result."""
        # _contained runs on the agent's loop too: a sys.exit() there must not stop that loop.
        done = asyncio.run_coroutine_threadsafe(_contained(function(payload)), self.loop)
        return asyncio.wrap_future(done)

    async def responsive(self, within_s: float) -> bool:
        """Whether the loop runs a callback within ``within_s`` (False: something blocks it)."""
        here = asyncio.get_running_loop()
        pong: asyncio.Future[None] = here.create_future()

        def answer() -> None:
            if not pong.done():
                pong.set_result(None)

        try:
            self.loop.call_soon_threadsafe(here.call_soon_threadsafe, answer)
            await asyncio.wait_for(pong, within_s)
        except (TimeoutError, RuntimeError):
            return False
        return True

    def abandon(self) -> None:
        """Stop the loop when it next runs (a blocked one never does; its thread is a daemon)."""
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)


def _json_output(value: Any, verb: str) -> Any:
    """What the function gave, as the JSON value it stands for (`as_json_value`).

    An SDK's reply or a framework's result (pydantic models, dataclasses, dates, tuples) is
    judged, stored and reported as its JSON. A value with none (a set, any other object) is
    the call's error, never judged by a stand-in such as its ``repr``.

    Raises:
        TargetError: Nested too deeply, holding NaN or an infinity, or with no JSON reading.
    """
    problem, plain = _unstorable(value, MAX_VALUE_NESTING)
    if problem is None and not plain:
        try:
            value = as_json_value(value)
        except NotJsonValue as error:
            raise TargetError(
                f"{verb} {error.what}, which is not a JSON value; {READABLE}"
            ) from None
        problem = _unstorable(value, MAX_VALUE_NESTING)[0]  # what a model or dataclass held
    if problem is not None:
        raise TargetError(problem)
    return value


def _unstorable(value: Any, limit: int) -> tuple[str | None, bool]:
    """Why a returned value cannot be judged, stored and reported as JSON, and if it is plain.

    Plain: dicts with string keys, lists, strings, numbers, booleans and None only, so nothing
    needs converting (`as_json_value`). The problem is None when there is none.

    Containers nesting more than ``limit`` deep (a cycle always does) would exhaust every JSON
    writer on the way; NaN and infinities are not JSON, and JSON writers would silently turn
    them into ``null``, so the verdict would be on a value the agent never returned.
    """
    stack = [(value, 0)]
    plain = True  # only dicts, lists, strings, numbers, booleans and None, as such
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if isinstance(item, dict | list | tuple | set | frozenset):
            if depth >= limit:
                return f"returned a value nested deeper than {limit} levels (or a cycle)", plain
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
            if kind is dict:
                plain = plain and all(type(key) is str for key in item)
            elif kind is not list:
                plain = False
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"returned a value holding {item!r}, which is not JSON (return a string, "
                "or None for a missing number)"
            ), plain
        elif kind not in PLAIN_TYPES:
            plain = False
    return None, plain


def _import(module_name: str) -> Any:
    """Import a module, also looking in the working directory for the project's own modules.

    The ``assertly`` script's ``sys.path`` starts with its own directory, not the project's.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        cwd = os.getcwd()
        if error.name != module_name.partition(".")[0] or cwd in sys.path:
            raise
        sys.path.append(cwd)
        importlib.invalidate_caches()
        return importlib.import_module(module_name)


class PythonTarget(BaseTarget):
    """Call ``module:function``."""

    def __init__(self, spec: str) -> None:
        module_name, _, function_name = spec.partition(":")
        if not module_name or not function_name:
            raise TargetError(f"expected py:module:function, got py:{spec}")
        try:
            module = _import(module_name)
        except ImportError as error:
            raise TargetError(f"cannot import {module_name!r}: {error}") from None
        except (Exception, SystemExit) as error:  # a module failing to import: the agent's bug
            raise TargetError(
                f"cannot import {module_name!r}: {type(error).__name__}: {error}"
            ) from None
        function = getattr(module, function_name, None)
        if not callable(function):
            raise TargetError(f"{module_name!r} has no function {function_name!r}")
        self.name = f"py:{spec}"
        self.function: Callable[..., Any] = function
        self.is_async = inspect.iscoroutinefunction(function)
        self._loop: _AgentLoop | None = None

    async def call(self, request: TargetRequest) -> TargetResponse:
        """Call the function once with the input."""
        payload, timeout_s = request.input, request.timeout_s
        agent_loop = None
        if self.is_async:
            if self._loop is None:
                self._loop = _AgentLoop(self.name)
            agent_loop = self._loop
            work: Awaitable[Any] = agent_loop.run(self.function, payload)
        else:
            work = _in_daemon_thread(self.function, payload)
        try:
            returned = await asyncio.wait_for(_contained(work), timeout_s)
        except TimeoutError:
            if agent_loop is not None and not await agent_loop.responsive(_PING_S):
                # The agent blocks its own loop: leave it (and its thread) behind.
                agent_loop.abandon()
                if self._loop is agent_loop:
                    self._loop = None
            raise TargetError(f"timed out after {timeout_s:g} s") from None
        except _AgentExit as error:
            raise TargetError(str(error)) from None
        except Exception as error:  # the agent's bug is a verdict of error, not our crash
            raise TargetError(f"{type(error).__name__}: {error}") from None
        response = returned if isinstance(returned, TargetResponse) else TargetResponse(returned)
        if response.output is None:
            # Almost always a function that forgot to return; judged as JSON null, it would
            # pass every `not-contains`. An agent whose answer is null can return "null".
            raise TargetError(
                "returned None, so there is no output to judge (return the response as text "
                "or a JSON value, or a TargetResponse; for a JSON null answer return 'null')"
            )
        response.output = _json_output(response.output, "returned")
        if response.tool_calls is not None:
            response.tool_calls = _json_output(response.tool_calls, "reported tool_calls holding")
        return response

    async def aclose(self) -> None:
        """End the idle worker threads, or stop the async agent's event loop and its thread."""
        if not self.is_async:
            _WORKERS.shrink()
        if self._loop is not None:
            self._loop.abandon()
            self._loop = None
