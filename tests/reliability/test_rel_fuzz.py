"""Promise 6: fuzzing. Hypothesis strategies over the surfaces that take untrusted input.

* YAML and JSON text (test files, expectations): parsing raises `ConfigError` or nothing;
* test files shaped like the real thing with random values: loading reports problems and never
  raises;
* expectations built from every assertion name with random parameters: ``compile`` raises
  `ConfigError` or nothing, and what compiles checks random responses without raising, with a
  well-formed, serialisable result;
* text full of brackets and fences: JSON extraction never raises, and what it extracts is an
  object for the expect dialect.

``ASSERTLY_PROPERTY_EXAMPLES`` scales every property (``make fuzz`` sets 20,000); the default
keeps this file to a few seconds in ``make test``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import ConfigError, Outcome
from assertly._json import to_json_bytes
from assertly.engine import REGISTRY
from assertly.engine._context import parse_now
from assertly.engine._response import NOT_JSON, Response
from assertly.loading import load_paths
from assertly.loading._source import parse_yaml, read_source

NOW = parse_now("2026-01-20T00:00:00Z")
EXAMPLES = max(10, int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150")) // 2)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

# --- values ----------------------------------------------------------------------------------

KEYS = st.sampled_from(
    ["status", "results", "file", "metadata", "tags", "created", "relevance", "a", "", "é", "$"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["success", "journal/a.md", "2026-01-15", "^(a+)+$", "[*]", "work", ""]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(KEYS | st.text(max_size=8), children, max_size=5),
    ),
    max_leaves=25,
)
PATHS = st.sampled_from(
    [
        "results[*].file",
        "results[0]",
        "results[-1].metadata.tags[*]",
        "a.b.c",
        "$.status",
        'meta["x.y"]',
        "[*]",
        "",
        "results[",
        "results[*][*]",
        "..",
        "a[99999999999999999999]",
    ]
) | st.text(max_size=20)
PARAMETERS = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {},
        optional={
            "path": PATHS,
            "value": JSON_VALUES,
            "values": st.lists(JSON_VALUES, max_size=3),
            "regex": st.sampled_from(["^j", "(a+)+$", "(", "(?<=a)b", r"\1", "[[:alpha:]]"]),
            "min": SCALARS,
            "max": SCALARS,
            "start": SCALARS,
            "end": SCALARS,
            "days": SCALARS,
            "year": SCALARS,
            "with": st.text(max_size=5),
            "has_field": PATHS,
            "pattern": st.text(max_size=10),
        },
    ),
)

EXPECT_NAMES = REGISTRY.names("expect")
TYPED_NAMES = REGISTRY.names("typed")


@st.composite
def expect_dicts(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(EXPECT_NAMES) | st.text(max_size=8), max_size=4))
    return {name: draw(PARAMETERS) for name in names}


@st.composite
def typed_lists(draw: st.DrawFn) -> list[Any]:
    items = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        name = draw(st.sampled_from(TYPED_NAMES) | st.text(max_size=8))
        item: dict[str, Any] = {"type": draw(st.sampled_from(["", "not-"])) + name}
        item.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "value": JSON_VALUES,
                        "threshold": SCALARS,
                        "weight": SCALARS,
                        "metric": st.text(max_size=5),
                        "transform": st.sampled_from(["json_path:$.status", "json_path:$[?", "x"])
                        | st.text(max_size=10),
                        "config": JSON_VALUES,
                    },
                )
            )
        )
        items.append(item)
    return items


RESPONSES = st.one_of(
    JSON_VALUES,
    st.text(max_size=200),
    st.binary(max_size=200),
    JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True)),
    JSON_VALUES.map(lambda value: f"Here you go:\n```json\n{json.dumps(value)}\n```\nDone."),
)


def _well_formed(result: assertly.CheckResult) -> None:
    assert result.outcome in set(Outcome)
    assert math.isfinite(result.score) and 0.0 <= result.score <= 1.0
    for item in result.results:
        assert item.outcome in set(Outcome)
        assert 0.0 <= item.score <= 1.0
    json.loads(to_json_bytes(result.to_dict()))
    if result.passed:
        assert all(item.outcome is not Outcome.ERROR for item in result.results)


@FUZZ
@given(spec=expect_dicts() | typed_lists(), responses=st.lists(RESPONSES, max_size=3))
def test_compile_raises_only_config_errors_and_check_never_raises(
    spec: Any, responses: list[Any]
) -> None:
    try:
        expectation = assertly.compile(spec)
    except ConfigError as error:
        assert error.problems and all(str(problem) for problem in error.problems)
        return
    for response in responses:
        context = {"cost_usd": 0.1, "latency_ms": 5}
        _well_formed(expectation.check(response, context=context, now=NOW))


# --- text: YAML, JSON, extraction -----------------------------------------------------------

YAML_ALPHABET = st.sampled_from([*"[]{}:-?&*!|>'\"#,\n \t%@`abc01.=~<\\", "\ufeff", "é"])
YAML_TEXT = st.one_of(
    st.text(alphabet=YAML_ALPHABET, max_size=300),
    st.text(max_size=200),
    JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True)),
    st.builds(lambda depth, tail: "[" * depth + tail, st.integers(0, 400), st.text(YAML_ALPHABET)),
    st.builds(lambda depth: "- " * depth + "x", st.integers(0, 400)),
    st.builds(
        lambda tag, value: f"a: !!{tag} {value}\n",
        st.sampled_from(
            [
                "int",
                "float",
                "bool",
                "timestamp",
                "binary",
                "set",
                "omap",
                "str",
                "python/object/apply:os.system",
                "merge",
                "null",
                "pairs",
            ]
        ),
        st.text(YAML_ALPHABET, max_size=20),
    ),
)


@FUZZ
@given(text=YAML_TEXT)
def test_yaml_parsing_raises_only_config_errors(text: str) -> None:
    try:
        data, positions = parse_yaml(text, "fuzz.yaml")
    except ConfigError as error:
        assert error.problems[0].location.startswith("fuzz.yaml")
        return
    assert isinstance(positions, dict)
    to_json_bytes(data) if not isinstance(data, set) else None


@FUZZ
@given(
    raw=st.one_of(st.binary(max_size=300), YAML_TEXT.map(str.encode)),
    suffix=st.sampled_from([".tests.yaml", ".tests.json", ".yaml"]),
)
def test_reading_any_bytes_as_a_test_file_raises_only_config_errors(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes, suffix: str
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / f"f{suffix}"
    path.write_bytes(raw)
    try:
        read_source(path)
    except ConfigError as error:
        assert str(error.problems[0]).startswith(str(path))
    result = load_paths([path])  # the loader never raises: problems are listed
    for problem in result.problems:
        assert str(problem)


@st.composite
def agent_test_files(draw: st.DrawFn) -> Any:
    tests = draw(
        st.lists(
            st.fixed_dictionaries(
                {"id": st.text(max_size=6) | SCALARS},
                optional={
                    "input": JSON_VALUES,
                    "expect": expect_dicts() | JSON_VALUES,
                    "assertions": typed_lists() | JSON_VALUES,
                    "threshold": SCALARS,
                    "trials": SCALARS,
                    "timeout_s": SCALARS,
                    "tags": JSON_VALUES,
                    "skip_if": SCALARS,
                    "multi_step": st.lists(
                        st.fixed_dictionaries(
                            {"step": SCALARS},
                            optional={
                                "input": JSON_VALUES,
                                "store": SCALARS,
                                "expect": expect_dicts(),
                            },
                        ),
                        max_size=2,
                    )
                    | JSON_VALUES,
                },
            ),
            max_size=4,
        )
    )
    suites = draw(
        st.dictionaries(
            st.text(max_size=5),
            st.fixed_dictionaries({"tests": st.just(tests) | JSON_VALUES}),
            max_size=2,
        )
    )
    return draw(
        st.fixed_dictionaries(
            {"agent": st.text(max_size=5) | SCALARS, "test_suites": st.just(suites) | JSON_VALUES}
        )
        | st.fixed_dictionaries(
            {
                "eval": st.fixed_dictionaries(
                    {"cases": st.lists(JSON_VALUES, max_size=3)}, optional={"threshold": SCALARS}
                )
            },
            optional={"blocks": JSON_VALUES},
        )
    )


@FUZZ
@given(data=agent_test_files(), as_json=st.booleans())
def test_loading_test_files_of_any_shape_never_raises(
    tmp_path_factory: pytest.TempPathFactory, data: Any, as_json: bool
) -> None:
    directory = tmp_path_factory.mktemp("files")
    if as_json:
        path = directory / "f.tests.json"
        path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8")
    else:
        import yaml

        path = directory / "f.tests.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    result = load_paths([path])
    for problem in result.problems:
        assert str(problem)
    for test in result.tests:
        assert test.id and test.file == str(path)


FENCE_TEXT = st.text(alphabet=st.sampled_from(list('{}[]"\\:,`\n ajson0')), max_size=400)


@FUZZ
@given(text=FENCE_TEXT | st.text(max_size=300))
def test_json_extraction_from_prose_never_raises(text: str) -> None:
    response = Response(text)
    found = response.json
    assert found is NOT_JSON or response.whole_json is not NOT_JSON or isinstance(found, dict)
    if found is not NOT_JSON:
        to_json_bytes(found)


_DATASET_LINES = st.lists(
    st.one_of(
        st.binary(max_size=80),
        st.dictionaries(
            st.sampled_from(["id", "input", "output", "tags", "model", "cost_usd", "other"]),
            st.one_of(st.none(), st.integers(), st.text(max_size=10), st.lists(st.text())),
            max_size=4,
        ).map(lambda line: json.dumps(line).encode()),
    ),
    max_size=6,
)


@FUZZ
@given(lines=_DATASET_LINES)
def test_any_dataset_line_is_a_case_or_a_case_with_a_problem(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]
) -> None:
    directory = tmp_path_factory.mktemp("dataset")
    (directory / "cases.jsonl").write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines))
    suite = {"dataset": "cases.jsonl", "assertions": [{"type": "contains", "value": "x"}]}
    (directory / "d.tests.json").write_text(json.dumps({"agent": "a", "test_suites": {"s": suite}}))
    result = load_paths([directory / "d.tests.json"], project_dir=directory)
    if all(line.replace(b"\n", b" ").isspace() or not line for line in lines):
        assert "has no lines" in str(result.file_problems[0])  # never a silent pass
        return
    assert not result.file_problems
    [dataset] = result.datasets
    cases = list(dataset.cases())  # never raises
    assert len(cases) == dataset.count()
    for case in cases:
        assert case.line is not None and case.key.endswith(f":{case.line}")
        if not case.problems:
            [step] = case.steps
            step.checks[0].check(step.recorded[0] if step.recorded else "")


def test_the_fuzz_surfaces_are_wired(tmp_path: Path) -> None:
    """A smoke check that the strategies above reach real code paths (not only errors)."""
    assert len(EXPECT_NAMES) >= 30 and len(TYPED_NAMES) >= 15
    assert assertly.compile({"status": "ok"}).check('{"status": "ok"}').passed


# --- what reports write: strict JSON, XML 1.0, and no secret in any spelling -----------------

ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
REPORT_VALUES = st.recursive(
    st.one_of(SCALARS, ANY_TEXT, st.integers(min_value=2**64, max_value=2**80)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=15,
)


@FUZZ
@given(value=REPORT_VALUES)
def test_report_json_is_strict_json_for_any_value(value: Any) -> None:
    import orjson

    written = to_json_bytes(value, indent=True)
    written.decode("utf-8")  # strict UTF-8: no raw surrogate
    orjson.loads(written)  # a strict reader: no escaped lone surrogate either
    json.loads(written)  # (orjson reads integers beyond 64 bits as floats; the stdlib exactly)


@FUZZ
@given(text=ANY_TEXT)
def test_junit_text_is_xml_1_0_for_any_text(text: str) -> None:
    from xml.etree import ElementTree as ET

    from assertly.reports._junit import _clean

    element = ET.Element("testcase", name=_clean(text))
    element.text = _clean(text)
    ET.fromstring(ET.tostring(element, encoding="utf-8"))  # expat refuses what XML forbids


def _spelled(secret: str, choices: list[int]) -> str:
    short = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\n": "\\n", "\t": "\\t"}
    parts = []
    for char, choice in zip(secret, choices, strict=False):
        units = char.encode("utf-16-be")
        escaped = "".join(
            f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
        )
        parts.append(
            [char, short.get(char, char), escaped, escaped.upper().replace("\\U", "\\u")][choice]
        )
    return "".join(parts)


@FUZZ
@given(
    secret=st.text(min_size=4, max_size=12).filter(lambda s: s.strip() and "\x00" not in s),
    choices=st.lists(st.integers(0, 3), min_size=12, max_size=12),
    before=st.text(max_size=10),
    after=st.text(max_size=10),
)
def test_a_secret_is_redacted_in_any_spelling(
    secret: str, choices: list[int], before: str, after: str
) -> None:
    from assertly._secrets import redact_text, redact_value

    spelled = _spelled(secret, choices)
    cleaned = redact_text(before + spelled + after, {secret})
    assert "[REDACTED]" in cleaned
    # (The marker itself may hold a "secret" such as "[RED": it is not one that leaked.)
    assert secret not in cleaned.replace("[REDACTED]", "\x00")
    [kept] = redact_value({"k": [before + secret + after]}, {secret})["k"]
    assert secret not in kept.replace("[REDACTED]", "\x00")
