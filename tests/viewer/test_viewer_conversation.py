"""`assertly view` shows a conversation test as a chat (issue 32), served and exported.

The store comes from a real run of a real command agent whose replies hold HTML, so the pages
are checked for the chat and for the agent's text staying text.
"""

from __future__ import annotations

import re
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from viewer_support import serving

from assertly.cli import main

AGENT = r"""
import json, sys
messages = json.load(sys.stdin)["messages"]
turn = sum(1 for m in messages if m["role"] == "user")
if "crash" in messages[-1]["content"]:
    sys.exit(5)
print(f"reply {turn} <script>document.title='PWNED'</script>")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chat")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {
        "agents": {"bot": f"cmd:{sys.executable} {root / 'agent.py'}"},
        "store": "runs.sqlite",
    }
    (root / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    tests = [
        {
            "id": "wrong_turn",
            "trials": 2,
            "conversation": {
                "turns": [
                    {"user": "hello <b>there</b>"},
                    {"user": "second", "assertions": [{"type": "contains", "value": "nope"}]},
                ]
            },
            "assertions": [{"type": "contains", "value": "reply 2"}],
        },
        {"id": "crash", "conversation": {"turns": [{"user": "hi"}, {"user": "crash"}]}},
    ]
    data = {"agent": "bot", "test_suites": {"support": {"tests": tests}}}
    (root / "c.tests.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["run", str(root / "c.tests.yaml"), "--config", str(root / "assertly.yaml")]
    )
    assert result.exit_code == 1, result.output
    return root


def _check_page(page: str) -> None:
    assert page.count('class="chat"') == 3  # two trials of one test, one of the other
    assert 'id="trial-2-turn-2"' in page
    assert 'href="#trial-1-turn-2"' in page  # the failing turn, linked from the chat's head
    assert "conversation · 2 turns" in page
    assert "hello &lt;b&gt;there&lt;/b&gt;" in page
    assert "&lt;script&gt;document.title=" in page
    assert not re.search(r"<script>document", page)
    assert "ended: its scripted turns ran out" in page
    assert "exited with code 5" in page


def test_the_served_run_page_shows_each_trial_as_a_chat(project: Path) -> None:
    with serving(project / "runs.sqlite") as url:
        runs = urllib.request.urlopen(url + "/").read().decode()
        run_link = re.search(r'href="(/runs/[^"]+)"', runs)
        assert run_link, runs[:2000]
        page = urllib.request.urlopen(url + run_link.group(1)).read().decode()
    _check_page(page)


def test_the_static_export_shows_the_chat_too(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(
        main, ["view", "--store", str(project / "runs.sqlite"), "--export", str(out)]
    )
    assert result.exit_code == 0, result.output
    pages = [p.read_text(encoding="utf-8") for p in out.rglob("*.html")]
    chats = [page for page in pages if 'class="chat"' in page]
    assert chats
    _check_page(chats[0])
