"""The diff section: `assertly diff` of two stored runs, text and JSON."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import diff_bench
from harness import ASSERTLY, Run, log, run_measured


@contextlib.contextmanager
def built_store(run: Run, name: str, filename: str, what: str) -> Iterator[Path]:
    """diff_bench's store (runs of `Sizes.diff` tests) in a scratch directory, removed after.

    The store is gigabytes at a million tests, so it goes as soon as its section is done.
    """
    log(f"{name}: building {what}")
    directory = run.work / name
    directory.mkdir()
    store = directory / filename
    diff_bench.build_store(store, run.sizes.diff)
    try:
        yield store
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def section_diff(run: Run) -> None:
    """`assertly diff` of two runs of N tests each (1 % regressed), text and JSON: wall, RSS."""
    count = run.sizes.diff
    with built_store(
        run, "diff", "diff.sqlite", f"two runs of {count:,} tests in one store"
    ) as store:
        _measure(run, store)


def _measure(run: Run, store: Path) -> None:
    count, directory = run.sizes.diff, store.parent
    found: dict[str, Any] = {"tests": count, "store_mb": store.stat().st_size / 2**20}
    for label, extra in (("text", []), ("json", ["--format", "json", "-o", "diff.json"])):
        log(f"diff: assertly diff base cand ({label})")
        command = [str(ASSERTLY), "diff", "base", "cand", "--store", str(store), *extra]
        found[label] = run_measured(command, cwd=directory, log_file=directory / f"{label}.log")
    run.results["diff"] = found
    for label in ("text", "json"):
        measured = found[label]
        workload = f"2 runs x {count:,} tests, 1 % regressed"
        if measured["exit_code"] != 1:  # regressions: exit 1 is the right answer
            run.table.add("diff", workload, f"assertly diff ({label})", "failed")
            continue
        run.table.add(
            "diff",
            workload,
            f"assertly diff --format {label}: wall",
            f"{measured['wall_s']:.1f} s",
            1.0,
            f"peak RSS {measured['max_rss_kb'] / 1024:,.0f} MiB (targets: under 60 s, 200 MB); "
            f"store {found['store_mb']:,.0f} MiB",
        )
