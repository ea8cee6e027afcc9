"""Helpers for the runner tests: a project directory with a real agent script, the ``assertly``
CLI run in-process against it, and a real HTTP server on 127.0.0.1.

Every agent here is a real subprocess (``cmd:{sys.executable} agent.py``): the input arrives as
JSON on stdin and the agent's behaviour is picked by ``input.mode``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main

AGENT = r"""
import json, os, subprocess, sys, time

q = json.load(sys.stdin)
q = q if isinstance(q, dict) else {"value": q}
mode = q.get("mode", "ok")
if q.get("log"):
    with open(q["log"], "a") as handle:
        handle.write(str(q.get("tag", mode)) + "\n")
if mode == "crash":
    sys.stderr.write("starting\n" + "noise\n" * 50 + "boom: the agent fell over\n")
    sys.exit(3)
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(q["pidfile"], "w") as handle:
        handle.write(str(child.pid))
    time.sleep(60)
if mode == "slow":
    time.sleep(q.get("delay", 0.3))
if mode == "empty":
    sys.stderr.write("nothing to say\n")
    sys.exit(0)
if mode == "text":
    print(q.get("text", "plain words, no JSON"))
    sys.exit(0)
if mode == "flaky":
    state = q["state"]
    count = int(open(state).read()) if os.path.exists(state) else 0
    with open(state, "w") as handle:
        handle.write(str(count + 1))
    print(json.dumps({"status": "success" if count % 2 == 0 else "error"}))
    sys.exit(0)
if mode == "meta":
    with open(os.environ["ASSERTLY_METADATA_FILE"], "w") as handle:
        cost = float(q.get("cost", 0.25))  # "nan" gives NaN, which json.dump writes as is
        json.dump({"model": q.get("model", "gpt-test"), "cost_usd": cost}, handle)
files = q.get("files", ["journal/a.md"])
results = [{"file": name, "metadata": {"tags": ["work"]}} for name in files]
print(json.dumps({"status": q.get("status", "success"), "results": results}))
"""

PINNED_SUMMARY = ("total", "passed", "failed", "errored", "skipped", "pass_rate", "duration_ms")
PINNED_TEST = (
    "id",
    "name",
    "suite",
    "file",
    "status",
    "score",
    "trials",
    "pass_at_k",
    "pass_all_k",
    "flaky",
    "input",
)
PINNED_TRIAL = (
    "trial",
    "status",
    "duration_ms",
    "failures",
    "output",
    "output_truncated",
    "metrics",
)
PINNED_METRICS = ("latency_ms", "cost_usd", "model", "tokens")
# The judge's and the simulated user's spend (issue 32), each only when it was asked.
JUDGE_METRICS = {"judge_cost_usd", "judge_tokens", "simulator_cost_usd", "simulator_tokens"}
STATUSES = {"passed", "failed", "error", "skipped"}


def assert_report_shape(report: dict[str, Any]) -> None:
    """The ``run -o report.json`` shape pinned in runner.md, with consistent counts."""
    assert isinstance(report["run_id"], str) and report["run_id"]
    summary = report["summary"]
    for key in PINNED_SUMMARY:
        assert key in summary, f"summary lacks {key!r}"
    for key in ("total", "passed", "failed", "errored", "skipped"):
        assert isinstance(summary[key], int) and not isinstance(summary[key], bool)
    assert isinstance(summary["pass_rate"], float) and 0.0 <= summary["pass_rate"] <= 1.0
    assert isinstance(summary["duration_ms"], int | float) and summary["duration_ms"] >= 0
    assert isinstance(report["tests"], list)
    assert isinstance(report["evals"], list)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for test in report["tests"]:
        for key in PINNED_TEST:
            assert key in test, f"test lacks {key!r}: {test}"
        assert test["status"] in STATUSES
        counts[test["status"]] += 1
        for flag in ("pass_at_k", "pass_all_k", "flaky"):
            assert isinstance(test[flag], bool)
        assert test["score"] is None or 0.0 <= test["score"] <= 1.0
        assert test["trials"], "every test reports at least one trial"
        for trial in test["trials"]:
            for key in PINNED_TRIAL:
                assert key in trial, f"trial lacks {key!r}: {trial}"
            assert trial["status"] in STATUSES
            assert isinstance(trial["failures"], list)
            assert trial["duration_ms"] >= 0
            assert isinstance(trial["output_truncated"], bool)
            metrics = tuple(trial["metrics"])
            assert metrics[: len(PINNED_METRICS)] == PINNED_METRICS, metrics
            # A trial a model judged also says what the judge cost.
            assert set(metrics[len(PINNED_METRICS) :]) <= JUDGE_METRICS, metrics
    for suite in report["evals"]:
        for key in ("file", "score", "threshold", "passed"):
            assert key in suite
        assert isinstance(suite["passed"], bool)
    # The summary counts tests only: eval suites are judged by their own thresholds.
    assert summary["passed"] == counts["passed"]
    assert summary["failed"] == counts["failed"]
    assert summary["errored"] == counts["error"]
    assert summary["skipped"] == counts["skipped"]
    assert summary["total"] == sum(counts.values())
    judged = summary["total"] - summary["skipped"]
    expected_rate = summary["passed"] / judged if judged else 0.0
    assert summary["pass_rate"] == pytest.approx(expected_rate)


@dataclass
class RunResult:
    """What one ``assertly`` invocation produced."""

    exit_code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None = None

    @property
    def tests(self) -> dict[str, dict[str, Any]]:
        """The report's tests by id."""
        assert self.report is not None, f"no report written\n{self.stdout}\n{self.stderr}"
        return {test["id"]: test for test in self.report["tests"]}

    def status(self, test_id: str) -> str:
        """One test's final status."""
        return str(self.tests[test_id]["status"])

    @property
    def summary(self) -> dict[str, Any]:
        """The report's summary."""
        assert self.report is not None
        return dict(self.report["summary"])

    def counts(self) -> tuple[int, int, int, int, int]:
        """(total, passed, failed, errored, skipped)."""
        s = self.summary
        return s["total"], s["passed"], s["failed"], s["errored"], s["skipped"]


@dataclass
class Project:
    """A throw-away project directory (the working directory during the test)."""

    root: Path
    _reports: int = field(default=0)

    @property
    def agent(self) -> str:
        """The target spec of the standard agent script."""
        path = self.root / "agent.py"
        if not path.exists():
            path.write_text(AGENT, encoding="utf-8")
        return f"cmd:{sys.executable} {path}"

    def write(self, name: str, content: Any) -> Path:
        """Write text, or YAML for anything else."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
        return path

    def tests_file(
        self, name: str, suites: dict[str, list[dict[str, Any]]], agent: str = "bot"
    ) -> Path:
        """Write an agent test file: ``{suite: [test, ...]}``."""
        data = {
            "agent": agent,
            "test_suites": {key: {"tests": tests} for key, tests in suites.items()},
        }
        return self.write(name, data)

    def run(self, *args: str, report: bool = True) -> RunResult:
        """``assertly ARGS`` in-process; for ``run``, ``report`` and ``recheck`` a JSON report
        is written and parsed."""
        argv = list(args)
        report_path: Path | None = None
        if report and argv and argv[0] in ("run", "report", "recheck", "merge"):
            self._reports += 1
            report_path = self.root / f"report-{self._reports}.json"
            argv += ["-o", str(report_path)]
        result = CliRunner().invoke(main, argv, catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"assertly crashed: {result.exception!r}\n{result.output}")
        output = result.stdout + result.stderr
        assert "Traceback" not in output, output
        data = None
        if report_path is not None and report_path.exists():
            data = json.loads(report_path.read_text(encoding="utf-8"))
            assert_report_shape(data)
        return RunResult(result.exit_code, result.stdout, result.stderr, data)

    def sql(
        self, query: str, *params: Any, store: str = ".assertly/runs.sqlite"
    ) -> list[tuple[Any, ...]]:
        """Query the run store directly."""
        with sqlite3.connect(self.root / store) as db:
            return list(db.execute(query, params))

    def records(
        self, where: str = "1 = 1", *params: Any, store: str = ".assertly/runs.sqlite"
    ) -> list[dict[str, Any]]:
        """The stored trial records (read back as the store reads them: decompressed, expanded)."""
        from assertly.store import RunStore

        opened = RunStore(self.root / store, must_exist=True, read_only=True)
        try:
            rows = opened._db.execute(f"SELECT test_key, record FROM trials WHERE {where}", params)
            return [opened._record(record, key) for key, record in rows]
        finally:
            opened.close()


# Version 1 echoes its input; version 2 "forgets" inputs with "order" in them, and is slow on
# "slow". Each call appends "<version> <input>" to calls.log.
VERSIONED_AGENT = r"""
import json, sys, time
version = sys.argv[1]
value = json.load(sys.stdin)
with open("calls.log", "a") as log:
    log.write(f"{version} {value}\n")
if "slow" in str(value):
    time.sleep(0.4)
if version == "v2" and "order" in str(value):
    print(json.dumps({"status": "success", "text": "which order?"}))
else:
    print(json.dumps({"status": "success", "text": f"about {value}"}))
"""


def versioned_agent(project: Project, version: str) -> str:
    """The target spec of `VERSIONED_AGENT` at ``version`` (v1, v2, or any other name)."""
    path = project.root / "versioned.py"
    if not path.exists():
        path.write_text(VERSIONED_AGENT, encoding="utf-8")
    return f"cmd:{sys.executable} {path} {version}"


def agent_calls(project: Project) -> Counter[str]:
    """Each ``"<version> <input>"`` the versioned agent was called with, counted."""
    log = project.root / "calls.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return Counter(lines)


# --- a real HTTP server ----------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: HttpAgent

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        body = json.loads(raw) if raw else None
        path = self.path
        with self.server.lock:
            self.server.log.append((path, time.monotonic(), dict(self.headers.items()), body))
            seen = self.server.seen.get(path, 0)
            self.server.seen[path] = seen + 1
        ok = {"status": "success", "results": [{"file": "journal/a.md"}], "echo": body}
        if path.startswith("/ok"):
            self._send(200, ok, {"X-Assertly-Model": "http-model"})
        elif path.startswith("/fail-once"):
            if seen == 0:
                self._send(500, {"error": "temporarily broken"})
            else:
                self._send(200, ok)
        elif path.startswith("/always500"):
            self._send(503, {"error": "down for maintenance"})
        elif path.startswith("/ratelimited"):
            if seen == 0:
                self._send(429, {"error": "slow down"}, {"Retry-After": "1"})
            else:
                self._send(200, ok)
        elif path.startswith("/bytes"):
            # The body's exact bytes and Content-Type, taken from the request.
            data = bytes.fromhex(body["hex"])
            self.send_response(200)
            self.send_header("Content-Type", body["type"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path.startswith("/metrics"):
            # The call's cost and latency as the agent reports them, taken from the request.
            reported = {"X-Assertly-Cost-Usd": str(body.get("cost", "0.01"))}
            if "latency" in body:
                reported["X-Assertly-Latency-Ms"] = str(body["latency"])
            self._send(200, ok, reported)
        elif path.startswith("/chat"):
            self._send(200, chat_reply(body["messages"]))
        elif path.startswith("/auth"):
            self._send(200, {"status": "success", "auth": self.headers.get("Authorization")})
        elif path.startswith("/slow"):
            time.sleep(2)
            self._send(200, ok)
        else:
            self._send(404, {"error": f"no route {path}"})


def chat_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A support agent's OpenAI reply to a conversation: turn 1 looks the order up, a turn
    saying "go ahead" issues the refund, anything else is echoed (as the HTTP agent's /chat
    and the command agent `CHAT_AGENT` answer)."""
    last = str(messages[-1]["content"])
    turn = sum(1 for message in messages if message["role"] == "user")
    calls: list[dict[str, Any]] = []
    if turn == 1:
        text = f"Looking up your order, turn {turn}: {last}"
        calls = [{"name": "lookup_order", "arguments": json.dumps({"order": "A-1042"})}]
    elif "go ahead" in last.lower():
        text = "Refund issued"
        calls = [{"name": "issue_refund", "arguments": "{}"}]
    else:
        text = f"You said: {last} (turn {turn})"
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"c{n}", "type": "function", "function": call} for n, call in enumerate(calls, 1)
        ]
    return {"choices": [{"message": message}]}


class HttpAgent(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that timed out and hung up is expected here (and a traceback
        printed from this thread would land in another test's captured output)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.log: list[tuple[str, float, dict[str, str], Any]] = []
        self.seen: dict[str, int] = {}

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def hits(self, path: str) -> list[tuple[str, float, dict[str, str], Any]]:
        with self.lock:
            return [entry for entry in self.log if entry[0] == path]


def serve() -> Iterator[HttpAgent]:
    """Run a real HTTP agent on 127.0.0.1 (routes: /ok, /fail-once, /always500, /ratelimited,
    /auth, /slow, /metrics, /bytes; anything else is 404)."""
    server = HttpAgent()
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A port with nothing listening on it."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


@contextlib.contextmanager
def py_agent_project(root: Path, source: str) -> Iterator[Project]:
    """A project at ``root`` (the working directory meanwhile) whose agent ``bot`` is the
    ``answer`` function of a module of ``source``: a real ``py:`` target."""
    module = f"agent_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    config = {"agents": {"bot": f"py:{module}:answer"}}
    (root / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    sys.path.insert(0, str(root))
    try:
        with contextlib.chdir(root):
            yield Project(root)
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(module, None)


@contextlib.contextmanager
def run_started(project: Project, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``assertly run ARGS --plain`` in a process of its own, once 5 tests have passed (to
    signal it); killed if still running after the block."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, "-m", "assertly", "run", *args, "--plain"],
        cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        for _ in range(5):  # a few tests finished: their parts are written
            assert process.stdout.readline().startswith(b"PASSED")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
