"""``py:module:function`` targets: call a Python function (sync or async) with the input.

The function returns the response (text or a JSON value) or a `TargetResponse` to report
metadata.

The function runs in a process of its own (``_py_worker.py``), never in the runner's: an agent
that ends its process (``os._exit``, a segfault, ``os.abort``, a signal) costs its own call, an
``error`` naming the exit code or signal, and the run goes on with a fresh process. Each
process answers one call at a time; the target keeps a pool of them, as many as calls in
flight at once (``-j``), reused from call to call (module state, clients and caches live as
long as their process). What crosses: the input and the key, and back the reply already read
as JSON (`as_json_value`), with its model, cost, tokens, metadata and tool calls.

A call that outlives its timeout is an ``error``, and its process group is killed (a stuck
agent leaves nothing behind).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pickle
import queue
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from .._exceptions import TargetError
from . import _py_worker
from ._base import BaseTarget, TargetRequest, TargetResponse

__all__ = ["MAX_VALUE_NESTING", "PythonTarget"]

MAX_VALUE_NESTING = _py_worker.MAX_VALUE_NESTING
_WORKER_FILE = str(Path(_py_worker.__file__).resolve())
# How long a closed agent process has to end before it is killed.
_CLOSE_WAIT_S = 1.0
# How long the runner waits for a dead agent process's exit status.
_REAP_WAIT_S = 5.0


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


def _describe_end(returncode: int | None) -> str:
    """How an agent's process ended, in words (the call's error message)."""
    if returncode is None:
        return "the agent's process closed its pipe to assertly and did not exit"
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        why = {
            "SIGSEGV": " (a segmentation fault: a crash in native code)",
            "SIGBUS": " (a bus error: a crash in native code)",
            "SIGABRT": " (os.abort() or a failed assertion in native code)",
            "SIGKILL": " (killed: the OOM killer, or a kill -9)",
            "SIGFPE": " (a floating-point exception in native code)",
        }.get(name, "")
        return f"the agent's process was killed by {name} ({number}){why} while answering"
    return (
        f"the agent's process exited with code {returncode} while answering (os._exit() "
        "or an exit from native code)"
    )


class _AgentProcess:
    """One process running the agent (``_py_worker.py``), answering one call at a time."""

    def __init__(self, spec: str) -> None:
        to_worker, requests = os.pipe()
        replies, from_worker = os.pipe()
        argv = [sys.executable, _WORKER_FILE, json.dumps(sys.path), spec]
        try:
            self.popen = subprocess.Popen(
                [*argv, str(to_worker), str(from_worker)],
                stdin=subprocess.DEVNULL,
                pass_fds=(to_worker, from_worker),
                # Its own process group: a timeout kills the agent's children too, and the
                # terminal's Ctrl-C reaches assertly, which stops the calls itself.
                start_new_session=True,
            )
        except OSError as error:
            os.close(requests)
            os.close(replies)
            raise TargetError(f"cannot start the agent's process: {error}") from None
        finally:  # the process's ends of the pipes are its own now
            os.close(to_worker)
            os.close(from_worker)
        self.garbled: str | None = None  # why its reply pipe can no longer be read
        self.requests: IO[bytes] = os.fdopen(requests, "wb")
        self._replies = replies
        # Reading the replies waits on three things: the pipe, a wake-up pipe written when the
        # process is killed, and the process itself. A child the agent started in a session of
        # its own (a daemon) keeps the pipe open after the process ends: without the other
        # two, the read never returned, and killing the process at a timeout waited for it
        # (issue 28, red team probe "setsid/double fork of a child that holds pipes").
        self._wake_r, self._wake_w = os.pipe()
        self._reading = threading.Lock()
        self._poll = select.poll()
        self._poll.register(replies, select.POLLIN)
        self._poll.register(self._wake_r, select.POLLIN)
        self._pidfd: int | None = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                self._pidfd = os.pidfd_open(self.popen.pid)
                self._poll.register(self._pidfd, select.POLLIN)

    def wait_ready(self, _: Any = None) -> None:
        """Wait until the agent's module is imported (the worker says "ready").

        Raises:
            TargetError: The import failed, or the process ended first (it is killed).
        """
        hello = self._receive()
        if hello is None or hello[0] != "ready":
            message = hello[1] if hello is not None else self.ended()
            self.kill()
            raise TargetError(message)

    def exchange(self, request: tuple[Any, str | None, str | None]) -> tuple[bool, Any]:
        """Send a request and wait for its reply: (acknowledged, reply).

        The reply is None if the process ended meanwhile; ``acknowledged`` says whether it had
        read the request first (if not, the call never started in it).
        """
        acknowledged = False
        try:
            _py_worker.send(self.requests, request)
            ack = self._receive()
            if ack is None:
                return False, None
            acknowledged = True
            if ack != ("ack", None):
                raise _py_worker.BadFrame(f"{ack!r:.100} instead of an acknowledgement")
            reply = self._receive()
            if reply is not None and not (
                isinstance(reply, tuple) and len(reply) == 2 and reply[0] in ("ok", "error")
            ):
                raise _py_worker.BadFrame(f"{reply!r:.100} instead of a reply")
            return True, reply
        except _py_worker.BadFrame as error:
            # Something else wrote to the pipe (the agent, a child of its): nothing read from
            # it can be trusted as this call's reply, nor can the process serve another call.
            self.garbled = (
                "the agent's process wrote to assertly's reply pipe something that is not "
                f"assertly's reply ({error}); the process was ended"
            )
            return acknowledged, None
        except (OSError, ValueError):  # a broken pipe, or the pipe closed by kill()
            return acknowledged, None

    def _receive(self) -> Any:
        """Read one frame; None once the process has ended or was killed.

        Raises:
            _py_worker.BadFrame: The bytes are not a frame.
        """
        with self._reading:
            header = self._read(_py_worker._HEADER.size)
            if header is None:
                return None
            (size,) = _py_worker._HEADER.unpack(header)
            if size > _py_worker.MAX_FRAME:
                raise _py_worker.BadFrame(f"a frame of {size} bytes")
            data = self._read(size)
        if data is None:
            return None
        try:
            return pickle.loads(data)
        except Exception as error:
            raise _py_worker.BadFrame(f"{type(error).__name__}: {error}") from None

    def _read(self, size: int) -> bytes | None:
        chunks: list[bytes] = []
        while size:
            ready = {fd for fd, _ in self._poll.poll()}
            if self._replies not in ready:  # killed, or ended with nothing more to say
                return None
            chunk = os.read(self._replies, min(size, 1 << 20))
            if not chunk:  # the end of the pipe
                return None
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def ended(self) -> str:
        """How the process ended (it closed its pipe: it is ending or has ended)."""
        try:
            returncode: int | None = self.popen.wait(_REAP_WAIT_S)
        except subprocess.TimeoutExpired:
            returncode = None
            self.kill()
        return _describe_end(returncode)

    def kill(self) -> None:
        """Kill the process and everything it started; release the pipes."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(_REAP_WAIT_S)
        self._close_pipes()

    def close(self) -> None:
        """Let the process end (it reads the end of its input), then kill what is left."""
        self._close_pipes()
        try:
            self.popen.wait(_CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close_pipes(self) -> None:
        with contextlib.suppress(OSError):
            self.requests.close()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")  # a read in progress returns None at once
        with self._reading:  # then no read uses the descriptors any more
            for fd in (self._replies, self._wake_r, self._wake_w, self._pidfd):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._pidfd = None
            self._replies = self._wake_r = self._wake_w = -1


class PythonTarget(BaseTarget):
    """Call ``module:function``, in processes of its own."""

    def __init__(self, spec: str) -> None:
        module_name, _, function_name = spec.partition(":")
        if not module_name or not function_name:
            raise TargetError(f"expected py:module:function, got py:{spec}")
        self.name = f"py:{spec}"
        self._spec = spec
        self._lock = threading.Lock()
        self._idle: list[_AgentProcess] = []
        self._all: set[_AgentProcess] = set()
        # The first process now: a module that cannot be imported is said at once.
        first = self._spawn()
        try:
            first.wait_ready()
        except TargetError:
            self._forget(first)
            raise
        self._release(first)

    def _spawn(self) -> _AgentProcess:
        """A new process, known to `aclose` before it is ready (its import may hang)."""
        process = _AgentProcess(self._spec)
        with self._lock:
            self._all.add(process)
        return process

    async def _start_process(self) -> _AgentProcess:
        """A new ready process; a cancelled wait (a timeout, Ctrl-C) kills it.

        The wait runs on a daemon thread: a module whose import hangs held a default-executor
        thread, so the run never ended and the process outlived it (issue 28, final review).
        """
        process = await asyncio.to_thread(self._spawn)
        try:
            await _in_daemon_thread(process.wait_ready, None)
        except asyncio.CancelledError:
            self._end(process)
            raise
        except TargetError:
            self._forget(process)
            raise
        return process

    def _release(self, process: _AgentProcess) -> None:
        with self._lock:
            self._idle.append(process)

    def _forget(self, process: _AgentProcess) -> None:
        with self._lock:
            self._all.discard(process)

    async def call(self, request: TargetRequest) -> TargetResponse:
        """Call the function once with the input, in an idle process (or a new one)."""
        try:
            return await asyncio.wait_for(self._call(request), request.timeout_s)
        except TimeoutError:
            raise TargetError(f"timed out after {request.timeout_s:g} s") from None

    async def _call(self, request: TargetRequest) -> TargetResponse:
        # A process that ends before acknowledging the request never started the call: its
        # agent ended it after the previous call (a thread of its own). That call is not to
        # blame; it is sent once more, to a fresh process (issue 28, red team: "between calls").
        for attempt in (1, 2):
            idle = self._idle_process()
            process: _AgentProcess = idle if idle is not None else await self._start_process()
            sent = (request.input, request.key, request.environment())
            reply_of = _in_daemon_thread(process.exchange, sent)
            try:
                acknowledged, reply = await reply_of
            except asyncio.CancelledError:  # a timeout, Ctrl-C or a cancelled run: stop it too
                # Threads cannot be stopped, processes can: nothing of a stuck agent stays.
                self._end(process)
                raise
            if reply is not None or acknowledged or process.garbled or attempt == 2:
                break
            await asyncio.to_thread(self._end, process)
        if reply is None:  # the agent ended its process: only this call is lost
            message = process.garbled or await asyncio.to_thread(process.ended)
            await asyncio.to_thread(self._end, process)
            raise TargetError(message)
        self._release(process)
        status, value = reply
        if status != "ok":
            raise TargetError(value)
        return TargetResponse(**value)

    def _idle_process(self) -> _AgentProcess | None:
        """An idle process that is still alive (one that ended between calls is dropped)."""
        while True:
            with self._lock:
                process = self._idle.pop() if self._idle else None
            if process is None or process.popen.poll() is None:
                return process
            # Its agent ended it after answering (a thread of its own): no call to blame.
            self._end(process)

    def _end(self, process: _AgentProcess) -> None:
        self._forget(process)
        process.kill()

    async def aclose(self) -> None:
        """End the agent's processes (a call still running is stopped) and the idle threads."""
        with self._lock:
            processes, self._all, self._idle = list(self._all), set(), []
        await asyncio.to_thread(_close_all, processes)
        _WORKERS.shrink()


def _close_all(processes: list[_AgentProcess]) -> None:
    for process in processes:
        process._close_pipes()  # every one hears the end at once, then each is waited for
    for process in processes:
        process.close()
