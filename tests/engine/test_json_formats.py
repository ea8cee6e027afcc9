"""JSON Schema ``format`` is enforced in is-json, contains-json and results_schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest

import assertly
from assertly import Outcome
from assertly.engine._jsonschema import FORMATS

# One valid and one invalid value per checked format.
SAMPLES: dict[str, tuple[str, str]] = {
    "date": ("2026-01-31", "2026-13-45"),
    "date-time": ("2026-01-31T10:00:00Z", "2026-01-31 10:00"),
    "time": ("10:00:00Z", "25:00:00Z"),
    "duration": ("P3DT4H", "3 days"),
    "email": ("ada@example.com", "ada.example.com"),
    "idn-email": ("ada@例え.jp", "no-at-sign"),
    "hostname": ("api.example.com", "-bad-.example.com"),
    "idn-hostname": ("例え.jp", "-bad-.例え.jp"),
    "ipv4": ("192.0.2.1", "192.0.2.300"),
    "ipv6": ("2001:db8::1", "2001:db8:::1"),
    "uri": ("https://example.com/a?b=c", "not a uri"),
    "uri-reference": ("/a/b?c", "\\\\bad"),
    "iri": ("https://例え.jp/パス", "not an iri"),
    "iri-reference": ("/パス", "\\\\bad"),
    "uri-template": ("/users/{id}", "/users/{id"),
    "uuid": ("123e4567-e89b-12d3-a456-426614174000", "123e4567"),
    "json-pointer": ("/a/b", "a/b"),
    "relative-json-pointer": ("0/a", "/a"),
    "regex": ("^a+$", "(unclosed"),
}


def test_every_checked_format_is_what_the_library_checks() -> None:
    candidates = [*FORMATS, "datetime", "phone", "color", "binary"]
    accepted = []
    for name in candidates:
        try:
            jsonschema_rs.validator_for(
                {"format": name}, validate_formats=True, ignore_unknown_formats=False
            )
        except Exception:
            continue
        accepted.append(name)
    assert tuple(accepted) == FORMATS
    assert set(SAMPLES) == set(FORMATS)


def schema_of(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"v": {"type": "string", "format": name}}}


@pytest.mark.parametrize("name", FORMATS)
def test_is_json_enforces_each_format(name: str) -> None:
    good, bad = SAMPLES[name]
    expectation = assertly.compile([{"type": "is-json", "value": schema_of(name)}])
    assert expectation.check(json.dumps({"v": good})).outcome is Outcome.PASSED
    result = expectation.check(json.dumps({"v": bad}))
    assert result.outcome is Outcome.FAILED
    assert result.results[0].message == (
        f"Output JSON does not match the schema: v: {json.dumps(bad, ensure_ascii=False)} "
        f'is not a "{name}"'
    )


@pytest.mark.parametrize("name", FORMATS)
def test_contains_json_enforces_each_format(name: str) -> None:
    good, bad = SAMPLES[name]
    expectation = assertly.compile([{"type": "contains-json", "value": schema_of(name)}])
    prose = "Here you go: {} and that is all."
    assert expectation.check(prose.format(json.dumps({"v": good}))).passed
    result = expectation.check(prose.format(json.dumps({"v": bad})))
    assert result.outcome is Outcome.FAILED
    assert f'is not a "{name}"' in result.results[0].message


@pytest.mark.parametrize("name", FORMATS)
def test_results_schema_enforces_each_format(name: str) -> None:
    good, bad = SAMPLES[name]
    expectation = assertly.compile({"results_schema": {"v": {"type": "string", "format": name}}})
    assert expectation.check({"results": [{"v": good}]}).passed
    result = expectation.check({"results": [{"v": good}, {"v": bad}]})
    assert result.outcome is Outcome.FAILED
    assert result.results[0].message == f"Result 1: field 'v' '{bad}' is not a \"{name}\""
    assert result.results[0].path == "results[1].v"


def test_negation_inverts_a_format_failure_but_not_an_error() -> None:
    spec = {"type": "not-is-json", "value": schema_of("date")}
    assert assertly.check([spec], '{"v": "2026-13-45"}').outcome is Outcome.PASSED
    assert assertly.check([spec], '{"v": "2026-01-31"}').outcome is Outcome.FAILED


@pytest.mark.parametrize(
    ("expectation", "where", "suggestion"),
    [
        (
            [{"type": "is-json", "value": {"properties": {"a": {"format": "datetime"}}}}],
            "assertions[0].value.properties.a.format",
            "date-time",
        ),
        (
            [{"type": "contains-json", "value": {"items": [{"format": "e-mail"}]}}],
            "assertions[0].value.items[0].format",
            "email",
        ),
        (
            {"results_schema": {"created": {"type": "string", "format": "datetime"}}},
            "expect.results_schema.created.format",
            "date-time",
        ),
    ],
)
def test_an_unknown_format_is_a_configuration_error(
    expectation: Any, where: str, suggestion: str
) -> None:
    with pytest.raises(assertly.ConfigError) as info:
        assertly.compile(expectation)
    [problem] = info.value.problems
    assert str(problem).startswith(f"{where}: unknown format")
    assert f"(did you mean '{suggestion}'?)" in str(problem)


def test_a_property_named_format_is_not_a_format_keyword() -> None:
    schema = {"type": "object", "properties": {"format": {"type": "string"}}}
    assert assertly.check([{"type": "is-json", "value": schema}], '{"format": "pdf"}').passed


def test_format_on_a_non_string_field_is_an_error() -> None:
    with pytest.raises(assertly.ConfigError, match="format applies to strings, not number"):
        assertly.compile({"results_schema": {"n": {"type": "number", "format": "date"}}})


def test_a_remote_ref_is_never_fetched() -> None:
    schema = {"$ref": "https://example.invalid/schema.json"}
    with pytest.raises(assertly.ConfigError, match="invalid JSON Schema"):
        assertly.compile([{"type": "is-json", "value": schema}])
