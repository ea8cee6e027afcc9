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
            "simulator_cost_usd": {
                "type": "number",
                "description": "What the simulated user of a conversation cost (apart from the "
                "agent's and the judge's; 0 for cached replies). Only when it was asked.",
            },
            "simulator_tokens": {"type": "integer", "description": "The simulated user's tokens."},
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
            "cached": {
                "const": True,
                "description": "Answered from the response cache (--cache), not called.",
            },
            "trace": {
                "type": "object",
                "description": "The trial's OpenTelemetry spans, summed over its calls (only "
                "when a call asked for spans; docs/traces.md): spans, tools (the execute_tool "
                "spans' names in order), model_calls, error_spans, trace_ids; dropped (spans "
                "over the per-call limit) and missing (why a call has none) when they apply.",
                "properties": {
                    "spans": {"type": "integer", "minimum": 0},
                    "tools": {"type": "array", "items": {"type": "string"}},
                    "model_calls": {"type": "integer", "minimum": 0},
                    "error_spans": {"type": "integer", "minimum": 0},
                    "trace_ids": {"type": "array", "items": {"type": "string"}},
                    "dropped": {"type": "integer", "minimum": 1},
                    "missing": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["spans", "tools", "model_calls", "error_spans", "trace_ids"],
            },
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
            "target": {
                "type": "string",
                "description": "A matrix run's target label this entry ran against (only in "
                "a matrix run; the key then ends in [label]).",
            },
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
    # The counts of tests by status and the pass rate: of the run, and of each target.
    counts = {
        "total": {"type": "integer"},
        "passed": {"type": "integer"},
        "failed": {"type": "integer"},
        "errored": {"type": "integer"},
        "skipped": {"type": "integer"},
        "pass_rate": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Passed over judged (not skipped); 0 when none was judged.",
        },
    }
    by_target = _object(
        {
            **counts,
            "pass_rate_ci95": {
                "type": "array",
                "items": {"type": "number", "minimum": 0, "maximum": 1},
                "minItems": 2,
                "maxItems": 2,
                "description": "Wilson score 95% interval of the pass rate ([0, 1] when "
                "none was judged).",
            },
            "cost_usd": {
                **_NUMBER_OR_NULL,
                "description": "Sum of the cost the target reported for its calls (null when "
                "no call reported one); the judge's spend is not included.",
            },
            "latency_p50_ms": {
                **_NUMBER_OR_NULL,
                "description": "Median latency of the target's calls (null when none measured).",
            },
            "calls": {"type": "integer"},
            "costed_calls": {"type": "integer", "description": "Calls that reported a cost."},
        },
        required=[
            *counts,
            "pass_rate_ci95",
            "cost_usd",
            "latency_p50_ms",
        ],
    )
    comparison = _object(
        {
            "base": {"type": "string"},
            "candidate": {"type": "string"},
            "paired": {
                "type": "integer",
                "description": "Tests judged (not skipped) under both targets.",
            },
            "regressed": {
                "type": "integer",
                "description": "Paired tests passed under the base, failed or error under "
                "the candidate.",
            },
            "fixed": {"type": "integer", "description": "The reverse of regressed."},
            "both_passed": {"type": "integer"},
            "both_not_passed": {"type": "integer"},
            "mcnemar_p": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Two-sided exact McNemar p-value over the paired tests.",
            },
            "p_worse": {
                "type": "number",
                "description": "One-sided exact McNemar p-value that the candidate is worse.",
            },
            "p_better": {
                "type": "number",
                "description": "One-sided exact McNemar p-value that the candidate is better.",
            },
        },
        required=["base", "candidate", "regressed", "fixed", "mcnemar_p"],
    )
    summary = _object(
        {
            **counts,
            "duration_ms": {"type": "number", "minimum": 0},
            "judge_cost_usd": {
                "type": "number",
                "description": "The run's spend on the judge (only when a judge was asked).",
            },
            "judge_tokens": {"type": "integer"},
            "judge_calls": {"type": "integer", "description": "Judge requests sent."},
            "judge_cached": {"type": "integer", "description": "Replies from the judge cache."},
            "simulator_cost_usd": {
                "type": "number",
                "description": "The run's spend on the simulated user of conversation tests "
                "(only when one was asked; apart from the judge's).",
            },
            "simulator_tokens": {"type": "integer"},
            "simulator_calls": {"type": "integer", "description": "Simulator requests sent."},
            "simulator_cached": {
                "type": "integer",
                "description": "Simulator replies from the judge cache.",
            },
            "cached": {
                "type": "integer",
                "description": "Trials answered from the response cache (only when any).",
            },
            "budget_stopped": {
                "type": "string",
                "description": "Why the run budget (--max-cost-usd) stopped new calls.",
            },
            "by_target": {
                "type": "object",
                "additionalProperties": by_target,
                "description": "A matrix run's totals per target label (only in a matrix run).",
            },
        },
        required=[*counts, "duration_ms"],
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
                "targets": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "A matrix run's target labels, the base of comparisons "
                    "first (only in a matrix run).",
                },
                "summary": summary,
                "comparison": {
                    "type": "array",
                    "items": comparison,
                    "description": "A matrix run's targets after the first, each against "
                    "the first (only in a matrix run).",
                },
                "tests": {"type": "array", "items": test},
                "evals": {"type": "array", "items": evals},
                "problems": {"type": "array", "items": {"type": "string"}},
                "warnings": {"type": "array", "items": {"type": "string"}},
            },
            required=["run_id", "summary", "tests", "evals"],
        ),
    }
