"""Conversation tests in the console, Markdown and JUnit reports (issue 32), from a real run.

A real command agent answers each turn; its replies hold Markdown, HTML and terminal escapes,
so the tests also see that what it said stays text everywhere it is shown.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main

AGENT = r"""
import json, sys
messages = json.load(sys.stdin)["messages"]
turn = sum(1 for m in messages if m["role"] == "user")
if "crash" in messages[-1]["content"]:
    sys.exit(4)
print(f"reply {turn} | <img src=x onerror=alert(1)> **bold** \x1b[31mred")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {"agents": {"bot": f"cmd:{sys.executable} agent.py"}}
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    tests = [
        {
            "id": "wrong_turn",
            "conversation": {
                "turns": [
                    {"user": "first | *question*"},
                    {
                        "user": "Where is my order A-1042?",
                        "assertions": [{"type": "contains", "value": "shipped"}],
                    },
                    {"user": "thanks"},
                ]
            },
            "assertions": [{"type": "contains", "value": "goodbye"}],
        },
        {"id": "crash", "conversation": {"turns": [{"user": "hi"}, {"user": "crash please"}]}},
    ]
    data = {"agent": "bot", "test_suites": {"support": {"tests": tests}}}
    (tmp_path / "c.tests.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return tmp_path


def test_the_console_names_the_failing_turn_and_the_user_message(project: Path) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml"])
    assert result.exit_code == 1
    out = result.output
    assert "✗ turn 2 (user: 'Where is my order A-1042?'): contains:" in out
    assert "✗ the whole conversation: contains:" in out
    assert "error: turn 2 of 2: " in out and "exited with code 4" in out
    assert "user said: 'crash please'" in out
    assert "\x1b[31m" not in out  # the agent's escape code is shown inert


def test_markdown_gives_the_transcript_with_each_turn_verdict(project: Path) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.md"])
    assert result.exit_code == 1
    text = (project / "r.md").read_text(encoding="utf-8")
    assert "@@ contains (turn 2) @@" in text
    assert "@@ contains (conversation) @@" in text
    rows = [line for line in text.splitlines() if line.startswith("| 2 | Where")]
    assert rows, text
    row = rows[0]
    assert "Where is my order A\\-1042?" in row or "Where is my order A-1042?" in row
    assert "✗ failed: Output does not contain 'shipped'" in row
    # The agent's text is escaped: its pipe does not open a cell, its HTML is no tag.
    assert "reply 2 \\| " in row
    assert re.search(r"(?<!\\)<img", row) is None and "\\<img" in row
    assert "\x1b" not in row
    assert "ended: its scripted turns ran out" in text
    crash = [line for line in text.splitlines() if "exited with code 4" in line]
    assert any(line.startswith("| 2 | crash please") for line in crash), crash


def test_junit_names_the_turn_in_the_failure(project: Path) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.xml"])
    assert result.exit_code == 1
    root = ET.parse(project / "r.xml").getroot()
    failures = [f for f in root.iter("failure")]
    text = "\n".join((f.get("message") or "") + (f.text or "") for f in failures)
    assert "turn 2 (user: 'Where is my order A-1042?')" in text


def test_the_json_report_and_a_report_from_the_store_agree(project: Path) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "live.json"])
    assert result.exit_code == 1
    again = CliRunner().invoke(main, ["report", "last", "-o", "stored.json"])
    assert again.exit_code in (0, 1), again.output
    live = json.loads((project / "live.json").read_text(encoding="utf-8"))
    stored = json.loads((project / "stored.json").read_text(encoding="utf-8"))
    for one, other in zip(live["tests"], stored["tests"], strict=True):
        assert one["trials"] == other["trials"]
    turns = live["tests"][0]["trials"][0]["turns"]
    assert [t["outcome"] for t in turns] == ["passed", "failed", "passed"]
    assert turns[1]["user"] == "Where is my order A-1042?"
    assert live["tests"][0]["trials"][0]["conversation"]["outcome"] == "failed"


def test_html_shows_the_conversation_as_a_chat_with_each_reply_checks(project: Path) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.html"])
    assert result.exit_code == 1
    html = (project / "r.html").read_text(encoding="utf-8")
    chat = html[html.index('<div class="chat"') :]
    chat = chat[: chat.index("</details>")]
    users = re.findall(r'class="bubble user">.*?<pre>(.*?)</pre>', chat, re.S)
    assert users == ["first | *question*", "Where is my order A-1042?", "thanks"]
    assert chat.count('class="bubble agent"') == 3
    assert 'id="turn-1-2"' in chat and 'class="turn failed"' in chat
    assert "Output does not contain &#39;shipped&#39;" in chat
    assert "ended: its scripted turns ran out" in chat
    # The agent's HTML is text on the page, never an element.
    assert "&lt;img src=x onerror=alert(1)&gt;" in chat
    assert "<img" not in chat


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_chromium_renders_the_chat_and_runs_nothing_the_agent_wrote(
    project: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.html"])
    assert result.exit_code == 1
    done = subprocess.run(
        [
            str(shutil.which("chromium")),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            (project / "r.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    dom = done.stdout
    assert done.returncode == 0 and "</html>" in dom, done.stderr[-2000:]
    assert not re.search(r"<img\b", dom, re.I)
    assert dom.count('class="bubble agent"') == 5  # 3 turns, and 2 of the crashed test
    assert "exited with code 4" in dom


def test_the_csv_row_gives_the_agents_messages_and_names_the_failing_turn(project: Path) -> None:
    import csv

    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.csv"])
    assert result.exit_code == 1
    with (project / "r.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle)}
    wrong = rows["wrong_turn"]
    assert wrong["first_failure"].startswith("turn 2: contains: Output does not contain")
    assert wrong["output"].count("reply ") == 3  # the three replies, joined
    assert rows["crash"]["first_failure"].startswith("turn 2 of 2: ")
