"""The similar section: `similar` checks per second and the size of the extra."""

from __future__ import annotations

from harness import Run, log, rate


def section_similar(run: Run) -> None:
    """`similar` checks per second on one core and the size of the assertly[similar] extra."""
    import similar_bench
    from assertly.engine.graded._embeddings import BATCH, missing_extra

    if missing_extra() is not None:
        run.table.add(
            "similar", "checks/s", "assertly similar", "not run", None, missing_extra() or ""
        )
        return
    log("similar: embedding distinct outputs on one CPU")
    found = similar_bench.measure(200 if run.results.get("quick") else 600)
    run.results["similar"] = found
    workload = f"distinct outputs (~{found['tokens_per_output']:.0f} tokens), one CPU"
    rows = (
        ("one at a time (check, compile())", "single", "checks", ""),
        ("batched as in a run (-j 32)", "batched", "checks", "target >= 300/s"),
        (f"the model alone, batches of {BATCH}", "model", "embeddings", ""),
    )
    for name, kind, unit, target in rows:
        wall = found[f"{unit}_per_s_{kind}"]
        cpu = found[f"{unit}_per_cpu_s_{kind}"]
        note = f"{rate(cpu, unit)} per CPU-second"
        run.table.add(
            "similar", workload, f"assertly similar: {name}", rate(wall, f"{unit}/s"), None,
            f"{note}; {target}" if target else note,
        )  # fmt: skip
    extra = found["extra"]
    declared = ", ".join(f"{name} {size:,.0f}" for name, size in extra["declared_mb"].items())
    run.table.add(
        "similar", "pip install 'assertly[similar]'", "installed size",
        f"{extra['total_mb']:,.0f} MiB", None,
        f"{declared}, their dependencies {sum(extra['pulled_mb'].values()):,.0f} MiB; "
        f"{extra['new_mb']:,.0f} MiB beyond assertly's own; model load {found['load_s']:.2f} s",
    )  # fmt: skip
