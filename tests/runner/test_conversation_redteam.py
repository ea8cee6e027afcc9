"""Red team of conversation tests (issue 32): ways a conversation could pass by mistake,
hostile text in every report, unbounded agents and simulators, secrets in simulator errors.

Real ``cmd:`` agents, a fake OpenAI-compatible simulated user on loopback, the CLI.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from runner_support import HttpAgent, Project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
import fake_openai

# An agent that answers "ok N" on turn N; a user message naming a behaviour changes it.
_AGENT = """
import json, os, sys, time
data = json.load(sys.stdin)
messages = data["messages"]
last = messages[-1]["content"]
turn = sum(1 for m in messages if m["role"] == "user")
with open("calls.log", "a", encoding="utf-8") as log:
    log.write(last + "\\n")
if "hang" in last and turn >= 3:
    time.sleep(60)
if "fail-second-trial" in last and os.path.exists("trial.mark"):
    print(json.dumps({"choices": [{"message": {"role": "assistant", "content": "bad"}}]}))
    sys.exit(0)
if "fail-second-trial" in last:
    open("trial.mark", "w").close()
text = f"ok {turn} [END]" if "agent-ends" in last else f"ok {turn}"
if "hostile" in last:
    text = HOSTILE
message = {"role": "assistant", "content": text}
if "hostile" in last:
    message["tool_calls"] = [
        {"id": "c1", "type": "function", "function": {"name": TOOL, "arguments": "{}"}}
    ]
print(json.dumps({"choices": [{"message": message}]}))
"""
HOSTILE = "=cmd|' /C calc'!A0 \x1b]0;pwned\x07\x1b[2J<script>alert(1)</script> | x | ``` \n## h"
TOOL = "<img src=x onerror=alert(2)>\x1b[31m|"


@pytest.fixture
def simulator() -> Iterator[fake_openai.FakeOpenAI]:
    """The simulated user's endpoint."""
    yield from fake_openai.serve()


def _setup(
    project: Project,
    tests: list[dict[str, Any]],
    simulator: fake_openai.FakeOpenAI | None = None,
    **sim: Any,
) -> None:
    code = f"HOSTILE = {HOSTILE!r}\nTOOL = {TOOL!r}\n" + _AGENT
    agent = project.write("agent.py", code)
    config: dict[str, Any] = {"agents": {"bot": f"cmd:{sys.executable} {agent}"}}
    if simulator is not None:
        config["simulator"] = {"base_url": simulator.url, "model": "sim-1", **sim}
    project.write("assertly.yaml", config)
    project.tests_file("t.yaml", {"s": tests})


def _trial(result: Any, test_id: str, number: int = 0) -> dict[str, Any]:
    return dict(result.tests[test_id]["trials"][number])


def _sent(project: Project) -> list[str]:
    log = project.root / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


# --- green by mistake ------------------------------------------------------------------------


def test_a_turn_that_hangs_is_an_error_within_the_per_call_timeout(project: Project) -> None:
    turns = [{"user": "hang"} for _ in range(5)]
    test = {
        "id": "h",
        "conversation": {"turns": turns},
        "assertions": [{"type": "not-contains", "value": "z"}],
    }
    _setup(project, [test])
    started = time.monotonic()
    result = project.run("run", "t.yaml", "--timeout", "0.5")
    assert time.monotonic() - started < 10
    trial = _trial(result, "h")
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 3 of 5: timed out")
    assert len(_sent(project)) == 3  # turns 4 and 5 never sent


def test_one_failing_trial_of_three_fails_the_test(project: Project) -> None:
    test = {
        "id": "t3",
        "trials": 3,
        "conversation": {
            "turns": [
                {"user": "fail-second-trial", "assertions": [{"type": "contains", "value": "ok"}]}
            ]
        },
    }
    _setup(project, [test])
    result = project.run("run", "t.yaml", "-j", "1")
    assert result.exit_code == 1
    assert result.status("t3") == "failed"


def test_a_negated_conversation_check_of_a_conversation_that_errored_is_no_pass(
    project: Project,
) -> None:
    test = {
        "id": "neg",
        "conversation": {"turns": [{"user": "a"}, {"user": "hang"}, {"user": "hang"}]},
        "assertions": [
            {"type": "not-contains", "value": "anything"},
            {"type": "not-tool-called", "value": "x"},
        ],
    }
    _setup(project, [test])
    result = project.run("run", "t.yaml", "--timeout", "0.5")
    assert result.status("neg") == "error"
    assert _trial(result, "neg")["conversation"] is None


def test_the_stop_token_in_the_agents_reply_does_not_end_the_conversation(
    project: Project, simulator: fake_openai.FakeOpenAI
) -> None:
    simulator.answers("agent-ends please")
    user = {"persona": "p", "first_message": "agent-ends", "max_turns": 3}
    test = {"id": "stop", "conversation": {"simulated_user": user}}
    _setup(project, [test], simulator)
    result = project.run("run", "t.yaml")
    trial = _trial(result, "stop")
    assert len(trial["turns"]) == 3
    assert trial["conversation"]["ended"] == "max_turns"


def test_require_stop_fails_a_conversation_that_reached_max_turns(
    project: Project, simulator: fake_openai.FakeOpenAI
) -> None:
    simulator.answers("still here")  # never says the stop token
    user = {"persona": "p", "first_message": "hi", "max_turns": 3, "require_stop": True}
    test = {"id": "rs", "conversation": {"simulated_user": user}}
    _setup(project, [test], simulator)
    result = project.run("run", "t.yaml")
    assert result.exit_code == 1
    assert result.status("rs") == "failed"
    assert len(_sent(project)) == 3  # bounded by max_turns


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b'{"choices": []}',
        json.dumps({"choices": [{"message": {"content": ""}}]}).encode(),
    ],
    ids=["empty", "not-json", "no-choice", "no-text"],
)
def test_a_garbage_simulator_reply_is_never_a_pass(
    project: Project, simulator: fake_openai.FakeOpenAI, body: bytes
) -> None:
    simulator.answers(fake_openai.Raw(200, body))
    user = {"persona": "p", "first_message": "hi", "max_turns": 3}
    test = {
        "id": "g",
        "conversation": {"simulated_user": user},
        "assertions": [{"type": "not-contains", "value": "z"}],
    }
    _setup(project, [test], simulator, timeout_s=0.3)
    result = project.run("run", "t.yaml")
    assert result.status("g") == "error"
    assert _trial(result, "g")["error"].startswith("turn 2 of up to 3")


# --- secrets ---------------------------------------------------------------------------------

KEY = "sk-redteam-0123456789abcdef"


def test_the_simulators_key_never_shows_in_an_error_plain_base64_or_url_encoded(
    project: Project, simulator: fake_openai.FakeOpenAI
) -> None:
    b64 = base64.b64encode(KEY.encode()).decode()
    message = f"bad key {KEY} b64 {b64} url {quote(KEY)} at {simulator.url}?key={KEY}"
    body = json.dumps({"error": {"message": message}}).encode()
    simulator.answers(fake_openai.Raw(401, body))
    user = {"persona": "p", "first_message": "hi", "max_turns": 3}
    test = {"id": "k", "conversation": {"simulated_user": user}}
    _setup(project, [test], simulator, api_key=KEY, timeout_s=0.3)
    result = project.run(
        "run", "t.yaml", "-o", "r.md", "-o", "r.html", "-o", "r.csv", "-o", "r.xml"
    )
    assert result.status("k") == "error"
    assert "bad key" in _trial(result, "k")["error"]
    texts = [result.stdout, result.stderr, json.dumps(result.report)]
    texts += [
        (project.root / name).read_text(encoding="utf-8")
        for name in ("r.md", "r.html", "r.csv", "r.xml")
    ]
    for text in texts:
        assert KEY not in text and b64 not in text and quote(KEY) not in text


# --- hostile text ----------------------------------------------------------------------------


def test_hostile_replies_user_turns_and_tool_names_are_inert_in_every_report(
    project: Project,
) -> None:
    turns = [{"user": "=1+1 hostile \x1b[2J <b>u</b> | y |"}, {"user": "hostile again"}]
    test = {
        "id": "x",
        "conversation": {"turns": turns},
        "assertions": [{"type": "contains", "value": "never"}],
    }
    _setup(project, [test])
    outputs = ["-o", "r.md", "-o", "r.html", "-o", "r.csv", "-o", "r.xml"]
    result = project.run("run", "t.yaml", *outputs)
    assert result.status("x") == "failed"
    github = project.run("report", "last", "--format", "github", report=False)
    reports = {
        n: (project.root / n).read_text(encoding="utf-8")
        for n in ("r.md", "r.html", "r.csv", "r.xml")
    }
    for name, text in [("stdout", result.stdout), ("github", github.stdout), *reports.items()]:
        assert "\x1b" not in text and "\x07" not in text, name
    assert "<script>alert" not in reports["r.html"] and "<img src=x" not in reports["r.html"]
    assert "<script>alert" not in reports["r.xml"]
    # No CSV cell starts a formula.
    rows = list(csv.reader(io.StringIO(reports["r.csv"].lstrip("\ufeff"))))
    for row in rows[1:]:
        assert not any(cell[:1] in ("=", "+", "-", "@") for cell in row if cell), row
    # The Markdown table of the conversation keeps its shape: no raw pipe splits a row.
    table = [line for line in reports["r.md"].splitlines() if "\\=cmd" in line]
    assert len(table) == 2
    for line in table:
        assert line.replace("\\|", "").count("|") == 5, line
    # Github annotations: one line per command.
    assert all(line.startswith("::") for line in github.stdout.splitlines() if line)


def test_a_recheck_of_a_conversation_that_errored_midway_stays_an_error(
    project: Project,
) -> None:
    turns = [{"user": "a"}, {"user": "hang"}, {"user": "hang"}]
    test = {"id": "mid", "conversation": {"turns": turns}}
    _setup(project, [test])
    first = project.run("run", "t.yaml", "--timeout", "0.5")
    assert first.status("mid") == "error"
    run_id = first.report["run_id"] if first.report else ""
    # Checks that pass on anything, on every turn and on the whole conversation.
    relaxed = {
        "id": "mid",
        "conversation": {
            "turns": [
                {**turn, "assertions": [{"type": "not-contains", "value": "zzz"}]} for turn in turns
            ]
        },
        "assertions": [{"type": "not-contains", "value": "zzz"}],
    }
    project.tests_file("t.yaml", {"s": [relaxed]})
    again = project.run("recheck", run_id)
    assert again.status("mid") == "error", _trial(again, "mid")
    assert again.exit_code == 1
    assert len(_sent(project)) == 3  # the recheck called no agent


@pytest.mark.parametrize("field", [{"stop_token": " "}, {"stop_token": "\n"}, {"persona": "  "}])
def test_a_blank_stop_token_or_persona_is_refused_not_a_stop_on_every_reply(
    project: Project, simulator: fake_openai.FakeOpenAI, field: dict[str, str]
) -> None:
    # A blank stop token is in every reply with a space: each would "stop" the conversation,
    # and require_stop would pass a conversation that never ended.
    simulator.answers("still here, not done")
    user = {"persona": "p", "first_message": "hi", "max_turns": 3, "require_stop": True, **field}
    test = {"id": "blank", "conversation": {"simulated_user": user}}
    _setup(project, [test], simulator)
    result = project.run("run", "t.yaml")
    assert result.exit_code == 1, result.stdout
    assert result.status("blank") == "error"
    name = next(iter(field))
    assert f"simulated_user.{name}: must not be blank" in _trial(result, "blank")["error"]
    assert _sent(project) == []


_MIXED = """
import json, sys
data = json.load(sys.stdin)
turn = sum(1 for m in data["messages"] if m["role"] == "user")
if turn == 1:  # a JSON reply of no known shape: its tool calls cannot be read
    print(json.dumps({"result": "deleted", "actions": [{"tool": "delete_db"}]}))
else:
    print(json.dumps({"choices": [{"message": {"role": "assistant", "content": "done"}}]}))
"""


def test_a_turn_whose_tool_calls_cannot_be_read_makes_trajectory_checks_an_error(
    project: Project,
) -> None:
    # Turn 2's calls are readable (none), turn 1's are not: "no delete_db" is unknown.
    agent = project.write("mixed.py", _MIXED)
    test = {
        "id": "mixed",
        "conversation": {"turns": [{"user": "one"}, {"user": "two"}]},
        "assertions": [
            {"type": "not-tool-called", "value": "delete_db"},
            {"type": "tool-call-count", "value": {"max": 0}},
        ],
    }
    project.tests_file("t.yaml", {"s": [test]})
    result = project.run("run", "t.yaml", "--target", f"cmd:{sys.executable} {agent}")
    assert result.status("mixed") == "error", result.stdout
    results = _trial(result, "mixed")["conversation"]["checks"][0]["results"]
    assert [r["outcome"] for r in results] == ["error", "error"]
    assert "no tool-call trace found" in results[0]["message"]


def _slow(body: dict[str, Any]) -> fake_openai.Raw:
    time.sleep(1)
    return fake_openai.Raw(200, fake_openai.completion("late"))


def test_a_silent_simulator_is_an_error_within_its_timeout(
    project: Project, simulator: fake_openai.FakeOpenAI
) -> None:
    # (A 5 MB reply is an error too, "not JSON (cut off?)": not kept here, the fake server
    # prints the broken pipe of the reply the client stopped reading.)
    simulator.answers(_slow)
    user = {"persona": "p", "first_message": "hi", "max_turns": 3}
    test = {"id": "u", "conversation": {"simulated_user": user}}
    _setup(project, [test], simulator, timeout_s=0.5)
    started = time.monotonic()
    result = project.run("run", "t.yaml")
    assert time.monotonic() - started < 2.5
    assert result.status("u") == "error"
    assert _trial(result, "u")["error"].startswith("turn 2 of up to 3")
    assert _sent(project) == ["hi"]
    assert "user said" not in result.stdout  # the simulated user wrote nothing
    # The server answers the abandoned requests before the test ends: a broken pipe printed
    # later would land in another test's captured output.
    time.sleep(max(0.0, started + 1.8 - time.monotonic()))


def test_an_http_agent_that_stalls_is_an_error_of_its_turn_within_the_timeout(
    project: Project, http_server: HttpAgent
) -> None:
    test = {"id": "slow", "conversation": {"turns": [{"user": "a"}, {"user": "b"}]}}
    project.tests_file("t.yaml", {"s": [test]})
    started = time.monotonic()
    result = project.run("run", "t.yaml", "--target", http_server.url("/slow"), "--timeout", "0.4")
    assert time.monotonic() - started < 1.8
    trial = _trial(result, "slow")
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 1 of 2: ")
    assert len(http_server.hits("/slow")) >= 1
    assert all(len(hit[3]["messages"]) == 1 for hit in http_server.hits("/slow"))  # never turn 2
