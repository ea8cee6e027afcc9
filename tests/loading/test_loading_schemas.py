"""The shipped JSON Schemas match the code and accept real files while flagging typos."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import jsonschema_rs
import yaml

from assertly.loading import json_schemas

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"


def test_committed_schemas_are_up_to_date() -> None:
    render = runpy.run_path(str(SCHEMAS / "generate.py"))["render"]
    for name, schema in json_schemas().items():
        committed = (SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")
        assert committed == render(schema), f"run `make schemas`: {name} is stale"


def test_example_files_validate() -> None:
    schemas = json_schemas()
    tests = jsonschema_rs.validator_for(schemas["agent-tests"])
    workflow = jsonschema_rs.validator_for(schemas["workflow-eval"])
    config = jsonschema_rs.validator_for(schemas["config"])
    examples = ROOT / "examples"
    for path in examples.glob("*.tests.yaml"):
        assert [e.message for e in tests.iter_errors(yaml.safe_load(path.read_text()))] == []
    for path in examples.glob("*.workflow.yaml"):
        assert [e.message for e in workflow.iter_errors(yaml.safe_load(path.read_text()))] == []
    assert [
        e.message
        for e in config.iter_errors(yaml.safe_load((examples / "assertly.yaml").read_text()))
    ] == []


def test_misspelt_assertions_are_flagged_while_typing() -> None:
    validator = jsonschema_rs.validator_for(json_schemas()["agent-tests"])
    document = {
        "agent": "notes",
        "test_suites": {
            "search": {
                "tests": [
                    {
                        "id": "t1",
                        "expect": {"stauts": "success", "all_match": {"path": "x"}},
                        "assertions": [{"type": "contians", "value": "x"}],
                    }
                ]
            }
        },
    }
    messages = " | ".join(error.message for error in validator.iter_errors(document))
    assert "'stauts' was unexpected" in messages
    assert '"value" is a required property' in messages
    assert '"contians" is not one of' in messages


def test_nested_expect_dicts_are_described() -> None:
    schema = json_schemas()["test"]
    expect = schema["$defs"]["expect"]["properties"]
    assert expect["one_of"]["items"] == {"$ref": "#/$defs/expect"}
    assert json.dumps(expect["if_results"]).count("#/$defs/expect") == 1
