"""`assertly check`: exit codes, text and JSON output, inputs from files, inline JSON and stdin.

The contract is runner.md's: exit 0 all passed, 1 something failed or errored, 2 usage or
configuration error; ``--format json`` prints ``{"passed", "score", "results": [...]}`` with the
pinned keys. No error output ever shows a Python traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from assertly.cli import main

PINNED_RESULT_KEYS = ("assertion", "outcome", "passed", "score", "message", "path", "expected")
OUTCOMES = {"passed", "failed", "error", "skipped"}

# The worked example at the end of seed 000.
SEED_EXPECT: dict[str, Any] = {
    "status": "success",
    "results_max": 5,
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
}
SEED_RESPONSE: dict[str, Any] = {
    "status": "success",
    "results": [
        {"file": "journal/2026/01/incident.md"},
        {"file": "journal/2026/01/review.md"},
        {"file": "work/security-doc.md"},
    ],
}
SEED_MESSAGE = "File 'work/security-doc.md' at results[2] doesn't match pattern '^journal/'"

AGENT_OK: dict[str, Any] = {
    "status": "success",
    "summary": "Found 2 security incidents",
    "results": [
        {"file": "journal/2026/01/a.md", "metadata": {"created": "2026-01-10T09:00:00Z"}},
        {"file": "journal/2026/01/b.md", "metadata": {"created": "2026-01-12T09:00:00Z"}},
    ],
}

Run = Callable[..., Result]


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, Any], str]:
    """Write JSON (or raw text) into a file under tmp_path and return its path."""

    def _write(name: str, content: Any) -> str:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return str(path)

    return _write


@pytest.fixture
def run() -> Run:
    """Invoke ``assertly`` in-process; stdout and stderr are kept apart."""
    runner = CliRunner()

    def _run(*args: str, stdin: str | bytes | None = None) -> Result:
        result = runner.invoke(main, list(args), input=stdin, catch_exceptions=True)
        # An unexpected exception inside the command is a bug, not an exit code.
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"assertly crashed: {result.exception!r}\n{result.output}")
        assert "Traceback" not in result.stdout
        assert "Traceback" not in result.stderr
        return result

    return _run


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def check_args(expect: str, response: str, *extra: str) -> tuple[str, ...]:
    return ("check", "--expect", expect, "--response", response, *extra)


def assert_pinned_shape(data: Any) -> None:
    """The ``check --format json`` object of runner.md: pinned keys with the right types."""
    assert isinstance(data, dict)
    assert isinstance(data["passed"], bool)
    assert isinstance(data["score"], float) and 0.0 <= data["score"] <= 1.0
    assert isinstance(data["results"], list) and data["results"]
    for item in data["results"]:
        assert isinstance(item, dict)
        for key in (*PINNED_RESULT_KEYS, "actual"):
            assert key in item, f"result lacks pinned key {key!r}: {item}"
        assert isinstance(item["assertion"], str) and item["assertion"]
        assert item["outcome"] in OUTCOMES
        assert isinstance(item["passed"], bool)
        assert item["passed"] == (item["outcome"] in ("passed", "skipped"))
        assert isinstance(item["score"], float) and 0.0 <= item["score"] <= 1.0
        assert isinstance(item["message"], str)
        assert item["path"] is None or isinstance(item["path"], str)
    if data["passed"] and data.get("threshold") is None:
        # Without a threshold, a check passes only when every assertion passes.
        assert all(item["passed"] for item in data["results"])


def json_output(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    assert_pinned_shape(data)
    return data


# --- exit codes -------------------------------------------------------------------------------


def test_pass_exits_0(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args(json.dumps({"status": "success"}), write("r.json", AGENT_OK)))
    assert result.exit_code == 0, result.output
    assert "PASS" in result.stdout
    assert "status" in result.stdout


def test_fail_exits_1(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args('{"status": "error"}', write("r.json", AGENT_OK)))
    assert result.exit_code == 1
    assert "FAIL" in result.stdout
    assert "Expected status 'error', got 'success'" in result.stdout


def test_error_outcome_exits_1(run: Run, write: Callable[[str, Any], str]) -> None:
    # cost is judged from the context; with no context the metric was not measured: an error.
    expect = json.dumps([{"type": "cost", "threshold": 0.5}])
    result = run(*check_args(expect, write("r.txt", "hello")))
    assert result.exit_code == 1
    assert "ERROR" in result.stdout
    assert "cost_usd was not measured" in result.stdout
    data = json_output(run(*check_args(expect, write("r.txt", "hello"), "--format", "json")))
    assert data["passed"] is False
    assert data["results"][0]["outcome"] == "error"


def test_negated_error_is_still_an_error(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps([{"type": "not-cost", "threshold": 0.5}])
    result = run(*check_args(expect, write("r.txt", "hello"), "--format", "json"))
    assert result.exit_code == 1
    data = json_output(result)
    assert data["results"][0]["outcome"] == "error"
    assert data["results"][0]["assertion"] == "not-cost"


def test_missing_required_option_exits_2(run: Run) -> None:
    result = run("check", "--expect", '{"status": "success"}')
    assert result.exit_code == 2
    assert "--response" in result.stderr


def test_unknown_subcommand_exits_2(run: Run) -> None:
    assert run("chekc").exit_code == 2


def test_unknown_format_exits_2(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args('{"status": "success"}', write("r.json", AGENT_OK), "--format", "xml"))
    assert result.exit_code == 2


# --- configuration errors: exit 2, a located message, no traceback -------------------------------


def test_unknown_expect_key_exits_2_with_did_you_mean(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    result = run(*check_args('{"statuss": "success"}', write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert "unknown assertion 'statuss'" in result.stderr
    assert "did you mean 'status'?" in result.stderr
    assert result.stdout == ""


def test_unknown_typed_assertion_exits_2_with_did_you_mean(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    expect = json.dumps(
        [{"type": "contians", "value": "x"}, {"type": "not-contians", "value": "y"}]
    )
    result = run(*check_args(expect, write("r.txt", "text")))
    assert result.exit_code == 2
    assert "did you mean 'contains'?" in result.stderr
    assert "did you mean 'not-contains'?" in result.stderr


def test_every_problem_is_reported_at_once(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps(
        {
            "statuss": "success",
            "results_mni": 1,
            "all_match_pattern": {"path": "results[*].file", "regex": "("},
        }
    )
    result = run(*check_args(expect, write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert "'statuss'" in result.stderr
    assert "'results_mni'" in result.stderr
    assert "all_match_pattern" in result.stderr


def test_invalid_json_file_exits_2_with_line_and_column(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    path = write("expect.json", '{\n  "status": "success",\n  "results_min": \n}\n')
    result = run(*check_args(path, write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert f"{path}:4:1" in result.stderr
    assert "invalid JSON" in result.stderr


def test_invalid_yaml_file_exits_2_with_line_and_column(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    path = write("expect.yaml", "status: success\nresults_min: 1\n  oops: 2\n")
    result = run(*check_args(path, write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert f"{path}:3:7" in result.stderr
    assert "invalid YAML" in result.stderr


def test_invalid_inline_json_exits_2_with_column(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    result = run(*check_args('{"status": success}', write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert ":1:" in result.stderr
    assert "invalid JSON" in result.stderr


def test_problems_in_an_expect_file_name_its_line_and_column(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    # As a test file's do: the user finds the typo at once in a file of many assertions.
    typed = write(
        "assertions.yaml",
        "- type: contains\n  value: x\n- type: tool-sequence\n"
        "  value: [search, answer]\n  config: {mode: inorder}\n",
    )
    result = run(*check_args(typed, write("r.txt", "text")))
    assert result.exit_code == 2
    assert f"{typed}:5:12: assertions[1].config.mode: unknown value" in result.stderr
    expect = write("expect.json", '{\n  "status": "success",\n  "results_mx": 5\n}\n')
    result = run(*check_args(expect, write("r.json", AGENT_OK)))
    assert f"{expect}:3:3: expect.results_mx: unknown assertion" in result.stderr


def test_problems_in_a_wrapped_test_case_file_name_its_lines(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    path = write(
        "case.yaml",
        "threshold: 2\nassertions:\n  - type: contains\n    value: x\n  - type: containz\n",
    )
    result = run(*check_args(path, write("r.txt", "text"), "--format", "json"))
    assert result.exit_code == 2
    problems = json.loads(result.stdout)["problems"]
    assert problems[0].startswith(f"{path}:1:1: threshold:")
    assert problems[1].startswith(f"{path}:5:5: assertions[1].type: unknown assertion 'containz'")


@pytest.mark.parametrize("name", ["expect.json", "expect.yaml"])
def test_an_expect_file_with_a_byte_order_mark_is_read(
    run: Run, write: Callable[[str, Any], str], name: str
) -> None:
    # Editors on Windows write one; test files have always allowed it.
    path = write(name, b'\xef\xbb\xbf{"status": "success"}\n')
    result = run(*check_args(path, write("r.json", AGENT_OK)))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("where", ["file", "inline"])
def test_a_duplicate_key_in_a_json_expectation_is_refused(
    run: Run, write: Callable[[str, Any], str], where: str
) -> None:
    # JSON objects keep the last of two equal keys: one assertion would silently vanish
    # (YAML files and test files refuse it already).
    text = '{"status": "success", "status": "error"}'
    expect = write("expect.json", text) if where == "file" else text
    result = run(*check_args(expect, write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert ":1:23: duplicate key 'status' (first written on line 1)" in result.stderr


def test_a_duplicate_key_in_the_context_is_refused(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    context = '{"cost_usd": 0.5, "cost_usd": 0.01}'
    expect = json.dumps([{"type": "cost", "threshold": 0.1}])
    result = run(*check_args(expect, write("r.txt", "text"), "--context", context))
    assert result.exit_code == 2
    assert "duplicate key 'cost_usd'" in result.stderr


def test_expect_neither_file_nor_json_exits_2(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args("no-such-file.json", write("r.json", AGENT_OK)))
    assert result.exit_code == 2
    assert "no-such-file.json" in result.stderr


def test_missing_response_file_exits_2(run: Run, tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.json")
    result = run(*check_args('{"status": "success"}', missing))
    assert result.exit_code == 2
    assert "absent.json" in result.stderr


def test_bad_parameter_exits_2_naming_the_key(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps([{"type": "regex", "value": "(unclosed"}])
    result = run(*check_args(expect, write("r.txt", "text")))
    assert result.exit_code == 2
    assert "assertions[0]" in result.stderr


def test_config_error_with_json_format_prints_json(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    result = run(*check_args('{"statuss": 1}', write("r.json", AGENT_OK), "--format", "json"))
    assert result.exit_code == 2
    # A machine asked for JSON: whatever is printed on stdout must parse.
    assert isinstance(json.loads(result.stdout), dict)
    assert "did you mean 'status'?" in result.stderr


# --- inputs ---------------------------------------------------------------------------------------


def test_response_from_stdin(run: Run) -> None:
    result = run(*check_args('{"status": "success"}', "-"), stdin=json.dumps(AGENT_OK))
    assert result.exit_code == 0, result.output
    failing = run(*check_args('{"status": "error"}', "-"), stdin=json.dumps(AGENT_OK))
    assert failing.exit_code == 1


def test_prose_response_from_stdin_with_fenced_json(run: Run) -> None:
    prose = "Here is what I found:\n\n```json\n" + json.dumps(AGENT_OK) + "\n```\nDone.\n"
    result = run(*check_args('{"status": "success", "results_min": 2}', "-"), stdin=prose)
    assert result.exit_code == 0, result.output
    assert "fenced" in result.stdout
    data = json_output(
        run(*check_args('{"status": "success"}', "-", "--format", "json"), stdin=prose)
    )
    assert data["passed"] is True


def test_response_bytes_that_are_not_utf8(run: Run) -> None:
    result = run(*check_args('{"contains": "ok"}', "-"), stdin=b"ok \xff\xfe broken")
    assert result.exit_code == 0, result.output


def test_yaml_expect_file_with_a_typed_list(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = write(
        "expect.yaml",
        "- type: contains\n  value: machine learning\n"
        "- type: word-count\n  value:\n    min: 5\n    max: 50\n"
        "- type: not-contains\n  value: error\n",
    )
    response = write("out.txt", "Machine learning is a subset of AI; machine learning learns.")
    assert run(*check_args(expect, response)).exit_code == 0


def test_test_case_wrapper_with_threshold(run: Run, write: Callable[[str, Any], str]) -> None:
    case = {
        "threshold": 0.5,
        "assertions": [
            {"type": "contains", "value": "alpha"},
            {"type": "contains", "value": "omega"},
        ],
    }
    result = run(*check_args(json.dumps(case), write("out.txt", "alpha beta"), "--format", "json"))
    assert result.exit_code == 0, result.output
    data = json_output(result)
    assert data["passed"] is True
    assert data["score"] == pytest.approx(0.5)


def test_context_json_feeds_cost_and_latency(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps(
        [{"type": "cost", "threshold": 0.5}, {"type": "latency", "threshold": 2000}]
    )
    response = write("out.txt", "done")
    ok = run(*check_args(expect, response, "--context", '{"cost_usd": 0.1, "latency_ms": 900}'))
    assert ok.exit_code == 0, ok.output
    too_slow = run(
        *check_args(expect, response, "--context", '{"cost_usd": 0.1, "latency_ms": 9000}')
    )
    assert too_slow.exit_code == 1
    assert "latency" in too_slow.stdout


def test_context_from_a_file_and_model(run: Run, write: Callable[[str, Any], str]) -> None:
    context = write("context.json", {"model": "gpt-x", "cost_usd": 0.01})
    result = run(
        *check_args(
            '{"agent_used_model": "gpt-x"}', write("r.json", AGENT_OK), "--context", context
        )
    )
    assert result.exit_code == 0, result.output


def test_context_tool_calls_feed_trajectory_assertions(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    expect = '{"tool_sequence": ["search", "answer"]}'
    response = write("out.txt", "The answer, in prose.")
    calls = '{"tool_calls": [{"name": "search", "arguments": "{}"}, {"name": "answer"}]}'
    assert run(*check_args(expect, response, "--context", calls)).exit_code == 0
    # Without them there is nothing to judge: an error (exit 1), never a pass.
    result = run(*check_args(expect, response))
    assert result.exit_code == 1
    assert "no tool-call trace found" in result.stdout
    # The example of the demo: the recorded conversation skipped the policy check.
    failing = run(
        "check",
        "--expect",
        str(EXAMPLES / "tool_sequence_failing.yaml"),
        "--response",
        str(EXAMPLES / "tools" / "anthropic_refund_skipped_policy.json"),
    )
    assert failing.exit_code == 1
    assert (
        "step 2 (check_refund_policy) is not called after call 1; got 2 calls (Anthropic "
        'Messages): 1. lookup_order({"order_id":"A-1042"}) → 2. issue_refund(' in failing.stdout
    )


@pytest.mark.parametrize(
    "context", ['{"cost_usd": "cheap"}', "[1, 2]", '{"latency_ms": true}', "{not json"]
)
def test_bad_context_exits_2(run: Run, write: Callable[[str, Any], str], context: str) -> None:
    expect = json.dumps([{"type": "cost", "threshold": 0.5}])
    result = run(*check_args(expect, write("out.txt", "x"), "--context", context))
    assert result.exit_code == 2
    assert "context" in result.stderr


def test_now_makes_relative_dates_reproducible(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps({"dates_within_days": {"path": "results[*].metadata.created", "days": 7}})
    response = write("r.json", AGENT_OK)
    recent = run(*check_args(expect, response, "--now", "2026-01-15T00:00:00Z"))
    assert recent.exit_code == 0, recent.output
    later = run(*check_args(expect, response, "--now", "2026-03-01T00:00:00Z"))
    assert later.exit_code == 1
    date_only = run(*check_args(expect, response, "--now", "2026-01-14"))
    assert date_only.exit_code == 0, date_only.output


def test_bad_now_exits_2(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args('{"status": "success"}', write("r.json", AGENT_OK), "--now", "soon"))
    assert result.exit_code == 2
    assert "--now" in result.stderr


def test_response_with_an_integer_beyond_64_bits(run: Run) -> None:
    big = 123456789012345678901234567890
    prose = f'Here you go: {{"n": {big}, "status": "success"}}'
    result = run(*check_args('{"field_equals": {"n": 1}}', "-", "--format", "json"), stdin=prose)
    assert result.exit_code == 1
    data = json_output(result)
    assert data["results"][0]["actual"] == big  # exact, not a float


def test_lone_surrogate_escape_in_json_output(run: Run, write: Callable[[str, Any], str]) -> None:
    # "\ud800" is a valid JSON escape that is not valid UTF-8 once decoded.
    response = write("r.json", '{"status": "\\ud800"}')
    result = run(*check_args('{"status": "success"}', response, "--format", "json"))
    assert result.exit_code == 1
    data = json_output(result)
    assert data["results"][0]["outcome"] == "failed"


def _real(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [*_command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environment,
    )


def test_lone_surrogate_escape_in_text_output(tmp_path: Path) -> None:
    response = tmp_path / "r.json"
    response.write_text('{"status": "\\ud800"}', encoding="ascii")
    completed = _real("check", "--expect", '{"status": "success"}', "--response", str(response))
    assert "Traceback" not in completed.stderr
    assert completed.returncode == 1
    assert "Expected status 'success'" in completed.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_response_from_a_named_pipe(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "response.pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write(json.dumps(AGENT_OK))

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        result = run(*check_args('{"status": "success"}', str(fifo)))
    finally:
        # If the CLI never opened the pipe, open it once so the writer is released.
        descriptor = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(timeout=5)
        os.close(descriptor)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("problem", ["response", "now", "context"])
def test_non_expectation_problems_are_not_called_invalid_expectations(
    run: Run, tmp_path: Path, problem: str
) -> None:
    response = tmp_path / "r.json"
    response.write_text(json.dumps(AGENT_OK), encoding="utf-8")
    args = {
        "response": check_args('{"status": "success"}', str(tmp_path / "absent.json")),
        "now": check_args('{"status": "success"}', str(response), "--now", "soon"),
        "context": check_args('{"status": "success"}', str(response), "--context", "[1]"),
    }[problem]
    result = run(*args)
    assert result.exit_code == 2
    assert "invalid expectation" not in result.stderr


# --- output ---------------------------------------------------------------------------------------


def test_json_format_has_the_pinned_shape(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps(
        {
            "status": "success",
            "results_min": 3,
            "has_fields": ["results", "pagination.total"],
            "if_results": {"all_match_pattern": {"path": "results[*].file", "regex": "^journal/"}},
            "one_of": [{"status": "error"}, {"contains": "security"}],
        }
    )
    response = write("r.json", {**AGENT_OK, "pagination": {"offset": 0}})
    result = run(*check_args(expect, response, "--format", "json"))
    assert result.exit_code == 1
    data = json_output(result)
    assert data["passed"] is False
    by_name = {item["assertion"]: item for item in data["results"]}
    assert list(by_name) == ["status", "results_min", "has_fields", "if_results", "one_of"]
    assert by_name["results_min"]["outcome"] == "failed"
    assert by_name["results_min"]["message"] == "Expected at least 3 results, got 2"
    assert by_name["has_fields"]["message"] == "Missing field: pagination.total"
    assert by_name["one_of"]["passed"] is True
    assert data["score"] == pytest.approx(3 / 5)


def test_json_format_typed_list(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps(
        [
            {"type": "icontains", "value": "MACHINE learning"},
            {"type": "regex", "value": "\\d{4}-\\d{2}-\\d{2}"},
            {"type": "equals", "value": "ok", "transform": "json_path:$.status"},
            {"type": "is-json"},
        ]
    )
    response = write("out.json", {"status": "ok", "text": "Machine learning on 2026-01-31"})
    result = run(*check_args(expect, response, "--format", "json"))
    assert result.exit_code == 0, result.output
    data = json_output(result)
    assert [item["outcome"] for item in data["results"]] == ["passed"] * 4
    assert data["score"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [({"max": 2}, {"max": 2}), ({"min": 5}, {"min": 5}), (4, {"min": 4, "max": 4})],
)
def test_word_count_expected_names_only_the_bounds_given(
    run: Run, write: Callable[[str, Any], str], value: Any, expected: dict[str, int]
) -> None:
    expect = json.dumps([{"type": "word-count", "value": value}])
    result = run(*check_args(expect, write("out.txt", "one two three"), "--format", "json"))
    assert result.exit_code == 1
    [item] = json_output(result)["results"]
    assert item["expected"] == expected  # no "min": null for an open range
    assert item["actual"] == 3


def test_json_format_stdout_is_only_json(run: Run, write: Callable[[str, Any], str]) -> None:
    result = run(*check_args('{"status": "error"}', write("r.json", AGENT_OK), "--format", "json"))
    json.loads(result.stdout)  # nothing but the object on stdout
    assert result.stderr == ""


def test_text_output_shows_expected_actual_and_path(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    expect = json.dumps({"field_equals": {"pagination.offset": 0}, "status": "success"})
    response = write("r.json", {**AGENT_OK, "pagination": {"offset": 5}})
    result = run(*check_args(expect, response))
    assert result.exit_code == 1
    out = result.stdout
    assert "field_equals" in out
    assert "pagination.offset: expected 0, got 5" in out
    assert "path:" in out and "pagination.offset" in out
    assert "expected: 0" in out
    assert "actual:   5" in out
    assert "1 of 2 assertions passed" in out


def test_text_output_for_a_typed_failure(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = json.dumps([{"type": "starts-with", "value": "Summary:"}])
    result = run(*check_args(expect, write("out.txt", "Overview: nothing")))
    assert result.exit_code == 1
    assert "starts-with" in result.stdout
    assert "expected:" in result.stdout
    assert "actual:" in result.stdout
    assert "Overview: nothing" in result.stdout


def test_seed_worked_example(run: Run, write: Callable[[str, Any], str]) -> None:
    expect = write("expect.json", SEED_EXPECT)
    response = write("response.json", SEED_RESPONSE)
    text = run(*check_args(expect, response))
    assert text.exit_code == 1
    assert "2 of 3 assertions passed" in text.stdout
    assert SEED_MESSAGE in text.stdout
    assert "results[2]" in text.stdout
    data = json_output(run(*check_args(expect, response, "--format", "json")))
    assert data["passed"] is False
    assert [item["outcome"] for item in data["results"]] == ["passed", "passed", "failed"]
    failing = data["results"][2]
    assert failing["assertion"] == "all_match_pattern"
    assert failing["message"] == SEED_MESSAGE
    assert failing["path"] == "results[2].file"
    assert failing["actual"] == "work/security-doc.md"
    assert data["score"] == pytest.approx(2 / 3)


def test_help_and_version(run: Run) -> None:
    assert run("--help").exit_code == 0
    assert "--expect" in run("check", "--help").stdout
    version = run("--version")
    assert version.exit_code == 0
    assert "assertly" in version.stdout


# --- one real process -----------------------------------------------------------------------------


def _command() -> list[str]:
    script = Path(sys.executable).with_name("assertly")
    return [str(script)] if script.exists() else [sys.executable, "-m", "assertly.cli"]


def test_real_subprocess_seed_example(tmp_path: Path) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps(SEED_EXPECT), encoding="utf-8")
    completed = subprocess.run(
        [*_command(), "check", "--expect", str(expect), "--response", "-", "--format", "json"],
        input=json.dumps(SEED_RESPONSE),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    data = json.loads(completed.stdout)
    assert_pinned_shape(data)
    assert data["results"][2]["message"] == SEED_MESSAGE


def test_real_subprocess_config_error(tmp_path: Path) -> None:
    completed = subprocess.run(
        [*_command(), "check", "--expect", '{"statuss": "x"}', "--response", "-"],
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "did you mean 'status'?" in completed.stderr
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize("command", ["run", "check", "validate", "report", "recheck"])
def test_every_option_has_help_text(command: str) -> None:
    import click

    params = main.commands[command].params  # type: ignore[attr-defined]
    missing = [
        param.opts[0] for param in params if isinstance(param, click.Option) and not param.help
    ]
    assert missing == [], f"assertly {command}: options without help: {missing}"


# --- check --expect with a shape (issue 28, item 7) ---------------------------------------

TAGGED_AT_TOP = {"results": [{"tags": ["security"]}, {"tags": ["security"]}]}


def test_check_reads_a_shape_from_a_test_case_or_an_expect_dict(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    # issue 28, probe 7: `check --expect` refused shape (unknown assertion 'shape'), and a
    # test case's shape: was dropped without a word.
    response = write("r.json", TAGGED_AT_TOP)
    for expect in (
        {"shape": {"tags": "$.results[*].tags"}, "expect": {"none_have_tags": ["security"]}},
        {"shape": {"tags": "$.results[*].tags"}, "none_have_tags": ["security"]},
    ):
        result = run(*check_args(write("case.json", expect), response, "--format", "json"))
        assert result.exit_code == 1, result.output
        [item] = json_output(result)["results"]
        assert item["outcome"] == "failed" and item["path"] == "results[0].tags"
    hits = write("hits.json", {"data": {"hits": [{"file": "a"}]}})
    case = json.dumps({"shape": {"results": "$.data.hits"}, "expect": {"results_min": 1}})
    assert run(*check_args(case, hits)).exit_code == 0


def test_check_names_a_bad_shape_at_its_line(run: Run, write: Callable[[str, Any], str]) -> None:
    path = write("case.yaml", 'shape:\n  tags: "$.results.tags"\nexpect:\n  none_have_tags: [a]\n')
    result = run(*check_args(path, write("r.json", TAGGED_AT_TOP)))
    assert result.exit_code == 2
    assert f"{path}:2:3: shape.tags: expected a JSONPath to the tags of every result" in (
        result.stderr
    )


def test_check_a_tag_key_over_results_without_the_tags_field_is_an_error(
    run: Run, write: Callable[[str, Any], str]
) -> None:
    # issue 28, probe 7: none_have_tags passed although every result is tagged security.
    expect = json.dumps({"none_have_tags": ["security"]})
    result = run(*check_args(expect, write("r.json", TAGGED_AT_TOP), "--format", "json"))
    assert result.exit_code == 1
    [item] = json_output(result)["results"]
    assert item["outcome"] == "error"
    assert item["message"].startswith("no result has tags at results[*].metadata.tags")


# issue 29, "Unbounded" 4: numbers from the command line are bounded. click's FloatRange lets
# nan through (every comparison with it is false): `--timeout nan` made every call an error,
# `--rate-limit 1e-300` waited for ever.
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--timeout", "nan"], "'nan' is not a finite number"),
        (["--timeout", "inf"], "is not in the range 0<x<=604800"),
        (["--rate-limit", "nan"], "'nan' is not a finite number"),
        (["--rate-limit", "1e-300"], "is not in the range 0.001<=x<=1000000"),
        # rt30b: `--min-pass-rate nan` was taken (the gate said "pass rate 27.3% < nan%").
        (["--min-pass-rate", "nan"], "'nan' is not a finite number"),
    ],
)
def test_run_refuses_numbers_out_of_bounds(args: list[str], says: str) -> None:
    result = CliRunner().invoke(main, ["run", "nothing.tests.yaml", *args])
    assert result.exit_code == 2, result.output
    assert says in result.output


# rt30b: `diff --fail-on significant --alpha nan` exited 0 on a significant regression (no
# p-value is ever <= nan), so a typo'd or templated alpha turned the comparison green.
@pytest.mark.parametrize("alpha", ["nan", "-nan", "NaN"])
def test_diff_refuses_alpha_nan(alpha: str) -> None:
    result = CliRunner().invoke(
        main, ["diff", "a.json", "b.json", "--fail-on", "significant", "--alpha", alpha]
    )
    assert result.exit_code == 2, result.output
    assert "is not a finite number" in result.output
