"""Helpers for the reliability tests: the CLI run in-process or in a measured child process,
a project directory with agent scripts, and process/file-descriptor accounting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from assertly.cli import main

ASSERTLY = str(Path(sys.executable).parent / "assertly")

# Runs the CLI in a fresh interpreter and appends its exit code, wall time and peak memory.
_DRIVER = r"""
import json, os, resource, sys, time
started = time.perf_counter()
code = 0
try:
    from assertly.cli import main
    main(sys.argv[1:], prog_name="assertly")
except SystemExit as exit:
    code = exit.code if isinstance(exit.code, int) else 1
finally:
    sys.stdout.flush()
    # This process's own peak: ru_maxrss also carries the peak of the process that spawned it
    # (Linux keeps it across exec), i.e. of pytest, whatever the earlier tests loaded.
    try:
        with open("/proc/self/status") as status:
            peak_kb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = {"code": code, "seconds": time.perf_counter() - started,
              "rss_mb": peak_kb / 1024}
    os.write(2, ("\n@@MEASURED " + json.dumps(report) + "\n").encode())
"""


@dataclass
class Measured:
    """An ``assertly`` run in a child process: exit code, output, seconds and peak RSS."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    rss_mb: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def measure(*args: str, cwd: Path, timeout: float = 120, stdin: bytes | None = None) -> Measured:
    """``assertly ARGS`` in a fresh Python process, measured from inside it."""
    completed = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        cwd=cwd,
        capture_output=True,
        input=stdin,
        timeout=timeout,
        check=False,
    )
    stderr = completed.stderr.decode("utf-8", "replace")
    head, marker, tail = stderr.rpartition("\n@@MEASURED ")
    assert marker, f"the driver did not report: {stderr[-2000:]}"
    report = json.loads(tail.strip().splitlines()[0])
    return Measured(
        report["code"],
        completed.stdout.decode("utf-8", "replace"),
        head,
        report["seconds"],
        report["rss_mb"],
    )


@dataclass
class Invoked:
    """An ``assertly`` run in-process."""

    code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def invoke(*args: str, stdin: str | bytes | None = None) -> Invoked:
    """``assertly ARGS`` in-process (the working directory is the caller's)."""
    result = CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=True)
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Invoked(result.exit_code, result.stdout, result.stderr, exception)


def assert_user_error(result: Invoked | Measured, *expected: str) -> None:
    """Exit code 2, no traceback, and every expected fragment in the output."""
    output = result.output
    assert result.code == 2, f"exit {result.code}: {output[-3000:]}"
    assert "Traceback" not in output, output[-3000:]
    if isinstance(result, Invoked):
        assert result.exception is None, repr(result.exception)
    for fragment in expected:
        assert fragment in output, f"{fragment!r} not in: {output[-3000:]}"


def write_tests(path: Path, tests: list[dict[str, Any]], agent: str = "bot") -> Path:
    """Write an agent test file with one suite ``s`` (as JSON, which is valid YAML)."""
    data = {"agent": agent, "test_suites": {"s": {"tests": tests}}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def open_fds() -> int:
    """File descriptors this process holds."""
    return len(os.listdir("/proc/self/fd"))


def child_processes() -> list[int]:
    """Live (non-zombie) processes whose parent is this process."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


def process_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering with ``handler``: yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
