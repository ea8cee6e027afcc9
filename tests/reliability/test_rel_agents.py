"""Promise 3: failing agents end one test ``error`` with the reason; the run goes on, and
processes and file descriptors do not leak over thousands of tests.

Crashes, hangs (the whole process group killed), HTTP 429/5xx with backoff and connection
refused are covered in tests/runner and tests/targets (see docs/reliability.md); this file adds
partial output then a crash, output after a long silence, a stderr flood, an agent that never
reads its input, and the leak test.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from reliability_support import child_processes, invoke, open_fds, write_tests

from assertly.runner import RunOptions
from assertly.runner import run as run_tests
from assertly.targets import CommandTarget, TargetRequest

AGENT = r"""
import json, os, sys, time
q = json.load(sys.stdin)
mode = q["mode"]
if mode == "partial_then_crash":
    sys.stdout.write('{"status": "succ')
    sys.stdout.flush()
    sys.stderr.write("segmentation fault (simulated)\n")
    os._exit(139)
if mode == "silence":
    time.sleep(q["delay"])
    print(json.dumps({"status": "success"}))
if mode == "stderr_flood":
    line = "noise " * 170 + "\n"
    for _ in range(10 * 1024 * 1024 // len(line)):
        sys.stderr.write(line)
    sys.stderr.write("the real reason: out of tokens\n")
    sys.exit(q.get("code", 1))
if mode == "flood_then_answer":
    sys.stderr.write("x" * (10 * 1024 * 1024))
    print(json.dumps({"status": "success"}))
if mode == "ok":
    print(json.dumps({"status": "success"}))
"""

NO_STDIN = 'import sys, time; time.sleep(0.2); print(\'{"status": "success"}\')'


@pytest.fixture
def agent(project: Path) -> str:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    return f"cmd:{sys.executable} agent.py"


def _run(project: Path, agent: str, tests: list[dict[str, object]], *extra: str) -> dict:
    write_tests(project / "a.tests.yaml", tests)
    result = invoke("run", "a.tests.yaml", "--target", agent, "--plain", "-o", "r.json", *extra)
    assert result.exception is None, repr(result.exception)
    assert "Traceback" not in result.output
    return {t["id"]: t for t in json.loads((project / "r.json").read_text())["tests"]}


def test_partial_output_then_a_crash_is_an_error_with_stderr(project: Path, agent: str) -> None:
    tests = _run(
        project,
        agent,
        [
            {"id": "crash", "input": {"mode": "partial_then_crash"}, "expect": {"status": "x"}},
            {"id": "after", "input": {"mode": "ok"}, "expect": {"status": "success"}},
        ],
    )
    error = tests["crash"]["trials"][0]["error"]
    assert tests["crash"]["status"] == "error"
    assert "exited with code 139" in error and "segmentation fault (simulated)" in error
    assert tests["after"]["status"] == "passed"  # the run went on


def test_output_after_a_long_silence_within_the_timeout_passes(project: Path, agent: str) -> None:
    tests = _run(
        project,
        agent,
        [
            {
                "id": "slow",
                "input": {"mode": "silence", "delay": 2.0},
                "expect": {"status": "success"},
            }
        ],
        "--timeout",
        "10",
    )
    assert tests["slow"]["status"] == "passed"
    assert tests["slow"]["trials"][0]["duration_ms"] >= 2000


def test_a_10_mb_stderr_flood_is_an_error_with_a_bounded_tail(project: Path, agent: str) -> None:
    started = time.perf_counter()
    tests = _run(
        project,
        agent,
        [
            {"id": "flood", "input": {"mode": "stderr_flood"}, "expect": {"status": "x"}},
            {
                "id": "answers",
                "input": {"mode": "flood_then_answer"},
                "expect": {"status": "success"},
            },
        ],
    )
    assert time.perf_counter() - started < 30
    error = tests["flood"]["trials"][0]["error"]
    assert tests["flood"]["status"] == "error"
    assert error.endswith("the real reason: out of tokens")  # the tail, where the reason is
    assert len(error) < 2200
    assert tests["answers"]["status"] == "passed"  # stderr noise alone is no failure


def test_an_agent_that_never_reads_its_input(project: Path) -> None:
    big_input = {"blob": "x" * (4 * 1024 * 1024)}  # more than any pipe buffer
    agent = f"cmd:{sys.executable} -c {json.dumps(NO_STDIN)}"
    tests = _run(
        project, agent, [{"id": "deaf", "input": big_input, "expect": {"status": "success"}}]
    )
    assert tests["deaf"]["status"] == "passed"


def test_stderr_is_read_with_bounded_memory() -> None:
    """The tail is kept while reading: 200 MB on stderr does not become 200 MB in memory."""
    import resource

    target = CommandTarget(
        [
            sys.executable,
            "-c",
            "import sys\nfor _ in range(200): sys.stderr.write('e' * 1048576)\nsys.exit(2)",
        ]
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(Exception, match="exited with code 2") as caught:
        asyncio.run(target.call(TargetRequest({}, 60)))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb
    assert len(str(caught.value)) < 2200


def test_no_descriptors_processes_or_threads_leak_over_thousands_of_tests(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 tests on a Python agent and 200 on a command agent, twice, in one process.

    ``ASSERTLY_LEAK_TESTS`` scales it (the Python agent's count; the command agent gets a tenth).
    """
    py_count = int(os.environ.get("ASSERTLY_LEAK_TESTS", "2000"))
    cmd_count = py_count // 10
    (project / "leak_agent.py").write_text(
        "def answer(q):\n    return {'status': 'success', 'n': q['n']}\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(project))
    write_tests(
        project / "py.tests.yaml",
        [
            {"id": f"p{n}", "input": {"n": n}, "expect": {"field_equals": {"n": n}}}
            for n in range(py_count)
        ],
    )
    write_tests(
        project / "cmd.tests.yaml",
        [
            {"id": f"c{n}", "input": {"n": n}, "expect": {"field_equals": {"n": n}}}
            for n in range(cmd_count)
        ],
    )
    # Half of the command tests fail to start or time out: error paths must not leak either.
    write_tests(
        project / "bad.tests.yaml",
        [
            {"id": f"b{n}", "input": {"n": n}, "timeout_s": 0.05, "expect": {"n": n}}
            for n in range(50)
        ],
    )

    def once() -> tuple[int, int, int]:
        for paths, target in (
            (["py.tests.yaml"], "py:leak_agent:answer"),
            (["cmd.tests.yaml"], "cmd:cat"),
            (["bad.tests.yaml"], f"cmd:{sys.executable} -c 'import time; time.sleep(5)'"),
            (["bad.tests.yaml"], "cmd:/nonexistent/agent"),
        ):
            record = run_tests(RunOptions(paths=paths, target=target, concurrency=16))
            assert len(record.tests) in (py_count, cmd_count, 50)
        gc.collect()
        return open_fds(), len(child_processes()), threading.active_count()

    warm = once()  # imports, the store, thread pools: what a first run sets up once
    started = time.perf_counter()
    after = once()
    assert time.perf_counter() - started < 60 * max(1, py_count // 2000)
    assert after[0] <= warm[0], f"file descriptors grew: {warm[0]} -> {after[0]}"
    assert after[1] == 0, f"child processes left: {child_processes()}"
    assert after[2] <= warm[2], f"threads grew: {warm[2]} -> {after[2]}"
