"""The runner sections: an HTTP agent at -j 64, and an instant `py:` agent at -j 1 and -j 8."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import engine_workload as ew
import workload as wl
from harness import ROOT, Run, assertly_run, log, rate

CONCURRENCY = 64
DELAY_S = 0.05
IDEAL_PER_S = CONCURRENCY / DELAY_S  # 1,280 tests/s


def section_runner(run: Run) -> None:
    """2,000 tests at -j 64 against the 50 ms agent: tests/s and the fraction of 1,280/s."""
    n = run.sizes.runner
    log(f"runner: {n:,} tests against a 50 ms HTTP agent at -j {CONCURRENCY}")
    directory = run.work / "runner"
    directory.mkdir()
    outputs = [text for _, text in wl.typed_outputs(n)]
    test_file, _ = wl.write_test_suite(directory, outputs, ew.TYPED, "runner")
    outputs_file = directory / "outputs.json"
    outputs_file.write_text(json.dumps(outputs))
    report = directory / "report.json"
    agent = subprocess.Popen(
        [
            sys.executable, str(ROOT / "http_agent.py"), "--outputs", str(outputs_file),
            "--delay-ms", str(DELAY_S * 1000), "--max-seconds", "600",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert agent.stdout is not None
        port = int(agent.stdout.readline().split()[1])
        target = f"http://127.0.0.1:{port}/"
        figures = assertly_run(
            directory, "runner", test_file, target, "-j", str(CONCURRENCY), "-o", str(report)
        )
    finally:
        agent.terminate()
        rest, _ = agent.communicate(timeout=30)
    served = re.search(r"REQUESTS (\d+)", rest or "")
    summary = json.loads(report.read_text())["summary"]
    seconds = summary["duration_ms"] / 1000
    found = {
        **figures,
        "tests": n,
        "concurrency": CONCURRENCY,
        "agent_delay_s": DELAY_S,
        "requests_served": int(served.group(1)) if served else None,
        "summary": summary,
        "run_duration_s": seconds,
        "tests_per_s": n / seconds,
        "tests_per_s_wall": n / figures["wall_s"],
        "ideal_per_s": IDEAL_PER_S,
        "fraction_of_ideal": n / seconds / IDEAL_PER_S,
        "fraction_of_ideal_wall": n / figures["wall_s"] / IDEAL_PER_S,
    }
    run.results["runner"] = found
    label = f"{n:,} tests, 50 ms agent, -j {CONCURRENCY}"
    run.table.add(
        "runner",
        label,
        "assertly run: the run",
        rate(found["tests_per_s"], "tests/s"),
        None,
        f"{found['fraction_of_ideal']:.0%} of the ideal {IDEAL_PER_S:,.0f}/s; "
        f"{seconds:.2f} s as the run reports it",
    )
    run.table.add(
        "runner",
        label,
        "assertly run: the process",
        rate(found["tests_per_s_wall"], "tests/s"),
        None,
        f"{found['fraction_of_ideal_wall']:.0%} of the ideal; {figures['wall_s']:.2f} s wall, "
        "with start-up, loading and reports",
    )


def section_py_agent(run: Run) -> None:
    """A ``py:`` agent that answers at once: the runner's cost per call, -j 1 and -j 8.

    The agent runs in processes of its own (issue 28): what a call costs on top of the
    function is the run's duration over its tests, judging included (one `contains`).
    """
    n = run.sizes.runner
    directory = run.work / "py-agent"
    directory.mkdir()
    (directory / "bench_py_agent.py").write_text(
        "def answer(q):\n    return {'status': 'success', 'n': q['n']}\n", encoding="utf-8"
    )
    tests = [
        {"id": f"t{i}", "input": {"n": i}, "assertions": [{"type": "contains", "value": "success"}]}
        for i in range(n)
    ]
    test_file = directory / "py.tests.yaml"
    test_file.write_text(json.dumps({"agent": "bot", "test_suites": {"s": {"tests": tests}}}))
    found: dict[str, Any] = {}
    for jobs in (1, 8):
        log(f"py agent: {n:,} tests against an instant py: agent at -j {jobs}")
        report = directory / f"report-{jobs}.json"
        figures = assertly_run(
            directory, f"py-{jobs}", test_file, "py:bench_py_agent:answer",
            "-j", str(jobs), "-o", str(report),
        )  # fmt: skip
        seconds = json.loads(report.read_text())["summary"]["duration_ms"] / 1000
        found[f"j{jobs}"] = {**figures, "run_duration_s": seconds, "us_per_test": seconds / n * 1e6}
        run.table.add(
            "runner",
            f"{n:,} tests, instant py: agent, -j {jobs}",
            "assertly run: the run",
            f"{seconds / n * 1e6:,.0f} µs/test",
            None,
            f"{n / seconds:,.0f} tests/s; {figures['wall_s']:.2f} s wall",
        )
    run.results["py_agent"] = found
