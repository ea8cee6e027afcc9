"""Console output of a run.

A progress bar on a terminal (counts so far and ETA), plain lines otherwise; then one block
per failing test with its failing assertions, and a summary.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from .._records import RunRecord, TestRecord
from .._terminal import terminal_safe
from ._failures import eval_case_detail, test_failure_lines
from ._trace_line import trace_lines

__all__ = ["ConsoleReporter"]


# What the summary keeps of failing tests stays in memory up to this size, then goes to a file.
_SPOOL_IN_MEMORY = 8 * 2**20

# Variables with which rich treats any stream as a terminal.
_FORCE_TERMINAL = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def _may_be_terminal(stream: Any) -> bool:
    """Whether rich could see a terminal: no need to import it (25 ms) to learn it cannot."""
    if any(os.environ.get(name) for name in _FORCE_TERMINAL):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


class ConsoleReporter:
    """Progress while running, failures and a summary at the end."""

    def __init__(self, total: int = 0, *, stream: Any = None, force_plain: bool = False) -> None:
        self.stream = stream or sys.stdout
        # Plain output is written as is: rich would cost ~0.3 ms a line (a fifth of a run of
        # 5,000 failing tests) and would turn ``:smile:`` in an agent's output into an emoji.
        self.console: Any = None
        if not force_plain and _may_be_terminal(self.stream):
            from rich.console import Console

            console = Console(file=self.stream, highlight=False, soft_wrap=True)
            if console.is_terminal:
                self.console = console
        self.interactive = self.console is not None
        self.total = total
        self.counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        self._resumed: Any = None  # the test of the last "resumed" event
        self._progress: Any = None
        self._task: Any = None
        self._fed = 0  # tests the run fed (`add`) as they finished
        self._failures: IO[bytes] | None = None  # what `add` kept of the failing ones

    def __enter__(self) -> ConsoleReporter:
        if self.interactive:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("[bold]running"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("[green]{task.fields[passed]} passed"),
                TextColumn("[red]{task.fields[failed]} failed"),
                TextColumn("[magenta]{task.fields[error]} error"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("run", total=self.total, **self.counts)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, event: str, data: Any) -> None:
        """Runner listener: ``start``, ``test`` and ``warning`` events.

        ``start`` carries the number of tests, ``test`` a test and its status, ``warning`` a
        message to show before the run (a capped ``-j``; the summary repeats it).
        """
        if event == "warning":
            self._print(f"warning: {data}", markup=False)
            return
        if event == "start":
            self.total = int(data)
            if self._progress is not None:
                self._progress.update(self._task, total=self.total)
            return
        if event == "resumed":  # the next "test" event is this one's, from the stored run
            self._resumed = data
            return
        if event != "test":
            return
        test, status = data
        resumed = self._resumed is test
        self._resumed = None
        self.counts[status] += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, **self.counts)
        else:
            note = "  (resumed: verdict of the stored run)" if resumed else ""
            self._print(
                f"{status.upper():7} {getattr(test, 'shown_name', test.key)}{note}", markup=False
            )

    def _print(self, text: str, *, markup: bool) -> None:
        if self.console is not None:
            self.console.print(terminal_safe(text), markup=markup)
        else:
            self.stream.write(terminal_safe(text) + "\n")

    def _matrix(self, run: RunRecord) -> None:
        from ..compare._matrix import matrix_view
        from ._console_matrix import matrix_lines, terminal_width

        view = matrix_view(run)
        if view is None:
            return
        encoding = getattr(self.stream, "encoding", None)
        for line in matrix_lines(view, terminal_width(self.console), encoding):
            self._print(line, markup=False)

    def add(self, test: TestRecord) -> None:
        """A finished test of the run, in order: what the summary shows of it, kept aside.

        Kept in a file (in memory while small), not as records: the summary of a million
        failing tests prints what it holds without reading the run back from the store.
        """
        self._fed += 1
        if test.status not in ("failed", "error"):
            return
        if self._failures is None:
            self._failures = tempfile.SpooledTemporaryFile(_SPOOL_IN_MEMORY)  # noqa: SIM115 (closed by summary)
        # Our own file, read back by this process only: any text (lone surrogates too).
        pickle.dump(self._failure_lines(test), self._failures, pickle.HIGHEST_PROTOCOL)

    def _failure_lines(self, test: TestRecord) -> list[str]:
        """A failing test's header (markup when in colour), then its lines (plain text)."""
        style = "red" if test.status == "failed" else "magenta"
        where = f"{test.file}:{test.line}" if test.line else test.file
        # In a matrix run the same test may fail under one target only: name it.
        target = f" [{test.target}]" if test.target is not None else ""
        header = f"{test.status.upper()} {test.suite}::{test.id}{target}  ({where})"
        if self.interactive:
            from rich.markup import escape

            header = f"[{style}]{escape(header)}[/]"
        lines = [header, *test_failure_lines(test)]
        # What the agent's spans show (issue 33).
        lines.extend(f"  {line}" for line in trace_lines(test))
        return lines

    def _failures_of(self, run: RunRecord) -> Iterator[list[str]]:
        """What to show of each failing test: as the run fed it, else from ``run``."""
        spool, fed, self._failures, self._fed = self._failures, self._fed, None, 0
        if not fed or fed != len(run.tests):  # not fed the whole run: read from it
            if spool is not None:
                spool.close()
            yield from (self._failure_lines(test) for test in run.not_passed())
            return
        if spool is None:
            return
        with spool:
            end = spool.tell()
            spool.seek(0)
            while spool.tell() < end:
                yield pickle.load(spool)

    def summary(self, run: RunRecord) -> None:
        """Failing tests with their failing assertions, evals, then totals."""
        print_ = self._print
        for header, *lines in self._failures_of(run):
            print_(header, markup=self.interactive)
            for line in lines:
                print_(line, markup=False)
        for suite in run.evals:
            verdict = "PASSED" if suite.passed else "FAILED"
            score = f"score {suite.score:.3f} (threshold {suite.threshold:g})"
            print_(f"EVAL {verdict} {suite.file}: {score}", markup=False)
            for case in suite.cases:
                if case.status != "passed":
                    detail = eval_case_detail(case)
                    print_(
                        f"  {case.status} {case.id} (score {case.score:.3f}): {detail}",
                        markup=False,
                    )
        for problem in run.problems:
            print_(f"PROBLEM {problem}", markup=False)
        for warning in run.warnings:
            print_(f"warning: {warning}", markup=False)
        if run.targets:  # a matrix run: its targets side by side
            self._matrix(run)
        s = run.summary()  # tests only: eval suites are judged by their thresholds
        parts = []
        if run.tests or not run.evals:
            parts.append(
                f"{s['total']} test{'s' if s['total'] != 1 else ''}: {s['passed']} passed, "
                f"{s['failed']} failed, {s['errored']} errored, {s['skipped']} skipped "
                f"({s['pass_rate'] * 100:.1f}% pass rate)"
            )
        if run.evals:
            met = sum(1 for suite in run.evals if suite.passed)
            plural = "s" if len(run.evals) != 1 else ""
            parts.append(f"{met} of {len(run.evals)} eval suite{plural} met the threshold")
        if s.get("cached"):  # --cache: trials judged on a stored response, no call made
            parts.append(f"{s['cached']} trial(s) from the response cache")
        if run.budget_stopped:  # --max-cost-usd: the tests it did not judge are errors
            parts.append(f"the run budget stopped the run: {run.budget_stopped}")
        took = f" in {s['duration_ms'] / 1000:.2f}s"
        if run.elapsed_ms is not None and s["duration_ms"] - run.elapsed_ms > 0.5:
            # A resumed run (its stored time adds every invocation's): this one's, and all.
            took = (
                f" in {run.elapsed_ms / 1000:.2f}s "
                f"({s['duration_ms'] / 1000:.2f}s in all, with the run resumed)"
            )
        line = "; ".join(parts) + f"{took}  run {run.run_id}"
        print_(line, markup=False)
        if run.resumed_tests:
            print_(
                f"resumed: {run.resumed_tests} test(s) kept their verdicts from the stored run "
                "(not run again; marked '(resumed …)' above)",
                markup=False,
            )
        if run.judge:  # the judge's spend, apart from the agent's
            judge = run.judge
            print_(
                f"judge: {judge['calls']} call(s), {judge['cached']} from the cache, "
                f"{judge['tokens']} tokens, ${judge['cost_usd']:.4f}",
                markup=False,
            )
        if run.simulator:  # the simulated user's spend (conversation tests), apart too
            spent = run.simulator
            print_(
                f"simulator: {spent['calls']} call(s), {spent['cached']} from the cache, "
                f"{spent['tokens']} tokens, ${spent['cost_usd']:.4f}",
                markup=False,
            )
