"""The end-to-end section: `assertly run` against `promptfoo eval` on the same fixture cases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import engine_workload as ew
import workload as wl
from harness import ASSERTLY, Run, assertly_run, log, run_measured
from sections.peer_runs import promptfoo_eval


def _mean_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean wall time and the largest peak RSS of several measured runs."""
    return {
        "wall_s": sum(found["wall_s"] for found in runs) / len(runs),
        "max_rss_kb": max(found["max_rss_kb"] or 0 for found in runs),
        "exit_code": max(found["exit_code"] for found in runs),
        "runs": runs,
    }


def section_end_to_end(run: Run) -> None:
    """`assertly run` vs `promptfoo eval` over the same fixture cases: wall time, peak RSS.

    The two tools' runs alternate (assertly, promptfoo, assertly, …), so that both meet the
    same stretch of machine time (see the engine section on this machine's speed).
    """
    n, table, count = run.sizes.e2e, run.table, run.sizes.e2e_runs
    log(f"end to end: {n:,} cases x 8 assertions, {count} run(s) of each tool, alternating")
    directory = run.work / "e2e"
    directory.mkdir()
    outputs = [text for _, text in wl.typed_outputs(n, seed=ew.SEED + 1)]
    test_file, fixtures = wl.write_test_suite(directory, outputs, wl.E2E_TYPES, "e2e")
    target = f"fixtures:{fixtures}"
    promptfoo = run.peer("promptfoo")
    config = wl.promptfoo_config(outputs, wl.E2E_TYPES, "end to end")
    # Like for like: promptfoo's `eval -o out.json` writes a JSON report of every case, so the
    # runs compared with it write one too (`-o report.json`); the plain run, without a report,
    # is measured as well, for the share the report takes.
    reported_runs: list[dict[str, Any]] = []
    plain_runs: list[dict[str, Any]] = []
    theirs_runs: list[dict[str, Any]] = []
    out: Path | None = None
    report = directory / "report.json"
    for number in range(count):
        reported_runs.append(
            assertly_run(
                directory, f"assertly_report_{number}", test_file, target, "-o", str(report)
            )
        )
        if promptfoo is not None:
            found, out = promptfoo_eval(promptfoo, config, run.work, f"pf_e2e_{number}")
            theirs_runs.append(found)
        plain_runs.append(assertly_run(directory, f"assertly_{number}", test_file, target))
    plain = _mean_run(plain_runs)
    reported = _mean_run(reported_runs)
    # Loading and compiling alone, to tell how much of the wall time precedes the first call.
    validate = run_measured(
        [str(ASSERTLY), "validate", str(test_file)],
        cwd=directory,
        log_file=directory / "validate.log",
    )
    e2e: dict[str, Any] = {
        "cases": n,
        "assertions": wl.E2E_TYPES,
        "assertly": plain,
        "assertly_with_json_report": reported,
        "assertly_validate": validate,
    }
    run.results["end_to_end"] = e2e
    label = f"{n:,} cases x 8 assertions"
    if plain["exit_code"] not in (0, 1) or reported["exit_code"] not in (0, 1):
        table.add("end to end", label, "assertly run", f"failed: exit {plain['exit_code']}")
        return
    summary = json.loads(report.read_text())["summary"]
    reported["summary"] = summary
    table.add(
        "end to end",
        label,
        "assertly run -o report.json: wall",
        f"{reported['wall_s']:.2f} s",
        1.0,
        f"fixtures target, --store tmp.sqlite, a JSON report of every case as promptfoo's -o "
        f"out.json; mean of {count}; the run itself (first call to last verdict) "
        f"{summary['duration_ms'] / 1000:.2f} s of it",
    )
    table.add(
        "end to end",
        label,
        "assertly run -o report.json: peak RSS",
        f"{reported['max_rss_kb'] / 1024:,.0f} MiB",
        1.0,
    )
    table.add(
        "end to end",
        label,
        "assertly run (no report): wall",
        f"{plain['wall_s']:.2f} s",
        plain["wall_s"] / reported["wall_s"],
        f"the same run without -o; mean of {count}; not compared with a peer",
    )
    table.add(
        "end to end",
        label,
        "assertly validate: wall",
        f"{validate['wall_s']:.2f} s",
        validate["wall_s"] / reported["wall_s"],
        "loading and compiling the tests alone, no run",
    )
    if promptfoo is None:
        table.add("end to end", label, "promptfoo", run.missing("promptfoo"))
    else:
        _end_to_end_promptfoo(run, e2e, theirs_runs, out, report, reported)
    table.add(
        "end to end",
        label,
        "runsight-core",
        "no CLI",
        None,
        "runsight-core is a library; its command line is the separate runsight app",
    )


def _end_to_end_promptfoo(
    run: Run,
    e2e: dict[str, Any],
    theirs_runs: list[dict[str, Any]],
    out: Path | None,
    report: Path,
    reported: dict[str, Any],
) -> None:
    """promptfoo's end-to-end rows, compared with assertly's run that writes a JSON report."""
    n, table, count = run.sizes.e2e, run.table, run.sizes.e2e_runs
    label = f"{n:,} cases x 8 assertions"
    name = run.peer_name("promptfoo")
    theirs = _mean_run(theirs_runs)
    e2e["promptfoo"] = theirs
    if not all(found["finished"] for found in theirs_runs) or out is None:
        table.add("end to end", label, f"{name} eval", f"failed: exit {theirs['exit_code']}")
    else:
        ours = wl.assertly_report_verdicts(report)
        _, verdicts = wl.promptfoo_verdicts(out)
        differ = [
            index
            for index, row in enumerate(verdicts)
            if row is None
            or index not in ours
            or ours[index][0] != all(row)
            or abs(ours[index][1] - sum(row) / len(row)) > 1e-9
        ]
        # Which assertions the differing cases disagree on, for the reader to tell a bug from
        # a documented difference of meaning (see docs/performance.md, "Method").
        mine = wl.assertly_report_passes(report, wl.E2E_TYPES)
        by_type: Counter[str] = Counter()
        for index in differ:
            row = verdicts[index]
            if row is not None and index in mine:
                by_type.update(
                    entry["type"]
                    for entry, ours_passed, theirs_passed in zip(
                        wl.E2E_TYPES, mine[index], row, strict=True
                    )
                    if (ours_passed == "1") != theirs_passed
                )
        e2e["cases_differing"] = len(differ)
        e2e["cases_differing_first"] = differ[:10]
        e2e["assertions_differing_by_type"] = dict(by_type)
        run.agreement["promptfoo end to end"] = {
            "cases": n,
            "cases_differing": len(differ),
            "assertions_differing_by_type": dict(by_type),
        }
        table.add(
            "end to end",
            label,
            f"{name} eval: wall",
            f"{theirs['wall_s']:.2f} s",
            theirs["wall_s"] / reported["wall_s"],
            f"echo provider, -o out.json; mean of {count}; {len(differ)} cases judged "
            "differently; compared with assertly's run -o report.json",
        )
        table.add(
            "end to end",
            label,
            f"{name} eval: peak RSS",
            f"{theirs['max_rss_kb'] / 1024:,.0f} MiB",
            theirs["max_rss_kb"] / reported["max_rss_kb"],
        )
