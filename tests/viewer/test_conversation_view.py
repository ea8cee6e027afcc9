"""``assertly view`` shows a conversation test as a chat (issue 32).

The store here is seeded by hand with records of the contract (`assertly._records`): turn
steps (``turn 1`` … with ``user``), then one ``conversation`` step; an agent crash ends the
trial at its turn with no conversation step. The pages are read with the standard library's
HTML parser, as elements, so a test asserts where a text stands, not only that it does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from viewer_support import HOSTILE, serving

from assertly._check_records import AssertionRecord, CheckRecord
from assertly._records import StepRecord, TrialRecord
from assertly._test_meta import TestMeta
from assertly.store import RunQueries, RunStore
from assertly.viewer import Links, Site

RUN = "chat"
FILE = "support.tests.yaml"
REFUND = f"{FILE}::support::refund_flow"
CRASH = f"{FILE}::support::crash_at_2"
SIMULATED = f"{FILE}::support::impatient"
HOSTILE_KEY = f"{FILE}::support::hostile"
PLAIN = f"{FILE}::support::plain"
PERSONA = "A customer who wants a refund for order A-1042 and gets impatient"


# -- records of the contract, by hand --------------------------------------------------------


def check(*results: tuple[str, str, str]) -> CheckRecord:
    """One expectation's verdict: (assertion, outcome, message) per assertion."""
    items = [
        AssertionRecord(name, outcome, message, score=1.0 if outcome == "passed" else 0.0)
        for name, outcome, message in results
    ]
    passed = all(item.outcome == "passed" for item in items)
    worst = next((o for o in ("error", "failed") if any(i.outcome == o for i in items)), "passed")
    return CheckRecord(passed, 1.0 if passed else 0.0, items, outcome=worst)


def turn(
    index: int,
    user: str,
    reply: Any,
    *checks: CheckRecord,
    calls: list[dict[str, Any]] | None = None,
    status: str | None = None,
    **extra: Any,
) -> StepRecord:
    """Turn ``index``: what the user said, the agent's reply, the turn's checks."""
    found = status or ("passed" if all(c.passed for c in checks) else "failed")
    return StepRecord(
        f"turn {index}",
        found,  # type: ignore[arg-type]
        reply,
        list(checks),
        latency_ms=120.0 + index,
        cost_usd=0.001,
        model="m-1",
        tokens={"total": 40},
        tool_calls=calls,
        user=user,
        **extra,
    )


def whole(ended: str, *checks: CheckRecord, texts: list[str], **extra: Any) -> StepRecord:
    """The conversation's own step: its checks on the agent's messages, and how it ended."""
    status = "passed" if all(c.passed for c in checks) else "failed"
    return StepRecord(
        "conversation", status, "\n\n".join(texts), list(checks), ended=ended, **extra
    )  # type: ignore[arg-type]


def trial(key: str, number: int, steps: list[StepRecord], error: str | None = None) -> TrialRecord:
    statuses = {step.status for step in steps}
    status = (
        "failed" if "failed" in statuses else "error" if error or "error" in statuses else "passed"
    )
    return TrialRecord(key, number, status, 500.0, steps, error=error)  # type: ignore[arg-type]


def meta(key: str, conversation_input: Any, conversation: bool = True) -> dict[str, Any]:
    test_id = key.rsplit("::", 1)[-1]
    found = TestMeta(key, test_id, test_id, "support", FILE, line=4, input=conversation_input)
    found.conversation = conversation
    return found.to_json()


# An OpenAI reply as a command agent prints it: the bubble shows its text, the rest folds.
OPENAI_REPLY = (
    '{"id": "cmpl-9", "choices": [{"message": {"role": "assistant", "content": "Refund issued",'
    ' "tool_calls": [{"id": "c1", "type": "function",'
    ' "function": {"name": "issue_refund", "arguments": "{}"}}]}}]}\n'
)
LOOKUP = [{"name": "lookup_order", "arguments": '{"order": "A-1042"}'}]
REFUND_CALL = [{"name": "issue_refund", "arguments": "{}"}]


def seeded_tests() -> list[tuple[dict[str, Any], list[TrialRecord]]]:
    """The conversation tests of run ``chat`` (and one plain test), as the runner stores them."""
    refund_texts = ["Looking up A-1042", "Which order was it?", "Refund issued"]
    refund = trial(
        REFUND,
        1,
        [
            turn(1, "Hi, I want a refund for order A-1042", refund_texts[0],
                 check(("icontains", "passed", "")), calls=LOOKUP),
            turn(2, "Yes, go ahead", refund_texts[1],
                 check(("contains", "failed", "Expected the output to contain 'Refund'")),
                 check(("not-icontains", "passed", ""))),
            turn(3, "Thanks", OPENAI_REPLY, check(("tool-called", "passed", "")),
                 calls=REFUND_CALL),
            whole("turns", check(("tool-sequence", "passed", ""),
                                 ("llm-rubric", "passed", "The agent kept the order number")),
                  texts=refund_texts),
        ],
    )  # fmt: skip
    crash = trial(
        CRASH,
        1,
        [
            turn(1, "Hi", "Hello! How can I help?", check(("contains", "passed", ""))),
            StepRecord("turn 2", "error", None, [], error="agent exited with code 3",
                       user="Refund A-1042 please", latency_ms=30.0),
        ],
        error="turn 2 of 3: agent exited with code 3",
    )  # fmt: skip
    simulated_input = {
        "input": {"user_id": 42},
        "turns": ["Hi, I need my money back"],
        "simulated_user": {"persona": PERSONA, "max_turns": 4},
    }
    stopped = trial(
        SIMULATED,
        1,
        [
            turn(1, "Hi, I need my money back", "Which order?"),
            turn(2, "A-1042, I said it already", "Refund issued for A-1042",
                 simulator_cost_usd=0.0004, simulator_tokens=61, calls=REFUND_CALL),
            whole("stop_token", check(("tool-called", "passed", "")),
                  texts=["Which order?", "Refund issued for A-1042"],
                  simulator_cost_usd=0.0003, simulator_tokens=12),
        ],
    )  # fmt: skip
    endless = trial(
        SIMULATED,
        2,
        [
            turn(1, "Hi, I need my money back", "Which order?"),
            *[
                turn(n, f"Order A-1042! ({n})", "Which order?",
                     simulator_cost_usd=0.0004, simulator_tokens=60)
                for n in (2, 3, 4)
            ],
            whole("max_turns", check(("tool-called", "failed", "issue_refund was never called")),
                  check(("require_stop", "failed", "the conversation reached max_turns (4)")),
                  texts=["Which order?"] * 4),
        ],
    )  # fmt: skip
    hostile = trial(
        HOSTILE_KEY,
        1,
        [
            turn(1, HOSTILE, HOSTILE, check(("not-contains", "failed", HOSTILE)),
                 calls=[{"name": HOSTILE, "arguments": HOSTILE}]),
            whole("turns", check(("contains", "passed", HOSTILE)), texts=[HOSTILE]),
        ],
    )  # fmt: skip
    plain = TrialRecord(PLAIN, 1, "passed", 10.0, [StepRecord(PLAIN, "passed", "ok")])
    scripted = {"turns": ["Hi, I want a refund for order A-1042", "Yes, go ahead", "Thanks"]}
    return [
        (meta(REFUND, scripted), [refund]),
        (meta(CRASH, {"turns": ["Hi", "Refund A-1042 please", "bye"]}), [crash]),
        (meta(SIMULATED, simulated_input), [stopped, endless]),
        (meta(HOSTILE_KEY, {"turns": [HOSTILE]}), [hostile]),
        (meta(PLAIN, "hello", conversation=False), [plain]),
    ]


def seed(store_path: Any, run_id: str = RUN) -> None:
    """Run ``run_id`` of the seeded tests, finished, in the store at ``store_path``."""
    store = RunStore(store_path)
    store.start_run(run_id, "2026-11-28T20:00:00Z", {"pass_threshold": "all"})
    tests = seeded_tests()
    store.save_tests(run_id, [m for m, _ in tests])
    for m, trials in tests:
        for t in trials:
            store.save_trial(run_id, m["key"], t.trial, t.to_dict())
    store.finish_run(run_id, "2026-11-28T20:01:00Z", 60_000.0)
    store.close()


# -- the page as elements --------------------------------------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    parts: list[Any] = field(default_factory=list)  # text and child nodes, in order

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            yield child
            yield from child.walk()

    def all(self, tag: str = "", cls: str = "", **attrs: str) -> list[Node]:
        return [
            node
            for node in self.walk()
            if (not tag or node.tag == tag)
            and (not cls or cls in node.classes)
            and all(node.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def one(self, tag: str = "", cls: str = "", **attrs: str) -> Node:
        found = self.all(tag, cls, **attrs)
        assert len(found) == 1, (tag, cls, attrs, len(found))
        return found[0]


VOID = {"meta", "link", "input", "br", "img", "hr", "col", "source"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].parts.append(data)


def parse(html: str) -> Node:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def block_of(page: Node, key: str) -> Node:
    return page.one("details", "test", data_key=key)


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chat_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chat") / "runs.sqlite"
    seed(path)
    return path


@pytest.fixture(scope="module")
def chat_page(chat_store: Path) -> Node:
    return parse(Site(RunQueries(chat_store), background=False).run_page(RUN, {}, Links()))


# -- the chat --------------------------------------------------------------------------------


def test_each_turn_is_a_user_bubble_then_an_agent_bubble_with_its_checks(chat_page: Node) -> None:
    test = block_of(chat_page, REFUND)
    anchor = test.attrs["id"]
    assert re.fullmatch(r"t-[0-9a-f]{16}", anchor)
    turns = test.all("li", "turn")
    assert [t.attrs["id"] for t in turns] == [f"{anchor}-trial-1-turn-{n}" for n in (1, 2, 3)]
    for node, user, reply in zip(
        turns,
        ["Hi, I want a refund for order A-1042", "Yes, go ahead", "Thanks"],
        ["Looking up A-1042", "Which order was it?", "Refund issued"],
        strict=True,
    ):
        bubbles = [child for child in node.children if "bubble" in child.classes]
        assert sorted(bubbles[0].classes) == ["bubble", "user"]
        assert "agent" in bubbles[1].classes
        assert bubbles[0].one("pre").text == user
        assert bubbles[1].one("pre", "said").text == reply
    # The trial's metrics: its turns' agent calls (366 ms = 121 + 122 + 123).
    assert test.one("p", "metrics").text == "metrics 366 ms · $0.0030 · m-1 · 120 tokens"
    # Turn 3 answered an OpenAI reply object: its text in the bubble, the reply behind a fold.
    raw = turns[2].one("details", "raw")
    assert (
        "cmpl-9" in raw.text
        and "cmpl-9" not in turns[2].one("div", "agent").one("pre", "said").text
    )
    assert not turns[0].all("details", "raw")  # a plain text reply is all there is
    # Turn 1: its tool call, with its arguments; its check passed.
    first = turns[0].one("div", "agent")
    assert first.one("code", "tool").text == "lookup_order"
    assert '"order": "A-1042"' in first.one("pre", "args").text
    assert [c.text.split()[:2] for c in first.all("li", "check")] == [["✓", "icontains"]]
    assert "passed" in first.classes and "✓ passed" in first.one("span", "turn-verdict").text
    # Turn 2 failed: marked on its bubble, its failing check with its message, its passing one.
    second = turns[1].one("div", "agent")
    assert "failed" in second.classes and "failed" in turns[1].classes
    assert "✗ failed" in second.one("span", "turn-verdict").text
    checks = second.all("li", "check")
    assert [(sorted(c.classes), c.one("span", "sym").text) for c in checks] == [
        (["check", "failed"], "✗"),
        (["check", "passed"], "✓"),
    ]
    assert "Expected the output to contain 'Refund'" in checks[0].text
    assert "121 ms · $0.0010 · m-1" in first.one("div", "who").text  # its metrics


def test_the_whole_conversation_checks_and_how_it_ended(chat_page: Node) -> None:
    test = block_of(chat_page, REFUND)
    end = test.one("div", "conversation-end")
    assert end.attrs["id"] == test.attrs["id"] + "-trial-1-end"
    assert "passed" in end.classes
    assert end.one("span", "ended").attrs["data-ended"] == "turns"
    assert "its scripted turns ran out" in end.text
    assert [c.one("code").text for c in end.all("li", "check")] == ["tool-sequence", "llm-rubric"]
    assert "The agent kept the order number" in end.text
    # The conversation's end comes after the last turn.
    body = test.one("div", "body")
    order = [n for n in body.walk() if "turn" in n.classes or "conversation-end" in n.classes]
    assert "conversation-end" in order[-1].classes


def test_a_failing_turn_is_linked_from_the_top_of_the_test(chat_page: Node) -> None:
    test = block_of(chat_page, REFUND)
    links = test.one("p", "failing-turns").all("a")
    assert [(a.attrs["href"], a.text) for a in links] == [
        (f"#{test.attrs['id']}-trial-1-turn-2", "✗ turn 2")
    ]
    # The failures table names the step and links the same turn.
    failures = test.one("table", "failures")
    step = failures.one("td", "where").one("a")
    assert step.attrs["href"] == f"#{test.attrs['id']}-trial-1-turn-2"
    assert step.text == "turn 2"
    # No input/output panes and no flat assertions table: the chat shows them per turn.
    assert not test.all("table", "assertions") and not test.all("div", "output")


def test_an_agent_crash_is_the_last_turn_with_its_error(chat_page: Node) -> None:
    test = block_of(chat_page, CRASH)
    assert test.attrs["data-status"] == "error"
    turns = test.all("li", "turn")
    assert len(turns) == 2  # turn 3 was never sent
    last = turns[-1]
    assert "error" in last.classes and last.attrs["id"].endswith("-trial-1-turn-2")
    assert last.one("div", "user").one("pre").text == "Refund A-1042 please"
    agent = last.one("div", "agent")
    assert "! error" in agent.one("span", "turn-verdict").text
    assert "agent exited with code 3" in agent.one("div", "error-box").text
    assert "no reply" not in agent.text
    # No conversation checks were judged: the end says why it stopped.
    end = test.one("div", "conversation-end")
    assert "error" in end.classes and "not judged" in end.text
    assert "turn 2 of 3: agent exited with code 3" in end.text
    links = test.one("p", "failing-turns").all("a")
    assert [(a.text, sorted(a.classes)) for a in links] == [("! turn 2", ["error"])]


def test_simulated_turns_are_marked_with_their_cost(chat_page: Node) -> None:
    test = block_of(chat_page, SIMULATED)
    chats = test.all("details", "trial-chat")
    assert [c.one("summary").text.split(" · ")[0].split()[-2:] for c in chats] == [
        ["trial", "1"],
        ["trial", "2"],
    ]
    # The trial that did not pass is unfolded; the one that passed is not.
    assert ["open" in c.attrs for c in chats] == [False, True]
    first = chats[0]
    users = first.all("div", "user")
    assert ["simulated" in u.classes for u in users] == [False, True]
    assert "simulated user" in users[1].one("div", "who").text
    assert "$0.0004 · 61 tokens" in users[1].one("span", "cost").text
    end = first.one("div", "conversation-end")
    assert end.one("span", "ended").attrs["data-ended"] == "stop_token"
    assert "the simulated user wrote its stop token" in end.text
    assert "$0.0003 · 12 tokens" in end.text  # its closing message's cost
    assert "simulated user $0.0007 · 73 tokens" in first.one("summary").text
    # Trial 2 ran to max_turns and failed its checks: require_stop named.
    second = chats[1]
    end = second.one("div", "conversation-end")
    assert "failed" in end.classes and "it reached max_turns (4)" in end.text
    assert "the conversation reached max_turns (4)" in end.text
    links = test.one("p", "failing-turns").all("a")
    assert [a.text for a in links] == ["✗ trial 2 · conversation"]
    assert links[0].attrs["href"] == "#" + end.attrs["id"]
    assert end.attrs["id"].endswith("-trial-2-end")
    # The persona and the input sent with every turn, above the transcripts.
    setup = test.one("div", "conversation-setup")
    assert PERSONA in setup.text and "max_turns 4" in setup.text
    assert '"user_id": 42' in setup.text


def test_the_test_list_marks_conversation_tests(chat_page: Node) -> None:
    labels = {
        node.attrs["data-key"]: [s.text for s in node.children[0].all("span", "conversation")]
        for node in chat_page.all("details", "test")
    }
    assert labels == {
        REFUND: ["conversation · 3 turns"],
        CRASH: ["conversation · 2 turns"],
        SIMULATED: ["conversation · 2\u20134 turns · simulated user"],
        HOSTILE_KEY: ["conversation · 1 turn"],
        PLAIN: [],
    }
    # A plain test keeps its input and output panes, and no id of a conversation.
    plain = block_of(chat_page, PLAIN)
    assert plain.all("div", "output") and "id" not in plain.attrs


def test_a_pending_conversation_says_what_it_will_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    store.start_run("live", "2026-11-28T20:00:00Z", {"pass_threshold": "all"})
    tests = seeded_tests()
    store.save_tests("live", [m for m, _ in tests])
    store.close()
    page = parse(Site(RunQueries(path), background=False).run_page("live", {}, Links()))
    sim = block_of(page, SIMULATED)
    assert sim.one("span", "conversation").text == "conversation · up to 4 turns · simulated user"
    assert "no trial yet" in sim.text
    refund = block_of(page, REFUND)
    assert refund.one("span", "conversation").text == "conversation · 3 turns"


def test_hostile_text_is_escaped_everywhere(chat_page: Node, chat_store: Path) -> None:
    html = Site(RunQueries(chat_store), background=False).run_page(RUN, {}, Links())
    test = block_of(parse(html), HOSTILE_KEY)
    assert not test.all("script") and not test.all("img")
    turn = test.one("li", "turn")
    assert turn.one("div", "user").one("pre").text == HOSTILE
    assert turn.one("div", "agent").one("pre", "said").text == HOSTILE
    assert turn.one("code", "tool").text == HOSTILE
    assert turn.one("pre", "args").text == HOSTILE
    assert HOSTILE in turn.one("li", "check").text
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert html.count("&lt;script&gt;window.__pwned = 1&lt;/script&gt;") >= 5


def test_the_api_gives_the_turns_of_the_json_report(chat_store: Path) -> None:
    import json

    with serving(chat_store) as url:
        import urllib.request

        with urllib.request.urlopen(f"{url}/api/runs/{RUN}?q=refund_flow", timeout=30) as got:
            data = json.loads(got.read())
    trial_data = data["tests"][0]["trials"][0]
    assert [(t["index"], t["outcome"]) for t in trial_data["turns"]] == [
        (1, "passed"),
        (2, "failed"),
        (3, "passed"),
    ]
    assert trial_data["conversation"]["ended"] == "turns"


def test_a_simulated_user_that_could_not_write_and_a_test_of_many_trials(tmp_path: Path) -> None:
    key = f"{FILE}::support::simulator_down"
    setup = {"turns": [], "simulated_user": {"persona": PERSONA, "max_turns": 3}}
    opening = turn(1, "Hi", "Hello", simulator_cost_usd=0.0002, simulator_tokens=30)
    trials = [trial(key, n, [opening, whole("stop_token", texts=["Hello"])]) for n in range(1, 12)]
    why = "the simulated user could not write its message: HTTP 500"
    down = StepRecord("turn 2", "error", error=why, user="")
    trials.append(trial(key, 12, [opening, down], error=f"turn 2 of up to 3: {why}"))
    store = RunStore(tmp_path / "runs.sqlite")
    store.start_run("many", "2026-11-28T20:00:00Z", {"pass_threshold": "all"})
    store.save_tests("many", [meta(key, setup)])
    for t in trials:
        store.save_trial("many", key, t.trial, t.to_dict())
    store.finish_run("many", "2026-11-28T20:01:00Z", 1.0)
    store.close()
    page = parse(Site(RunQueries(tmp_path / "runs.sqlite")).run_page("many", {}, Links()))
    test = block_of(page, key)
    # Each trial had one agent reply: the unwritten message is no turn of the agent's.
    assert test.one("span", "conversation").text == "conversation · 1 turn · simulated user"
    # Ten transcripts at most, the one that did not pass among them; the rest counted.
    chats = test.all("details", "trial-chat")
    assert len(chats) == 10
    assert chats[-1].attrs["id"].endswith("-trial-12") and "open" in chats[-1].attrs
    assert "2 more trials not shown" in test.one("p", "more-trials").text
    last = chats[-1].all("li", "turn")[-1]
    assert not last.all("div", "agent")  # the agent was never called for it
    assert why in last.one("div", "user").one("div", "error-box").text
    assert [a.text for a in test.one("p", "failing-turns").all("a")] == ["! trial 12 · turn 2"]
