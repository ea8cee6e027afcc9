"""The demo's conversation tests: the scripted suite's verdicts, and the simulated user replayed.

`make demo` runs examples/conversations.tests.yaml offline: the scripted suite against the
example `cmd:` agent, the simulated suite from the recorded simulator replies
(examples/judge/simulator-cache.jsonl) with ``--judge-cache replay``. A change to the agent's
replies or to the simulator's prompt makes the replay miss: rerun
examples/judge/record_simulator.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assertly.cli import main
from assertly.store import RunStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/ without stored runs, as the working directory."""
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("reports", "*.sqlite*"))
    monkeypatch.chdir(copy)
    return copy


def _run(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(main, ["run", *args, "-o", "report.json"], catch_exceptions=False)
    report = json.loads(Path("report.json").read_text(encoding="utf-8"))
    return result.exit_code, report, result.stdout + result.stderr


def test_the_scripted_suite_fails_at_turns_2_and_3_only(examples: Path) -> None:
    code, report, output = _run("conversations.tests.yaml", "--suite", "scripted", "--plain")
    assert code == 1, output
    by_id = {test["id"]: test for test in report["tests"]}
    assert by_id["refund_flow"]["status"] == "passed"
    trial = by_id["question_before_refund"]["trials"][0]
    assert [turn["outcome"] for turn in trial["turns"]] == ["passed", "failed", "failed"]
    assert trial["conversation"]["outcome"] == "passed"
    assert trial["conversation"]["ended"] == "turns"
    assert "turn 2 (user: 'Yes, but first: how long does a refund take?')" in output
    # The agent read its own earlier tool call from the history: it looked the order up once.
    calls = [call["name"] for turn in trial["turns"] for call in turn["tool_calls"] or []]
    assert calls == ["lookup_order", "issue_refund"]


def test_the_simulated_user_replays_from_the_committed_cache(examples: Path) -> None:
    store = RunStore("reports/runs.sqlite")
    lines = (examples / "judge" / "simulator-cache.jsonl").read_text(encoding="utf-8")
    for line in lines.splitlines():
        entry = json.loads(line)
        store.save_judge_reply(entry["key"], entry["reply"], entry["model"], 0, 0.0, "recorded")
    store.close()
    code, report, output = _run(
        "conversations.tests.yaml", "--suite", "simulated", "--plain", "--judge-cache", "replay"
    )
    assert code == 0, output
    trial = report["tests"][0]["trials"][0]
    assert [turn["user"] for turn in trial["turns"]] == [
        "Hi, I need my money back",
        *(json.loads(line)["reply"] for line in lines.splitlines()),
    ]
    assert trial["conversation"] == {"outcome": "passed", "checks": trial["conversation"]["checks"],
                                     "ended": "stop_when"}  # fmt: skip
    assert report["summary"]["simulator_calls"] == 0
    assert report["summary"]["simulator_cached"] == 2


def test_without_the_cache_replay_is_an_error_naming_the_turn(examples: Path) -> None:
    code, report, output = _run(
        "conversations.tests.yaml", "--suite", "simulated", "--plain", "--judge-cache", "replay"
    )
    assert code == 1, output
    trial = report["tests"][0]["trials"][0]
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 2 of up to 6: the simulated user could not write")
    assert "--judge-cache replay" in trial["error"]
