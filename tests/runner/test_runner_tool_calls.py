"""Tool calls an agent reports beside its output reach the trajectory assertions.

A real ``cmd:`` agent writes them to its metadata file, a ``py:`` agent returns them in a
`TargetResponse`; a dataset line and a fixtures line record them. They are stored with the
step, so ``assertly recheck`` judges them again.
"""

from __future__ import annotations

import json
import sys
import uuid

import pytest
from runner_support import Project

from trajectory_support import FORMATS, TRAJECTORY

CMD_AGENT = r"""
import json, os, sys

q = json.load(sys.stdin)
calls = q.get("calls", [])
with open(os.environ["ASSERTLY_METADATA_FILE"], "w") as handle:
    json.dump({"model": "agent-1", "tool_calls": calls}, handle)
print("The weather in Paris is mild.")
"""

CALLS = [
    {"name": "search", "arguments": {"query": "weather paris"}},
    {"name": "fetch", "arguments": '{"url": "https://example.com"}'},
    {"name": "answer", "input": {"text": "mild"}},
]

TESTS = [
    {
        "id": "right-tools",
        "input": {"calls": CALLS},
        "assertions": [
            {
                "type": "tool-called",
                "value": {"name": "search", "args": {"query": "weather paris"}},
            },
            {"type": "tool-sequence", "value": ["search", "fetch", "answer"]},
            {"type": "not-tool-called", "value": "delete"},
            {"type": "contains", "value": "mild"},
        ],
    },
    {
        "id": "expect-keys",
        "input": {"calls": CALLS},
        "expect": {"tools_called": ["fetch"], "max_tool_calls": 3, "contains": "Paris"},
    },
    {
        "id": "wrong-order",
        "input": {"calls": CALLS},
        "assertions": [
            {"type": "tool-sequence", "value": ["fetch", "search"], "config": {"mode": "exact"}}
        ],
    },
    {
        "id": "no-calls",
        "input": {"calls": []},
        "assertions": [{"type": "tool-called", "value": "search"}],
    },
    {
        "id": "bad-metadata",
        "input": {"calls": "search"},
        "assertions": [{"type": "not-tool-called", "value": "search"}],
    },
]


@pytest.mark.parametrize("check_process", ["off", "on"])
def test_a_cmd_agents_metadata_tool_calls_reach_the_assertions(
    project: Project, monkeypatch: pytest.MonkeyPatch, check_process: str
) -> None:
    monkeypatch.setenv("ASSERTLY_JUDGE_PROCESS", check_process)
    project.write("agent.py", CMD_AGENT)
    project.tests_file("tools.tests.yaml", {"tools": TESTS})
    result = project.run("run", ".", "--target", f"cmd:{sys.executable} agent.py")
    assert result.status("right-tools") == "passed"
    assert result.status("expect-keys") == "passed"
    assert result.status("wrong-order") == "failed"
    (failure,) = result.tests["wrong-order"]["trials"][0]["failures"]
    assert failure["message"] == (
        "Expected exactly these calls: fetch → search; call 1 should be fetch: got search; "
        'got 3 calls (metadata tool_calls): 1. search({"query":"weather paris"}) << → '
        '2. fetch({"url":"https://example.com"}) → 3. answer({"text":"mild"})'
    )
    assert result.status("no-calls") == "failed"
    assert result.status("bad-metadata") == "error"
    (error,) = result.tests["bad-metadata"]["trials"][0]["failures"]
    assert "tool_calls is a string, not a list of tool calls" in error["message"]

    # The stored run keeps the reported calls: a recheck judges them again, without the agent.
    (project.root / "agent.py").unlink()
    again = project.run("recheck", "last")
    assert {key: again.status(key) for key in again.tests} == {
        key: result.status(key) for key in result.tests
    }


PY_AGENT = """
import json
from assertly import TargetResponse

CALLS = [{"name": "lookup", "arguments": {"id": 7}}, {"name": "reply", "arguments": {}}]

def reported(payload):
    return TargetResponse(output="Order 7 ships today.", tool_calls=CALLS)

async def reported_async(payload):
    return TargetResponse(output={"answer": "Order 7 ships today."}, metadata={"tool_calls": CALLS})

def api_reply(payload):
    # The API's own reply as the output: the calls are read from it.
    return json.loads(payload["reply"])
"""


@pytest.fixture
def py_module(project: Project, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"tool_agent_{uuid.uuid4().hex[:8]}"
    project.write(f"{name}.py", PY_AGENT)
    monkeypatch.syspath_prepend(str(project.root))
    return name


@pytest.mark.parametrize("function", ["reported", "reported_async"])
def test_a_python_agents_target_response_tool_calls_reach_the_assertions(
    project: Project, py_module: str, function: str
) -> None:
    project.tests_file(
        "py.tests.yaml",
        {
            "s": [
                {
                    "id": "ok",
                    "input": {},
                    "assertions": [
                        {
                            "type": "tool-sequence",
                            "value": [{"name": "lookup", "args": {"id": 7}}, "reply"],
                            "config": {"mode": "exact"},
                        }
                    ],
                },
                {"id": "too-many", "input": {}, "expect": {"max_tool_calls": 1}},
            ]
        },
    )
    result = project.run("run", ".", "--target", f"py:{py_module}:{function}")
    assert result.status("ok") == "passed"
    assert result.status("too-many") == "failed"
    (failure,) = result.tests["too-many"]["trials"][0]["failures"]
    assert "(metadata tool_calls)" in failure["message"]


@pytest.mark.parametrize("format", ["openai-chat", "anthropic"])
def test_a_python_agent_returning_the_api_reply_is_read_as_such(
    project: Project, py_module: str, format: str
) -> None:
    reply, _ = FORMATS[format](TRAJECTORY)
    project.tests_file(
        "py.tests.yaml",
        {
            "s": [
                {
                    "id": "t",
                    "input": {"reply": reply},
                    "expect": {"tool_sequence": ["search", "fetch", "answer"]},
                }
            ]
        },
    )
    result = project.run("run", ".", "--target", f"py:{py_module}:api_reply")
    assert result.status("t") == "passed"


def test_recorded_tool_calls_in_datasets_and_fixtures(project: Project) -> None:
    line = {"id": "a", "output": "Done.", "tool_calls": [{"name": "search", "args": {"q": "x"}}]}
    project.write("cases.jsonl", json.dumps(line) + "\n")
    project.write(
        "recorded.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "recorded": {
                    "dataset": "cases.jsonl",
                    "assertions": [
                        {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}}
                    ],
                }
            },
        },
    )
    project.write("answers.jsonl", json.dumps({**line, "id": "f"}) + "\n")
    project.tests_file(
        "fixtures.tests.yaml",
        {"s": [{"id": "f", "input": {}, "expect": {"tools_called": ["search"]}}]},
    )
    result = project.run("run", "recorded.tests.yaml")
    assert result.counts() == (1, 1, 0, 0, 0)
    fixtures = project.run(
        "run", "fixtures.tests.yaml", "--target", f"fixtures:{project.root / 'answers.jsonl'}"
    )
    assert fixtures.status("f") == "passed"
