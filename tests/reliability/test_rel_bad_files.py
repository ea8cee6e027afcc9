"""Promise 1: bad test files and expectations never cost a traceback or the other files.

Every kind of bad input goes through ``assertly validate`` (exit 2, one clear message naming
the file, and line and column where a parser knows them) and through ``assertly run`` next to
a good file (the bad file is reported and skipped, the good one still runs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from reliability_support import assert_user_error, invoke, measure, write_tests

GOOD = {"id": "good", "input": {"status": "success"}, "expect": {"status": "success"}}
ECHO = f'cmd:{sys.executable} -c "import sys; sys.stdout.write(sys.stdin.read())"'

LAUGHS = (
    "".join(
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10) if n else ', '.join(['x'] * 10)}]\n"
        for n in range(9)
    )
    + "agent: bot\ntest_suites: {s: {tests: [{id: t, input: *a8, expect: {status: ok}}]}}\n"
)

# name, content, where (after the file name), message fragment
BAD_FILES: list[tuple[str, str | bytes, str, str]] = [
    (
        "malformed.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n      - {id: a, expect: {status: ok}\n",
        ":6:1",
        "invalid YAML",
    ),
    (
        "malformed.tests.json",
        '{"agent": "bot",\n "test_suites": {"s": {"tests": [}}}',
        ":2:34",
        "invalid JSON",
    ),
    ("wrong_types.tests.yaml", "agent: 5\ntest_suites: {}\n", ":1:1", "valid string"),
    (
        "unknown_assertion.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n      - {id: a, expect: {statuz: ok}}\n",
        ":5:26",
        "unknown assertion 'statuz' (did you mean 'status'?)",
    ),
    (
        "duplicate_ids.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n      - {id: a, expect: {status: ok}}\n"
        "      - {id: a, expect: {status: ok}}\n",
        ":6:10",
        "duplicate test id 'a'",
    ),
    (
        "duplicate_keys.tests.yaml",
        "agent: bot\nagent: bot\ntest_suites: {}\n",
        ":2:1",
        "duplicate key 'agent'",
    ),
    (
        "bad_regex.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: a, assertions: [{type: regex, value: '(unclosed'}]}\n",
        ":5:",
        "invalid regular expression '(unclosed'",
    ),
    (
        "bad_jsonpath.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: a, assertions: [{type: equals, value: x, transform: 'json_path:$[?'}]}\n",
        ":5:",
        "invalid JSONPath '$[?'",
    ),
    (
        "bad_schema.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: a, assertions: [{type: is-json, value: {type: 5}}]}\n",
        ":5:",
        "invalid JSON Schema",
    ),
    (
        "not_utf8.tests.yaml",
        b"agent: bot\ntest_suites:\n  s:\n    tests:\n      - {id: a, expect: {status: \xff}}\n",
        ":5:34",
        "not UTF-8 (byte 0xff)",
    ),
    ("empty.tests.yaml", "", "", "file is empty"),
    ("blank.tests.yaml", "  \n\n\t\n", "", "file is empty"),
    (
        "python_tag.tests.yaml",
        'agent: !!python/object/apply:os.system ["touch pwned"]\ntest_suites: {}\n',
        ":1:8",
        "could not determine a constructor",
    ),
    ("deep_flow.tests.yaml", "[" * 100_000, ":1:201", "nesting deeper than 200 levels"),
    ("deep_block.tests.yaml", "- " * 100_000 + "x\n", ":1:401", "nesting deeper than 200"),
    ("deep.tests.json", '{"a":' * 500 + "1" + "}" * 500, ":1:1001", "nesting deeper than 200"),
    ("deeper.tests.json", "[" * 5000 + "]" * 5000, ":1:1026", "depth limit exceeded"),
    ("laughs.tests.yaml", LAUGHS, ":6:", "aliases expand to more than 1,000,000 nodes"),
    # YAML 1.2: a date is a string (date assertions parse their own), but NaN is no JSON value.
    ("nan.tests.yaml", "agent: bot\ncreated: .nan\n", ":2:10", "is not a JSON value"),
    ("bad_int.tests.yaml", "agent: !!int abc\n", ":1:8", "cannot read 'abc' as int"),
    ("two_docs.tests.yaml", "agent: a\n---\nagent: b\n", ":2:1", "expected one YAML document"),
    ("not_a_mapping.tests.yaml", "- just\n- a list\n", "", "expected a mapping"),
]


@pytest.mark.parametrize(
    ("name", "content", "where", "message"), BAD_FILES, ids=[case[0] for case in BAD_FILES]
)
def test_validate_reports_each_bad_file_in_one_message(
    project: Path, name: str, content: str | bytes, where: str, message: str
) -> None:
    path = project / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    result = invoke("validate", name)
    assert_user_error(result, message)
    problems = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(problems) == 1, problems
    assert problems[-1].startswith(f"{name}{where}"), problems
    assert not (project / "pwned").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (case[0], case[1])
        for case in BAD_FILES
        if not case[0].startswith(("unknown", "dup", "bad_"))
    ],
    ids=[case[0] for case in BAD_FILES if not case[0].startswith(("unknown", "dup", "bad_"))],
)
def test_run_reports_a_bad_file_and_runs_the_others(
    project: Path, name: str, content: str | bytes
) -> None:
    path = project / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    write_tests(project / "good.tests.yaml", [GOOD])
    result = invoke("run", name, "good.tests.yaml", "--target", ECHO, "--plain", "-o", "r.json")
    assert result.exception is None, repr(result.exception)
    assert "Traceback" not in result.output
    assert result.code == 1, result.output  # the problem counts; nothing crashed
    assert f"PROBLEM {name}" in result.stdout
    report = json.loads((project / "r.json").read_text())
    assert [(t["id"], t["status"]) for t in report["tests"]] == [("good", "passed")]


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{status: [ok", "invalid YAML"),
        ('{"status": }', "invalid JSON"),
        ("{statuz: ok}", "unknown assertion 'statuz'"),
        ("[{type: regex, value: '(a'}]", "invalid regular expression"),
        ("!!python/object/apply:os.system ['touch pwned']", "could not determine a constructor"),
        ("[" * 50_000, "nesting deeper than 200 levels"),
        (LAUGHS, "aliases expand to more than"),
        (b"status: \xff\xfe", "cannot read expectation"),
        ("", "the expectation file is empty"),
    ],
    ids=[
        "yaml",
        "json",
        "unknown",
        "regex",
        "python-tag",
        "deep",
        "laughs",
        "not-utf8",
        "empty",
    ],
)
def test_check_reports_a_bad_expect_file(project: Path, expect: str | bytes, message: str) -> None:
    path = project / (
        "expect.json"
        if expect.startswith(b'{"' if isinstance(expect, bytes) else '{"')
        else "expect.yaml"
    )
    if isinstance(expect, bytes):
        path.write_bytes(expect)
    else:
        path.write_text(expect, encoding="utf-8")
    (project / "response.json").write_text('{"status": "ok"}', encoding="utf-8")
    result = invoke("check", "--expect", path.name, "--response", "response.json")
    assert_user_error(result, message)
    assert not (project / "pwned").exists()


def test_a_50_mb_test_file_is_refused_at_once_in_bounded_memory(project: Path) -> None:
    """Generated here: 50 MB of tiny tests (which would take minutes to load)."""
    line = '      - {id: t%d, input: {q: "hello"}, expect: {status: success, results_max: 5}}\n'
    chunk = "".join(line % i for i in range(10_000)).encode()
    with (project / "huge.tests.yaml").open("wb") as handle:
        handle.write(b"agent: bot\ntest_suites:\n  s:\n    tests:\n")
        while handle.tell() < 50 * 1024 * 1024:
            handle.write(chunk)
    write_tests(project / "good.tests.yaml", [GOOD])
    validated = measure("validate", "huge.tests.yaml", cwd=project)
    assert_user_error(validated, "huge.tests.yaml: file is", "limited to 8 MiB")
    assert validated.seconds < 10, validated.seconds
    assert validated.rss_mb < 500, validated.rss_mb
    ran = measure(
        "run", "huge.tests.yaml", "good.tests.yaml", "--target", ECHO, "--plain", cwd=project
    )
    assert ran.code == 1, ran.output
    assert "PROBLEM huge.tests.yaml" in ran.stdout and "1 passed" in ran.stdout
    assert ran.rss_mb < 500, ran.rss_mb


def test_a_50_mb_expect_file_and_a_response_over_64_mb_are_refused(project: Path) -> None:
    with (project / "expect.yaml").open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: the size alone refuses it
    (project / "response.json").write_text("{}", encoding="utf-8")
    result = invoke("check", "--expect", "expect.yaml", "--response", "response.json")
    assert_user_error(result, "the expectation file is 52,428,800 bytes; the limit is 8 MiB")
    with (project / "big.txt").open("wb") as handle:
        handle.truncate(65 * 1024 * 1024)
    result = invoke("check", "--expect", '{"status": "ok"}', "--response", "big.txt")
    assert_user_error(result, "the response is larger than 64 MiB")


def test_a_file_with_many_problems_lists_each_once(project: Path) -> None:
    (project / "many.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: a, expect: {statuz: ok}}\n"
        "      - {id: b, assertions: [{type: regex, value: '('}]}\n"
        "      - {id: c, expect: {results_min: -1}}\n"
        "      - {id: d, assertions: [{type: nope}]}\n"
        "      - {id: e, input: 1}\n",
        encoding="utf-8",
    )
    result = invoke("validate", "many.tests.yaml")
    assert_user_error(result, "5 tests, 0 eval cases, 5 problems")
    problems = result.stderr.splitlines()
    assert len(problems) == 5, problems
    for test_id, line in zip("abcde", problems, strict=True):
        assert line.startswith(f"many.tests.yaml:{5 + 'abcde'.index(test_id)}:"), line
        assert f": {test_id}" in line, line
