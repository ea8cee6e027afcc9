"""``py:module:function`` targets: call a Python function (sync or async) with the input.

The function returns the response (text or a JSON value) or a `TargetResponse` to report
metadata. A sync function runs in a worker thread so it cannot stall the run.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from .._exceptions import TargetError
from ._base import TargetResponse

__all__ = ["PythonTarget"]


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
        except Exception as error:  # a module that fails while importing is the agent's bug
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
        try:
            if self.is_async:
                returned = await asyncio.wait_for(self.function(payload), timeout_s)
            else:
                returned = await asyncio.wait_for(
                    asyncio.to_thread(self.function, payload), timeout_s
                )
        except TimeoutError:
            raise TargetError(f"timed out after {timeout_s:g} s") from None
        except Exception as error:  # the agent's bug is a verdict of error, not our crash
            raise TargetError(f"{type(error).__name__}: {error}") from None
        if isinstance(returned, TargetResponse):
            return returned
        return TargetResponse(output=returned)

    async def aclose(self) -> None:
        """Nothing to release."""
