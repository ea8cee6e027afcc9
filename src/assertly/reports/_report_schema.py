"""The JSON Schema of ``run -o report.json`` (``assertly schema report``).

The pinned keys are required; keys added later may appear (``additionalProperties`` is left
open on purpose: tools reading the report must not break when it gains a key).
"""

from __future__ import annotations

from typing import Any

from .._records import OUTPUT_LIMIT

__all__ = ["report_schema"]

_STATUS = {"enum": ["passed", "failed", "error", "skipped"]}
_NUMBER_OR_NULL = {"type": ["number", "null"]}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }


def report_schema() -> dict[str, Any]:
    """The schema of the JSON report, as a JSON-ready dict."""
    metrics = _object(
        {
            "latency_ms": {
                **_NUMBER_OR_NULL,
                "description": "Measured or reported; summed "
                "over the steps of a multi-step trial (null when one is unknown).",
            },
            "cost_usd": {**_NUMBER_OR_NULL, "description": "As reported by the target."},
            "model": {"type": ["string", "null"], "description": "As reported by the target."},
            "tokens": {
                "type": ["object", "null"],
                "additionalProperties": {"type": "integer"},
                "description": "Token counts as reported by the target, by kind.",
            },
            "judge_cost_usd": {
                "type": "number",
                "description": "What the judge of model-graded assertions cost for this trial "
                "(apart from the agent's; 0 for cached replies). Only when a judge was asked.",
            },
            "judge_tokens": {
                "type": "integer",
                "description": "The judge's tokens for this trial. Only when a judge was asked.",
            },
        },
        required=["latency_ms", "cost_usd", "model", "tokens"],
    )
    failure = _object(
        {
            "step": {"type": ["string", "null"]},
            "assertion": {"type": "string"},
            "outcome": {"enum": ["failed", "error", "skipped"]},
            "message": {"type": "string"},
            "path": {"type": ["string", "null"]},
            "expected": {},
            "actual": {},
        },
        required=["assertion", "outcome", "message"],
    )
    output = {
        "description": f"The response: JSON or text. Beyond {OUTPUT_LIMIT} characters of text "
        "(of JSON text for a JSON response) it is cut to that many characters, given as a "
        "string, and output_truncated is true. For a multi-step test: [{step, output, "
        "metrics}, ...] for the steps that ran. Null when there was no response."
    }
    trial = _object(
        {
            "trial": {"type": "integer", "minimum": 1},
            "status": _STATUS,
            "duration_ms": {"type": "number", "minimum": 0},
            "failures": {"type": "array", "items": failure},
            "error": {"type": "string"},
            "reason": {"type": "string"},
            "output": output,
            "output_truncated": {"type": "boolean"},
            "metrics": metrics,
        },
        required=[
            "trial",
            "status",
            "duration_ms",
            "failures",
            "output",
            "output_truncated",
            "metrics",
        ],
    )
    test = _object(
        {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "suite": {"type": "string"},
            "file": {"type": "string"},
            "status": _STATUS,
            "score": _NUMBER_OR_NULL,
            "input": {
                "description": "What was sent to the agent; for a multi-step test "
                "[{step, input}, ...]."
            },
            "trials": {"type": "array", "items": trial, "minItems": 1},
            "pass_at_k": {"type": "boolean"},
            "pass_all_k": {"type": "boolean"},
            "flaky": {"type": "boolean"},
            "passes": {"type": "integer"},
            "pass_at_k_estimates": {"type": "object", "additionalProperties": {"type": "number"}},
            "line": {"type": ["integer", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "pass_threshold": {"enum": ["any", "all", "majority"]},
            "definition": {
                "type": ["string", "null"],
                "description": "Digest of what defined the test (input, expectations, "
                "settings); two runs' verdicts compare when it is the same.",
            },
        },
        required=[
            "id",
            "name",
            "suite",
            "file",
            "status",
            "score",
            "input",
            "trials",
            "pass_at_k",
            "pass_all_k",
            "flaky",
        ],
    )
    summary = _object(
        {
            "total": {"type": "integer"},
            "passed": {"type": "integer"},
            "failed": {"type": "integer"},
            "errored": {"type": "integer"},
            "skipped": {"type": "integer"},
            "pass_rate": {"type": "number", "minimum": 0, "maximum": 1},
            "duration_ms": {"type": "number", "minimum": 0},
            "judge_cost_usd": {
                "type": "number",
                "description": "The run's spend on the judge (only when a judge was asked).",
            },
            "judge_tokens": {"type": "integer"},
            "judge_calls": {"type": "integer", "description": "Judge requests sent."},
            "judge_cached": {"type": "integer", "description": "Replies from the judge cache."},
        },
        required=["total", "passed", "failed", "errored", "skipped", "pass_rate", "duration_ms"],
    )
    evals = _object(
        {
            "file": {"type": "string"},
            "score": {"type": "number"},
            "threshold": {"type": "number"},
            "passed": {"type": "boolean"},
            "cases": {"type": "array", "items": {"type": "object"}},
        },
        required=["file", "score", "threshold", "passed"],
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "assertly run report (run -o report.json)",
        **_object(
            {
                "run_id": {"type": "string"},
                "started_at": {"type": "string"},
                "summary": summary,
                "tests": {"type": "array", "items": test},
                "evals": {"type": "array", "items": evals},
                "problems": {"type": "array", "items": {"type": "string"}},
                "warnings": {"type": "array", "items": {"type": "string"}},
            },
            required=["run_id", "summary", "tests", "evals"],
        ),
    }
