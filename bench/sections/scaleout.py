"""The scale-out section: the PostgreSQL store against SQLite, the Ray backend against local."""

from __future__ import annotations

from typing import Any

import engine_workload as ew
import scaleout_bench
import workload as wl
from harness import ASSERTLY, Run, assertly_run, log, run_measured
from sections.scale import write_dataset


def section_scaleout(run: Run) -> None:
    """The PostgreSQL store against SQLite, and the Ray backend against a local run."""
    count = run.sizes.stores
    outputs = [text for _, text in wl.typed_outputs(5_000, seed=ew.SEED + 3)]
    directory = run.work / "stores"
    directory.mkdir()
    test_file = write_dataset(directory, outputs, count)
    found: dict[str, Any] = {"cases": count}
    log(f"scale-out: {count:,} recorded cases into SQLite")
    found["sqlite"] = assertly_run(directory, "sqlite", test_file, None)
    with scaleout_bench.fresh_database() as database:
        if database is not None:
            log(f"scale-out: {count:,} recorded cases into PostgreSQL")
            command = [str(ASSERTLY), "run", str(test_file), "--plain", "--store", database]
            found["postgres"] = run_measured(
                command, cwd=directory, log_file=directory / "postgres.log"
            )
    label = f"{count:,} recorded cases x 8 assertions"
    for name, tool in (("sqlite", "SQLite store"), ("postgres", "PostgreSQL store")):
        measured = found.get(name)
        if measured is None:
            why = "no PostgreSQL server (make postgres, or ASSERTLY_BENCH_POSTGRES_URL)"
            run.table.add("scale-out", label, f"assertly run, {tool}", "not measured", None, why)
            continue
        ratio = measured["wall_s"] / found["sqlite"]["wall_s"]
        run.table.add(
            "scale-out", label, f"assertly run, {tool}: wall", f"{measured['wall_s']:.1f} s",
            ratio, f"{count / measured['wall_s']:,.0f} rows/s; exit {measured['exit_code']}",
        )  # fmt: skip
    tests = run.sizes.ray_tests
    log(f"scale-out: {tests:,} calls of a 50 ms agent, local and on Ray (2 workers)")
    try:
        figures = scaleout_bench.ray_figures(run.work / "ray", tests, 0.05, 2)
    except (SystemExit, ImportError, OSError) as error:
        run.table.add("scale-out", f"{tests:,} calls, 50 ms agent, -j 2", "--backend ray",
                      "not measured", None, str(error)[:120])  # fmt: skip
        run.results["scale-out"] = found
        return
    found["ray"] = figures
    run.results["scale-out"] = found
    workload = f"{tests:,} calls, 50 ms agent, -j 2"
    for name, tool in (("local", "local run"), ("ray", "--backend ray, 2 workers")):
        measured = figures[name]
        run.table.add(
            "scale-out", workload, f"assertly {tool}: run", f"{measured['run_s']:.1f} s",
            measured["run_s"] / figures["local"]["run_s"],
            f"whole command {measured['wall_s']:.1f} s (the cluster's start included)",
        )  # fmt: skip
    run.table.add(
        "scale-out", workload, "Ray overhead per task", f"{figures['overhead_ms_per_task']:.1f} ms",
        None, "(Ray run - local run) x workers / tasks",
    )  # fmt: skip
