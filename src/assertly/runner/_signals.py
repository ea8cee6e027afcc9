"""SIGTERM stops a run as Ctrl-C does.

Service managers, ``timeout``, CI runners and container runtimes stop a process with SIGTERM.
While a run is under way, SIGTERM cancels it the way asyncio's Ctrl-C handling does: the runner
cancels its calls in flight (killing the agents' process groups), every finished trial is
already stored, and the command line exits with 143 (128 + 15, as shells report it) and the
resume hint. Before and after the run (loading files, writing reports), SIGTERM keeps its
default action.

The event loop sees a signal only between steps, and judging a response is one synchronous
step: a trial with thirty time-limited regexes that each ran out of time kept SIGTERM waiting
37 s (issue 29). So while the loop's thread judges (`judging`, around `check_step`, which
is pure), SIGTERM and Ctrl-C also abandon that judging at once: Python runs a signal's handler
between two bytecodes of the main thread, so within one regex search (at most its 1 s limit).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["Terminated", "checking", "done", "until_sigterm"]

T = TypeVar("T")


class _Checking:
    """Which thread may abandon its judging on a signal, and whether it is judging now."""

    __slots__ = ("active", "thread")

    def __init__(self) -> None:
        self.thread: int | None = None  # the event loop's thread while `until_sigterm` runs
        self.active = False


_CHECKING = _Checking()


def checking() -> bool:
    """Mark the caller's judging as abandonable; True when it was marked (then `done`)."""
    if _CHECKING.thread != threading.get_ident() or _CHECKING.active:
        return False
    _CHECKING.active = True
    return True


def done() -> None:
    """The judging `judging` marked has ended."""
    _CHECKING.active = False


def _abandoning(previous: Any, on_signal: Any) -> Any:
    """A Python-level handler: the loop's own handling, and the judging under way abandoned."""

    def handler(signum: int, frame: Any) -> None:
        if callable(previous):
            previous(signum, frame)  # asyncio's Ctrl-C handling: cancels the main task
        if _CHECKING.active and _CHECKING.thread == threading.get_ident():
            # Only here, inside pure judging, is the main task cancelled from a handler (not
            # in the loop's own code); otherwise the loop's wakeup descriptor does it.
            _CHECKING.active = False
            if on_signal is not None:
                on_signal()
            raise asyncio.CancelledError  # the trial ends here; the run is cancelled

    return handler


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
    interrupt: Any = None
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
            installed = True
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            pass
    if installed:
        # The loop still reads the signal from its wakeup descriptor (set by
        # add_signal_handler); these Python-level handlers add the abandoning of judging.
        signal.signal(signal.SIGTERM, _abandoning(None, on_sigterm))
        interrupt = signal.getsignal(signal.SIGINT)
        if callable(interrupt):
            signal.signal(signal.SIGINT, _abandoning(interrupt, None))
        _CHECKING.thread = threading.get_ident()
    try:
        return await work
    except asyncio.CancelledError:
        if received:
            raise Terminated("terminated by SIGTERM") from None
        raise
    finally:
        if installed:
            _CHECKING.thread = None
            _CHECKING.active = False
            if callable(interrupt):
                signal.signal(signal.SIGINT, interrupt)
            loop.remove_signal_handler(signal.SIGTERM)  # back to the default action
