"""JSON Schemas of the file formats, for editors: every assertion name and its parameters.

The file models describe ``expect`` and ``assertions`` loosely (they are compiled by the
engine, which reports problems precisely). For autocompletion the schemas here spell them out
from the assertion registry: each expect key with its parameter schema, each typed ``type``
(and its ``not-`` form), so a misspelt key is flagged while typing.
"""

from __future__ import annotations

import copy
from typing import Any

from ..engine import REGISTRY
from ._models import AgentTestFileModel, ConfigModel, TestModel, WorkflowModel

__all__ = ["json_schemas"]

_NESTED_EXPECT = {"one_of", "if_results", "if_has_history", "if_sensitive_results"}


def _expect_schema(definitions: dict[str, Any]) -> dict[str, Any]:
    """The expect-dict schema; parameter models' own definitions go into ``definitions``."""
    properties: dict[str, Any] = {}
    for entry in REGISTRY.entries("expect"):
        if entry.name == "one_of":
            schema: dict[str, Any] = {
                "type": "array",
                "minItems": 2,
                "items": {"$ref": "#/$defs/expect"},
            }
        elif entry.name in _NESTED_EXPECT:
            schema = {"$ref": "#/$defs/expect"}
            if entry.name == "if_sensitive_results":
                schema = {
                    "anyOf": [
                        {"$ref": "#/$defs/expect"},
                        {
                            "type": "object",
                            "properties": {"has_field": {"type": "string"}, "value": {}},
                            "required": ["has_field", "value"],
                            "additionalProperties": False,
                        },
                    ]
                }
        elif entry.params is not None:
            forms = entry.params if isinstance(entry.params, tuple) else (entry.params,)
            alternatives = []
            for model in forms:
                alternative = model.model_json_schema()
                alternative.pop("title", None)
                definitions.update(alternative.pop("$defs", {}))
                alternatives.append(alternative)
            schema = alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}
        else:
            schema = {}
        if entry.summary:
            schema = {**schema, "description": entry.summary}
        properties[entry.name] = schema
    return {
        "type": "object",
        "description": "An expect dict: every key is one assertion, and all must pass.",
        "properties": properties,
        "additionalProperties": False,
    }


def _typed_schema() -> dict[str, Any]:
    """One typed assertion; each built-in's ``config``, ``value`` and ``threshold`` rules."""
    names = REGISTRY.names("typed")
    rules: list[dict[str, Any]] = []
    for entry in REGISTRY.entries("typed"):
        if not entry.builtin:
            continue  # a user assertion reads its config as it likes
        then: dict[str, Any] = {}
        if entry.options is None:
            then["config"] = {"type": "object", "maxProperties": 0}
        else:
            options = entry.options.model_json_schema()
            options.pop("title", None)
            then["config"] = options
        if not entry.threshold:
            then["threshold"] = False
        if not entry.value:
            then["value"] = False
        rules.append(
            {
                "if": {
                    "properties": {"type": {"enum": [entry.name, f"not-{entry.name}"]}},
                    "required": ["type"],
                },
                "then": {"properties": then},
            }
        )
    return {
        "type": "object",
        "description": "One typed assertion.",
        "properties": {
            "type": {"enum": [*names, *(f"not-{name}" for name in names)]},
            "value": {"description": "Comparison value (type-specific)."},
            "threshold": {"type": "number"},
            "weight": {"type": "number", "minimum": 0},
            "metric": {"type": "string"},
            "transform": {"type": "string", "pattern": "^json_path:"},
            "config": {"type": "object"},
        },
        "required": ["type"],
        "additionalProperties": False,
        "allOf": rules,
    }


def _with_assertions(schema: dict[str, Any]) -> dict[str, Any]:
    """Point every ``expect``/``assertions``/``expected`` property at the detailed schemas."""
    schema = copy.deepcopy(schema)
    definitions = schema.setdefault("$defs", {})
    definitions["expect"] = _expect_schema(definitions)
    definitions["typedAssertion"] = _typed_schema()
    typed_list = {"type": "array", "items": {"$ref": "#/$defs/typedAssertion"}}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                if "expect" in properties:
                    properties["expect"] = {"$ref": "#/$defs/expect"}
                if "assertions" in properties:
                    properties["assertions"] = typed_list
                if "stop_when" in properties:  # a simulated user's stop rule: typed assertions
                    described = properties["stop_when"].get("description")
                    properties["stop_when"] = {**typed_list, "description": described}
                if "expected" in properties:
                    properties["expected"] = {"type": "object", "additionalProperties": typed_list}
            for key, child in node.items():
                if key not in ("expect", "typedAssertion"):
                    visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit({k: v for k, v in schema.items() if k != "$defs"})
    for name, definition in definitions.items():
        if name not in ("expect", "typedAssertion"):
            visit(definition)
    return schema


def json_schemas() -> dict[str, dict[str, Any]]:
    """Schemas by format name: agent-tests, test, workflow-eval, config."""
    agent_tests = AgentTestFileModel.model_json_schema()
    # Tests are validated one by one (so one bad test does not hide the others): describe them.
    suite = agent_tests["$defs"]["SuiteModel"]
    test = TestModel.model_json_schema()
    agent_tests["$defs"].update(test.pop("$defs", {}))
    agent_tests["$defs"]["TestModel"] = test
    suite["properties"]["tests"] = {"type": "array", "items": {"$ref": "#/$defs/TestModel"}}
    workflow = WorkflowModel.model_json_schema()
    section = workflow["$defs"]["EvalSectionModel"]
    from ._models import EvalCaseModel

    case = EvalCaseModel.model_json_schema()
    workflow["$defs"]["EvalCaseModel"] = case
    section["properties"]["cases"] = {"type": "array", "items": {"$ref": "#/$defs/EvalCaseModel"}}
    schemas = {
        "agent-tests": _with_assertions(agent_tests),
        "test": _with_assertions(TestModel.model_json_schema()),
        "workflow-eval": _with_assertions(workflow),
        "config": ConfigModel.model_json_schema(),
    }
    for name, schema in schemas.items():
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"assertly {name}"
    return schemas
