r"""The CSV export: one row per test and trial, for a spreadsheet or a data frame.

RFC 4180 (Python's `csv` module: fields quoted when they hold a comma, a quote or a line
break, quotes doubled, CRLF between records), UTF-8 with a byte order mark so a spreadsheet
reads non-ASCII text as UTF-8. Written row by row: a stored run of a million tests never sits
in memory.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return as a formula (CSV injection), or one of ``= + - @`` after leading whitespace or in its
full-width form (U+FF1D): such a text cell is written with a single quote in front, as OWASP
recommends. Numbers (the numeric columns, and text that is a plain number) are left
as they are, so they stay numbers. Controls a terminal obeys (ESC, C1, bidirectional overrides)
are written as escapes (``\x1b``), so printing the file is harmless.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from .._json import dumps
from .._records import RunRecord, TestRecord, TrialRecord, combined_metrics
from .._secrets import redact_text
from .._terminal import inert_text

__all__ = ["COLUMNS", "CsvWriter", "neutralised", "write_csv"]

COLUMNS = (
    "file",
    "suite",
    "id",
    "target",
    "trial",
    "outcome",
    "score",
    "output",
    "latency_ms",
    "cost_usd",
    "first_failure",
    "test_outcome",
)
# The longest text one cell holds: a spreadsheet cell takes at most 32,767 characters (a
# longer one is cut, or the file refused). The run store keeps the whole output.
CELL_LIMIT = 32_000
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# What starts a formula after leading whitespace: ASCII, full-width and small-form variants.
_FORMULA_FIRST = frozenset("=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralised(text: str) -> str:
    """``text`` as a cell no spreadsheet runs as a formula (OWASP: a leading single quote).

    Text that is a plain number (``-3``, ``+1.5e3``) is left as it is: it is read as that
    number, never as a formula.
    """
    # red team, probe "csv formula after whitespace": `` =1+1``, ``\n=1+1`` and the full-width
    # U+FF1D ``=`` (which a CJK-locale spreadsheet reads as ``=``) were written as they are.
    first = text.lstrip()[:1]
    if (first in _FORMULA_FIRST or text.startswith(_FORMULA_START)) and not (
        _PLAIN_NUMBER.fullmatch(text.strip())
    ):
        return "'" + text
    return text


def _output_text(test: TestRecord, trial: TrialRecord) -> str:
    """What the agent answered in ``trial``: text as is, other JSON values as JSON text."""
    if not trial.steps:
        return ""
    value: Any
    if test.conversation:  # the agent's messages joined, as the whole conversation read them
        whole = [step for step in trial.steps if step.ended is not None]
        value = whole[0].output if whole else [step.output for step in trial.steps]
    elif test.multi_step:
        value = [{"step": step.name, "output": step.output} for step in trial.steps]
    else:
        value = trial.steps[0].output
    if value is None:
        return ""
    text = value if isinstance(value, str) else dumps(value)
    if len(text) > CELL_LIMIT:
        text = text[:CELL_LIMIT] + f"… [cut: {len(text)} characters]"
    return text


def _first_failure(trial: TrialRecord) -> str:
    """The trial's error, or its first failing assertion with where it failed."""
    if trial.error:
        return trial.error
    for failure in trial.failures:
        where = f" (at {failure.path})" if failure.path else ""
        # A conversation's failure names its turn (or the whole conversation).
        conversation = any(step.user is not None for step in trial.steps)
        turn = f"{failure.step}: " if conversation and failure.step else ""
        return f"{turn}{failure.assertion}: {failure.message}{where}"
    return ""


def _rows(test: TestRecord) -> Iterator[list[Any]]:
    """The rows of ``test``, one per trial (a test with no trial: one row of its verdict)."""
    place = [test.file, test.suite, test.id, test.target or ""]
    if not test.trials:
        yield [*place, "", test.status, test.score, "", "", "", "", test.status]
        return
    for trial in test.trials:
        metrics = combined_metrics(trial.steps) if trial.steps else {}
        yield [
            *place,
            trial.trial,
            trial.status,
            trial.score,
            _output_text(test, trial),
            metrics.get("latency_ms"),
            metrics.get("cost_usd"),
            _first_failure(trial) or trial.reason or "",
            test.status,
        ]


def _cell(value: Any, secrets: frozenset[str]) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):  # never in these columns; kept as words, not 1/0
        return str(value).lower()
    if isinstance(value, int | float):
        return value  # numeric: a spreadsheet reads it as a number
    text = redact_text(str(value), secrets) if secrets else str(value)
    # `cat report.csv` must not obey agent output: controls, bidi overrides shown as escapes
    # (``\x1b``), as in every text report; line breaks, tabs and CR (a CRLF answer) are kept.
    text = "\r".join(map(inert_text, text.split("\r"))) if "\r" in text else inert_text(text)
    return neutralised(text)


class CsvWriter:
    """The CSV export written to a binary handle test by test: the header first."""

    def __init__(self, handle: BinaryIO, redact: set[str] | None = None) -> None:
        self._secrets = frozenset(secret for secret in redact or () if secret)
        # Agent output may hold lone surrogates: written as \udXXX text, as the other
        # reports do.
        self._text = io.TextIOWrapper(
            handle, encoding="utf-8-sig", errors="backslashreplace", newline=""
        )
        self._writer = csv.writer(self._text)  # excel dialect: RFC 4180 with CRLF line ends
        self._writer.writerow(COLUMNS)

    def add(self, test: TestRecord) -> None:
        """Write the rows of one test."""
        for row in _rows(test):
            self._writer.writerow([_cell(value, self._secrets) for value in row])

    def close(self) -> None:
        """Flush what is written and give the handle back (the caller owns it)."""
        self._text.flush()
        self._text.detach()


def write_csv(run: RunRecord, handle: BinaryIO, redact: set[str] | None = None) -> None:
    """Write ``run -o report.csv`` to ``handle``: a header, then one row per test and trial."""
    writer = CsvWriter(handle, redact)
    try:
        for test in run.tests:
            writer.add(test)
    finally:
        writer.close()
