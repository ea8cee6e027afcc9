"""One event loop for the whole pytest session, on a helper thread."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ._reporting import AssertlyWarning

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """One event loop for the whole session, running on a helper thread.

    Every coroutine of the session runs here, so targets (HTTP clients, process pools) stay
    bound to one loop, and code that already runs inside an event loop (async tests) can
    still wait for a call.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    ready.set()
                    loop.run_forever()

                thread = threading.Thread(target=main, name="assertly-event-loop", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the session loop and wait for its result."""
        if self._thread is not None and threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("cannot wait for assertly's event loop from inside it; use acall")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._start())
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C while waiting: stop the call too
            raise

    def call(self, function: Callable[[], T]) -> T:
        """Call ``function`` on the loop's thread and return its result.

        For objects bound to the thread that made them (a SQLite connection is used only in
        its own thread) that the session's coroutines use.
        """

        async def on_loop() -> T:
            return function()

        return self.run(on_loop())

    async def arun(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` run on the session loop, from any other event loop."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._start())
        return await asyncio.wrap_future(future)

    def close(self, final: Coroutine[Any, Any, Any] | None = None) -> None:
        """Run ``final`` (closing targets), cancel what is left, stop the loop."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            if final is not None:
                final.close()
            return

        async def shutdown() -> None:
            if final is not None:
                await final
            current = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await loop.shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=30)
        except Exception as error:  # closing must not hide the session's own outcome
            warnings.warn(f"assertly: closing targets failed: {error}", AssertlyWarning, 2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None
