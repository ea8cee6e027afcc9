"""``cmd:`` targets: the input as JSON on stdin, the response on stdout.

No shell unless configured. The command runs in its own process group so a timeout kills the
whole tree. A minimal environment is passed (PATH, HOME, LANG, TMPDIR and names the config
lists) unless configured otherwise. The command may report metadata by writing a JSON object
(``model``, ``cost_usd``, ``latency_ms``, ``tokens``, ``tool_calls``) to the file named in
``$ASSERTLY_METADATA_FILE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import tempfile
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

from .._exceptions import TargetError
from ._base import (
    MAX_OUTPUT_BYTES,
    BaseTarget,
    TargetRequest,
    TargetResponse,
    encode_input,
    metadata_from,
)

T = TypeVar("T")

__all__ = ["CommandTarget"]

_BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "PYTHONPATH", "VIRTUAL_ENV")
_STDERR_TAIL = 2000
_STDERR_KEPT = 64 * 1024  # bytes of stderr kept while reading (a flood costs no memory)
_CHUNK = 64 * 1024
_MAX_METADATA = 1024 * 1024  # a bigger metadata file is ignored, not read


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]


class CommandTarget(BaseTarget):
    """Run a command per call.

    Args:
        command: The command line (split like a shell would, but run without one) or argv.
        shell: Run through ``/bin/sh -c`` (only when configured).
        env: Extra environment variables.
        pass_env: Names of variables to pass through from assertly's environment.
        cwd: Working directory.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        pass_env: Sequence[str] = (),
        cwd: str | None = None,
    ) -> None:
        if shell:
            self.argv = [
                "/bin/sh",
                "-c",
                command if isinstance(command, str) else shlex.join(command),
            ]
        else:
            self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise TargetError("empty command")
        self.name = f"cmd:{command if isinstance(command, str) else shlex.join(command)}"
        names = {*_BASE_ENV, *pass_env}
        self.env = {k: v for k, v in os.environ.items() if k in names}
        self.env.update(env or {})
        self.cwd = cwd

    async def call(self, request: TargetRequest) -> TargetResponse:
        """Run the command once with the input as JSON on stdin."""
        payload, timeout_s = request.input, request.timeout_s
        data = encode_input(payload)
        with tempfile.TemporaryDirectory(prefix="assertly-") as scratch:
            metadata_file = Path(scratch) / "metadata.json"
            env = {**self.env, "ASSERTLY_METADATA_FILE": str(metadata_file)}
            env.update(request.environment())
            try:
                process = await _spawn(self.argv, env, self.cwd)
            except OSError as error:
                raise TargetError(f"cannot start {self.argv[0]!r}: {error.strerror}") from None
            try:
                stdout, stderr = await asyncio.wait_for(_exchange(process, data), timeout_s)
            except TimeoutError:
                exited = process.returncode  # set at its exit, before its pipes close
                await despite_cancellation(_end(process))
                if exited is not None:
                    raise TargetError(
                        f"timed out after {timeout_s:g} s: the command exited with code "
                        f"{exited}, but a process it started (in a session of its own) still "
                        "held its stdout or stderr open"
                    ) from None
                raise TargetError(
                    f"timed out after {timeout_s:g} s (process group killed)"
                ) from None
            except asyncio.CancelledError:
                await despite_cancellation(_end(process))
                raise
            finally:
                if process.returncode is None:
                    _kill_group(process)
            if stdout is None:
                raise TargetError(
                    f"command wrote more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB on stdout "
                    "(process group killed)"
                )
            code = process.returncode or 0
            if code != 0:
                how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
                detail = _tail(stderr)
                raise TargetError(f"command {how}" + (f"; stderr: {detail}" if detail else ""))
            if not stdout.strip():
                detail = _tail(stderr)
                raise TargetError(
                    "command wrote nothing on stdout" + (f"; stderr: {detail}" if detail else "")
                )
            reported: dict[str, Any] = {}
            if metadata_file.is_file() and metadata_file.stat().st_size <= _MAX_METADATA:
                reported = metadata_from(_read_metadata(metadata_file.read_bytes()))
        return TargetResponse(output=stdout.decode("utf-8", errors="replace"), **reported)

    async def aclose(self) -> None:
        """Nothing to release: each call owns its process."""


def _read_metadata(data: bytes) -> Any:
    """The agent's metadata file, or None when it is not JSON.

    Python's ``json.dump`` writes NaN and Infinity by default, so they are read (the stdlib
    accepts them) and reach the assertions, which call such a cost an error instead of
    finding it "not measured".
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


async def _exchange(process: asyncio.subprocess.Process, data: bytes) -> tuple[bytes | None, bytes]:
    """Write stdin, read stdout (None past `MAX_OUTPUT_BYTES`) and the tail of stderr.

    Unlike ``communicate``, memory stays bounded whatever the command writes: stdout past the
    limit kills the process group, and only the last `_STDERR_KEPT` bytes of stderr are kept.
    """
    assert process.stdin and process.stdout and process.stderr  # all three are pipes

    async def feed(stdin: asyncio.StreamWriter) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # stdin ignored
            stdin.write(data)
            await stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.close()

    async def read_stdout(stream: asyncio.StreamReader) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while chunk := await stream.read(_CHUNK):
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                _kill_group(process)
                while await stream.read(_CHUNK):  # drain what is still buffered
                    pass
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def read_stderr_tail(stream: asyncio.StreamReader) -> bytes:
        tail = bytearray()
        while chunk := await stream.read(_CHUNK):
            tail += chunk
            if len(tail) > 2 * _STDERR_KEPT:
                del tail[:-_STDERR_KEPT]
        return bytes(tail[-_STDERR_KEPT:])

    _, stdout, stderr = await asyncio.gather(
        feed(process.stdin), read_stdout(process.stdout), read_stderr_tail(process.stderr)
    )
    await process.wait()
    return stdout, stderr


async def despite_cancellation(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even when this task is cancelled meanwhile, then re-raise.

    For clean-up that must not be cut short: a Ctrl-C cancels a call twice (asyncio cancels
    the run, whose `gather` cancels the workers, and the runner cancels them again to stop
    every call), and the second cancellation used to land in the middle of killing and reaping
    the agent: its process then outlived the event loop ("Loop … that handles pid … is
    closed", and an "Event loop is closed" traceback at exit).
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            # Unless ``work`` itself was cancelled, this task was, even when ``work`` ended in
            # the same turn of the loop (``task.done()`` then no longer tells them apart).
            cancelled = cancelled or not task.cancelled()
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: re-raising the cancellation wins over it
        raise asyncio.CancelledError
    return task.result()


async def _spawn(
    argv: list[str], env: dict[str, str], cwd: str | None
) -> asyncio.subprocess.Process:
    """Start the command; a cancellation meanwhile lets the start finish, then ends it.

    Cancelled half-way, asyncio's own start closes a transport whose pipes are still being
    connected: the process can then outlive the event loop, and Ctrl-C ends the run with
    "Loop … that handles pid … is closed" and an "Event loop is closed" traceback. Shielded,
    the start completes (milliseconds), and the process is killed and reaped like any other
    cancelled call.
    """
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,  # its own process group: a timeout kills the tree
        )
    )
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        await despite_cancellation(_end_started(spawning))
        raise


async def _end_started(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Once the start finishes, end the process it started (if it started one)."""
    with contextlib.suppress(OSError):
        await _end(await spawning)


async def _end(process: asyncio.subprocess.Process) -> None:
    """Kill the command's process group and reap it, whoever still holds its pipes.

    A grandchild that left the group (its own session) may hold stdout open for ever, and on
    Python 3.11 ``Process.wait`` waits for the pipes to close as well as for the exit: closing
    our ends of the pipes first bounds the wait by the command's own exit.
    """
    _kill_group(process)
    # Let asyncio's child watcher reap the killed command first (milliseconds): a transport
    # closed before then leaves its Popen to be reaped by the next subprocess started, and the
    # watcher then logs "Unknown child process pid …" on the user's console.
    try:
        for _ in range(200):
            if process.returncode is not None:
                break
            await asyncio.sleep(0.005)
    finally:  # cancelled again meanwhile: our pipe ends are closed all the same
        transport = getattr(process, "_transport", None)  # asyncio's, not public
        if transport is not None:
            transport.close()
    await process.wait()


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
