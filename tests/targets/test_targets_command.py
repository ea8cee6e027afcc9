"""`CommandTarget` with real subprocesses: input JSON on stdin, stdout as the response, metadata
file, minimal environment, no shell unless asked, errors with stderr's tail, timeouts that kill
the whole process group.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assertly import TargetError
from assertly.targets import CommandTarget, TargetRequest, TargetResponse, make_target


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "agent.py"
    path.write_text("import json, os, subprocess, sys, time\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


def _call(target: CommandTarget, payload: Any = None, timeout_s: float = 10.0) -> TargetResponse:
    return asyncio.run(target.call(TargetRequest(payload, timeout_s)))


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_input_on_stdin_and_stdout_is_the_response(tmp_path: Path) -> None:
    argv = _script(tmp_path, "q = json.load(sys.stdin)\nprint(json.dumps({'got': q}))\n")
    response = _call(CommandTarget(argv), {"q": "ünïcode", "n": 1})
    assert json.loads(response.output) == {"got": {"q": "ünïcode", "n": 1}}
    assert response.model is None and response.latency_ms is None


def test_metadata_file_is_read(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        "json.dump({'model': 'm', 'cost_usd': 1, 'latency_ms': 12.5, 'tokens': {'in': 3, 'x': 'y'},"
        " 'cost_usd_bad': True}, open(os.environ['ASSERTLY_METADATA_FILE'], 'w'))\nprint('hi')\n",
    )
    response = _call(CommandTarget(argv), {})
    assert (response.model, response.cost_usd, response.latency_ms) == ("m", 1.0, 12.5)
    assert response.tokens == {"in": 3}


def test_non_zero_exit_is_an_error_with_the_tail_of_stderr(tmp_path: Path) -> None:
    argv = _script(
        tmp_path, "sys.stderr.write('HEAD' + 'x' * 5000 + 'the real reason')\nsys.exit(7)\n"
    )
    with pytest.raises(TargetError) as caught:
        _call(CommandTarget(argv), {})
    message = str(caught.value)
    assert message.startswith("command exited with code 7; stderr: …")
    assert message.endswith("the real reason")
    assert "HEAD" not in message
    assert len(message) < 2200


def test_killed_by_a_signal_is_reported(tmp_path: Path) -> None:
    argv = _script(tmp_path, "import signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    with pytest.raises(TargetError, match="killed by signal 15"):
        _call(CommandTarget(argv), {})


def test_empty_stdout_is_an_error(tmp_path: Path) -> None:
    argv = _script(tmp_path, "print('   ')\nsys.stderr.write('why')\n")
    with pytest.raises(TargetError, match="wrote nothing on stdout; stderr: why"):
        _call(CommandTarget(argv), {})


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    argv = _script(
        tmp_path,
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n",
    )
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"timed out after 0.8 s \(process group killed\)"):
        _call(CommandTarget(argv), {}, timeout_s=0.8)
    assert time.monotonic() - started < 5
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_agent_that_ignores_stdin_still_works(tmp_path: Path) -> None:
    argv = _script(tmp_path, 'print(\'{"status": "success"}\')\n')
    response = _call(CommandTarget(argv), {"big": "x" * 1_000_000})
    assert json.loads(response.output) == {"status": "success"}


def test_no_shell_unless_asked(tmp_path: Path) -> None:
    no_shell = _call(CommandTarget("echo $HOME && echo done"), {})
    assert no_shell.output.strip() == "$HOME && echo done"
    shell = _call(CommandTarget("echo one && echo two", shell=True), {})
    assert shell.output.split() == ["one", "two"]


def test_environment_is_minimal_unless_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSERTLY_PRIVATE", "hidden")
    monkeypatch.setenv("ASSERTLY_SHARED", "shared")
    argv = _script(tmp_path, "print(json.dumps(dict(os.environ)))\n")
    env = json.loads(_call(CommandTarget(argv), {}).output)
    assert "ASSERTLY_PRIVATE" not in env
    assert "PATH" in env
    passed = json.loads(
        _call(CommandTarget(argv, pass_env=["ASSERTLY_SHARED"], env={"EXTRA": "1"}), {}).output
    )
    assert passed["ASSERTLY_SHARED"] == "shared"
    assert passed["EXTRA"] == "1"
    assert "ASSERTLY_PRIVATE" not in passed


def test_cwd_is_used(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    argv = _script(tmp_path, "print(json.dumps(os.getcwd()))\n")
    response = _call(CommandTarget(argv, cwd=str(tmp_path / "sub")), {})
    assert json.loads(response.output) == str(tmp_path / "sub")


def test_missing_program_and_empty_command(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="cannot start"):
        _call(CommandTarget([str(tmp_path / "nope")]), {})
    with pytest.raises(TargetError, match="empty command"):
        CommandTarget("   ")


def test_concurrent_calls_are_independent(tmp_path: Path) -> None:
    argv = _script(tmp_path, "q = json.load(sys.stdin)\ntime.sleep(0.3)\nprint(q['n'])\n")
    target = CommandTarget(argv)

    async def many() -> list[str]:
        calls = [target.call(TargetRequest({"n": n}, 10)) for n in range(6)]
        return [r.output.strip() for r in await asyncio.gather(*calls)]

    started = time.monotonic()
    assert asyncio.run(many()) == [str(n) for n in range(6)]
    assert time.monotonic() - started < 1.6


def test_make_target_specs(tmp_path: Path) -> None:
    target = make_target("cmd:python3 -c 'print(1)'", secrets=set())
    assert isinstance(target, CommandTarget)
    assert target.argv == ["python3", "-c", "print(1)"]
    with pytest.raises(TargetError, match="unknown target 'ftp://x'"):
        make_target("ftp://x", secrets=set())


def _children() -> list[int]:
    """Processes, zombies included, whose parent is this process: not yet reaped."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize(
    ("moment", "between_s"), [("starting", 0), ("running", 0), ("running", 0.002)]
)
def test_a_call_cancelled_twice_still_kills_and_reaps_its_agent(
    tmp_path: Path,
    moment: str,
    between_s: float,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ctrl-C cancels a call twice (the run, then each worker); the agent must not outlive it.

    Before the fix, the second cancellation cut the clean-up short: the agent's process and
    its pipes outlived the event loop, and Python printed "Loop … that handles pid … is
    closed" and an "Event loop is closed" traceback at exit.
    """
    argv = _script(tmp_path, "time.sleep(30)\n")
    target = CommandTarget(argv)
    left: list[int] = []
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    async def scenario() -> None:
        call = asyncio.ensure_future(target.call(TargetRequest({"x": 1}, 60)))
        if moment == "running":
            while not _children():
                await asyncio.sleep(0.005)
        else:
            await asyncio.sleep(0)  # the process is being started
        call.cancel()
        await asyncio.sleep(between_s)
        call.cancel()  # a second cancellation, in the middle of the clean-up
        with pytest.raises(asyncio.CancelledError):
            await call
        left.extend(_children())  # still in the loop: the agent must be killed and reaped

    before = _children()
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario())
        time.sleep(0.2)  # what asyncio's child watcher would still report
        gc.collect()  # what a transport left open would say when collected
    assert set(left) - set(before) == set(), "the cancelled call left its agent unreaped"
    assert [record.getMessage() for record in caplog.records] == []
    assert [str(hook.exc_value) for hook in unraisable] == []


def test_a_cancellation_in_the_turn_the_clean_up_ends_is_not_lost() -> None:
    """Cancelled in the very loop turn its clean-up finishes, the caller is still cancelled."""
    from assertly.targets._command import despite_cancellation

    async def main() -> str:
        loop = asyncio.get_running_loop()
        gate: asyncio.Future[None] = loop.create_future()

        async def clean_up() -> str:
            await gate
            return "done"

        task = asyncio.ensure_future(despite_cancellation(clean_up()))
        await asyncio.sleep(0.01)  # the task waits for its clean-up
        gate.set_result(None)  # the clean-up ends ...
        task.cancel()  # ... in the turn a Ctrl-C cancels the task
        try:
            return f"returned {await task!r}"
        except asyncio.CancelledError:
            return "cancelled"

    assert asyncio.run(main()) == "cancelled"
