"""The console's matrix on runs built by hand: the row limit, the width, marks without UTF-8."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from assertly._records import RunRecord, TrialRecord
from assertly._records import TestRecord as Cell
from assertly.compare._matrix import matrix_view
from assertly.reports import ConsoleReporter
from assertly.reports._analysis import MATRIX_LISTED, NONE
from assertly.reports._console_matrix import LISTED_DISAGREEMENTS, MATRIX_ROWS, matrix_lines
from assertly.reports._markdown import render_markdown


def run_of(rows: list[tuple[str, str, str]], labels: tuple[str, str] = ("a", "b")) -> RunRecord:
    """A matrix run of tests ``(id, status under the first label, under the second)``."""
    cells = []
    for test, *statuses in rows:
        for label, status in zip(labels, statuses, strict=True):
            key = f"t.yaml::s::{test}[{label}]"
            trial = TrialRecord(key, 1, status, 1.0)  # type: ignore[arg-type]
            cells.append(Cell(key, test, test, "s", "t.yaml", status, None, [trial], target=label))  # type: ignore[arg-type]
    return RunRecord("r", "2026-01-01T00:00:00Z", 1.0, tests=cells, targets=list(labels))


def lines_of(record: RunRecord, width: int = 200, encoding: str = "utf-8") -> list[str]:
    view = matrix_view(record)
    assert view is not None
    return list(matrix_lines(view, width, encoding))


def test_up_to_the_row_limit_the_matrix_is_printed() -> None:
    rows = [(f"t{n}", "passed", "passed") for n in range(MATRIX_ROWS)]
    lines = lines_of(run_of(rows))
    assert lines[1] == "    test    a  b"
    assert lines[2] == "    s::t0   ✓  ✓"
    assert len([line for line in lines if line.startswith("    s::t")]) == MATRIX_ROWS


def test_beyond_the_row_limit_the_disagreements_are_listed() -> None:
    rows = [(f"t{n}", "passed", "passed") for n in range(MATRIX_ROWS)]
    rows.append(("odd", "passed", "error"))
    rows.append(("skip", "passed", "skipped"))  # a different verdict: a disagreement
    lines = lines_of(run_of(rows))
    assert not any(line.startswith("    s::t0") for line in lines)
    assert lines[:3] == [
        f"targets disagree on 2 of {MATRIX_ROWS + 2} tests:",
        "  s::odd  a ✓  b !",
        f"  s::skip  a ✓  b {NONE}",
    ]
    assert lines[3].startswith("a: 42 of 42 judged passed")


def test_many_disagreements_are_cut_with_a_count() -> None:
    rows = [(f"t{n}", "failed", "passed") for n in range(LISTED_DISAGREEMENTS + 5)]
    lines = lines_of(run_of(rows))
    assert lines[LISTED_DISAGREEMENTS] == f"  s::t{LISTED_DISAGREEMENTS - 1}  a ✗  b ✓"
    assert lines[LISTED_DISAGREEMENTS + 1].startswith("  … and 5 more")
    assert lines[-1] == (
        f"b vs a: 0 regressed, {LISTED_DISAGREEMENTS + 5} fixed of 45 paired tests, "
        "McNemar p = 5.7e-14 (one-sided p = 2.8e-14 that b is better)"
    )


def test_agreeing_targets_say_so_when_the_matrix_does_not_fit() -> None:
    lines = lines_of(run_of([("one", "passed", "passed")]), width=10)
    assert lines[0] == "the targets agree on every test (1)"


def test_a_stream_without_unicode_gets_ascii_marks() -> None:
    lines = lines_of(
        run_of([("one", "passed", "failed"), ("two", "error", "skipped")]), encoding="ascii"
    )
    assert lines[0] == "matrix (v passed, x failed, ! error, - skipped; * targets disagree)"
    assert lines[2:4] == ["  * s::one  v  x", "  * s::two  !  -"]


def test_long_and_wide_names_are_cut_to_fit() -> None:
    name = "名" * 40  # 80 terminal cells
    lines = lines_of(run_of([(name, "passed", "passed")]), width=120)
    row = lines[2]
    assert row.startswith("    s::" + "名" * 28 + "…")  # "s::", 28 wide characters, "…": 60 cells


def test_the_console_reporter_prints_it_in_a_matrix_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    stream = io.StringIO()
    ConsoleReporter(stream=stream, force_plain=True).summary(run_of([("one", "passed", "failed")]))
    text = stream.getvalue()
    assert "  ≠ s::one  ✓  ✗\n" in text
    assert "FAILED s::one [b]  (t.yaml)\n" in text


def test_markdown_beyond_its_limit_shows_only_the_disagreements(tmp_path: Path) -> None:
    rows = [(f"t{n}", "passed", "passed") for n in range(MATRIX_LISTED)]
    rows.append(("odd", "failed", "passed"))
    text = render_markdown(run_of(rows))
    assert f"More than {MATRIX_LISTED} tests: only those where the targets disagree" in text
    assert "| ≠ s" in text and "odd | ✗ | ✓ |" in text
    assert "t0 | ✓ | ✓ |" not in text
