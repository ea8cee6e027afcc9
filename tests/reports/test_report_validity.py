"""Every report is valid in its format whatever the agent's output holds (issue #14, item 2).

A real run of a Python agent whose output (and error messages, and test ids) hold lone
surrogates, U+FFFE and U+FFFF, C0 control characters, Markdown pipes and code fences. Each
report is then read back by a strict reader of its format: expat for JUnit XML (which refuses
every character XML 1.0 forbids, raw or as a character reference), orjson for JSON (which
refuses lone surrogates), and the Markdown tables are counted cell by cell.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from xml.etree import ElementTree as ET

import orjson
import pytest
from click.testing import CliRunner

from assertly.cli import main

HOSTILE = (
    "a|b \r| c |\r\n\ud800 \udfff \ufffe \uffff \x00\x01\x08\x0b\x0c\x1b[31m\x7f"
    " | x | y |\n```\n~~~\n"
)

AGENT = f"""
HOSTILE = {HOSTILE!r}

def answer(payload):
    if payload == "raise":
        raise ValueError(HOSTILE)
    return HOSTILE + payload
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    project = tmp_path_factory.mktemp("validity")
    (project / "hostile_agent.py").write_text(AGENT, encoding="utf-8")
    tests = [
        # (a control character in an id is a load problem since issue 29: the output and
        # the messages still carry them)
        {"id": "t|1 ``` \ufffe", "input": "x", "expect": {"status": "ok"}},
        {"id": "t2", "input": "y", "assertions": [{"type": "equals", "value": "z"}]},
        {"id": "t3", "input": "raise", "expect": {"status": "ok"}},
        {"id": "t4", "input": "x", "assertions": [{"type": "contains", "value": "a|b"}]},
    ]
    data = {"agent": "bot", "test_suites": {"s|uite ```": {"tests": tests}}}
    (project / "h.tests.json").write_text(json.dumps(data), encoding="utf-8")
    outputs = ["r.json", "r.xml", "r.md", "r.html"]
    args = ["run", str(project / "h.tests.json"), "--target", "py:hostile_agent:answer"]
    args += ["--store", str(project / "runs.sqlite")]
    for output in outputs:
        args += ["-o", str(project / output)]
    import os

    previous = os.getcwd()
    os.chdir(project)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(previous)
    assert result.exit_code == 1, result.output
    return {name: (project / name).read_bytes() for name in outputs}


_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def test_junit_is_well_formed_xml_1_0(reports: dict[str, bytes]) -> None:
    root = ET.fromstring(reports["r.xml"])  # expat: refuses &#55296;, raw U+FFFE, \x01 …
    texts = [root.text or ""]
    for element in root.iter():
        texts += [element.text or "", *element.attrib.values()]
    joined = "".join(texts)
    assert not _XML_FORBIDDEN.search(joined)
    # What XML cannot hold is shown, not dropped: the reader of the CI log sees it was there.
    assert "\\ud800" in joined and "\\ufffe" in joined and "\\x01" in joined
    assert root.get("failures") == "2" and root.get("errors") == "1"  # t4 passes


def test_json_report_is_strict_utf8_json(reports: dict[str, bytes]) -> None:
    data = orjson.loads(reports["r.json"])  # refuses lone surrogates, escaped or raw
    assert data == json.loads(reports["r.json"])
    assert "\\ud800" in json.dumps(data, ensure_ascii=False)


def _tables(markdown: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in re.split(r"\r\n|\r|\n", markdown):  # CommonMark line endings only
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def test_markdown_tables_and_fences_hold(reports: dict[str, bytes]) -> None:
    markdown = reports["r.md"].decode("utf-8")
    tables = _tables(markdown)
    assert tables
    for table in tables:
        cells = [len(re.findall(r"(?<!\\)\|", row)) for row in table]
        assert len(set(cells)) == 1, table  # a pipe in a value never adds a column
    # Every fence opened is closed by a fence of the same length, and the hostile ``` inside
    # the output never closes the block early.
    fence_lines = [
        line for line in re.split(r"\r\n|\r|\n", markdown) if re.match(r"^(`{3,}|~{3,})", line)
    ]
    opened: str | None = None
    for line in fence_lines:
        marker = re.match(r"^(`{3,}|~{3,})", line).group(1)  # type: ignore[union-attr]
        if opened is None:
            opened = marker
        elif marker == opened and line.strip() == marker:
            opened = None
    assert opened is None


def test_html_parses_and_shows_the_output_escaped(reports: dict[str, bytes]) -> None:
    html = reports["r.html"].decode("utf-8")
    HTMLParser().feed(html)
    assert "a|b" in html and "<script" not in html.lower().replace("<script>", "")


def test_a_record_beyond_orjson_with_an_infinite_cost_is_still_json() -> None:
    """Fuzz finding: a reported cost of Infinity next to an integer beyond 64 bits.

    orjson refuses the integer, and the stdlib fallback wrote ``Infinity`` (not JSON); it is
    now ``null``, as orjson writes it.
    """
    from assertly._json import to_json_bytes

    written = to_json_bytes({"cost_usd": float("inf"), "actual": 2**70, "x": [float("nan")]})
    assert json.loads(written) == {"cost_usd": None, "actual": 2**70, "x": [None]}
    orjson.loads(written)
