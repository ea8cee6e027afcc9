"""Terminal output is inert: an agent's output, quoted in messages, cannot erase, recolour or
fake console lines (hostile world, round 2, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assertly._terminal import terminal_safe
from assertly.cli import main

HOSTILE = "ok\x1b[2K\r\x1b[32mPASSED\x1b[0m fake\x07\x08\u202eevil\u2028next\x9b1m"
CONTROLS = ["\x1b", "\r", "\x07", "\x08", "\u202e", "\u2028", "\x9b"]


def assert_inert(output: str) -> None:
    for char in CONTROLS:
        assert char not in output, f"{char!r} reached the terminal"
    assert "\\x1b[2K\\r\\x1b[32mPASSED" in output


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("a\nb", "a\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("tab\there", "tab\\there"),
        ("rtl\u202eoverride", "rtl\\u202eoverride"),
        ("café", "café"),
        ("lone \ud800", "lone \\ud800"),
    ],
)
def test_terminal_safe(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_check_shows_control_characters(tmp_path: Path) -> None:
    (tmp_path / "e.yaml").write_text("- {type: equals, value: expected}\n")
    (tmp_path / "r.txt").write_text(HOSTILE)
    result = CliRunner().invoke(
        main, ["check", "--expect", str(tmp_path / "e.yaml"), "--response", str(tmp_path / "r.txt")]
    )
    assert result.exit_code == 1
    assert_inert(result.output)


def test_run_shows_control_characters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, input: {}, expect: {status: success}}\n"
    )
    (tmp_path / "f.jsonl").write_text(json.dumps({"id": "t", "output": {"status": HOSTILE}}) + "\n")
    result = CliRunner().invoke(main, ["run", ".", "--target", "fixtures:f.jsonl", "--plain"])
    assert result.exit_code == 1
    assert_inert(result.output)


def test_validate_shows_control_characters(tmp_path: Path) -> None:
    (tmp_path / "t.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        '      - {id: t, input: {}, expect: {"stat\\e[2Kus": x}}\n'
    )
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "t.tests.yaml")])
    assert result.exit_code == 2
    assert "\x1b" not in result.output
    assert "\\x1b[2K" in result.output
