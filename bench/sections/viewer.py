"""The viewer section: `assertly view`, the first page of a large run, cold and warm."""

from __future__ import annotations

import viewer_bench
from harness import Run
from sections.diff import built_store


def section_viewer(run: Run) -> None:
    """`assertly view`: the first page of an N-test run (complete responses, first and warm)."""
    count = run.sizes.diff
    with built_store(
        run, "viewer", "view.sqlite", f"a store with a run of {count:,} tests"
    ) as store:
        found = viewer_bench.measure(store)
    run.results["viewer"] = {"tests": count, **found}
    for name, times in found.items():
        run.table.add(
            "viewer",
            f"a run of {count:,} tests",
            f"assertly view: {name}",
            f"{times['cold_s'] * 1000:.0f} ms",
            None,
            f"warm {times['warm_s'] * 1000:.0f} ms (target: first page under 1 s)",
        )
