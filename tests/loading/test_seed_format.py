"""A test file written for the seed's runner loads as it is: ``$schema``, ``agent``,
``version``, ``description``, ``test_suites`` and ``metadata`` at the top, 31 tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema_rs
from click.testing import CliRunner

from assertly.cli import main
from assertly.loading import json_schemas

# Kept without the .tests.json suffix here, so that assertly's own pytest plugin does not
# collect it from this repository; each test copies it under its real name.
SOURCE = Path(__file__).parent / "seed_format"


def project(tmp_path: Path) -> Path:
    """A copy of the fixture project, with the test file under its real name."""
    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(SOURCE / "notes_agent.json", root / "notes_agent.tests.json")
    shutil.copy(SOURCE / "recorded.jsonl", root / "recorded.jsonl")
    # The seed's sensitive prefixes (its if_sensitive_results reads them) are the project's to
    # set: assertly has none of its own.
    (root / "assertly.yaml").write_text(SEED_CONFIG)
    return root


SEED_CONFIG = "sensitive_prefixes: [people/, documents/]\n"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_file_validates_with_no_problem(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output = run(
        "validate", "--config", str(root / "assertly.yaml"), str(root / "notes_agent.tests.json")
    )
    assert code == 0, output
    assert "31 tests, 0 eval cases, 0 problems" in output


def test_the_shipped_json_schema_accepts_it() -> None:
    document = json.loads((SOURCE / "notes_agent.json").read_text())
    assert "$schema" in document and "metadata" in document and "version" in document
    validator = jsonschema_rs.validator_for(json_schemas()["agent-tests"])
    errors = [error.message for error in validator.iter_errors(document)]
    assert errors == []


def run_recorded(root: Path, tmp_path: Path) -> tuple[int, str, dict[str, Any]]:
    """Run the file against its recorded answers: exit code, output, the report's summary."""
    report = tmp_path / "report.json"
    target = f"fixtures:{root / 'recorded.jsonl'}"
    code, output = run(
        "run", str(root / "notes_agent.tests.json"), "--target", target,
        "--config", str(root / "assertly.yaml"),
        "--store", str(tmp_path / "runs.db"), "--plain", "-o", str(report),
    )  # fmt: skip
    return code, output, json.loads(report.read_text())["summary"]


def test_it_runs_and_judges_every_test(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, output, summary = run_recorded(root, tmp_path)
    assert code == 0, output
    assert (summary["total"], summary["passed"]) == (31, 31)
    # One recorded answer made wrong: that test, and only it, fails.
    lines = (root / "recorded.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["output"]["results"][0]["file"] = "work/elsewhere.md"
    lines[0] = json.dumps(first)
    (root / "recorded.jsonl").write_text("\n".join(lines) + "\n")
    code, output, summary = run_recorded(root, tmp_path)
    assert code == 1
    assert (summary["passed"], summary["failed"]) == (30, 1)
    assert "doesn't match pattern '^journal/'" in output


def test_a_config_may_name_its_schema_too(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "assertly.yaml").write_text(
        "$schema: ./schemas/config.schema.json\nagents: {notes: 'fixtures:recorded.jsonl'}\n"
        + SEED_CONFIG
    )
    code, output = run(
        "validate", "--config", str(root / "assertly.yaml"), str(root / "notes_agent.tests.json")
    )
    assert code == 0, output
    assert "0 problems" in output
