"""The modules that hold the built-in assertions: adding a family is adding its line here.

The registry imports a family the first time a lookup needs one of its names (`HOMES`: a
suite of ``contains`` checks never imports the trajectory, span or model-graded families),
and every family when it needs them all (`Registry.names`, `suggest`, an unknown name), so
``import assertly`` never pays for them. Each module registers its assertions with
`assertly.engine._entries.expect_assertion` / `typed_assertion`; tests/engine/typed/
test_registry.py proves `HOMES` names exactly what each module registers.
"""

from __future__ import annotations

__all__ = ["FAMILIES", "HOMES"]

FAMILIES: tuple[str, ...] = (
    # The expect-dict dialect (engine/expect/).
    "assertly.engine.expect.arrays",
    "assertly.engine.expect.calls",
    "assertly.engine.expect.conditionals",
    "assertly.engine.expect.counts",
    "assertly.engine.expect.dates",
    "assertly.engine.expect.fields",
    "assertly.engine.expect.ranges",
    "assertly.engine.expect.schema",
    "assertly.engine.expect.tags",
    # The typed-list dialect (engine/typed/).
    "assertly.engine.typed.metrics",
    "assertly.engine.typed.performance",
    "assertly.engine.typed.strings",
    "assertly.engine.typed.structure",
    # The trajectory assertions, both dialects (engine/trajectory/).
    "assertly.engine.trajectory.expect",
    "assertly.engine.trajectory.typed",
    # The span assertions (engine/spans/).
    "assertly.engine.spans.typed",
    # The model-graded assertions (engine/graded/).
    "assertly.engine.graded.rubric",
    "assertly.engine.graded.similarity",
)

# The family module of each built-in name, by dialect.
_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "assertly.engine.expect.arrays": {
        "expect": (
            "all_match",
            "all_match_one_of",
            "all_match_pattern",
            "array_contains",
            "none_match_pattern",
            "sorted_asc",
            "sorted_desc",
        )
    },
    "assertly.engine.expect.calls": {"expect": ("agent_used_model", "no_overlap")},
    "assertly.engine.expect.conditionals": {
        "expect": ("if_has_history", "if_results", "if_sensitive_results", "one_of")
    },
    "assertly.engine.expect.counts": {"expect": ("results_count", "results_max", "results_min")},
    "assertly.engine.expect.dates": {
        "expect": ("all_dates_between", "all_dates_in_year", "dates_within_days")
    },
    "assertly.engine.expect.fields": {
        "expect": (
            "contains",
            "error_code",
            "field_contains",
            "field_equals",
            "has_field",
            "has_fields",
            "message_contains",
            "status",
            "summary_contains",
        )
    },
    "assertly.engine.expect.ranges": {"expect": ("all_in_range", "range_check")},
    "assertly.engine.expect.schema": {"expect": ("results_schema",)},
    "assertly.engine.expect.tags": {
        "expect": ("all_have_tags", "each_has_any_tag", "none_have_tags")
    },
    "assertly.engine.typed.metrics": {"typed": ("bleu", "levenshtein", "rouge-n")},
    "assertly.engine.typed.performance": {"typed": ("cost", "latency")},
    "assertly.engine.typed.strings": {
        "typed": (
            "contains",
            "contains-all",
            "contains-any",
            "equals",
            "icontains",
            "regex",
            "starts-with",
            "word-count",
        )
    },
    "assertly.engine.typed.structure": {"typed": ("contains-json", "is-json")},
    "assertly.engine.trajectory.expect": {
        "expect": ("max_tool_calls", "tool_sequence", "tools_called", "tools_not_called")
    },
    "assertly.engine.trajectory.typed": {
        "typed": ("tool-call-count", "tool-called", "tool-sequence")
    },
    "assertly.engine.spans.typed": {
        "typed": ("no-error-spans", "span-attribute", "span-count", "span-duration")
    },
    "assertly.engine.graded.rubric": {"expect": ("rubric",), "typed": ("llm-rubric",)},
    "assertly.engine.graded.similarity": {"typed": ("similar",)},
}

HOMES: dict[str, dict[str, str]] = {
    dialect: {name: module for module, names in _NAMES.items() for name in names.get(dialect, ())}
    for dialect in ("expect", "typed")
}
