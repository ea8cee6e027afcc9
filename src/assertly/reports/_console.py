"""Console output of a run: a progress bar on a terminal (counts so far and ETA), plain lines
otherwise; then one block per failing test with its failing assertions, and a summary.
"""

from __future__ import annotations

import sys
from typing import Any

from ..engine._values import dumps
from ..runner import RunRecord

__all__ = ["ConsoleReporter"]


def _short(value: Any, limit: int = 200) -> str:
    text = f"'{value}'" if isinstance(value, str) else dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConsoleReporter:
    """Progress while running, failures and a summary at the end."""

    def __init__(self, total: int, *, stream: Any = None, force_plain: bool = False) -> None:
        from rich.console import Console

        self.stream = stream or sys.stdout
        self.console = Console(file=self.stream, highlight=False, soft_wrap=True)
        self.interactive = self.console.is_terminal and not force_plain
        self.total = total
        self.counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        self._progress: Any = None
        self._task: Any = None

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
        """Runner listener."""
        if event != "test":
            return
        test, status = data
        self.counts[status] += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, **self.counts)
        else:
            self.console.print(f"{status.upper():7} {test.file}::{test.suite}::{test.id}")

    def summary(self, run: RunRecord) -> None:
        """Failing tests with their failing assertions, evals, then totals."""
        print_ = self.console.print
        colour = self.interactive
        for test in run.tests:
            if test.status in ("passed", "skipped"):
                continue
            style = "red" if test.status == "failed" else "magenta"
            where = f"{test.file}:{test.line}" if test.line else test.file
            header = f"{test.status.upper()} {test.suite}::{test.id}  ({where})"
            print_(f"[{style}]{header}[/]" if colour else header, markup=colour)
            for trial in test.trials:
                if trial.status in ("passed", "skipped"):
                    continue
                prefix = f"  trial {trial.trial}: " if len(test.trials) > 1 else "  "
                if trial.error:
                    print_(f"{prefix}error: {trial.error}", markup=False)
                for failure in trial.failures:
                    print_(f"{prefix}✗ {failure['assertion']}: {failure['message']}", markup=False)
                    if failure.get("path"):
                        print_(f"      path:     {failure['path']}", markup=False)
                    if failure.get("expected") is not None:
                        print_(f"      expected: {_short(failure['expected'])}", markup=False)
                    if failure.get("actual") is not None:
                        print_(f"      actual:   {_short(failure['actual'])}", markup=False)
            if test.flaky:
                print_(f"  flaky: {test.passes}/{len(test.trials)} trials passed", markup=False)
        for suite in run.evals:
            verdict = "PASSED" if suite.passed else "FAILED"
            print_(
                f"EVAL {verdict} {suite.file}: score {suite.score:.3f} (threshold {suite.threshold:g})",
                markup=False,
            )
            for case in suite.cases:
                if case.status != "passed":
                    detail = case.error or "; ".join(
                        f"[{block}] {r['assertion']}: {r['message']}"
                        for block, result in case.blocks.items()
                        for r in result.get("results", [])
                        if not r.get("passed")
                    )
                    print_(f"  {case.status} {case.id} (score {case.score:.3f}): {detail}", markup=False)
        for problem in run.problems:
            print_(f"PROBLEM {problem}", markup=False)
        for warning in run.warnings:
            print_(f"warning: {warning}", markup=False)
        s = run.summary()
        line = (
            f"{s['total']} total, {s['passed']} passed, {s['failed']} failed, "
            f"{s['errored']} errored, {s['skipped']} skipped "
            f"({s['pass_rate'] * 100:.1f}% pass rate) in {s['duration_ms'] / 1000:.2f}s  run {run.run_id}"
        )
        print_(line, markup=False)
