"""The simulated user's model client against the fake OpenAI-compatible server (issue 32).

`JudgeClient.chat` (a plain chat completion, cached and budgeted like a judgement) and
`UserSimulator` (the persona, the swapped roles, the stop token, every way a reply is no
message).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fake_openai import FakeOpenAI, Raw, completion

from assertly.judge import ChatReply, JudgeClient
from assertly.judge._chat import MAX_REPLY_CHARS
from assertly.loading import JudgeModel, SimulatedUser
from assertly.runner._simulator import (
    INSTRUCTION,
    NO_TEXT,
    OPENING,
    SimulatedMessage,
    UserSimulator,
)
from assertly.store import RunStore

T = TypeVar("T")
PERSONA = "A customer who wants a refund for order A-1042."
HELLO = [{"role": "user", "content": "Hi"}]


def config(fake: FakeOpenAI, **extra: Any) -> JudgeModel:
    return JudgeModel.model_validate({"base_url": fake.url, "model": "sim-1", **extra})


def run(coroutine: Awaitable[T], *closing: Any) -> T:
    async def go() -> T:
        try:
            return await coroutine
        finally:
            for client in closing:
                await client.close()

    return asyncio.run(go())


def chat(client: JudgeClient, messages: list[dict[str, Any]] = HELLO) -> ChatReply:
    return run(client.chat(messages), client)


def simulate(
    simulator: UserSimulator,
    history: list[dict[str, Any]] | None = None,
    user: SimulatedUser | None = None,
) -> SimulatedMessage | str:
    said = simulator.next_message(user or SimulatedUser(PERSONA), history or [])
    return run(said, simulator.client)


def simulator(fake: FakeOpenAI, store: RunStore | None = None, **extra: Any) -> UserSimulator:
    return UserSimulator(config(fake, **extra), store, cache=None, secrets=set(), timeout_s=5)


# --- JudgeClient.chat -------------------------------------------------------------------------


def test_chat_sends_a_plain_completion_and_returns_its_text(fake: FakeOpenAI) -> None:
    fake.answers(Raw(200, completion("Hello there", cost=0.002)))
    client = JudgeClient(config(fake, seed=7, max_tokens=64), None)
    reply = chat(client)
    assert reply == ChatReply("Hello there", None, 0.002, 120, False)
    body = fake.requests[0]
    assert "response_format" not in body  # no verdict asked for
    assert body == {
        "model": "sim-1",
        "messages": HELLO,
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 64,
    }
    assert (client.calls, client.tokens, client.cost_usd) == (1, 120, 0.002)


def test_chat_honours_every_cache_mode(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        fake.answers(Raw(200, completion("first", cost=0.01)))
        assert chat(JudgeClient(config(fake), store)).text == "first"
        assert len(fake.requests) == 1
        # rw again: the kept reply, no request, no cost.
        again = chat(JudgeClient(config(fake), store))
        assert again == ChatReply("first", None, 0.0, 0, True)
        assert len(fake.requests) == 1
        # off: neither read nor written, so asked again.
        fake.answers("second")
        assert chat(JudgeClient(config(fake), store, cache="off")).text == "second"
        assert len(fake.requests) == 2
        assert chat(JudgeClient(config(fake), store)).text == "first"  # off wrote nothing
        # replay: a hit needs no server; a miss is an error and asks nothing.
        assert chat(JudgeClient(config(fake), store, cache="replay")).text == "first"
        other = [{"role": "user", "content": "something else"}]
        missed = chat(JudgeClient(config(fake), store, cache="replay"), other)
        assert missed.text is None and missed.error is not None
        assert "--judge-cache replay" in missed.error and "--judge-cache rw" in missed.error
        assert len(fake.requests) == 2
        # ro: a miss is asked, never written (so asked again; replay still misses).
        assert chat(JudgeClient(config(fake), store, cache="ro"), other).text == "second"
        chat(JudgeClient(config(fake), store, cache="ro"), other)
        assert len(fake.requests) == 4
        assert chat(JudgeClient(config(fake), store, cache="replay"), other).error
        # Another model is another request.
        chat(JudgeClient(config(fake, model="sim-2"), store))
        assert len(fake.requests) == 5
    finally:
        store.close()


def test_chat_is_keyed_like_a_judgement(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        fake.answers("kept")
        client = JudgeClient(config(fake), store)
        chat(client)
        settings = client.settings({})
        assert isinstance(settings, dict)
        assert store.judge_reply(JudgeClient.cache_key(settings, HELLO, 0)) == "kept"
    finally:
        store.close()


def test_a_reply_with_no_text_is_an_error_and_never_kept(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        fake.answers("  \n", "now with text")
        empty = chat(JudgeClient(config(fake), store))
        assert empty.text is None and empty.error is not None and "no text" in empty.error
        assert empty.tokens == 120  # the call was made: it counts
        assert chat(JudgeClient(config(fake), store)).text == "now with text"
        assert len(fake.requests) == 2
    finally:
        store.close()


def test_a_reply_too_long_is_an_error_and_never_kept(fake: FakeOpenAI, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        fake.answers("y" * (MAX_REPLY_CHARS + 1), "short")
        long = chat(JudgeClient(config(fake), store))
        assert long.text is None and long.error is not None and "20,000" in long.error
        assert chat(JudgeClient(config(fake), store)).text == "short"
        assert len(fake.requests) == 2
        # A row kept by something else that this version would not keep is a miss.
        client = JudgeClient(config(fake), store, cache="replay")
        settings = client.settings({})
        assert isinstance(settings, dict)
        key = JudgeClient.cache_key(settings, HELLO, 0)
        store.save_judge_reply(key, "z" * (MAX_REPLY_CHARS + 1), "sim-1", 1, 0.0, "now")
        assert chat(client).error is not None and len(fake.requests) == 2
    finally:
        store.close()


# --- UserSimulator: what it sends --------------------------------------------------------------


def test_the_simulator_gets_the_persona_and_the_history_with_roles_swapped(
    fake: FakeOpenAI,
) -> None:
    fake.answers("It is A-1042.")
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi, I need my money back"},
        {
            "role": "assistant",
            "content": "Which order?",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_customer", "arguments": "{}"},
                }
            ],
        },
    ]
    said = simulate(simulator(fake), history)
    assert said == SimulatedMessage("It is A-1042.", False, 0.0, 120, False)
    sent = fake.requests[0]["messages"]
    assert sent == [
        {"role": "system", "content": f"{PERSONA}\n\n{INSTRUCTION.format(stop='[END]')}"},
        {"role": "assistant", "content": "Hi, I need my money back"},
        {"role": "user", "content": "Which order?"},  # its tool calls are not the user's to see
    ]
    assert "response_format" not in fake.requests[0]


def test_with_nothing_said_the_simulator_writes_the_opening(fake: FakeOpenAI) -> None:
    fake.answers("Hello, I want a refund.")
    user = SimulatedUser(PERSONA, stop_token="<<BYE>>")
    said = simulate(simulator(fake), [], user)
    assert isinstance(said, SimulatedMessage) and said.text == "Hello, I want a refund."
    system, opening = fake.requests[0]["messages"]
    assert system["role"] == "system" and "<<BYE>>" in system["content"]
    assert opening == {"role": "user", "content": OPENING}


def test_an_agent_message_with_no_text_is_shown_as_no_reply(fake: FakeOpenAI) -> None:
    fake.answers("Hello?")
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}]
    simulate(simulator(fake), history)
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": NO_TEXT}


# --- UserSimulator: the stop token -------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("Thanks, that is all. [END]", "Thanks, that is all."),
        ("[END]", ""),
        ("  [END]  Bye!", "Bye!"),
    ],
)
def test_the_stop_token_ends_the_conversation_and_is_removed(
    fake: FakeOpenAI, reply: str, text: str
) -> None:
    fake.answers(reply)
    said = simulate(simulator(fake), HELLO)
    assert isinstance(said, SimulatedMessage)
    assert (said.text, said.ended) == (text, True)


def test_a_custom_stop_token(fake: FakeOpenAI) -> None:
    fake.answers("Done here <<BYE>>", "Not done [END]")
    user = SimulatedUser(PERSONA, stop_token="<<BYE>>")
    first = simulate(simulator(fake), HELLO, user)
    assert isinstance(first, SimulatedMessage) and first.ended and first.text == "Done here"
    second = simulate(simulator(fake), [{"role": "user", "content": "again"}], user)
    assert isinstance(second, SimulatedMessage) and not second.ended
    assert second.text == "Not done [END]"  # [END] is not this user's stop token


# --- UserSimulator: no message ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "wanted"),
    [
        (Raw(200, b'{"choices": []}'), "no choices[0].message"),
        (Raw(200, b'{"choices": [{"message": {"role": "assistant"}}]}'), "no text content"),
        (Raw(200, completion(None)), "no text content"),
        (Raw(200, completion("   ")), "no text"),
        (Raw(200, b"<html>bad gateway</html>"), "not JSON"),
        (Raw(500, b"the model is down"), "HTTP 500"),
        (Raw(404, b'{"error": "no such model"}'), "HTTP 404"),
        (Raw(200, completion("x" * (MAX_REPLY_CHARS + 1))), "characters long"),
    ],
    ids=["no-choices", "no-content", "null", "blank", "not-json", "500", "404", "too-long"],
)
def test_a_reply_that_is_no_message_is_why(fake: FakeOpenAI, answer: Raw, wanted: str) -> None:
    fake.answers(answer)
    said = simulate(simulator(fake, timeout_s=0.4), HELLO)
    assert isinstance(said, str), said
    assert wanted in said
    assert "judge" not in said  # the simulator's errors name the simulator


def test_a_timeout_is_why_there_is_no_message(fake: FakeOpenAI) -> None:
    import time

    def slow(body: dict[str, Any]) -> str:
        time.sleep(0.5)
        return "too late"

    fake.answers(slow)
    said = simulate(simulator(fake, timeout_s=0.2), HELLO)
    assert isinstance(said, str) and "gave up" in said and "0.2 s" in said
    # The server's late answer meets a closed connection: let it fail here, in this test,
    # not while a later test reads what its run printed.
    time.sleep(0.6)


def test_the_api_key_never_shows_in_an_error(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIM_TEST_KEY", "sk-sim-very-secret-42")
    body = json.dumps({"error": "invalid key sk-sim-very-secret-42"}).encode()
    fake.answers(Raw(401, body))
    said = simulate(simulator(fake, api_key="${SIM_TEST_KEY}"), HELLO)
    assert fake.headers[0]["Authorization"] == "Bearer sk-sim-very-secret-42"
    assert isinstance(said, str) and "HTTP 401" in said
    assert "sk-sim-very-secret-42" not in said and "[REDACTED]" in said


def test_an_unset_key_variable_is_why(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIM_UNSET_KEY", raising=False)
    said = simulate(simulator(fake, api_key="${SIM_UNSET_KEY}"), HELLO)
    assert isinstance(said, str) and "SIM_UNSET_KEY is not set" in said
    assert fake.requests == []


def test_the_simulators_budget_stops_it(fake: FakeOpenAI) -> None:
    fake.answers(Raw(200, completion("more", cost=0.03)))
    user_simulator = simulator(fake, max_cost_usd=0.05)
    said = [
        simulate(user_simulator, [{"role": "assistant", "content": f"reply {n}"}]) for n in range(3)
    ]
    assert [isinstance(s, SimulatedMessage) for s in said] == [True, True, False]
    assert "budget is spent" in str(said[2]) and "simulator" in str(said[2])
    assert len(fake.requests) == 2
    assert user_simulator.cost_usd == pytest.approx(0.06)


def test_the_run_budget_stops_it_before_any_request(fake: FakeOpenAI) -> None:
    user_simulator = UserSimulator(
        config(fake),
        None,
        cache=None,
        secrets=set(),
        timeout_s=5,
        refused=lambda: "run budget of $0.10 spent ($0.12)",
    )
    said = simulate(user_simulator, HELLO)
    assert said == "run budget of $0.10 spent ($0.12)"
    assert fake.requests == []
