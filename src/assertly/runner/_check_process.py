"""Checking on a second core: a forked process that checks responses for the runner.

CPython runs Python on one core at a time, and in a large run checking is about half of the busy
core's work. So the runner forks, after loading and before its event loop starts, a process
that holds the same compiled tests; the event loop sends it each response and gets back the
step's record, while it goes on with calls, the store and the console. Measured before it was
built: checking a response and building its record took 135-156 µs, pickling the response
there 2 µs, and the record back 23-29 µs to pickle (there) and 26-27 µs to unpickle (here).

Nothing is lost to it: a record that cannot cross (a custom assertion's unpicklable detail)
or a check process that dies is checked here instead. It ignores Ctrl-C (the runner handles
it) and exits when the runner's end of the socket closes, including when the runner is killed.

``ASSERTLY_JUDGE_PROCESS``: ``auto`` (default: runs of at least `MIN_TESTS` tests at ``-j``
`MIN_CONCURRENCY` or more, on a machine with two cores or more), ``on`` (any run), ``off``.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import socket
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..engine import CheckContext

__all__ = ["MIN_CONCURRENCY", "MIN_TESTS", "CheckProcess", "wanted"]

MIN_TESTS = 2_000
MIN_CONCURRENCY = 4
_HEADER = struct.Struct("!Q")
# Requests in flight: enough to keep the checker busy while the loop does other work.
_IN_FLIGHT = 128

CheckFunction = Callable[[str, Any, Any, CheckContext], Any]


def wanted(tests: int, concurrency: int) -> bool:
    """Whether a run of ``tests`` tests at ``concurrency`` should check in a second process.

    Checking elsewhere pays only when the run is long enough to repay the fork, there is a
    second core, and other tests' calls are in flight while one is checked.
    """
    setting = os.environ.get("ASSERTLY_JUDGE_PROCESS", "auto").strip().lower()
    if setting in ("off", "0", "false", "no") or not hasattr(os, "fork"):
        return False
    if setting in ("on", "1", "true", "yes"):
        return True
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return tests >= MIN_TESTS and (cores or 1) >= 2 and concurrency >= MIN_CONCURRENCY


class CheckProcess:
    """A forked checker and the runner's end of the socket to it.

    Args:
        checks: Every list of compiled checks a step of the run may use (the listed tests'
            steps and each dataset suite's); a step with another list is checked here.
        check: The runner's checking function, run in the child on the same objects.
    """

    def __init__(self, checks: Iterable[Any], check: CheckFunction) -> None:
        lists = {id(item): item for item in checks}
        self._known = frozenset(lists)
        ours, theirs = socket.socketpair()
        # No Ctrl-C between fork and the child's own handler: it would run the runner's code
        # in the child. Blocked here, ignored there, unblocked here again.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child, which never returns
                _child(theirs, ours, lists, check)
        except OSError:  # no process to spare: the caller checks in its own
            ours.close()
            theirs.close()
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        theirs.close()
        self.pid = pid
        self._socket = ours
        self._pending: deque[asyncio.Future[Any]] = deque()
        self._slots: asyncio.Semaphore | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._connected: asyncio.Future[None] | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self.broken = False

    async def check(self, name: str, checks: Any, output: Any, context: CheckContext) -> Any:
        """The step's record checked there, or None: check it here instead."""
        if self.broken or id(checks) not in self._known:
            return None
        if self._connected is None:  # the first request: every worker waits for the same
            self._connected = asyncio.ensure_future(self._connect())
        await asyncio.shield(self._connected)
        assert self._slots is not None and self._writer is not None
        async with self._slots:
            if self.broken:
                return None
            try:
                request = pickle.dumps((id(checks), name, output, context), _PROTOCOL)
            except Exception:  # an output or context that cannot cross (a Python agent's object)
                return None
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._pending.append(future)
            self._writer.write(_HEADER.pack(len(request)) + request)
            return await future

    async def _connect(self) -> None:
        reader, self._writer = await asyncio.open_unix_connection(sock=self._socket)
        self._slots = asyncio.Semaphore(_IN_FLIGHT)
        self._reader_task = asyncio.ensure_future(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        """Hand each reply to the request waiting for it (the checker answers in order)."""
        try:
            while True:
                header = await reader.readexactly(_HEADER.size)
                blob = await reader.readexactly(_HEADER.unpack(header)[0])
                future = self._pending.popleft()
                if future.done():  # its test was cancelled (Ctrl-C)
                    continue
                try:
                    kind, *found = pickle.loads(blob)
                except Exception:
                    kind, found = "error", []
                future.set_result(found[0] if kind == "ok" else None)
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass  # the check process is gone: whatever was sent is checked here
        finally:
            self.broken = True
            while self._pending:
                future = self._pending.popleft()
                if not future.done():
                    future.set_result(None)

    async def aclose(self) -> None:
        """Close the socket (the checker exits at once) and reap the process."""
        if self._writer is not None:
            self._writer.close()
        else:
            self._socket.close()
        if self._reader_task is not None:
            self._reader_task.cancel()
            await asyncio.gather(self._reader_task, return_exceptions=True)
        self.close()

    def close(self) -> None:
        """Reap the process (after `aclose`, or when no event loop ever ran).

        It exits as soon as it reads the end of its socket; one still checking (a regex at its
        time limit) gets `_REAP_S` seconds, then is killed.
        """
        if not self.pid:
            return
        self._socket.close()
        deadline = time.monotonic() + _REAP_S
        try:
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    break
                time.sleep(0.005)
        except ChildProcessError:
            pass
        self.pid = 0


_PROTOCOL = pickle.HIGHEST_PROTOCOL
_REAP_S = 5.0


def _child(
    sock: socket.socket, other: socket.socket, lists: dict[int, Any], check: CheckFunction
) -> None:  # pragma: no cover - runs in the child
    """Check requests until the socket closes; never return into the runner's code."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        other.close()
        stream = sock.makefile("rb")
        while True:
            header = stream.read(_HEADER.size)
            if len(header) < _HEADER.size:
                break
            key, name, output, context = pickle.loads(stream.read(_HEADER.unpack(header)[0]))
            try:
                record = check(name, lists[key], output, context)
                record.output = None  # the runner has it
                reply = pickle.dumps(("ok", record), _PROTOCOL)
            except Exception:
                reply = pickle.dumps(("error",), _PROTOCOL)
            sock.sendall(_HEADER.pack(len(reply)) + reply)
    except BaseException:
        code = 1
    finally:
        os._exit(code)
