"""The JSON report is written test by test; the bytes are those of the whole document."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from assertly._json import to_json_bytes
from assertly.reports import write_report
from assertly.reports._json import render_json
from assertly.runner import RunRecord, load_run

SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]  # the conftest fixture


def test_streamed_report_is_the_whole_document(sample_run: SampleRun, tmp_path: Path) -> None:
    record, store = sample_run("json", "hello <b>ünï</b>", "nope")
    whole = to_json_bytes(record.to_dict(), indent=True) + b"\n"
    assert render_json(record) == whole
    write_report(record, tmp_path / "r.json")
    assert (tmp_path / "r.json").read_bytes() == whole
    data = json.loads(whole)
    assert [test["id"] for test in data["tests"]] == [
        "ok", "too-many", "crash", "flaky", "needs-prod", "injected", "plain",
    ]  # fmt: skip
    assert data["summary"]["total"] == 7
    assert len(data["evals"]) == 1
    # A stored run re-rendered later gives the same report.
    assert render_json(load_run(str(store), record.run_id)) == whole


def test_secrets_are_redacted_in_every_chunk(sample_run: SampleRun) -> None:
    record, _ = sample_run("json_secret", "token sk-live-123 leaked", "nope")
    text = render_json(record, redact={"sk-live-123"})
    assert b"sk-live-123" not in text
    assert b"token [REDACTED] leaked" in text


def test_an_empty_run_is_valid_json() -> None:
    text = render_json(RunRecord("r", "t", 0.0))
    assert json.loads(text)["tests"] == []
    assert text == to_json_bytes(RunRecord("r", "t", 0.0).to_dict(), indent=True) + b"\n"
