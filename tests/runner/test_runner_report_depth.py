"""Reports nest at most `REPORT_MAX_DEPTH` levels, whatever an agent returns (issue 29).

A 9,990-level JSON output made the JSON report unreadable by jq and Python's json (and the
run ended in an internal error reading it back from the store). Reports now write what lies
deeper than the cap as marked JSON text; the store keeps the value itself.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from runner_support import HttpAgent, Project

from assertly.runner import TrialRecord

DEPTH = 9_990
REPORT_MAX_DEPTH = 100  # documented in docs/reliability.md (assertly._json.REPORT_MAX_DEPTH)


def nesting(value: Any) -> int:
    """How many arrays and objects deep ``value`` goes (iteratively: it may be deep)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest


# issue 29, probe "Unbounded" 5: a 9,990-level-deep output.
def test_a_deep_output_leaves_every_report_readable(
    project: Project, http_server: HttpAgent
) -> None:
    deep = "[" * DEPTH + "1" + "]" * DEPTH
    project.write("assertly.yaml", {"agents": {"api": http_server.url("/bytes")}})
    request = {"hex": deep.encode().hex(), "type": "application/json"}
    equals = [{"type": "equals", "value": [1]}, {"type": "is-json"}]
    project.tests_file(
        "deep.tests.yaml",
        {"s": [{"id": "deep", "input": request, "assertions": equals}]},
        agent="api",
    )
    result = project.run("run", ".", "-o", "r.md", "-o", "r.html", "-o", "r.xml")
    assert result.exit_code == 1, result.stdout + result.stderr
    test = result.tests["deep"]  # the JSON report, read by Python's json
    assert test["status"] == "failed"
    (failure,) = test["trials"][0]["failures"]
    assert failure["assertion"] == "equals"
    assert nesting(result.report) <= REPORT_MAX_DEPTH
    report_path = next(project.root.glob("report-*.json"))
    text = report_path.read_text(encoding="utf-8")
    assert "[JSON nested deeper than the report's 100 levels, as text] " in text
    if shutil.which("jq"):  # jq 1.6 reads at most 256 levels
        command = ["jq", ".tests[0].status", str(report_path)]
        jq = subprocess.run(command, check=False, capture_output=True)
        assert jq.returncode == 0, jq.stderr
    # The store keeps the exact value: the verdict read back is the same, and so is the value.
    (record,) = project.records()
    assert record["steps"][0]["response"] == deep
    assert nesting(TrialRecord.from_dict(record).failures[0].actual) == DEPTH
    again = project.run("report", "last")
    assert again.tests["deep"]["status"] == "failed"
    assert nesting(again.report) <= REPORT_MAX_DEPTH
    for name in ("r.md", "r.html", "r.xml"):
        assert (project.root / name).stat().st_size > 0


def test_the_cap_keeps_the_value_as_text() -> None:
    from assertly._json import DEEP_MARKER, report_json_bytes

    value = {"a": [[[[1, {"b": 2}]]]]}
    assert report_json_bytes(value) == report_json_bytes(value, level=0)
    capped = json.loads(report_json_bytes(value, level=REPORT_MAX_DEPTH - 3))
    assert capped == {"a": [[DEEP_MARKER + '[[1,{"b":2}]]']]}
    assert json.loads(report_json_bytes(value, level=REPORT_MAX_DEPTH - 6)) == value


def test_shallow_values_are_written_as_before(tmp_path: Path) -> None:
    from assertly._json import report_json_bytes, to_json_bytes

    value = {"x": [1, 2, {"y": None}], "z": "[[[[" * 100}  # brackets in strings are text
    assert report_json_bytes(value, indent=True, level=2) == to_json_bytes(value, indent=True)


def test_the_documented_depth() -> None:
    from assertly._json import REPORT_MAX_DEPTH as documented

    assert documented == REPORT_MAX_DEPTH
