"""Test files, expectation files and configs are read with the YAML 1.2 core schema, and only
JSON values are built (docs/assertions.md, "YAML")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import assertly
from assertly.cli import main
from assertly.loading._source import parse_yaml


def value_of(scalar: str) -> Any:
    data, _ = parse_yaml(f"key: {scalar}\n", "t.yaml")
    return data["key"]


def problem_of(text: str) -> str:
    with pytest.raises(assertly.ConfigError) as info:
        parse_yaml(text, "t.yaml")
    [problem] = info.value.problems
    return str(problem)


@pytest.mark.parametrize(
    "scalar",
    # YAML 1.1 booleans, sexagesimal numbers, timestamps, 1.1 number spellings.
    [
        *("yes", "Yes", "YES", "no", "No", "on", "On", "ON", "off", "Off", "y", "n", "Y", "N"),
        *("12:30", "1:20:30", "2026-01-01", "2026-01-01T10:00:00Z", "2026-01-01 10:00:00"),
        *("1_000", "0b101", "+0x1F", "0O17", "1,000", "tRue", "nil", "None", "NaN", "inf"),
    ],
)
def test_yaml_1_1_only_forms_stay_strings(scalar: str) -> None:
    assert value_of(scalar) == scalar


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("FALSE", False),
        ("null", None),
        ("Null", None),
        ("~", None),
        ("", None),
        ("42", 42),
        ("-7", -7),
        ("+3", 3),
        ("017", 17),  # decimal in YAML 1.2 (octal 15 in 1.1)
        ("0o17", 15),
        ("0x1F", 31),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("-2.5E-1", -0.25),
        ("12345678901234567890123", 12345678901234567890123),
        ("'yes'", "yes"),
        ('"2026-01-01"', "2026-01-01"),
        ("!!str 42", "42"),
        ("!!str true", "true"),
    ],
)
def test_yaml_1_2_core_forms(scalar: str, expected: Any) -> None:
    got = value_of(scalar)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("a: !!binary aGVsbG8=\n", "t.yaml:1:4", "tag '!!binary'"),
        ("a: !!set {x, y}\n", "t.yaml:1:4", "tag '!!set'"),
        ("a: !!omap [{x: 1}]\n", "t.yaml:1:4", "tag '!!omap'"),
        ("a: !!pairs [{x: 1}]\n", "t.yaml:1:4", "tag '!!pairs'"),
        ("a: !!timestamp 2026-01-01\n", "t.yaml:1:4", "tag '!!timestamp'"),
        ("a: !!python/name:os.system\n", "t.yaml:1:4", "tag '!!python/name:os.system'"),
        ("a: !custom thing\n", "t.yaml:1:4", "tag '!custom'"),
        ("a: .nan\n", "t.yaml:1:4", ".nan is not a JSON value"),
        ("a: -.inf\n", "t.yaml:1:4", "-.inf is not a JSON value"),
        ("a: !!float .NaN\n", "t.yaml:1:4", ".NaN is not a JSON value"),
        # A number that overflows to infinity, as JSON's readers refuse it (it was `inf`).
        ("a: 1e400\n", "t.yaml:1:4", "1e400 is out of range for a number"),
        ("a: [-2.5E+999]\n", "t.yaml:1:5", "-2.5E+999 is out of range for a number"),
        ("a: !!bool yes\n", "t.yaml:1:4", "cannot read 'yes' as bool (write true or false)"),
        ("a: !!int abc\n", "t.yaml:1:4", "cannot read 'abc' as int"),
    ],
)
def test_tags_that_build_non_json_values_are_refused(text: str, where: str, message: str) -> None:
    problem = problem_of(text)
    assert problem.startswith(where), problem
    assert message in problem
    if "tag '" in message:
        assert "only JSON values are allowed" in problem


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("1: a\n", "'1' (read as int)"),
        ("true: a\n", "'true' (read as bool)"),
        ("null: a\n", "'null' (read as null)"),
        ("? [a, b]\n: c\n", "'a list or mapping'"),
    ],
)
def test_mapping_keys_must_be_strings(text: str, written: str) -> None:
    assert problem_of(text) == (
        f"t.yaml:1:{1 if not text.startswith('?') else 3}: mapping keys must be strings, "
        f"got {written}; quote the key"
    )


def test_yes_and_on_are_string_keys_and_merge_keys_still_merge() -> None:
    data, _ = parse_yaml("defaults: &d {a: 1}\non: push\nyes: 1\nmine:\n  <<: *d\n  b: 2\n", "t")
    assert data == {"defaults": {"a": 1}, "on": "push", "yes": 1, "mine": {"a": 1, "b": 2}}


def check(tmp_path: Path, expect: str, response: Any) -> int:
    (tmp_path / "expect.yaml").write_text(expect)
    (tmp_path / "response.json").write_text(json.dumps(response))
    result = CliRunner().invoke(
        main,
        [
            "check",
            "--expect",
            str(tmp_path / "expect.yaml"),
            "--response",
            str(tmp_path / "response.json"),
        ],
    )
    return result.exit_code


def test_check_compares_status_yes_with_the_string(tmp_path: Path) -> None:
    assert check(tmp_path, "status: yes\n", {"status": "yes"}) == 0
    assert check(tmp_path, "status: yes\n", {"status": True}) == 1
    assert check(tmp_path, "field_equals: {time: 12:30}\n", {"time": "12:30"}) == 0
    assert check(tmp_path, "field_equals: {time: 12:30}\n", {"time": 750}) == 1


def test_a_test_file_reads_on_as_a_string(tmp_path: Path) -> None:
    (tmp_path / "switch.tests.yaml").write_text(
        "agent: bot\n"
        "test_suites:\n"
        "  s:\n"
        "    tests:\n"
        "      - id: t\n"
        "        input: {q: 1}\n"
        "        expect: {status: on, field_equals: {date: 2026-01-01}}\n"
    )
    (tmp_path / "fixtures.jsonl").write_text(
        json.dumps({"id": "t", "output": {"status": "on", "date": "2026-01-01"}}) + "\n"
    )
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(tmp_path / "switch.tests.yaml"),
            "--target",
            f"fixtures:{tmp_path / 'fixtures.jsonl'}",
            "--store",
            str(tmp_path / "runs.db"),
            "--plain",
        ],
    )
    assert result.exit_code == 0, result.output


def test_a_typed_list_reads_yes_and_times_as_strings(tmp_path: Path) -> None:
    typed = "- {type: equals, value: yes}\n- {type: contains, value: 12:30}\n"
    assert check(tmp_path, typed, "yes") == 1  # "yes" holds no 12:30
    expectation = assertly.compile(parse_yaml(typed, "t.yaml")[0])
    assert expectation.check("yes").results[0].passed  # the string "yes", not true
    assert expectation.check("yes at 12:30").results[1].passed
    assert not expectation.check("true").results[0].passed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a:\n  b: {x: 1\n  c: 2\n",
            "t.yaml:3:4: invalid YAML: a {...} mapping is not closed, or an item in it lacks a "
            "comma (it starts on line 2)",
        ),
        (
            "a: [1, 2\nb: 3\n",
            "t.yaml:2:2: invalid YAML: a [...] list is not closed, or an item in it lacks a comma "
            "(it starts on line 1)",
        ),
        ("a: b: c\n", "t.yaml:1:5: invalid YAML: a ':' that cannot start a key here"),
        (
            'a: "open\n',
            "t.yaml:2:1: invalid YAML: a quoted string is not closed (it starts on line 1)",
        ),
        ("a: 1\n\tb: 2\n", "t.yaml:2:1: invalid YAML: a tab character: YAML indents with spaces"),
        (
            "a:\n  b: 1\n c: 2\n",
            "t.yaml:3:2: invalid YAML: this line does not line up with the lines above it",
        ),
    ],
)
def test_yaml_syntax_errors_read_in_plain_words(text: str, expected: str) -> None:
    problem = problem_of(text)
    assert expected in problem, problem
    assert "did not find expected" not in problem
