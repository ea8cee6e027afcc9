"""``cmd:`` targets: the input as JSON on stdin, the response on stdout.

No shell unless configured. The command runs in its own process group so a timeout kills the
whole tree. A minimal environment is passed (PATH, HOME, LANG, TMPDIR and names the config
lists) unless configured otherwise. The command may report metadata by writing a JSON object
(``model``, ``cost_usd``, ``latency_ms``, ``tokens``) to the file named in
``$ASSERTLY_METADATA_FILE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from .._exceptions import TargetError
from ._base import TargetResponse, metadata_from

__all__ = ["CommandTarget"]

_BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "PYTHONPATH", "VIRTUAL_ENV")
_STDERR_TAIL = 2000
_MAX_OUTPUT = 64 * 1024 * 1024


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]


class CommandTarget:
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

    async def call(self, payload: Any, timeout_s: float) -> TargetResponse:
        """Run the command once with ``payload`` as JSON on stdin."""
        data = orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
        with tempfile.TemporaryDirectory(prefix="assertly-") as scratch:
            metadata_file = Path(scratch) / "metadata.json"
            env = {**self.env, "ASSERTLY_METADATA_FILE": str(metadata_file)}
            try:
                process = await asyncio.create_subprocess_exec(
                    *self.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,  # its own process group: a timeout kills the tree
                    limit=_MAX_OUTPUT,
                )
            except OSError as error:
                raise TargetError(f"cannot start {self.argv[0]!r}: {error.strerror}") from None
            try:
                stdout, stderr = await asyncio.wait_for(process.communicate(data), timeout_s)
            except TimeoutError:
                _kill_group(process)
                await process.wait()
                raise TargetError(
                    f"timed out after {timeout_s:g} s (process group killed)"
                ) from None
            except asyncio.CancelledError:
                _kill_group(process)
                await process.wait()
                raise
            except (BrokenPipeError, ConnectionResetError):
                stdout, stderr = b"", b""
                await process.wait()
            finally:
                if process.returncode is None:
                    _kill_group(process)
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
            if metadata_file.is_file():
                try:
                    reported = metadata_from(orjson.loads(metadata_file.read_bytes()))
                except orjson.JSONDecodeError:
                    reported = {}
        return TargetResponse(output=stdout.decode("utf-8", errors="replace"), **reported)

    async def aclose(self) -> None:
        """Nothing to release: each call owns its process."""


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
