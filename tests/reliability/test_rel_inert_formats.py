"""Untrusted text is inert in every format (issue 29, "Inert").

Before, ``assertly diff … --format md`` printed to a terminal wrote an agent's raw ESC c (full
reset), charset switches, DCS, C1 CSI and U+202E, and ``-o r.md`` held raw ESC, BEL and NUL.
Now every Markdown and text writer shows controls as escapes (`assertly._terminal.inert_text`),
and JSON, valid as ever, writes the ones JSON leaves raw (C1, bidi, U+2028/9) as ``\\uXXXX``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reliability_support import ASSERTLY, write_tests

# What a terminal obeys: full reset, charset switch, a DCS string, C1 CSI (8-bit), BEL, NUL,
# a right-to-left override, a line separator, backspace, carriage return, DEL.
HOSTILE = "A\x1bc B\x1b(0 C\x1bPq#0;2;0;0;0\x1b\\ D\x9b31m E\u202eF\x07G\x00H\u2028I\x08J\rK\x7fL"
RAW = ["\x1b", "\x9b", "\u202e", "\x07", "\x00", "\u2028", "\x08", "\r", "\x7f"]

AGENT = f"""
import json, pathlib, sys
json.load(sys.stdin)
if pathlib.Path("failing").exists():  # an error whose message holds the stderr tail
    sys.stderr.write({HOSTILE!r})
    sys.exit(1)
print(json.dumps({{"status": "ok", "note": {HOSTILE!r}}}))
"""


def _assertly(project: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [ASSERTLY, *args], cwd=project, capture_output=True, timeout=120, check=False,
        env=os.environ.copy(),
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {"agents": {"cmd": {"command": [sys.executable, "agent.py"]}}}
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    tests = [{"id": "t", "input": 1, "expect": {"status": "ok"}}]
    write_tests(tmp_path / "c.tests.yaml", tests, "cmd")
    assert _assertly(tmp_path, "run", ".").returncode == 0
    (tmp_path / "failing").touch()
    reports = [arg for name in ("r.json", "r.md", "r.html") for arg in ("-o", name)]
    assert _assertly(tmp_path, "run", ".", *reports).returncode == 1
    return tmp_path


def _no_raw_control(place: str, data: bytes) -> None:
    text = data.decode("utf-8")
    for char in RAW:
        assert char not in text, f"raw {char!r} in {place}"


def test_markdown_and_text_show_controls_as_escapes(project: Path) -> None:
    # issue 29, Inert probe: diff --format md on a terminal, and -o r.md
    places: dict[str, bytes] = {}
    for output_format in ("md", "text", "json"):
        shown = _assertly(project, "diff", "last~1", "last", "--format", output_format)
        assert shown.returncode in (0, 1), shown.stderr
        places[f"diff --format {output_format}"] = shown.stdout
        written = _assertly(project, "diff", "last~1", "last", "--format", output_format,
                            "-o", f"d.{output_format}")  # fmt: skip
        assert written.returncode in (0, 1), written.stderr
        places[f"diff -o d.{output_format}"] = (project / f"d.{output_format}").read_bytes()
    for name in ("r.json", "r.md", "r.html"):
        places[name] = (project / name).read_bytes()
    assert b"\\x1bc B\\x1b(0" in places["diff --format md"], places["diff --format md"]
    assert b"\\u202e" in places["r.md"] and b"\\x00" in places["r.md"]
    for place, data in places.items():
        _no_raw_control(place, data)


def test_json_stays_the_same_json_with_every_control_escaped(project: Path) -> None:
    report = (project / "r.json").read_bytes()
    _no_raw_control("r.json", report)
    data = json.loads(report)
    notes = json.dumps(data)
    assert json.dumps(HOSTILE)[1:-1] in notes  # the very text, read back
    diff = _assertly(project, "diff", "last~1", "last", "--format", "json").stdout
    _no_raw_control("diff json", diff)
    json.loads(diff)
