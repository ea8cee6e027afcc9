"""``assertly run --watch``: real ``assertly`` processes, a real ``cmd:`` agent, real files.

Each test starts the watch as a subprocess, saves files as an editor would, and reads what it
prints; Ctrl-C is a real SIGINT.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_support import process_alive

from assertly.cli import main
from assertly.runner import RunOptions
from assertly.runner._watch_files import watch_plan

pytest.importorskip("watchfiles")

AGENT = r"""
import json, os, sys, time

q = json.load(sys.stdin)
text = q["input"] if isinstance(q, dict) else str(q)
with open("calls.log", "a") as log:
    log.write(str(text) + "\n")
if str(text).startswith("hang"):
    with open("agent.pid", "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(60)
print("echo " + str(text))
"""

TEST_FILE = """agent: echo
test_suites:
  s:
    tests:
      - id: one
        input: {input}
        expect: {{contains: {expected}}}
"""

DATASET_FILE = """agent: echo
test_suites:
  d:
    dataset: data.jsonl
    expect: {contains: "{{ expected }}"}
"""

RERUN_S = 2.0  # the bound: a saved change is run again within 2 s


class Watch:
    """``assertly run --watch`` in a subprocess; its output read line by line."""

    def __init__(self, root: Path, *args: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "assertly", "run", *args, "--watch", "--plain"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 30) -> list[str]:
        """Read until a line matches ``pattern``; the lines read meanwhile (that one last)."""
        found: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no line matching {pattern!r} in {timeout}s; read: {self.lines}"
                ) from None
            if line is None:
                raise AssertionError(f"the watch ended before {pattern!r}; read: {self.lines}")
            self.lines.append(line)
            found.append(line)
            if re.search(pattern, line):
                return found

    def save_and_wait(self, path: Path, text: str, pattern: str) -> tuple[float, list[str]]:
        """Write ``path`` whole, then wait for ``pattern``: seconds taken and lines read."""
        path.write_text(text)
        start = time.monotonic()
        lines = self.wait_for(pattern)
        return time.monotonic() - start, lines

    def interrupt(self) -> int:
        """Ctrl-C; the exit code (the rest of the output read)."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=15)
        while (line := self._queue.get(timeout=5)) is not None:
            self.lines.append(line)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project: an echo agent run as a command, a test file and a dataset's test file."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "assertly.yaml").write_text(f'agents:\n  echo: "cmd:{sys.executable} agent.py"\n')
    (tmp_path / "a.tests.yaml").write_text(TEST_FILE.format(input="hello", expected="hello"))
    (tmp_path / "b.tests.yaml").write_text(DATASET_FILE)
    (tmp_path / "data.jsonl").write_text('{"id": "x", "input": "abc", "expected": "abc"}\n')
    return tmp_path


def _calls(root: Path) -> list[str]:
    return (root / "calls.log").read_text().split()


def test_reruns_the_changed_files_tests_within_2s_and_says_what_changed(root: Path) -> None:
    watch = Watch(root, ".")
    try:
        watch.wait_for("^watching ")
        assert sorted(_calls(root)) == ["abc", "hello"]
        first_run = re.findall(r"run (\S+)$", "\n".join(watch.lines), re.M)

        # A test file saved: its test alone runs again, a new run, and the change is named.
        (root / "calls.log").unlink()
        took, lines = watch.save_and_wait(
            root / "a.tests.yaml",
            TEST_FILE.format(input="hello", expected="bye"),
            r"^since the previous run",
        )
        assert took < RERUN_S, lines
        assert "changed: a.tests.yaml; running a.tests.yaml" in lines
        assert (
            watch.wait_for("regressed")[-1] == "  regressed a.tests.yaml::s::one (passed -> failed)"
        )
        assert _calls(root) == ["hello"]  # b.tests.yaml's dataset was not called again

        # A dataset line saved: the tests of the file naming it run again.
        (root / "calls.log").unlink()
        took, lines = watch.save_and_wait(
            root / "data.jsonl",
            '{"id": "x", "input": "abc", "expected": "zzz"}\n',
            r"^since the previous run",
        )
        assert took < RERUN_S, lines
        assert "changed: data.jsonl; running b.tests.yaml" in lines
        assert _calls(root) == ["abc"]
        assert "1 regressed" in lines[-1]

        # The agent's script saved: every test runs again.
        (root / "calls.log").unlink()
        took, lines = watch.save_and_wait(
            root / "agent.py", AGENT + "\n# edited\n", r"^since the previous run"
        )
        assert "changed: agent.py; running every test" in lines
        assert sorted(_calls(root)) == ["abc", "hello"]

        # Fixed: said so.
        _, lines = watch.save_and_wait(
            root / "a.tests.yaml",
            TEST_FILE.format(input="hello", expected="hello"),
            r"^since the previous run",
        )
        assert "1 fixed" in lines[-1]
        runs = set(re.findall(r"run (\S+)$", "\n".join(watch.lines), re.M))
        assert len(runs) == 5 and first_run[0] in runs  # each run a run of its own
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1  # the dataset's test still fails
    assert "stopped watching (1 test not passing)" in watch.lines


def test_a_broken_file_prints_its_problem_and_a_fix_runs_again(root: Path) -> None:
    (root / "b.tests.yaml").unlink()
    good = TEST_FILE.format(input="hello", expected="hello")
    watch = Watch(root, "a.tests.yaml")
    try:
        watch.wait_for("^watching ")
        # A file that no longer parses: its problem, nothing runs, the watch goes on.
        _, lines = watch.save_and_wait(
            root / "a.tests.yaml", good.replace("input: hello", "input: [hello"), r"^nothing ran"
        )
        text = "\n".join(lines)
        assert "error: " in text and "a.tests.yaml:" in text, text
        assert "Traceback" not in text
        # A test that no longer compiles: an error verdict naming the problem.
        _, lines = watch.save_and_wait(
            root / "a.tests.yaml", good.replace("expect:", "expekt:"), r"^since the previous"
        )
        assert any("unknown key 'expekt'" in line for line in lines), lines
        took, lines = watch.save_and_wait(root / "a.tests.yaml", good, r"^since the previous")
        assert took < RERUN_S
        assert "1 test: 1 passed" in "\n".join(lines)
        assert "1 fixed" in lines[-1]
        assert (
            watch.wait_for("^  fixed")[-1] == "  fixed     a.tests.yaml::s::one (error -> passed)"
        )
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 0, watch.lines
    assert "stopped watching (every test passing)" in watch.lines


def test_a_broken_config_runs_nothing_then_every_test(root: Path) -> None:
    watch = Watch(root, ".")
    try:
        watch.wait_for("^watching ")
        config = (root / "assertly.yaml").read_text()
        _, lines = watch.save_and_wait(
            root / "assertly.yaml", config + "trials: zero\n", r"^nothing ran"
        )
        assert any("trials" in line for line in lines), lines
        _, lines = watch.save_and_wait(root / "assertly.yaml", config, r"^since the previous")
        assert "changed: assertly.yaml; running every test" in lines
        assert "2 tests: 2 passed" in "\n".join(lines)
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 0


def test_ctrl_c_during_a_rerun_ends_the_agent_and_exits_1(root: Path) -> None:
    watch = Watch(root, "a.tests.yaml")
    try:
        watch.wait_for("^watching ")
        (root / "a.tests.yaml").write_text(TEST_FILE.format(input="hang", expected="hang"))
        deadline = time.monotonic() + 10
        while not (root / "agent.pid").exists() or not (root / "agent.pid").read_text():
            assert time.monotonic() < deadline, watch.lines
            time.sleep(0.05)
        pid = int((root / "agent.pid").read_text())
        assert process_alive(pid)
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1, watch.lines
    deadline = time.monotonic() + 5
    while process_alive(pid):
        assert time.monotonic() < deadline, f"agent {pid} outlived the watch"
        time.sleep(0.05)


def test_ctrl_c_while_idle_exits_with_the_last_verdicts(root: Path) -> None:
    (root / "a.tests.yaml").write_text(TEST_FILE.format(input="hello", expected="nope"))
    watch = Watch(root, "a.tests.yaml")
    try:
        watch.wait_for("^watching ")
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1
    assert not any("Traceback" in line for line in watch.lines)


def test_a_py_agents_module_and_a_gate_run_every_test(root: Path) -> None:
    (root / "bot.py").write_text("def answer(text):\n    return 'echo ' + str(text)\n")
    (root / "assertly.yaml").write_text('agents:\n  echo: "py:bot:answer"\n')
    watch = Watch(root, ".", "--min-pass-rate", "1")
    try:
        watch.wait_for("^watching ")
        # The gate judges a whole run: a test file's change runs every test.
        _, lines = watch.save_and_wait(
            root / "a.tests.yaml",
            TEST_FILE.format(input="hello", expected="hello") + "\n",
            r"^since the previous",
        )
        assert "changed: a.tests.yaml; running every test" in lines
        assert "2 tests: 2 passed" in "\n".join(lines)
        # The agent's module, edited: its new answers are judged (a fresh worker imports it).
        took, lines = watch.save_and_wait(
            root / "bot.py", "def answer(text):\n    return 'nope'\n", r"^since the previous"
        )
        assert took < RERUN_S
        assert "changed: bot.py; running every test" in lines
        assert "2 regressed" in lines[-1]
        watch.wait_for("pass rate")  # the gate's decision on this run
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1


@pytest.mark.parametrize("args", [["--shard", "1/2"], ["--resume", "last"], ["--backend", "ray"]])
def test_watch_refuses_what_it_cannot_mean(
    root: Path, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["run", "a.tests.yaml", "--watch", *args])
    assert result.exit_code == 2, result.output
    assert "--watch: cannot be used with" in result.output


def test_watch_without_watchfiles_says_how_to_install_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # import fails as when not installed
    result = CliRunner().invoke(main, ["run", "a.tests.yaml", "--watch"])
    assert result.exit_code == 2
    assert "pip install 'assertly[watch]'" in result.output
    assert not (root / "calls.log").exists()  # refused before anything ran


def test_the_plan_finds_datasets_scripts_and_python_modules(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "bot.py").write_text("def answer(text):\n    return text\n")
    (root / "assertly.yaml").write_text(
        f'agents:\n  echo: "cmd:{sys.executable} agent.py"\n  py: "py:pkg.bot:answer"\n'
        'hooks:\n  seed: "sh seed.sh"\n'
    )
    (root / "seed.sh").write_text("true\n")
    plan = watch_plan(RunOptions(paths=["."]))
    assert plan.named == {root / "data.jsonl": {root / "b.tests.yaml"}}
    assert plan.everything == {
        root / "assertly.yaml",
        root / "agent.py",
        root / "pkg" / "bot.py",
        root / "seed.sh",
    }
    assert sys.executable not in {str(path) for path in plan.everything}
    assert plan.affected({root / "data.jsonl"}) == ["b.tests.yaml"]
    assert plan.affected({root / "pkg" / "bot.py"}) is None
    (root / "c.tests.yaml").write_text(TEST_FILE.format(input="x", expected="x"))
    assert plan.relevant(root / "c.tests.yaml")  # a new test file under the run's paths
    assert plan.affected({root / "c.tests.yaml"}) == ["c.tests.yaml"]
    assert not plan.relevant(root / "notes.txt")
