"""The scale section: a dataset suite through `assertly run` at two sizes, and its floor."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import engine_workload as ew
import workload as wl
from harness import ROOT, Run, assertly_run, log, run_measured


def write_dataset(directory: Path, outputs: list[str], count: int) -> Path:
    """A dataset suite over ``count`` recorded responses (the outputs, cycled)."""
    with (directory / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for index in range(count):
            record = {"id": f"case_{index:07d}", "output": outputs[index % len(outputs)]}
            handle.write(json.dumps(record) + "\n")
    suite = {"dataset": "cases.jsonl", "assertions": wl.E2E_TYPES}
    test_file = directory / "scale.tests.json"
    test_file.write_text(json.dumps({"agent": "bench", "test_suites": {"scale": {**suite}}}))
    return test_file


def _size_mb(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def _first_int(path: Path) -> int | None:
    found = re.search(r"\d+", path.read_text(encoding="utf-8")) if path.exists() else None
    return int(found.group(0)) if found else None


def _reported(report: Path, name: str) -> int | None:
    """A count of the summary at the top of an assertly JSON report."""
    if not report.exists():
        return None
    with report.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace")
    found = re.search(rf'"{name}": (\d+)', head)
    return int(found.group(1)) if found else None


def section_scale(run: Run) -> None:
    """A dataset suite of recorded responses through `assertly run` at two sizes: wall, RSS.

    The same command at 10x the cases shows whether memory grows with the number of cases.
    """
    outputs = [text for _, text in wl.typed_outputs(5_000, seed=ew.SEED + 2)]
    found: list[dict[str, Any]] = []
    for count in run.sizes.scale:
        log(f"scale: {count:,} recorded cases x 8 assertions through assertly run")
        directory = run.work / f"scale_{count}"
        directory.mkdir()
        test_file = write_dataset(directory, outputs, count)
        report = directory / "report.json"
        measured = assertly_run(directory, "scale", test_file, None, "-o", str(report))
        # The hand-written floor of the same work, just after (#20: assertly within 2x of it).
        floor = run_measured(
            [
                sys.executable, str(ROOT / "pipeline_floor.py"), str(test_file),
                str(directory / "floor.sqlite"), str(directory / "floor.json"),
            ],
            cwd=directory, log_file=directory / "floor.log",
        )  # fmt: skip
        floor["store_mb"] = _size_mb(directory / "floor.sqlite")
        floor["passed"] = _first_int(directory / "floor.log")
        measured["floor"] = floor
        measured.update(
            cases=count,
            dataset_mb=(directory / "cases.jsonl").stat().st_size / 2**20,
            store_mb=(directory / "scale.sqlite").stat().st_size / 2**20,
            report_mb=report.stat().st_size / 2**20 if report.exists() else None,
        )
        if report.exists():
            with report.open("rb") as handle:  # the summary is at the top of the report
                head = handle.read(4096).decode("utf-8", errors="replace")
            total = re.search(r'"total": (\d+)', head)
            measured["reported_total"] = int(total.group(1)) if total else None
        found.append(measured)
        measured["passed"] = _reported(report, "passed")
        for name in (
            "cases.jsonl", "scale.sqlite", "report.json", "scale.log", "floor.sqlite",
            "floor.sqlite-wal", "floor.sqlite-shm", "floor.json", "floor.log",
        ):  # fmt: skip
            (directory / name).unlink(missing_ok=True)  # gigabytes at a million cases
    run.results["scale"] = found
    for measured in found:
        label = f"{measured['cases']:,} recorded cases x 8 assertions"
        if (
            measured["exit_code"] not in (0, 1)
            or measured.get("reported_total") != measured["cases"]
        ):
            run.table.add("scale", label, "assertly run", f"failed: exit {measured['exit_code']}")
            continue
        rate = measured["cases"] / measured["wall_s"]
        run.table.add(
            "scale",
            label,
            "assertly run -o report.json: wall",
            f"{measured['wall_s']:.1f} s",
            1.0,
            f"{rate:,.0f} cases/s end to end; dataset {measured['dataset_mb']:,.0f} MiB, "
            f"store {measured['store_mb']:,.0f} MiB "
            f"({measured['store_mb'] / measured['dataset_mb']:.2f}x the dataset; target <= 1x), "
            f"report {measured['report_mb']:,.0f} MiB",
        )
        floor = measured["floor"]
        if floor["exit_code"] == 0:
            agree = "same" if floor["passed"] == measured["passed"] else "DIFFERENT"
            run.table.add(
                "scale",
                label,
                "hand-written pipeline floor: wall",
                f"{floor['wall_s']:.1f} s",
                floor["wall_s"] / measured["wall_s"],
                f"bench/pipeline_floor.py, run just after: read and parse the lines, judge with "
                f"the same compiled expectation, one SQLite row per case in batches, a JSON "
                f"report streamed; assertly takes {measured['wall_s'] / floor['wall_s']:.2f}x "
                f"its time (target <= 2x); {agree} pass count ({floor['passed']:,}); "
                f"peak RSS {floor['max_rss_kb'] / 1024:,.0f} MiB, store "
                f"{floor['store_mb']:,.0f} MiB",
            )
        run.table.add(
            "scale",
            label,
            "assertly run: peak RSS",
            f"{measured['max_rss_kb'] / 1024:,.0f} MiB",
            1.0,
            "a dataset suite: lines read as they run, verdicts streamed to the store and report",
        )
