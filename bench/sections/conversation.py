"""The conversation section: a 10-turn scripted conversation, the runner against a hand loop.

Issue 32's bound: what `assertly run` spends on a conversation test is at most 1.5x what a
hand-written loop spends on the same conversation with the same agent. Like for like:

* the agent: one local HTTP agent on loopback (bench/http_agent.py, answering at once), the same
  for both; it answers the k-th request with the k-th of ten recorded OpenAI Chat Completions
  replies (text, and tool calls on some turns), so both ways get the same ten replies in order.
* the loop: plain Python over one keep-alive `http.client` connection. Per turn it sends
  ``{"messages": [...history, user]}`` with the ``X-Assertly-Conversation-Id`` header, reads the
  reply's text and tool calls, appends the assistant message (with its ``tool_calls``) to the
  history, and runs the turn's compiled check (`assertly.compile`, one ``icontains``) on the
  reply; after the last turn it runs the conversation's compiled checks (``tool-sequence`` over
  every turn's calls, ``not-tool-called``, a ``contains`` over the agent's messages joined by
  blank lines). Compiling is done once, outside the timing.
* the runner: `assertly run` of the same conversations at ``-j 1`` (one conversation at a time,
  as the loop), with the same checks; its time is the run's own duration (the JSON report's
  ``duration_ms``: first call to last verdict and store write, not the interpreter's start-up),
  its wall time with start-up is reported beside.

Both run in interleaved rounds; the ratio is the runner's run time over the loop's, and the
overhead per turn is their difference over the turns.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import assertly
from harness import ROOT, Run, assertly_run, log

# The bound on the runner's time over the hand loop's.
BOUND = 1.5
TURNS = 10
# What the user says each turn, and what the turn checks in the reply.
USERS = [f"Message {turn}: about order A-10{turn:02d}" for turn in range(1, TURNS + 1)]
TURN_CHECK = [{"type": "icontains", "value": "order"}]
WHOLE_CHECKS: list[dict[str, Any]] = [
    {"type": "tool-sequence", "value": ["lookup_order", "issue_refund"]},
    {"type": "not-tool-called", "value": "escalate_to_human"},
    {"type": "contains", "value": "refund"},
]


def _reply(turn: int) -> str:
    """The agent's reply to turn ``turn`` (1-based): an OpenAI Chat Completions reply."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": f"Turn {turn}: I have your order; the refund is on its way.",
    }
    tool = {3: "lookup_order", 7: "issue_refund"}.get(turn)
    if tool is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps({"order": "A-1042"})},
            }
        ]
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"id": f"chatcmpl-{turn}", "object": "chat.completion", "choices": [choice]})


def _test_file(directory: Path, conversations: int) -> Path:
    turns = [{"user": user, "assertions": TURN_CHECK} for user in USERS]
    tests = [
        {"id": f"c{index:04d}", "conversation": {"turns": turns}, "assertions": WHOLE_CHECKS}
        for index in range(conversations)
    ]
    path = directory / "conversation.tests.json"
    path.write_text(json.dumps({"agent": "chat", "test_suites": {"s": {"tests": tests}}}))
    return path


def _hand_loop(port: int, conversations: int) -> tuple[float, int]:
    """The hand-written loop's time for ``conversations`` conversations, and how many passed."""
    turn_check = assertly.compile(TURN_CHECK)
    whole_checks = assertly.compile(WHOLE_CHECKS)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    passed = 0
    started = time.perf_counter()
    for index in range(conversations):
        history: list[dict[str, Any]] = []
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        ok = True
        for user in USERS:
            history.append({"role": "user", "content": user})
            body = json.dumps({"messages": history})
            headers = {"Content-Type": "application/json", "X-Assertly-Conversation-Id": str(index)}
            connection.request("POST", "/", body, headers)
            response = connection.getresponse()
            reply = json.loads(response.read())
            if response.status != 200:
                raise RuntimeError(f"the agent answered {response.status}")
            message = reply["choices"][0]["message"]
            history.append(message)
            texts.append(message["content"])
            for call in message.get("tool_calls", []):
                function = call["function"]
                calls.append({"name": function["name"], "arguments": function["arguments"]})
            ok = turn_check.check(reply).passed and ok
        transcript = "\n\n".join(texts)
        whole = whole_checks.check(transcript, context=assertly.CheckContext(tool_calls=calls))
        passed += ok and whole.passed
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, passed


def _run_facts(report: Path) -> dict[str, Any]:
    data = json.loads(report.read_text(encoding="utf-8"))
    summary = data["summary"]
    turns = sum(len(trial.get("turns") or []) for test in data["tests"] for trial in test["trials"])
    return {"run_s": summary["duration_ms"] / 1000, "passed": summary["passed"], "turns": turns}


def section_conversation(run: Run) -> None:
    """A 10-turn scripted conversation: `assertly run -j 1` against a hand-written loop."""
    conversations = 20 if run.sizes.e2e <= 1_000 else 50
    rounds = 3
    turns = conversations * TURNS
    log(f"conversation: {conversations} conversations x {TURNS} turns, runner against a loop")
    directory = run.work / "conversation"
    directory.mkdir()
    outputs = directory / "replies.json"
    outputs.write_text(json.dumps([_reply(turn) for turn in [TURNS, *range(1, TURNS)]]))
    test_file = _test_file(directory, conversations)
    agent = subprocess.Popen(
        [sys.executable, str(ROOT / "http_agent.py"), "--outputs", str(outputs),
         "--delay-ms", "0", "--max-seconds", "900"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    loops: list[float] = []
    runs: list[dict[str, Any]] = []
    try:
        assert agent.stdout is not None
        port = int(agent.stdout.readline().split()[1])
        target = f"http://127.0.0.1:{port}/"
        _hand_loop(port, 1)  # warm: the compiled checks, the connection
        for number in range(rounds):
            seconds, passed = _hand_loop(port, conversations)
            if passed != conversations:
                run.table.add(
                    "conversation", "", "hand loop", f"{passed} passed of {conversations}"
                )
                return
            loops.append(seconds)
            report = directory / f"run-{number}.json"
            figures = assertly_run(
                directory, f"run-{number}", test_file, target, "-j", "1", "-o", str(report)
            )
            facts = _run_facts(report) if figures["exit_code"] == 0 else {}
            if facts.get("passed") != conversations or facts.get("turns") != turns:
                run.table.add(
                    "conversation", "", "assertly run", f"exit {figures['exit_code']}: {facts}"
                )
                return
            runs.append({**figures, **facts})
    finally:
        agent.terminate()
        agent.communicate(timeout=30)
    loop_s = sum(loops) / rounds
    run_s = sum(found["run_s"] for found in runs) / rounds
    wall_s = sum(found["wall_s"] for found in runs) / rounds
    ratio = run_s / loop_s
    overhead_us = (run_s - loop_s) / turns * 1e6
    run.results["conversation"] = {
        "conversations": conversations,
        "turns_each": TURNS,
        "rounds": rounds,
        "loop_s": loops,
        "runs": runs,
        "loop_per_turn_us": loop_s / turns * 1e6,
        "run_per_turn_us": run_s / turns * 1e6,
        "overhead_per_turn_us": overhead_us,
        "ratio": ratio,
        "within_bound": ratio <= BOUND,
    }
    label = f"{conversations} conversations x {TURNS} turns, instant HTTP agent"
    verdict = "within" if ratio <= BOUND else "OVER"
    run.table.add(
        "conversation", label, "assertly run -j 1: the run", f"{run_s / turns * 1e6:,.0f} µs/turn",
        1.0,
        f"{ratio:.2f}x the loop (target <= {BOUND}x: {verdict}); overhead {overhead_us:,.0f} "
        f"µs/turn; mean of {rounds}; wall with start-up {wall_s:.2f} s for {turns} turns",
    )  # fmt: skip
    run.table.add(
        "conversation", label, "hand-written loop", f"{loop_s / turns * 1e6:,.0f} µs/turn",
        loop_s / run_s,
        f"http.client keep-alive, the same messages and compiled checks; mean of {rounds}",
    )  # fmt: skip
