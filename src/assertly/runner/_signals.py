"""SIGTERM stops a run as Ctrl-C does.

Service managers, ``timeout``, CI runners and container runtimes stop a process with SIGTERM.
While a run is under way, SIGTERM cancels it the way asyncio's Ctrl-C handling does: the runner
cancels its calls in flight (killing the agents' process groups), every finished trial is
already stored, and the command line exits with 143 (128 + 15, as shells report it) and the
resume hint. Before and after the run (loading files, writing reports), SIGTERM keeps its
default action.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["Terminated", "until_sigterm"]

T = TypeVar("T")


class Terminated(Exception):  # named for what happened, as KeyboardInterrupt is
    """SIGTERM stopped the run; every finished trial is stored."""


async def until_sigterm(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``; on SIGTERM cancel it and raise `Terminated`.

    The handler is installed only where a signal can be handled (the main thread) and only
    when SIGTERM has its default action: a host program's own handler is left alone.
    """
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    received = False

    def on_sigterm() -> None:
        nonlocal received
        received = True
        if task is not None:
            task.cancel()

    installed = False
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
            installed = True
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            pass
    try:
        return await work
    except asyncio.CancelledError:
        if received:
            raise Terminated("terminated by SIGTERM") from None
        raise
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)  # back to the default action
