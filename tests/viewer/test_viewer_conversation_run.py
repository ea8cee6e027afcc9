"""A conversation run by the real ``assertly run`` against a real ``cmd:`` agent, in the viewer.

The agent answers each turn from the whole history it gets (an OpenAI reply, tool calls
included), crashes when told to, and answers one question with markup. The viewer serves the
stored run over HTTP and ``assertly view --export`` writes it; both show the chat.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_conversation_view import Node, block_of, parse
from viewer_support import HOSTILE, serving

from assertly.store import RunQueries
from assertly.viewer import Links, Site

AGENT = """\
import json, sys
data = json.load(sys.stdin)
messages = data["messages"]
last = messages[-1]["content"]
turn = sum(1 for message in messages if message["role"] == "user")
if "crash" in last:
    sys.exit(3)
calls = []
if "markup" in last:
    text = HOSTILE
elif turn == 1:
    text = "Looking up order A-1042"
    calls = [("lookup_order", {"order": "A-1042"})]
elif "go ahead" in last:
    text = "Refund issued"
    calls = [("issue_refund", {})]
else:
    text = "You said: " + last
message = {"role": "assistant", "content": text}
if calls:
    message["tool_calls"] = [
        {"id": f"c{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}
        for n, (name, arguments) in enumerate(calls, 1)
    ]
print(json.dumps({"choices": [{"message": message}]}))
"""

TESTS = {
    "test_suites": {
        "support": {
            "tests": [
                {
                    "id": "refund_flow",
                    "conversation": {
                        "turns": [
                            {
                                "user": "Hi, I want a refund for order A-1042",
                                "assertions": [{"type": "icontains", "value": "a-1042"}],
                            },
                            {
                                "user": "Which order was that?",
                                "assertions": [{"type": "contains", "value": "Refund issued"}],
                            },
                            {
                                "user": "Yes, go ahead",
                                "assertions": [{"type": "tool-called", "value": "issue_refund"}],
                            },
                        ]
                    },
                    "assertions": [
                        {"type": "tool-sequence", "value": ["lookup_order", "issue_refund"]}
                    ],
                },
                {
                    "id": "crash_at_2",
                    "conversation": {
                        "turns": [{"user": "Hi"}, {"user": "crash now"}, {"user": "bye"}]
                    },
                },
                {
                    "id": "markup",
                    "conversation": {"turns": [{"user": "Show me some markup"}]},
                    "assertions": [{"type": "not-contains", "value": "<script>"}],
                },
            ]
        }
    }
}


AGENT_SPEC = f"cmd:{shlex.quote(sys.executable)} agent.py"


def _run(root: Path, *targets: str) -> dict[str, Any]:
    """``assertly run`` of the conversations (a subprocess, the command as users run it)."""
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "run", "chat.tests.yaml", "--store", "runs.sqlite",
         *[arg for target in targets for arg in ("--target", target)],
         "--output", "report.json", "--plain"],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "ASSERTLY_RUN_NAME": ""},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # a turn failed, a trial errored
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    return {"root": root, "store": root / "runs.sqlite", "run_id": report["run_id"]} | {
        "report": report
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conversation")
    (root / "agent.py").write_text(f"HOSTILE = {HOSTILE!r}\n" + AGENT, encoding="utf-8")
    tests = {"agent": "support_bot", **TESTS}
    (root / "chat.tests.yaml").write_text(json.dumps(tests), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ran(project: Path) -> dict[str, Any]:
    return _run(project, AGENT_SPEC)


def _key(test_id: str) -> str:
    return f"chat.tests.yaml::support::{test_id}"


def _check_chat(page: Node) -> None:
    refund = block_of(page, _key("refund_flow"))
    assert refund.attrs["data-status"] == "failed"
    assert refund.children[0].one("span", "conversation").text == "conversation · 3 turns"
    turns = refund.all("li", "turn")
    assert [sorted(t.classes) for t in turns] == [
        ["passed", "turn"],
        ["failed", "turn"],
        ["passed", "turn"],
    ]
    assert turns[0].one("div", "user").one("pre").text == "Hi, I want a refund for order A-1042"
    agent = turns[0].one("div", "agent")
    assert agent.one("pre", "said").text == "Looking up order A-1042"
    assert agent.one("code", "tool").text == "lookup_order"
    assert "A-1042" in agent.one("pre", "args").text
    failing = turns[1].one("div", "agent")
    assert failing.one("pre", "said").text == "You said: Which order was that?"
    check = failing.one("li", "check")
    assert "failed" in check.classes and check.one("code").text == "contains"
    assert check.one("span", "message").text  # the engine's reason, whatever its words
    assert turns[2].one("code", "tool").text == "issue_refund"
    end = refund.one("div", "conversation-end")
    assert "passed" in end.classes and end.one("span", "ended").attrs["data-ended"] == "turns"
    assert [c.one("code").text for c in end.all("li", "check")] == ["tool-sequence"]
    link = refund.one("p", "failing-turns").one("a")
    assert link.attrs["href"] == "#" + turns[1].attrs["id"]
    # The agent crashed at turn 2: the last turn shown, with its error; turn 3 never sent.
    crash = block_of(page, _key("crash_at_2"))
    assert crash.attrs["data-status"] == "error"
    turns = crash.all("li", "turn")
    assert len(turns) == 2 and "error" in turns[1].classes
    assert turns[1].one("div", "user").one("pre").text == "crash now"
    assert turns[1].one("div", "agent").one("div", "error-box").text.strip()
    assert "turn 2 of 3" in crash.one("div", "conversation-end").text
    # The markup the agent answered is text.
    markup = block_of(page, _key("markup"))
    assert markup.one("li", "turn").one("div", "agent").one("pre", "said").text == HOSTILE
    assert not markup.all("script") and not markup.all("img")


def test_a_real_run_shows_as_a_chat_served(ran: dict[str, Any]) -> None:
    trials = {t["id"]: t["trials"][0] for t in ran["report"]["tests"]}
    assert [t["outcome"] for t in trials["refund_flow"]["turns"]] == ["passed", "failed", "passed"]
    with (
        serving(ran["store"]) as url,
        urllib.request.urlopen(f"{url}/runs/{ran['run_id']}", timeout=30) as got,
    ):
        html = got.read().decode()
    _check_chat(parse(html))


def test_a_real_run_shows_as_a_chat_exported(ran: dict[str, Any]) -> None:
    out = ran["root"] / "site"
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "view", "--store", str(ran["store"]),
         "--export", str(out)],
        cwd=ran["root"], capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pages = list(out.glob("run-*.html"))
    assert len(pages) == 1
    _check_chat(parse(pages[0].read_text(encoding="utf-8")))


def test_a_matrix_run_of_conversations(project: Path) -> None:
    """Two targets: each cell's test has its own chat, and its turns their own anchors."""
    ran = _run(project, f"a={AGENT_SPEC}", f"b={AGENT_SPEC}")
    with (
        serving(ran["store"]) as url,
        urllib.request.urlopen(f"{url}/runs/{ran['run_id']}", timeout=30) as got,
    ):
        page = parse(got.read().decode())
    rows = page.one("table", "matrix").one("tbody").all("tr")
    names = [r.one("th").one("span", "name").text for r in rows]
    assert names == ["refund_flow [a]", "crash_at_2 [a]", "markup [a]"]
    assert all(r.one("th").one("span", "conversation").text == "conversation" for r in rows)
    cells = {a.attrs["data-target"]: a.attrs["href"] for a in rows[0].all("a")}
    anchors = set()
    for target, href in cells.items():
        test = block_of(page, _key("refund_flow") + f"[{target}]")
        assert test.attrs["id"] == href[1:]  # the cell's link lands on the test
        turns = test.all("li", "turn")
        assert len(turns) == 3
        anchors |= {turn.attrs["id"] for turn in turns}
    assert len(anchors) == 6  # no two turns of the page share an id
    ids = [node.attrs["id"] for node in page.walk() if "id" in node.attrs]
    assert len(ids) == len(set(ids))


@pytest.fixture
def simulator() -> Iterator[Any]:
    """A fake OpenAI-compatible endpoint on loopback playing the user (tests/judge)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
    import fake_openai

    served = fake_openai.serve()
    fake = next(served)
    replies = iter(["Yes, go ahead", "Thanks, that is all. [END]"])
    fake.answers(
        lambda _body: fake_openai.Raw(200, fake_openai.completion(next(replies), cost=0.01))
    )
    yield fake
    served.close()


def test_a_real_simulated_conversation_marks_the_simulated_turns(
    project: Path, simulator: Any
) -> None:
    root = project.parent / "simulated"
    root.mkdir()
    (root / "agent.py").write_text((project / "agent.py").read_text("utf-8"), encoding="utf-8")
    config = {"simulator": {"base_url": simulator.url, "model": "sim-1"}}
    (root / "assertly.yaml").write_text(json.dumps(config), encoding="utf-8")
    test = {
        "id": "impatient",
        "conversation": {
            "turns": [{"user": "Hi, I want a refund for order A-1042"}],
            "simulated_user": {"persona": "A customer who wants a refund", "max_turns": 4},
        },
        "assertions": [{"type": "tool-called", "value": "issue_refund"}],
    }
    data = {"agent": "support_bot", "test_suites": {"support": {"tests": [test]}}}
    (root / "sim.tests.yaml").write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "run", "sim.tests.yaml", "--store", "runs.sqlite",
         "--target", AGENT_SPEC, "--output", "report.json", "--plain"],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(simulator.requests) == 2  # turn 2's message, then the stop
    run_id = json.loads((root / "report.json").read_text("utf-8"))["run_id"]
    html = Site(RunQueries(root / "runs.sqlite"), background=False).run_page(run_id, {}, Links())
    test_block = block_of(parse(html), "sim.tests.yaml::support::impatient")
    label = test_block.children[0].one("span", "conversation").text
    assert label == "conversation · 2 turns · simulated user"
    users = test_block.all("div", "user")
    assert ["simulated" in user.classes for user in users] == [False, True]
    assert users[1].one("pre").text == "Yes, go ahead"
    assert "$0.0100 · " in users[1].one("span", "cost").text  # what the simulator cost for it
    assert test_block.all("li", "turn")[1].one("code", "tool").text == "issue_refund"
    end = test_block.one("div", "conversation-end")
    assert end.one("span", "ended").attrs["data-ended"] == "stop_token"
    assert "closing message $0.0100" in end.text
