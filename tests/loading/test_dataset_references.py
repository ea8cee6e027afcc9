"""Per-case references: a dataset line's vars and expected, read by the suite's assertions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main
from assertly.loading import load_paths
from assertly.loading._references import Template, has_references


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the dataset must be inside the project


def project(tmp_path: Path, suite: dict[str, Any], lines: list[dict[str, Any]]) -> Path:
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    tests = tmp_path / "refs.tests.yaml"
    data = {"agent": "bot", "test_suites": {"refs": {"dataset": "cases.jsonl", **suite}}}
    tests.write_text(yaml.safe_dump(data), encoding="utf-8")
    return tests


def run(tmp_path: Path, tests: Path) -> dict[str, Any]:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        ["run", str(tests), "--plain", "--store", str(tmp_path / "s.sqlite"), "-o", str(report)],
        catch_exceptions=False,
    )
    assert "Traceback" not in result.output
    assert report.exists(), result.output
    return {test["id"]: test for test in json.loads(report.read_text())["tests"]}


def test_whole_references_keep_their_json_type(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "equals", "value": "{{ expected }}"}]},
        [
            {"id": "n", "output": 42, "expected": 42},
            {"id": "obj", "output": {"a": [1, 2]}, "expected": {"a": [1, 2]}},
            {"id": "bad", "output": {"a": [1]}, "expected": {"a": [1, 2]}},
        ],
    )
    statuses = {key: test["status"] for key, test in run(tmp_path, tests).items()}
    assert statuses == {"n": "passed", "obj": "passed", "bad": "failed"}


def test_vars_in_any_assertion_and_interpolated_in_text(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {
            "assertions": [
                {"type": "contains", "value": "{{ vars.city }}"},
                {
                    "type": "regex",
                    "value": "^The capital of {{ vars.country }} is",
                    "transform": "json_path:$.summary",
                },
            ],
            "expect": {"summary_contains": "{{ vars.city }}"},
        },
        [
            {
                "id": "fr",
                "output": {"summary": "The capital of France is Paris."},
                "vars": {"city": "Paris", "country": "France"},
            },
            {
                "id": "de",
                "output": {"summary": "The capital of Germany is Bonn."},
                "vars": {"city": "Berlin", "country": "Germany"},
            },
        ],
    )
    tests_by_id = run(tmp_path, tests)
    assert tests_by_id["fr"]["status"] == "passed"
    assert tests_by_id["de"]["status"] == "failed"
    assert "Berlin" in json.dumps(tests_by_id["de"]["trials"][0]["failures"])


def test_a_missing_reference_is_an_error_naming_the_line(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "contains", "value": "{{ vars.city }}"}]},
        [
            {"id": "ok", "output": "Paris", "vars": {"city": "Paris"}},
            {"id": "none", "output": "Paris", "vars": {"town": "Paris"}},
            {"id": "novars", "output": "Paris"},
        ],
    )
    by_id = run(tmp_path, tests)
    assert by_id["ok"]["status"] == "passed"
    for key, line in (("none", 2), ("novars", 3)):
        error = by_id[key]["trials"][0]["error"]
        assert by_id[key]["status"] == "error"
        assert f"cases.jsonl:{line}" in error and "vars.city" in error, error
    assert "its vars: town" in by_id["none"]["trials"][0]["error"]


def test_a_value_that_makes_an_assertion_invalid_is_an_error_of_that_line(
    tmp_path: Path,
) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "regex", "value": "{{ expected }}"}]},
        [{"id": "a", "output": "x", "expected": "x"}, {"id": "b", "output": "x", "expected": "("}],
    )
    by_id = run(tmp_path, tests)
    assert by_id["a"]["status"] == "passed"
    assert by_id["b"]["status"] == "error"
    assert "cases.jsonl:2" in by_id["b"]["trials"][0]["error"]


def test_validate_reports_missing_references_per_line(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "equals", "value": "{{ expected }}"}]},
        [{"id": "a", "output": 1, "expected": 1}, {"id": "b", "output": 1}],
    )
    result = CliRunner().invoke(main, ["validate", str(tests)])
    assert result.exit_code == 2
    assert "cases.jsonl:2" in result.output and "expected" in result.output


def test_lines_sharing_references_share_one_compiled_expectation(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "contains", "value": "{{ vars.word }}"}]},
        [{"output": "a b", "vars": {"word": w}} for w in ("a", "b", "a", "a")],
    )
    loaded = load_paths([tests], project_dir=tmp_path)
    (dataset,) = loaded.datasets
    checks = [case.steps[0].checks[0] for case in dataset.cases()]
    assert checks[0] is checks[2] is checks[3] and checks[0] is not checks[1]


def test_vars_must_be_a_mapping(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        {"assertions": [{"type": "contains", "value": "{{ vars.w }}"}]},
        [{"output": "a", "vars": ["a"]}],
    )
    (case,) = load_paths([tests], project_dir=tmp_path).datasets[0].cases()
    assert "vars must be a mapping" in str(case.problems[0])


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("{{ expected }}", ("expected",)),
        ({"a": ["x {{vars.b}} {{ vars.c-d }}"]}, ("vars.b", "vars.c-d")),
        ("{ expected }", ()),
    ],
)
def test_templates_find_their_references(spec: Any, names: tuple[str, ...]) -> None:
    assert has_references(spec) is bool(names)
    assert Template(spec).names == names


def test_interpolated_values_are_text() -> None:
    template = Template(["n={{ expected }}", "{{ vars.x }}", {"k": "{{vars.x}}!"}])
    filled = template.fill({"expected": [1, "a"], "vars.x": 3})
    assert filled == ['n=[1,"a"]', 3, {"k": "3!"}]
