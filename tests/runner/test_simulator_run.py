"""Simulated conversations end to end (issue 32): the CLI, a real ``cmd:`` agent, a fake
OpenAI-compatible simulator and a fake judge, each on loopback.

The agent logs every request it gets; the two fake servers log theirs. So the tests check what
was really said turn by turn, when the conversation stopped, and that a rerun replays the
conversation from the judge cache with no request at all.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from runner_support import Project, chat_reply

from assertly.runner._simulator import OPENING

# The fake OpenAI-compatible server of the judge tests (tests/judge/fake_openai.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
import fake_openai

_AGENT = """
import json, sys
from typing import Any

{chat_reply}

data = json.load(sys.stdin)
with open("calls.jsonl", "a", encoding="utf-8") as log:
    log.write(json.dumps(data) + "\\n")
print(json.dumps(chat_reply(data["messages"])))
"""


@pytest.fixture
def simulator() -> Iterator[fake_openai.FakeOpenAI]:
    """The simulated user's endpoint."""
    yield from fake_openai.serve()


@pytest.fixture
def judge() -> Iterator[fake_openai.FakeOpenAI]:
    """The judge's endpoint (always ``pass``)."""
    yield from fake_openai.serve()


def _agent_calls(project: Project) -> list[dict[str, Any]]:
    path = project.root / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _setup(
    project: Project,
    simulator: fake_openai.FakeOpenAI,
    judge: fake_openai.FakeOpenAI,
    simulated_user: dict[str, Any],
    **simulator_config: Any,
) -> None:
    agent = project.write("agent.py", _AGENT.format(chat_reply=inspect.getsource(chat_reply)))
    project.write(
        "assertly.yaml",
        {
            "agents": {"bot": f"cmd:{sys.executable} {agent}"},
            "judge": {"base_url": judge.url, "model": "judge-1"},
            "simulator": {"base_url": simulator.url, "model": "sim-1", **simulator_config},
        },
    )
    test = {
        "id": "refund",
        "conversation": {"simulated_user": simulated_user},
        "assertions": [{"type": "llm-rubric", "value": "The agent stayed polite."}],
    }
    project.tests_file("t.yaml", {"support": [test]})


def _says(*lines: str, opening: str = "Hello") -> Any:
    """A simulated user saying ``opening`` first, then ``lines[k]`` once the agent has
    replied k+1 times (then the last line again); each call reports a cost of $0.01."""

    def answer(body: dict[str, Any]) -> fake_openai.Raw:
        replies = sum(
            1 for m in body["messages"] if m["role"] == "user" and m["content"] != OPENING
        )
        text = lines[min(replies, len(lines)) - 1] if replies else opening
        return fake_openai.Raw(200, fake_openai.completion(text, cost=0.01))

    return answer


PERSONA = "A customer who wants a refund for order A-1042."


def _trial(result: Any) -> dict[str, Any]:
    return dict(result.tests["refund"]["trials"][0])


def test_a_simulated_conversation_stops_on_the_stop_token_and_replays_from_the_cache(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    simulator.answers(_says("Where is my refund?", "Thanks, that is all. [END]"))
    user = {"persona": PERSONA, "first_message": "Hi, I need my money back"}
    _setup(project, simulator, judge, user)
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0, result.stdout + result.stderr
    trial = _trial(result)
    users = [turn["user"] for turn in trial["turns"]]
    assert users == ["Hi, I need my money back", "Where is my refund?"]
    assert trial["conversation"]["ended"] == "stop_token"
    # The simulator saw the persona, then the conversation with the roles swapped.
    assert len(simulator.requests) == 2
    last = simulator.requests[1]["messages"]
    assert last[0]["role"] == "system" and last[0]["content"].startswith(PERSONA)
    assert "[END]" in last[0]["content"]
    assert [m["role"] for m in last[1:]] == ["assistant", "user", "assistant", "user"]
    assert last[1]["content"] == "Hi, I need my money back"
    assert last[2]["content"].startswith("Looking up your order")
    assert last[3]["content"] == "Where is my refund?"
    # The agent got the simulated message as its user turn, never the stop message.
    agent_calls = _agent_calls(project)
    assert [c["messages"][-1]["content"] for c in agent_calls] == users
    # Costs apart: the simulator's on the turn it wrote (and the stop on the whole step).
    metrics = trial["turns"][1]["metrics"]
    assert metrics["simulator_cost_usd"] == pytest.approx(0.01)
    assert "simulator_cost_usd" not in trial["turns"][0]["metrics"]  # the first_message
    summary = result.summary
    assert summary["simulator_cost_usd"] == pytest.approx(0.02)
    assert summary["simulator_calls"] == 2 and summary["simulator_cached"] == 0
    assert summary["simulator_tokens"] == 240
    assert summary["judge_calls"] == 1 and summary["judge_cost_usd"] == 0.0
    assert "simulator: 2 call(s), 0 from the cache, 240 tokens, $0.0200" in result.stdout

    # A second run: the same conversation, replayed with no simulator or judge request.
    again = project.run("run", "t.yaml")
    assert again.exit_code == 0, again.stdout
    assert len(simulator.requests) == 2 and len(judge.requests) == 1
    replayed = _trial(again)
    assert [t["user"] for t in replayed["turns"]] == users
    assert [t["output"] for t in replayed["turns"]] == [t["output"] for t in trial["turns"]]
    assert replayed["conversation"]["ended"] == "stop_token"
    assert again.summary["simulator_calls"] == 0 and again.summary["simulator_cached"] == 2
    assert again.summary["simulator_cost_usd"] == 0.0
    assert replayed["turns"][1]["metrics"]["simulator_cost_usd"] == 0.0

    # --judge-cache replay: the same, and nothing may be asked.
    replay = project.run("run", "t.yaml", "--judge-cache", "replay")
    assert replay.exit_code == 0 and len(simulator.requests) == 2

    # --judge-cache off: every simulator (and judge) request is sent again.
    off = project.run("run", "t.yaml", "--judge-cache", "off")
    assert off.exit_code == 0, off.stdout
    assert len(simulator.requests) == 4 and len(judge.requests) == 2
    assert off.summary["simulator_calls"] == 2


def test_the_model_writes_the_opening_when_there_is_no_first_message(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    simulator.answers(_says("[END]", opening="Hello, refund please"))
    _setup(project, simulator, judge, {"persona": PERSONA})
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0, result.stdout
    opening = simulator.requests[0]["messages"]
    assert [m["role"] for m in opening] == ["system", "user"]  # the fixed opening request
    trial = _trial(result)
    assert [t["user"] for t in trial["turns"]] == ["Hello, refund please"]
    assert trial["turns"][0]["metrics"]["simulator_cost_usd"] == pytest.approx(0.01)


def test_a_simulated_conversation_stops_when_stop_when_passes(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    # "go ahead" makes the agent issue the refund: stop_when passes on that reply.
    simulator.answers(_says("Is it done?", "Yes, go ahead", "never sent"))
    user = {
        "persona": PERSONA,
        "first_message": "Hi",
        "max_turns": 6,
        "stop_when": [{"type": "icontains", "value": "refund issued"}],
    }
    _setup(project, simulator, judge, user)
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0, result.stdout
    trial = _trial(result)
    assert [t["user"] for t in trial["turns"]] == ["Hi", "Is it done?", "Yes, go ahead"]
    assert trial["turns"][-1]["output"]["choices"][0]["message"]["content"] == "Refund issued"
    assert trial["conversation"]["ended"] == "stop_when"
    assert len(simulator.requests) == 2  # no message is asked after the stop


def test_a_simulated_conversation_ends_at_max_turns(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    simulator.answers(_says("And then?"))
    _setup(project, simulator, judge, {"persona": PERSONA, "first_message": "Hi", "max_turns": 3})
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0, result.stdout  # reaching max_turns is no failure
    trial = _trial(result)
    assert len(trial["turns"]) == 3 and len(_agent_calls(project)) == 3
    assert trial["conversation"]["ended"] == "max_turns"
    assert len(simulator.requests) == 2


@pytest.mark.parametrize(
    ("answer", "wanted"),
    [
        (fake_openai.Raw(200, b'{"choices": []}'), "no choices[0].message"),
        (fake_openai.Raw(200, fake_openai.completion("")), "no text"),
        (fake_openai.Raw(500, b"the simulator is down"), "HTTP 500"),
        (fake_openai.Raw(200, b"garbage, not JSON"), "not JSON"),
    ],
    ids=["no-choices", "empty", "500", "not-json"],
)
def test_a_garbage_or_failing_simulator_is_an_error_naming_the_turn(
    project: Project,
    simulator: fake_openai.FakeOpenAI,
    judge: fake_openai.FakeOpenAI,
    answer: fake_openai.Raw,
    wanted: str,
) -> None:
    simulator.answers(answer)
    user = {"persona": PERSONA, "first_message": "Hi", "max_turns": 4}
    _setup(project, simulator, judge, user, timeout_s=0.3)
    result = project.run("run", "t.yaml")
    assert result.exit_code == 1
    trial = _trial(result)
    assert trial["status"] == "error"
    error = trial["error"]
    assert error.startswith("turn 2 of up to 4: the simulated user could not write its message")
    assert wanted in error
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "error"]
    assert len(_agent_calls(project)) == 1  # turn 2 was never sent
    assert judge.requests == []  # an unfinished conversation is not judged
    assert "turn 2 of up to 4" in result.stdout
    # Nothing unreadable was kept: a rerun asks again.
    asked = len(simulator.requests)
    project.run("run", "t.yaml")
    assert len(simulator.requests) > asked


def test_the_run_budget_counts_the_simulators_spend(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    simulator.answers(_says("more", "more", "more", "more"))
    user = {"persona": PERSONA, "first_message": "Hi", "max_turns": 6}
    _setup(project, simulator, judge, user)
    result = project.run("run", "t.yaml", "--max-cost-usd", "0.02")
    assert result.exit_code == 1
    # $0.01, then $0.02: spent, so no third simulator call (nor the turn it would write).
    assert len(simulator.requests) == 2
    trial = _trial(result)
    assert trial["status"] == "error" and trial["error"].startswith("turn 3 of up to 6: ")
    assert "run budget of $0.02 spent ($0.02)" in trial["error"]
    assert result.summary["budget_stopped"] == "run budget of $0.02 spent ($0.02)"


def test_without_a_simulator_the_summary_has_no_simulator_spend(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    _setup(project, simulator, judge, {"persona": PERSONA})
    scripted = {"id": "scripted", "conversation": {"turns": [{"user": "Hi"}]}}
    project.tests_file("t.yaml", {"support": [scripted]})
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0, result.stdout
    assert not any(key.startswith("simulator_") for key in result.summary)
    assert "simulator:" not in result.stdout
    assert simulator.requests == []


def test_the_simulator_defaults_to_the_judge(
    project: Project, simulator: fake_openai.FakeOpenAI, judge: fake_openai.FakeOpenAI
) -> None:
    _setup(project, simulator, judge, {"persona": PERSONA, "first_message": "Hi"})
    config = yaml.safe_load((project.root / "assertly.yaml").read_text(encoding="utf-8"))
    del config["simulator"]
    project.write("assertly.yaml", config)

    def answer(body: dict[str, Any]) -> str:  # the judge's requests ask for a verdict format
        return fake_openai.verdict("pass", 1.0) if "response_format" in body else "[END]"

    judge.answers(answer)
    result = project.run("run", "t.yaml")
    trial = _trial(result)
    assert trial["conversation"]["ended"] == "stop_token", trial
    assert simulator.requests == []
    sim_requests = [r for r in judge.requests if "response_format" not in r]
    assert len(sim_requests) == 1 and sim_requests[0]["model"] == "judge-1"
    # Its spend is still the simulator's, apart from the judge's.
    assert result.exit_code == 0, result.stdout
    assert result.summary["simulator_calls"] == 1 and result.summary["judge_calls"] == 1
