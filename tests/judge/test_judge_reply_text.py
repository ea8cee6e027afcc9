"""``rubric`` / ``llm-rubric`` judge an API reply's message text and tool calls, not its
envelope (issue 29, first contact: "the expect key `rubric` judges the whole OpenAI reply,
whose random id/created defeat the judge cache (every run asks again; replay fails)")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI
from test_judge_run import run

from assertly.engine import Response
from assertly.engine.graded._reply_text import judged_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tools"

# An agent that answers with an OpenAI Chat Completions reply whose envelope (id, created,
# system_fingerprint, call id, usage) changes on every call.
OPENAI_AGENT = r"""
import json, sys, time, uuid
q = json.load(sys.stdin)
print(json.dumps({
    "id": "chatcmpl-" + uuid.uuid4().hex,
    "object": "chat.completion",
    "created": time.time_ns(),
    "model": "gpt-test",
    "system_fingerprint": "fp_" + uuid.uuid4().hex[:8],
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant",
        "content": "Thank you! Checking the weather in " + q["city"] + ".",
        "tool_calls": [{"id": "call_" + uuid.uuid4().hex, "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": q["city"]})}}]}}],
    "usage": {"prompt_tokens": len(uuid.uuid4().hex), "completion_tokens": 7},
}))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_project(project: Path, fake: FakeOpenAI, key: str) -> None:
    (project / "agent.py").write_text(OPENAI_AGENT, encoding="utf-8")
    config = {
        "agents": {"bot": f"cmd:{sys.executable} agent.py"},
        "judge": {"base_url": fake.url, "model": "judge-1"},
    }
    (project / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    rubric = "The assistant thanks the user and looks up the weather."
    test: dict[str, Any] = {"id": "weather", "input": {"city": "Paris"}}
    if key == "rubric":
        test["expect"] = {"rubric": rubric}
    else:
        test["assertions"] = [{"type": "llm-rubric", "value": rubric}]
    tests = {"agent": "bot", "test_suites": {"s": {"tests": [test]}}}
    (project / "w.tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")


@pytest.mark.parametrize("key", ["rubric", "llm-rubric"])
def test_an_openai_reply_is_judged_by_its_text_and_calls_and_cached(
    project: Path, fake: FakeOpenAI, key: str
) -> None:
    write_project(project, fake, key)
    code, output, report = run("run", "w.tests.yaml", "--plain")
    assert code == 0 and report is not None, output
    assert len(fake.requests) == 1
    asked = fake.requests[0]["messages"][-1]["content"]
    assert "Thank you! Checking the weather in Paris." in asked
    assert 'get_weather({"city": "Paris"})' in asked
    for envelope in ("chatcmpl-", "created", "system_fingerprint", "call_", "usage"):
        assert envelope not in asked, envelope

    # The same run again: the envelope changed, the question did not; the cache answers.
    code, output, report = run("run", "w.tests.yaml", "--plain")
    assert code == 0 and report is not None, output
    assert len(fake.requests) == 1
    assert (report["summary"]["judge_calls"], report["summary"]["judge_cached"]) == (0, 1)
    code, output, report = run("run", "w.tests.yaml", "--plain", "--judge-cache", "replay")
    assert code == 0 and report is not None, output
    assert report["tests"][0]["status"] == "passed"


def _text(value: Any) -> str:
    return judged_text(Response(json.dumps(value)))


def test_judged_text_of_each_reply_format() -> None:
    chat = json.loads((EXAMPLES / "openai_chat_weather.json").read_text(encoding="utf-8"))
    assert _text(chat) == (
        "Tool calls:\n"
        '1. get_weather({"city": "Paris", "unit": "celsius"})\n'
        '2. get_weather({"city": "London", "unit": "celsius"})'
    )
    responses = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Here it is.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "search",
                "arguments": '{"q":"x"}',
            },
        ],
        "usage": {"input_tokens": 5},
    }
    assert _text(responses) == 'Here it is.\n\nTool calls:\n1. search({"q":"x"})'
    anthropic = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"id": 7}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3},
    }
    assert _text(anthropic) == 'Let me look.\n\nTool calls:\n1. lookup({"id":7})'
    plain = {"choices": [{"message": {"role": "assistant", "content": "Hi."}}], "id": "x"}
    assert _text(plain) == "Hi."
    refusal = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "No."}}]}
    assert _text(refusal) == "No."


def test_other_responses_are_judged_whole() -> None:
    assert _text({"answer": "Thank you!", "id": 3}) == '{"answer": "Thank you!", "id": 3}'
    assert judged_text(Response({"answer": "Hi"})) == '{"answer":"Hi"}'
    assert judged_text(Response("plain words")) == "plain words"
    # A message list (a transcript) is not one reply: judged as written.
    transcript = [{"role": "assistant", "content": "Hi."}]
    assert _text(transcript) == json.dumps(transcript)
