"""Promise 4: Ctrl-C, kills, concurrent readers and a full disk never cost a verdict.

SIGKILL mid-run then ``--resume`` is tests/runner/test_runner_crash_resume.py; this file adds
Ctrl-C (SIGINT) at several moments, ``assertly report`` while a run writes, a store that cannot
be created or written (a full disk), a report that cannot be written, and the internal-error
handling of the CLI (one line without ``--debug``, the traceback with it).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import (
    ASSERTLY,
    assert_user_error,
    invoke,
    process_alive,
    write_tests,
)

STORE = ".assertly/runs.sqlite"

SLOW_AGENT = r"""
import json, os, sys, time
q = json.load(sys.stdin)
with open(q["pids"], "a") as handle:
    handle.write(f"{os.getpid()} {os.getppid()}\n")  # the agent, and the run that started it
time.sleep(q["delay"])
print(json.dumps({"status": "success", "n": q["n"]}))
"""


def _project(root: Path, count: int, delay: float = 0.15) -> str:
    (root / "agent.py").write_text(SLOW_AGENT, encoding="utf-8")
    write_tests(
        root / "many.tests.yaml",
        [
            {
                "id": f"t{n:03d}",
                "input": {"n": n, "delay": delay, "pids": str(root / "pids.log")},
                "expect": {"field_equals": {"n": n}},
            }
            for n in range(count)
        ],
    )
    return f"cmd:{sys.executable} {root / 'agent.py'}"


def _agents(pids: Path) -> list[tuple[int, int]]:
    """(agent pid, pid of the run that started it) of every agent call so far."""
    if not pids.exists():
        return []
    lines = pids.read_text().splitlines()
    return [
        (int(line.split()[0]), int(line.split()[1])) for line in lines if len(line.split()) == 2
    ]


def _stored(root: Path) -> int:
    try:
        with sqlite3.connect(root / STORE, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _trial_rows(root: Path) -> dict[str, int]:
    with sqlite3.connect(root / STORE) as db:
        return dict(
            db.execute(
                "SELECT tests.test_key, COUNT(trials.trial) FROM tests LEFT JOIN trials "
                "ON trials.run_id = tests.run_id AND trials.test_key = tests.test_key "
                "GROUP BY tests.test_key"
            ).fetchall()
        )


@pytest.mark.parametrize("after_trials", [0, 3, 12])
def test_ctrl_c_mid_run_then_resume_judges_every_test_exactly_once(
    tmp_path: Path, after_trials: int
) -> None:
    count = 30
    target = _project(tmp_path, count)
    process = subprocess.Popen(
        [ASSERTLY, "run", "many.tests.yaml", "--target", target, "-j", "4", "--plain"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
    )
    deadline = time.monotonic() + 30
    while _stored(tmp_path) < after_trials or not (tmp_path / "pids.log").exists():
        assert process.poll() is None, "the run ended before Ctrl-C"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=30)  # no hang on the way out
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert "interrupted: every finished trial is stored" in stderr
    before = _stored(tmp_path)
    assert before < count, "Ctrl-C must land mid-run"
    # No agent outlives the interrupted run.
    for pid, _ in _agents(tmp_path / "pids.log"):
        assert not process_alive(pid), f"agent {pid} survived Ctrl-C"

    resumed = subprocess.run(
        [ASSERTLY, "run", "--resume", "last", "-o", "r.json", "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["total"] == count and report["summary"]["passed"] == count
    rows = _trial_rows(tmp_path)
    assert len(rows) == count and set(rows.values()) == {1}, "one trial row per test"


def test_report_while_a_run_is_writing(tmp_path: Path) -> None:
    """Concurrent readers: ``assertly report last`` works at any moment of a run."""
    count = 40
    target = _project(tmp_path, count, delay=0.1)
    process = subprocess.Popen(
        [ASSERTLY, "run", "many.tests.yaml", "--target", target, "-j", "2", "--plain"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
    )
    deadline = time.monotonic() + 30
    while _stored(tmp_path) < 2:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    seen = []
    for number in range(5):
        reader = subprocess.run(
            [ASSERTLY, "report", "last", "-o", f"partial{number}.json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert "Traceback" not in reader.stderr
        report = json.loads((tmp_path / f"partial{number}.json").read_text())
        assert report["summary"]["total"] == count
        seen.append(report["summary"]["passed"])
        if reader.returncode == 0:
            break
        assert reader.returncode == 1  # what has not run yet is reported as not judged
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    assert seen == sorted(seen) and seen[0] < count, seen
    final = invoke(
        "report", "last", "-o", str(tmp_path / "final.json"), "--store", str(tmp_path / STORE)
    )
    assert final.code == 0, final.output


def test_a_store_that_cannot_be_created_is_a_clear_error(project: Path) -> None:
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": 1, "expect": {"status": "x"}}])
    (project / "afile").write_text("not a directory", encoding="utf-8")
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--store", "afile/runs.sqlite")
    assert_user_error(result, "error: cannot open the run store afile/runs.sqlite")
    (project / "garbage.sqlite").write_bytes(os.urandom(8192))
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--store", "garbage.sqlite")
    assert_user_error(result, "error: cannot open the run store garbage.sqlite")
    result = invoke("report", "last", "-o", "r.json", "--store", "garbage.sqlite")
    assert_user_error(result, "garbage.sqlite")


def _limit_file_size() -> None:
    # Writes past 2 MB fail as on a full disk (EFBIG instead of ENOSPC; SQLite reports both).
    # Enough for the first batch of test metadata (each test's 3 kB input is stored with it),
    # not for every trial after it.
    resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_full_disk_is_reported_not_ignored(tmp_path: Path) -> None:
    padding = "p" * 3000
    write_tests(
        tmp_path / "many.tests.yaml",
        [
            {"id": f"t{n}", "input": {"n": n, "pad": padding}, "expect": {"field_equals": {"n": n}}}
            for n in range(400)
        ],
    )
    completed = subprocess.run(
        [ASSERTLY, "run", "many.tests.yaml", "--target", "cmd:cat", "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_file_size,
        check=False,
    )
    assert completed.returncode == 2, completed.stdout[-1000:] + completed.stderr[-2000:]
    assert "Traceback" not in completed.stderr
    assert "error: cannot write to the run store" in completed.stderr
    assert completed.stderr.count("\n") <= 2, completed.stderr
    stored = _stored(tmp_path)
    assert 0 < stored < 400  # what was stored before the disk filled stays readable


def test_a_report_that_cannot_be_written_is_a_clear_error(project: Path) -> None:
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": {"s": 1}, "expect": {"s": 1}}])
    (project / "taken").mkdir()
    (project / "taken" / "r.json").mkdir()  # a directory where the report should go
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "-o", "taken/r.json")
    assert_user_error(result, "error: cannot write taken/r.json", "assertly report")


def test_an_internal_error_is_one_line_without_debug_and_a_traceback_with_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assertly.loading

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(assertly.loading, "load_paths", broken)
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": 1, "expect": {"status": "x"}}])
    quiet = invoke("validate", "a.tests.yaml")
    assert quiet.code == 2 and quiet.exception is None
    assert quiet.stderr == (
        "internal error: RuntimeError: boom second line (run with --debug for the traceback)\n"
    )
    loud = invoke("--debug", "validate", "a.tests.yaml")
    assert isinstance(loud.exception, RuntimeError)  # click shows its traceback
    monkeypatch.setenv("ASSERTLY_DEBUG", "1")
    assert isinstance(invoke("validate", "a.tests.yaml").exception, RuntimeError)


def test_a_real_process_prints_the_traceback_only_with_debug(tmp_path: Path) -> None:
    # A store path inside /proc cannot be created: a user error, never a traceback...
    write_tests(tmp_path / "a.tests.yaml", [{"id": "a", "input": 1, "expect": {"status": "x"}}])
    plain = subprocess.run(
        [ASSERTLY, "run", "a.tests.yaml", "--target", "cmd:cat", "--store", "/proc/x/y.sqlite"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert plain.returncode == 2 and "Traceback" not in plain.stderr, plain.stderr
    # ...and an internal error shows its traceback only under --debug.
    code = (
        "import sys, assertly.loading as l\n"
        "def boom(*a, **k): raise ZeroDivisionError('bug')\n"
        "l.load_paths = boom\n"
        "from assertly.cli import main\n"
        "main(sys.argv[1:], prog_name='assertly')\n"
    )
    for args, traceback in (([], False), (["--debug"], True)):
        completed = subprocess.run(
            [sys.executable, "-c", code, *args, "validate", "a.tests.yaml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert ("Traceback" in completed.stderr) is traceback, completed.stderr
        assert "ZeroDivisionError" in completed.stderr
        assert completed.returncode in ((1,) if traceback else (2,))


def test_an_internal_error_in_one_trial_costs_only_that_verdict(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assertly.targets import CommandTarget, TargetRequest

    original = CommandTarget.call

    async def flaky(self: CommandTarget, request: TargetRequest):  # type: ignore[no-untyped-def]
        if isinstance(request.input, dict) and request.input.get("n") == 2:
            raise RuntimeError("assertly bug")
        return await original(self, request)

    monkeypatch.setattr(CommandTarget, "call", flaky)
    write_tests(
        project / "a.tests.yaml",
        [
            {"id": f"t{n}", "input": {"n": n}, "expect": {"field_equals": {"n": n}}}
            for n in range(5)
        ],
    )
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(
            invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--plain", "-o", "r.json")
        ),
        daemon=True,
    )
    worker.start()
    worker.join(60)  # before the fix, the run hung for ever in asyncio's clean-up
    assert results, "the run hung after an internal error"
    [result] = results
    assert result.exception is None and result.code == 1, result.output
    tests = {t["id"]: t for t in json.loads((project / "r.json").read_text())["tests"]}
    assert tests["t2"]["status"] == "error"
    assert "internal error: RuntimeError: assertly bug" in tests["t2"]["trials"][0]["error"]
    assert [tests[f"t{n}"]["status"] for n in (0, 1, 3, 4)] == ["passed"] * 4


def _default_sigint() -> None:
    """Give the child the default Ctrl-C handling.

    A shell starting a job in the background without job control (as CI harnesses often do)
    leaves SIGINT ignored, and children inherit that; Ctrl-C tests need it delivered.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


KILLS = int(os.environ.get("ASSERTLY_KILLS", "3"))


def test_kills_at_random_moments_then_resume_until_done(tmp_path: Path) -> None:
    """SIGKILL and Ctrl-C in turn at random moments, each followed by ``--resume last``.

    However many times the run dies, when it finally finishes every test has exactly one
    trial row, every verdict is the right one, and no test that had a verdict ran again.
    ``ASSERTLY_KILLS`` sets how many kills (3 by default).
    """
    import random

    count = 40 + 50 * KILLS  # enough work that every kill lands mid-run
    target = _project(tmp_path, count, delay=0.05)
    rng = random.Random(KILLS)
    pids = tmp_path / "pids.log"
    command = [ASSERTLY, "run", "many.tests.yaml", "--target", target, "-j", "4", "--plain"]
    survived = 0
    for kill in range(KILLS):
        process = subprocess.Popen(
            command,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
        )
        # Kill mid-run: once this process has called an agent (a Ctrl-C while Python is still
        # importing gets Python's own traceback; start-up is slow on a busy machine), then at a
        # random moment. The agent must be this process's own: an agent the previous, killed
        # run started may still be writing its line.
        deadline = time.monotonic() + 30
        while all(parent != process.pid for _, parent in _agents(pids)):
            if process.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.6))
        if process.poll() is not None:
            break  # finished before this kill
        process.send_signal(signal.SIGKILL if kill % 2 == 0 else signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert "Traceback" not in stderr, stderr
        survived += 1
        command = [ASSERTLY, "run", "--resume", "last", "--plain"]
        with sqlite3.connect(tmp_path / STORE) as db:
            assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    final = subprocess.run(
        [*command, "-o", "r.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=_default_sigint,
        timeout=120,
        check=False,
    )
    assert final.returncode == 0, final.stdout + final.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["passed"] == count
    rows = _trial_rows(tmp_path)
    assert len(rows) == count and set(rows.values()) == {1}
    # Agents that finished were never called again: at most one extra call per kill per slot.
    calls = len(_agents(pids))
    assert calls <= count + survived * 4, (calls, survived)
    assert survived == KILLS, f"only {survived} of {KILLS} kills landed mid-run"
