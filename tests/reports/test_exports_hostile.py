"""Red team of the exports (issue 34): formulas a spreadsheet still runs, through a real run."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from assertly._records import RunRecord
from assertly.reports import write_report
from assertly.reports._csv import neutralised

SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]  # the conftest fixture


def _output_of(path: Path, test_id: str) -> str:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return next(row["output"] for row in csv.DictReader(handle) if row["id"] == test_id)


# red team, probe "csv formula after whitespace": each was written as the agent sent it.
@pytest.mark.parametrize(
    "payload",
    [
        ' =HYPERLINK("http://evil.example")',
        '\n=HYPERLINK("http://evil.example")',
        '\u00a0@SUM(1+1)*cmd|" /C calc"!A0',
        '\uff1dHYPERLINK("http://evil.example")',  # full-width equals
        "\uff0b1+cmd|' /C calc'!A0",  # full-width plus
        "\uff0d2+3",  # full-width minus
        "\uff20SUM(A1)",  # full-width at
    ],
)
def test_a_formula_behind_whitespace_or_in_full_width_is_neutralised(
    sample_run: SampleRun, tmp_path: Path, payload: str
) -> None:
    record, _ = sample_run("csv_hostile", payload + " hello", "nope")
    write_report(record, tmp_path / "r.csv")
    assert _output_of(tmp_path / "r.csv", "injected") == "'" + payload + " hello"


def test_a_plain_number_behind_spaces_stays_a_number() -> None:
    assert neutralised(" -3 ") == " -3 " and neutralised("-3") == "-3"
    assert neutralised(" =1") == "' =1" and neutralised("a=b") == "a=b"
