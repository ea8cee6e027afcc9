"""`assertly run` against a real HTTP server on 127.0.0.1, Python function targets (sync and
async) and recorded JSONL fixtures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from runner_support import HttpAgent, Project, free_port

from store_support import stored_records_text

TOKEN = "tok-" + uuid.uuid4().hex  # a throw-away value, checked for leaks


def _one(test_id: str, **extra: object) -> dict[str, object]:
    return {"id": test_id, "input": {"q": test_id}, "expect": {"status": "success"}, **extra}


def test_http_statuses_retries_and_errors(project: Project, http_server: HttpAgent) -> None:
    refused = free_port()
    project.write(
        "assertly.yaml",
        {
            "agents": {
                "ok": http_server.url("/ok"),
                "flaky": http_server.url("/fail-once"),
                "missing": http_server.url("/missing"),
                "down": {"url": http_server.url("/always500"), "retries": 1},
                "refused": {"url": f"http://127.0.0.1:{refused}/", "retries": 0},
            }
        },
    )
    for agent in ("ok", "flaky", "missing", "down", "refused"):
        project.write(
            f"{agent}.tests.yaml",
            {"agent": agent, "test_suites": {agent: {"tests": [_one(agent)]}}},
        )
    project.write(
        "model.tests.yaml",
        {
            "agent": "ok",
            "test_suites": {
                "model": {
                    "tests": [
                        {"id": "model", "input": {}, "expect": {"agent_used_model": "http-model"}}
                    ]
                }
            },
        },
    )
    result = project.run("run", ".", "-j", "8")
    assert result.exit_code == 1
    assert result.status("ok") == "passed"
    assert result.status("model") == "passed"  # from the X-Assertly-Model header
    assert result.status("flaky") == "passed"  # 500, then 200 on the retry
    assert len(http_server.hits("/fail-once")) == 2
    # The input was POSTed as JSON.
    assert http_server.hits("/ok")[0][3] in ({"q": "ok"}, {})

    missing = result.tests["missing"]
    assert missing["status"] == "error"
    assert "HTTP 404" in missing["trials"][0]["error"]
    assert len(http_server.hits("/missing")) == 1, "a 404 is not retried"

    down = result.tests["down"]
    assert down["status"] == "error"
    assert "HTTP 503 after 2 attempts" in down["trials"][0]["error"]
    assert "down for maintenance" in down["trials"][0]["error"]
    assert len(http_server.hits("/always500")) == 2

    refused_test = result.tests["refused"]
    assert refused_test["status"] == "error"
    assert "cannot connect to" in refused_test["trials"][0]["error"]
    assert result.counts() == (6, 3, 0, 3, 0)


def test_http_429_honours_retry_after(project: Project, http_server: HttpAgent) -> None:
    project.tests_file("rl.tests.yaml", {"s": [_one("rate-limited")]})
    result = project.run("run", ".", "--target", http_server.url("/ratelimited"))
    assert result.status("rate-limited") == "passed"
    hits = http_server.hits("/ratelimited")
    assert len(hits) == 2
    # Retry-After: 1 is longer than the default first backoff (0.5 s).
    assert hits[1][1] - hits[0][1] >= 0.95


def test_http_timeout_is_an_error(project: Project, http_server: HttpAgent) -> None:
    project.tests_file("slow.tests.yaml", {"s": [_one("slow", timeout_s=0.3)]})
    started = time.monotonic()
    result = project.run("run", ".", "--target", http_server.url("/slow"))
    assert time.monotonic() - started < 1.9
    assert result.status("slow") == "error"
    assert "timed out after 0.3 s" in result.tests["slow"]["trials"][0]["error"]


def test_http_target_timeout_from_config_is_used(project: Project, http_server: HttpAgent) -> None:
    project.write(
        "assertly.yaml",
        {"agents": {"bot": {"url": http_server.url("/slow"), "timeout_s": 0.3, "retries": 0}}},
    )
    project.tests_file("slow.tests.yaml", {"s": [_one("slow")]})
    started = time.monotonic()
    result = project.run("run", ".")
    assert time.monotonic() - started < 1.9
    assert result.status("slow") == "error"
    assert "timed out after 0.3 s" in result.tests["slow"]["trials"][0]["error"]


def test_header_secrets_never_reach_the_report_or_the_store(
    project: Project, http_server: HttpAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", TOKEN)
    project.write(
        "assertly.yaml",
        {
            "agents": {
                "bot": {
                    "url": http_server.url("/auth"),
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                }
            }
        },
    )
    project.tests_file(
        "auth.tests.yaml",
        {
            "s": [
                {
                    "id": "sent",
                    "input": {},
                    "expect": {"field_contains": {"path": "auth", "text": "Bearer"}},
                },
                # The agent echoes the header; the failure's `actual` would show it.
                {
                    "id": "echoed",
                    "input": {},
                    "expect": {"field_equals": {"auth": "something else"}},
                },
            ]
        },
    )
    result = project.run("run", ".", "--fact", "x=true")
    assert result.status("sent") == "passed"
    assert result.status("echoed") == "failed"
    # The server really received the secret …
    assert http_server.hits("/auth")[0][2]["Authorization"] == f"Bearer {TOKEN}"
    # … but no report or store file holds it.
    failure = result.tests["echoed"]["trials"][0]["failures"][0]
    assert failure["actual"] == "Bearer [REDACTED]"
    report_text = json.dumps(result.report)
    assert TOKEN not in report_text
    assert TOKEN not in result.stdout
    for path in (project.root / ".assertly").iterdir():
        data = path.read_bytes() + stored_records_text(path)
        assert TOKEN.encode() not in data, f"secret leaked into {path.name}"
    # The records as stored (compressed in the file) read back: no secret in any of them.
    stored = [json.dumps(record) for record in project.records()]
    assert stored and all(TOKEN not in text for text in stored)
    assert any("[REDACTED]" in text for text in stored)
    # Re-rendering the stored run leaks nothing either.
    again = project.run("report", "last")
    assert TOKEN not in json.dumps(again.report)


def test_missing_secret_variable_is_an_error(
    project: Project, http_server: HttpAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSERTLY_TEST_UNSET_TOKEN", raising=False)
    project.write(
        "assertly.yaml",
        {
            "agents": {
                "bot": {
                    "url": http_server.url("/auth"),
                    "headers": {"Authorization": "Bearer ${ASSERTLY_TEST_UNSET_TOKEN}"},
                }
            }
        },
    )
    project.tests_file("auth.tests.yaml", {"s": [_one("t")]})
    result = project.run("run", ".")
    assert result.status("t") == "error"
    assert "ASSERTLY_TEST_UNSET_TOKEN is not set" in result.tests["t"]["trials"][0]["error"]
    assert http_server.hits("/auth") == []


# --- py:module:function -------------------------------------------------------------------------

PY_AGENT = """
import asyncio

def answer(payload):
    return {"status": "success", "results": [{"file": "journal/" + payload["name"]}]}

async def answer_async(payload):
    await asyncio.sleep(0.01)
    return '{"status": "success", "results": []}'

def broken(payload):
    raise RuntimeError("the agent is broken")

async def sleepy(payload):
    await asyncio.sleep(5)
    return {"status": "success"}
"""


@pytest.fixture
def py_module(project: Project, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"py_agent_{uuid.uuid4().hex[:8]}"
    project.write(f"{name}.py", PY_AGENT)
    monkeypatch.syspath_prepend(str(project.root))
    return name


@pytest.mark.parametrize("function", ["answer", "answer_async"])
def test_python_function_targets(project: Project, py_module: str, function: str) -> None:
    project.tests_file(
        "py.tests.yaml",
        {"s": [{"id": "t", "input": {"name": "x.md"}, "expect": {"status": "success"}}]},
    )
    result = project.run("run", ".", "--target", f"py:{py_module}:{function}")
    assert result.exit_code == 0
    assert result.counts() == (1, 1, 0, 0, 0)


def test_python_function_that_raises_or_hangs_is_an_error(project: Project, py_module: str) -> None:
    project.tests_file(
        "py.tests.yaml",
        {"s": [{"id": "t", "input": {}, "timeout_s": 0.3, "expect": {"status": "success"}}]},
    )
    broken = project.run("run", ".", "--target", f"py:{py_module}:broken")
    assert broken.status("t") == "error"
    assert "RuntimeError: the agent is broken" in broken.tests["t"]["trials"][0]["error"]
    sleepy = project.run("run", ".", "--target", f"py:{py_module}:sleepy")
    assert sleepy.status("t") == "error"
    assert "timed out" in sleepy.tests["t"]["trials"][0]["error"]
    missing = project.run("run", ".", "--target", f"py:{py_module}:nope")
    assert missing.status("t") == "error"
    assert "has no function 'nope'" in missing.tests["t"]["trials"][0]["error"]


ODD_AGENT = """
def huge(payload):
    return {"status": "success", "n": 2 ** 70}

def surrogate(payload):
    return "broken \\udc80 text"

def not_json(payload):
    return {"status": "success", "tags": {"a"}}
"""


def test_odd_python_return_values_are_stored_and_reported(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"py_odd_{uuid.uuid4().hex[:8]}"
    project.write(f"{name}.py", ODD_AGENT)
    monkeypatch.syspath_prepend(str(project.root))
    project.tests_file(
        "odd.tests.yaml",
        {"s": [{"id": "t", "input": {}, "expect": {"field_equals": {"n": 1}}}]},
    )
    huge = project.run("run", ".", "--target", f"py:{name}:huge")
    assert huge.status("t") == "failed"
    # A 70-bit integer survives the store exactly (not as a float).
    assert huge.tests["t"]["trials"][0]["failures"][0]["actual"] == 2**70
    surrogate = project.run("run", ".", "--target", f"py:{name}:surrogate")
    assert surrogate.status("t") == "failed"
    assert "not JSON" in surrogate.tests["t"]["trials"][0]["failures"][0]["message"]
    # A set has no JSON reading (no order): the call's error, not a verdict on a stand-in.
    odd = project.run("run", ".", "--target", f"py:{name}:not_json")
    assert odd.status("t") == "error"
    assert (
        "returned a set at tags, which is not a JSON value" in odd.tests["t"]["trials"][0]["error"]
    )
    assert project.run("report", "last").exit_code == 1


def test_python_module_in_the_working_directory_is_importable(tmp_path: Path) -> None:
    """A real ``assertly`` process: ``py:my_agent:answer`` finds ``./my_agent.py``."""
    (tmp_path / "my_agent.py").write_text(PY_AGENT, encoding="utf-8")
    (tmp_path / "py.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, input: {name: a.md}, expect: {status: success}}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "assertly"),
            "run",
            ".",
            "--target",
            "py:my_agent:answer",
            "-o",
            "r.json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tests"][0]["status"] == "passed", completed.stdout + completed.stderr
    assert completed.returncode == 0


def test_python_module_that_fails_to_import_is_an_error(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"py_broken_{uuid.uuid4().hex[:8]}"
    project.write(f"{name}.py", "raise RuntimeError('bad module')\n")
    monkeypatch.syspath_prepend(str(project.root))
    project.tests_file("py.tests.yaml", {"s": [_one("a"), _one("b")]})
    result = project.run("run", ".", "--target", f"py:{name}:answer")
    assert result.exit_code == 1
    assert result.counts() == (2, 0, 0, 2, 0)
    assert "RuntimeError: bad module" in result.tests["a"]["trials"][0]["error"]


# --- fixtures:FILE.jsonl ------------------------------------------------------------------------


def test_fixture_target_answers_from_recorded_jsonl(project: Project) -> None:
    lines = [
        {"id": "by-id", "output": {"status": "success"}, "model": "recorded-model"},
        {"input": {"q": "by input"}, "output": '{"status": "success"}'},
        {"id": "steps/first", "output": {"results": [{"file": "a"}]}},
        {"id": "steps/second", "output": {"results": [{"file": "b"}]}},
        {"id": "wrong", "output": {"status": "error"}},
    ]
    project.write("answers.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n\n")
    project.tests_file(
        "rec.tests.yaml",
        {
            "s": [
                {
                    "id": "by-id",
                    "input": {"anything": 1},
                    "expect": {"status": "success", "agent_used_model": "recorded-model"},
                },
                {"id": "by-input", "input": {"q": "by input"}, "expect": {"status": "success"}},
                {"id": "wrong", "input": {}, "expect": {"status": "success"}},
                {"id": "unrecorded", "input": {"q": "never seen"}, "expect": {"status": "success"}},
                {
                    "id": "steps",
                    "multi_step": [
                        {
                            "step": "first",
                            "input": {},
                            "store": "one",
                            "expect": {"results_count": 1},
                        },
                        {
                            "step": "second",
                            "input": {},
                            "expect": {"no_overlap": {"path": "results[*].file", "with": "one"}},
                        },
                    ],
                },
            ]
        },
    )
    result = project.run("run", ".", "--target", f"fixtures:{project.root / 'answers.jsonl'}")
    assert result.status("by-id") == "passed"
    assert result.status("by-input") == "passed"
    assert result.status("wrong") == "failed"
    assert result.status("steps") == "passed"
    assert result.status("unrecorded") == "error"
    assert "no recorded response" in result.tests["unrecorded"]["trials"][0]["error"]
    assert result.counts() == (5, 3, 1, 1, 0)


def test_recorded_responses_are_not_rate_limited(project: Project) -> None:
    """--rate-limit spaces calls to agents; reading a recorded response is no call."""
    ids = [f"t{i}" for i in range(6)]
    lines = [{"id": test_id, "output": {"status": "success"}} for test_id in ids]
    project.write("answers.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    project.tests_file("rec.tests.yaml", {"s": [_one(test_id) for test_id in ids]})
    started = time.monotonic()
    result = project.run("run", ".", "--target", "fixtures:answers.jsonl", "--rate-limit", "1")
    assert result.counts() == (6, 6, 0, 0, 0)
    # Six calls at one per second would take five seconds.
    assert time.monotonic() - started < 4


def test_invalid_fixture_file_makes_every_test_an_error(project: Project) -> None:
    project.write("answers.jsonl", '{"id": "a", "output": 1}\nnot json\n')
    project.tests_file("rec.tests.yaml", {"s": [_one("a"), _one("b")]})
    result = project.run("run", ".", "--target", "fixtures:answers.jsonl")
    assert result.exit_code == 1
    assert result.counts() == (2, 0, 0, 2, 0)
    assert "answers.jsonl:2: invalid JSON" in result.tests["a"]["trials"][0]["error"]
