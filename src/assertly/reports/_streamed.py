"""``-o`` reports written while the run goes, from each finished test as it is stored.

`ReportSink` is fed each test in the suite's order (`assertly.runner.RunStream`) and writes
its part of the report at once into an anonymous file in the report's directory: a JSON Lines
or CSV report's lines, a JSON report's ``tests`` array (the summary, which comes first, is
only known at the end). At the end the head, the body and the tail are written into the
report's file, which appears by an atomic rename, as `write_report`'s do; its bytes are those
`write_report` writes for the same run (tests/runner/test_streamed_reports.py). The body has
no name: a run killed outright (SIGKILL, the OOM killer) leaves nothing beside the report.
The other formats render the whole run at the end.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO

from .._digests import RecordsDigest
from .._records import RunRecord, TestRecord
from .._terminal import inert_json
from ._csv import CsvWriter
from ._json import report_entries_end, report_entry, report_head, report_tail
from ._jsonl import jsonl_line
from ._write import replace_file, write_report

__all__ = ["STREAMED_FORMATS", "ReportSink"]

STREAMED_FORMATS = (".json", ".jsonl", ".csv")
_COPY_CHUNK = 1 << 20


class ReportSink:
    """One ``-o`` report: fed test by test, finished with the whole run's record.

    A format that cannot be streamed (HTML, Markdown, JUnit) takes no test and is written
    whole by `finish`. A file that cannot be written is said at `finish` (`OSError`), as a
    report written at the end says it; the run itself never stops for it.

    Args:
        path: The report's file (its suffix names the format).
        shard: Whether the run is a shard (its JSON report carries a digest of its records).
    """

    def __init__(self, path: str | Path, *, shard: bool = False) -> None:
        self.path = path
        self._target = Path(path)
        self._format = self._target.suffix.lower()
        self._handle: BinaryIO | None = None
        self._error: OSError | None = None
        self._first = True
        self._fed = 0  # tests written
        self._csv: CsvWriter | None = None
        self._digest = RecordsDigest() if shard and self._format == ".json" else None
        if self._format not in STREAMED_FORMATS:
            return
        try:
            # red team, probe "SIGKILL mid-run": a named body or partial file beside the
            # target was left for ever by a run killed outright (no clean-up runs). Unnamed,
            # the system removes it with the process; the report is assembled at the end.
            self._target.parent.mkdir(parents=True, exist_ok=True)
            self._handle = tempfile.TemporaryFile(dir=self._target.parent)  # noqa: SIM115
            if self._format == ".csv":
                self._csv = CsvWriter(self._handle)
        except OSError as error:
            self._fail(error)

    @property
    def streamed(self) -> bool:
        """Whether this report is written as the run goes."""
        return self._format in STREAMED_FORMATS

    def add(self, test: TestRecord) -> None:
        """Write the next test's part of the report."""
        handle = self._handle
        if handle is None:
            return
        try:
            if self._csv is not None:
                self._csv.add(test)
            elif self._format == ".jsonl":
                handle.write(jsonl_line(test))
            else:
                handle.write(report_entry(test.to_dict(), self._first, self._digest))
            self._first = False
            self._fed += 1
        except OSError as error:
            self._fail(error)

    def finish(self, run: RunRecord) -> None:
        """Write the report of ``run``, whose tests were fed in order.

        A report that was not fed every test of ``run`` (the run gave them another way) is
        written from ``run`` instead: a streamed report is never short of a test.

        Raises:
            OSError: The report could not be written (a previous one is untouched).
        """
        # red team, probe "resumed shard": a resumed run's --shard comes from the store, so
        # a sink made before the run began did not know to digest its records.
        shard_unknown = self._format == ".json" and bool(run.shard) != (self._digest is not None)
        if not self.streamed or (
            (self._fed != len(run.tests) or shard_unknown) and self._error is None
        ):
            self.discard()
            write_report(run, self._target)
            return
        if self._error is not None:
            raise self._error
        handle = self._handle
        assert handle is not None
        self._handle = None
        with handle:  # the body, in the report once it is renamed in place
            if self._csv is not None:
                self._csv.close()
            handle.flush()
            handle.seek(0)
            replace_file(self._target, lambda out: self._assemble(run, handle, out))

    def _assemble(self, run: RunRecord, body: BinaryIO, out: BinaryIO) -> None:
        """The report: the tests written as they came (a JSON report: with its head, tail)."""
        if self._format != ".json":
            shutil.copyfileobj(body, out, _COPY_CHUNK)
            return
        for chunk in report_head(run):
            out.write(inert_json(chunk))
        shutil.copyfileobj(body, out, _COPY_CHUNK)
        out.write(report_entries_end(empty=self._first))
        for chunk in report_tail(run, self._digest):
            out.write(inert_json(chunk))

    def discard(self) -> None:
        """Remove what was written (the run stopped, or the report is written whole)."""
        if self._handle is not None:
            if self._csv is not None:
                self._csv = None  # its wrapper is dropped with the file it wrote to
            with contextlib.suppress(OSError):
                self._handle.close()  # unnamed: closing it removes it
            self._handle = None

    def _fail(self, error: OSError) -> None:
        self._error = error
        self.discard()
