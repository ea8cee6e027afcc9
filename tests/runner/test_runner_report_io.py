"""The JSON report shows every test's input and every trial's output and metrics, passing tests
included; a huge output is cut at OUTPUT_LIMIT and marked; the report validates against its
JSON Schema (schemas/report.schema.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
from runner_support import Project

from assertly._records import OUTPUT_LIMIT
from assertly.reports._report_schema import report_schema

SCHEMA = Path(__file__).parents[2] / "schemas" / "report.schema.json"


def _validate(report: object) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema_rs.validator_for(schema).validate(report)


def test_a_passing_test_has_its_input_output_and_metrics(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file(
        "t.tests.yaml",
        {
            "s": [
                {
                    "id": "meta",
                    "input": {"mode": "meta", "model": "m-1", "cost": 0.5},
                    "expect": {"status": "success"},
                },
                {"id": "prose", "input": {"mode": "text", "text": "hi"}, "expect": {"status": "x"}},
            ]
        },
    )
    result = project.run("run", ".")
    test = result.tests["meta"]
    assert test["status"] == "passed"
    assert test["input"] == {"mode": "meta", "model": "m-1", "cost": 0.5}
    (trial,) = test["trials"]
    assert trial["output"] == {
        "status": "success",
        "results": [{"file": "journal/a.md", "metadata": {"tags": ["work"]}}],
    }
    assert trial["output_truncated"] is False
    metrics = trial["metrics"]
    assert (metrics["model"], metrics["cost_usd"], metrics["tokens"]) == ("m-1", 0.5, None)
    assert metrics["latency_ms"] > 0  # measured by the runner
    # A prose response is text; a failing test has its output too.
    assert result.tests["prose"]["trials"][0]["output"] == "hi\n"
    assert result.tests["prose"]["trials"][0]["metrics"]["model"] is None
    _validate(result.report)


def test_a_huge_output_is_cut_and_marked(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    big = "x" * (OUTPUT_LIMIT + 10)
    project.tests_file(
        "t.tests.yaml",
        {
            "s": [
                {"id": "text", "input": {"mode": "text", "text": big}, "expect": {"status": "x"}},
                {
                    "id": "json",
                    "input": {"files": [f"f{n:05}.md" for n in range(3000)]},
                    "expect": {"status": "success"},
                },
            ]
        },
    )
    result = project.run("run", ".")
    text = result.tests["text"]["trials"][0]
    assert text["output_truncated"] is True
    assert text["output"] == "x" * OUTPUT_LIMIT
    json_trial = result.tests["json"]["trials"][0]
    assert json_trial["output_truncated"] is True
    assert isinstance(json_trial["output"], str) and len(json_trial["output"]) == OUTPUT_LIMIT
    assert json_trial["output"].startswith('{"status": "success", "results": [{"file": "f00000.md"')
    # The store keeps the whole response: recheck judges all of it.
    stored = project.records("test_key LIKE '%::text'")
    assert big in stored[0]["steps"][0]["response"]
    _validate(result.report)


def test_multi_step_input_and_output_are_per_step(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file(
        "t.tests.yaml",
        {
            "s": [
                {
                    "id": "two",
                    "multi_step": [
                        {
                            "step": "first",
                            "input": {"files": ["a.md"]},
                            "expect": {"status": "success"},
                        },
                        {
                            "step": "second",
                            "input": {"mode": "meta", "model": "m-2", "cost": 0.25},
                            "expect": {"status": "success"},
                        },
                    ],
                }
            ]
        },
    )
    result = project.run("run", ".")
    test = result.tests["two"]
    assert test["input"] == [
        {"step": "first", "input": {"files": ["a.md"]}},
        {"step": "second", "input": {"mode": "meta", "model": "m-2", "cost": 0.25}},
    ]
    (trial,) = test["trials"]
    assert [step["step"] for step in trial["output"]] == ["first", "second"]
    assert trial["output"][0]["output"]["results"][0]["file"] == "a.md"
    assert trial["output"][1]["metrics"]["model"] == "m-2"
    # Totals over the steps: both latencies measured; one step reported no cost.
    metrics = trial["metrics"]
    assert metrics["model"] == "m-2"
    assert metrics["cost_usd"] is None
    total = sum(step["metrics"]["latency_ms"] for step in trial["output"])
    assert abs(metrics["latency_ms"] - total) < 0.01
    _validate(result.report)


def test_a_target_error_has_no_output(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file(
        "t.tests.yaml",
        {"s": [{"id": "crash", "input": {"mode": "crash"}, "expect": {"status": "success"}}]},
    )
    result = project.run("run", ".")
    (trial,) = result.tests["crash"]["trials"]
    assert trial["status"] == "error"
    assert trial["output"] is None and trial["output_truncated"] is False
    _validate(result.report)


def test_the_committed_report_schema_is_up_to_date() -> None:
    committed = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert committed == report_schema(), "run `make schemas`"


def test_report_output_forms() -> None:
    from assertly._records import report_output

    assert report_output({"a": 1}) == ({"a": 1}, False)
    assert report_output(' {"a": [1, 2]}\n') == ({"a": [1, 2]}, False)
    assert report_output("{not json}") == ("{not json}", False)
    assert report_output("plain") == ("plain", False)
    assert report_output(None) == (None, False)
    value = {"items": ["é" * 10] * 10}
    cut, truncated = report_output(value, limit=50)
    assert truncated is True and isinstance(cut, str) and len(cut) == 50
    assert cut.startswith('{"items":["éééééééééé"')
