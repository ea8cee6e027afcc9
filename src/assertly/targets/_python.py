"""``py:module:function`` targets: call a Python function (sync or async) with the input.

The function returns the response (text or a JSON value) or a `TargetResponse` to report
metadata. A sync function runs in a worker thread so it cannot stall the run.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from .._exceptions import TargetError
from ._base import TargetResponse

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


def _unstorable(value: Any, limit: int) -> str | None:
    """Why a returned value cannot be judged, stored and reported as JSON, or None.

    Containers nesting more than ``limit`` deep (a cycle always does) would exhaust every JSON
    writer on the way; NaN and infinities are not JSON, and JSON writers would silently turn
    them into ``null``, so the verdict would be on a value the agent never returned.
    """
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple | set | frozenset):
            if depth >= limit:
                return f"returned a value nested deeper than {limit} levels (or a cycle)"
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"returned a value holding {item!r}, which is not JSON (return a string, "
                "or None for a missing number)"
            )
    return None


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


class PythonTarget:
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

    async def call(self, payload: Any, timeout_s: float) -> TargetResponse:
        """Call the function once."""
        if self.is_async:
            work = self.function(payload)
        else:
            work = asyncio.to_thread(self.function, payload)
        try:
            returned = await asyncio.wait_for(_contained(work), timeout_s)
        except TimeoutError:
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
        problem = _unstorable(response.output, MAX_VALUE_NESTING)
        if problem is not None:
            raise TargetError(problem)
        return response

    async def aclose(self) -> None:
        """Nothing to release."""
