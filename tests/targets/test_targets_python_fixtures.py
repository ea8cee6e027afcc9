"""`PythonTarget` (sync and async functions) and `FixtureTarget` (recorded JSONL)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from assertly import TargetError
from assertly.targets import (
    FixtureTarget,
    PythonTarget,
    TargetRequest,
    TargetResponse,
    make_target,
)

MODULE = """
import asyncio, os
from assertly.targets import TargetResponse

def echo(payload):
    return {"echo": payload, "pid": os.getpid()}

async def echo_async(payload):
    await asyncio.sleep(0)
    return "text: " + str(payload)

def with_metadata(payload):
    return TargetResponse(output="x", model="py-model", cost_usd=0.1)

def boom(payload):
    raise ValueError("bad input")

async def slow(payload):
    await asyncio.sleep(5)

not_callable = 3

import dataclasses, datetime
from pydantic import BaseModel

class Call(BaseModel):          # an SDK's tool-call object
    name: str
    arguments: dict

class Reply(BaseModel):         # an SDK's reply, or a framework's structured result
    status: str
    when: datetime.date
    calls: list[Call]

@dataclasses.dataclass
class Found:
    path: str
    lines: tuple

def model(payload):
    calls = [Call(name="s", arguments={"q": 1})]
    return Reply(status="success", when=datetime.date(2026, 1, 2), calls=calls)

def nested(payload):
    return {"answer": "x", "found": [Found("a.md", (1, 2))]}

def sdk_calls(payload):
    return TargetResponse("done", tool_calls=[Call(name="search", arguments={"q": "x"})])

def unpicklable_metadata(payload):
    import threading
    return TargetResponse("x", metadata={"lock": threading.Lock()})

def quits_after_answering(payload):
    if payload == "quit":
        import threading, time
        def later():
            time.sleep(0.2)
            os._exit(0)
        threading.Thread(target=later).start()
    return {"pid": os.getpid()}

def forks(payload):
    if payload == 1 and os.fork() == 0:
        import time
        time.sleep(0.3)  # then returns from the call as the parent did
    return {"n": payload}

def garbles(payload):
    import sys
    if payload == "huge":
        os.write(int(sys.argv[4]), b"\\xff" * 8)  # the worker's reply pipe
    elif payload == "junk":
        os.write(int(sys.argv[4]), b"\\x00" * 7 + b"\\x04junk")
    return {"n": payload}

def daemonizes(payload):
    if os.fork() == 0:  # a daemon: a session of its own, holding the worker's pipes
        os.setsid()
        if os.fork() == 0:
            import time
            with open(payload + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(payload + ".tmp", payload)
            time.sleep(60)
        os._exit(0)
    import time
    while not os.path.exists(payload) or not open(payload).read():  # the daemon is up
        time.sleep(0.01)
    os._exit(0)

def a_set(payload):
    return {"tags": {"a", "b"}}

def an_object(payload):
    return TargetResponse(object())

class Scored(BaseModel):
    score: float

def nan_in_model(payload):
    return Scored(score=float("nan"))
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"target_mod_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def _call(target: Any, payload: Any = None, timeout_s: float = 5.0) -> TargetResponse:
    return asyncio.run(target.call(TargetRequest(payload, timeout_s)))


def test_function_runs_in_a_process_of_its_own(module: str) -> None:
    # issue 28, probe 2: an agent that ends its process must not end the run's.
    target = PythonTarget(f"{module}:echo")
    response = _call(target, {"a": 1})
    assert response.output["echo"] == {"a": 1}
    assert response.output["pid"] != os.getpid()
    asyncio.run(target.aclose())


def test_async_function(module: str) -> None:
    target = PythonTarget(f"{module}:echo_async")
    assert _call(target, 5).output == "text: 5"


def test_target_response_passes_through(module: str) -> None:
    response = _call(PythonTarget(f"{module}:with_metadata"))
    assert (response.output, response.model, response.cost_usd) == ("x", "py-model", 0.1)


def test_pydantic_models_and_dataclasses_are_read_as_their_json(module: str) -> None:
    # What an SDK or agent framework returns is judged, stored and reported as its JSON.
    assert _call(PythonTarget(f"{module}:model")).output == {
        "status": "success",
        "when": "2026-01-02",
        "calls": [{"name": "s", "arguments": {"q": 1}}],
    }
    assert _call(PythonTarget(f"{module}:nested")).output == {
        "answer": "x",
        "found": [{"path": "a.md", "lines": [1, 2]}],
    }
    reported = _call(PythonTarget(f"{module}:sdk_calls"))
    assert reported.tool_calls == [{"name": "search", "arguments": {"q": "x"}}]


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("a_set", "returned a set at tags, which is not a JSON value"),
        ("an_object", "returned an object, which is not a JSON value"),
        # pydantic's JSON mode would have written null: a verdict on a value never returned.
        ("nan_in_model", "returned nan at score, which is not a JSON value"),
    ],
)
def test_a_value_with_no_json_reading_is_an_error(module: str, function: str, message: str) -> None:
    # Never judged by a stand-in (a set has no order; an object's repr is not its answer).
    with pytest.raises(TargetError, match=message):
        _call(PythonTarget(f"{module}:{function}"))


def test_a_process_that_ended_between_calls_is_replaced_without_an_error(module: str) -> None:
    # Nobody's call is blamed for a process its agent ended after answering.
    target = PythonTarget(f"{module}:quits_after_answering")
    first = _call(target, "quit").output["pid"]
    deadline = time.monotonic() + 30
    # Ended means reapable: a thread-group leader shows "Z" while its other threads still
    # exit, and sending to it then is a death during the call (seen under load).
    [idle] = target._idle
    while idle.popen.poll() is None:
        assert time.monotonic() < deadline, "the agent's process did not end"
        time.sleep(0.05)
    assert _call(target, "again").output["pid"] != first
    asyncio.run(target.aclose())


def test_a_process_that_dies_before_reading_the_next_call_does_not_blame_that_call(
    module: str,
) -> None:
    # issue 28, red team probe "exits between calls": a reused process that dies just after its
    # previous call, while the next request waits unread in its pipe, made that next call fail
    # with "… while answering". Stopped, it still looks alive when picked; killed once the
    # request is sent, it has not acknowledged it: the call goes to a fresh process.
    import signal

    target = PythonTarget(f"{module}:echo")
    first = _call(target, 1).output["pid"]
    os.kill(first, signal.SIGSTOP)

    async def call_then_kill() -> TargetResponse:
        call = asyncio.ensure_future(target.call(TargetRequest(2, 30.0)))
        await asyncio.sleep(0.5)  # the request is in the stopped process's pipe
        os.kill(first, signal.SIGKILL)
        return await call

    assert asyncio.run(call_then_kill()).output["pid"] not in (first, os.getpid())
    asyncio.run(target.aclose())


def test_a_forked_child_returning_from_the_agent_does_not_answer_the_next_call(
    module: str,
) -> None:
    # issue 28, red team probe "an agent that forks": the child returned from the call as the
    # parent did and wrote its reply too, so every later call read the previous call's reply
    # (a failing test passed on another test's answer).
    target = PythonTarget(f"{module}:forks")
    assert [_call(target, n).output for n in (0, 1)] == [{"n": 0}, {"n": 1}]
    time.sleep(1.0)  # the child is done with the call (a stale reply would be in the pipe)
    assert [_call(target, n).output for n in (2, 3)] == [{"n": 2}, {"n": 3}]
    asyncio.run(target.aclose())


@pytest.mark.parametrize("payload", ["huge", "junk"])
def test_garbage_written_to_the_reply_pipe_is_that_call_s_error(module: str, payload: str) -> None:
    # issue 28, red team probe "garbage to the reply pipe's fd": an internal error
    # (OverflowError, UnpicklingError); now the call's error, and the next call a fresh process.
    target = PythonTarget(f"{module}:garbles")
    with pytest.raises(TargetError, match="not assertly's reply"):
        _call(target, payload)
    assert _call(target, "fine").output == {"n": "fine"}
    asyncio.run(target.aclose())


def test_a_process_that_ends_while_a_daemon_holds_its_pipe_is_that_call_s_error(
    module: str, tmp_path: Path
) -> None:
    # issue 28, red team probe "setsid/double fork of a child that holds pipes": the pipe
    # never closed, so the call ran to its timeout ("timed out", not the exit), and killing
    # the process then waited until the daemon ended.
    import signal

    pid_file = tmp_path / "daemon.pid"
    target = PythonTarget(f"{module}:daemonizes")
    try:
        with pytest.raises(TargetError, match="exited with code 0 while answering"):
            _call(target, str(pid_file), timeout_s=20.0)
        asyncio.run(target.aclose())
    finally:
        deadline = time.monotonic() + 10
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the daemon never started"
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_metadata_that_cannot_cross_processes_is_an_error(module: str) -> None:
    with pytest.raises(TargetError, match="reported metadata that cannot be sent"):
        _call(PythonTarget(f"{module}:unpicklable_metadata"))


def test_exceptions_and_timeouts_are_target_errors(module: str) -> None:
    with pytest.raises(TargetError, match="ValueError: bad input"):
        _call(PythonTarget(f"{module}:boom"))
    with pytest.raises(TargetError, match=r"timed out after 0\.1 s"):
        _call(PythonTarget(f"{module}:slow"), timeout_s=0.1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_function_given", "expected py:module:function"),
        ("definitely_not_a_module_xyz:f", "cannot import 'definitely_not_a_module_xyz'"),
        ("{module}:missing", "has no function 'missing'"),
        ("{module}:not_callable", "has no function 'not_callable'"),
    ],
)
def test_bad_specs(module: str, spec: str, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        PythonTarget(spec.format(module=module))


def test_module_in_the_working_directory_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"cwd_mod_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("def f(p):\n    return 'found'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))]
    )
    assert _call(make_target(f"py:{name}:f", secrets=set())).output == "found"


def test_error_inside_an_imported_module_is_a_target_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"bad_mod_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import nonexistent_dependency_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    # A missing dependency of the module is not "the module is not in the working directory".
    with pytest.raises(TargetError, match="nonexistent_dependency_xyz"):
        PythonTarget(f"{name}:f")
    (tmp_path / f"{name}2.py").write_text("def f(:\n", encoding="utf-8")
    with pytest.raises(TargetError, match="SyntaxError"):
        PythonTarget(f"{name}2:f")


# --- fixtures -----------------------------------------------------------------------------------


def _jsonl(tmp_path: Path, *records: Any, extra: str = "") -> Path:
    path = tmp_path / "recorded.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) + extra, encoding="utf-8"
    )
    return path


def test_fixture_lookup_by_id_and_by_input(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        {"id": "first", "output": "ünïcödé ✓ first", "model": "rec", "latency_ms": 3},
        {"input": {"b": 2, "a": 1}, "output": {"by": "input"}},
        {"id": "first", "output": "a later duplicate is ignored"},
        {"id": "last", "output": ["x"]},
    )
    target = FixtureTarget(path)
    try:
        first = target.lookup("first", None)
        assert (first.output, first.model, first.latency_ms) == ("ünïcödé ✓ first", "rec", 3.0)
        assert target.lookup("last", None).output == ["x"]
        # Key order of the input does not matter; an unknown id falls back to the input.
        assert target.lookup("unknown-id", {"a": 1, "b": 2}).output == {"by": "input"}
        assert _call(target, {"a": 1, "b": 2}).output == {"by": "input"}
        with pytest.raises(TargetError, match="no recorded response for test 'nope'"):
            target.lookup("nope", {"other": 1})
    finally:
        asyncio.run(target.aclose())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("{not json\n", r"recorded\.jsonl:2: invalid JSON"),
        ('{"id": "x"}\n', r"recorded\.jsonl:2: expected an object with output"),
    ],
)
def test_bad_fixture_lines_name_the_line(tmp_path: Path, extra: str, message: str) -> None:
    path = _jsonl(tmp_path, {"id": "a", "output": 1}, extra=extra)
    with pytest.raises(TargetError, match=message):
        FixtureTarget(path)


def test_missing_fixture_file(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="cannot read fixtures"):
        make_target(f"fixtures:{tmp_path / 'nope.jsonl'}", secrets=set())


HANGS_FROM_ITS_SECOND_IMPORT = """
import os, time
marker = os.environ["ASSERTLY_TEST_MARKER"]
if os.path.exists(marker):  # every process after the first hangs in its import
    with open(marker + ".pids", "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    while True:
        time.sleep(0.05)
open(marker, "w").close()

def slow(payload):
    time.sleep(1)
    return {"n": payload}
"""

CALLS_TWICE_AT_ONCE = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from assertly.targets import PythonTarget, TargetRequest

async def main():
    target = PythonTarget("hangs_second:slow")
    calls = [target.call(TargetRequest(n, 2.0)) for n in range(2)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    await target.aclose()
    print(sorted(type(result).__name__ for result in results))

asyncio.run(main())
"""


def test_a_process_whose_import_hangs_is_stopped_with_its_call(tmp_path: Path) -> None:
    # issue 28, final review: the second call's new process hung importing the agent; its wait
    # for "ready" held a thread of asyncio's default executor and the process was not yet
    # known to aclose(), so at its timeout the call failed but asyncio.run never returned and
    # the process outlived the run.
    (tmp_path / "hangs_second.py").write_text(HANGS_FROM_ITS_SECOND_IMPORT, encoding="utf-8")
    script = tmp_path / "calls.py"
    script.write_text(CALLS_TWICE_AT_ONCE, encoding="utf-8")
    marker = tmp_path / "marker"
    env = {**os.environ, "ASSERTLY_TEST_MARKER": str(marker)}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # the run ended for ever before the fix
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "['TargetError', 'TargetResponse']"
    pids = [int(line) for line in (tmp_path / "marker.pids").read_text().split()]
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids):  # killed, then reaped
        assert time.monotonic() < deadline, "a process that hung in its import outlived the run"
        time.sleep(0.05)
