"""``run --backend ray`` against a local run: the same suite of slow agent calls, wall times.

N tests (default 200) call a real subprocess agent that sleeps S seconds (default 0.2) and
answers; each run is a fresh ``assertly run`` process at ``-j J`` (default 2). Three runs:

- local: the runner in one process;
- ray (own cluster): ``--backend ray``, which starts (and stops) a local Ray cluster;
- ray (running cluster): ``--backend ray --ray-address auto`` against a cluster started once
  with ``ray start --head`` (what a user with a standing cluster pays).

For each: the whole command's wall time, and the run's own duration (the report's
``duration_ms``: from the first call to the last verdict, after the workers are up). Prints a
table and writes bench/results/ray.json. Not part of ``make test``; run it by hand:

    .venv/bin/python bench/ray_bench.py [--tests 200] [--sleep 0.2] [-j 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
AGENT = (
    "import json, sys, time\nq = json.load(sys.stdin)\ntime.sleep({sleep})\n"
    "print(json.dumps({{'answer': q}}))\n"
)


def write_project(directory: Path, tests: int, sleep: float) -> None:
    (directory / "agent.py").write_text(AGENT.format(sleep=sleep))
    cases = [
        {"id": f"t{n}", "input": f"q{n}", "assertions": [{"type": "contains", "value": f"q{n}"}]}
        for n in range(tests)
    ]
    data = {"agent": "bot", "test_suites": {"s": {"tests": cases}}}
    (directory / "a.tests.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    config = {"agents": {"bot": f"cmd:{sys.executable} agent.py"}}
    (directory / "assertly.yaml").write_text(yaml.safe_dump(config))


def timed_run(directory: Path, name: str, extra: list[str], jobs: int) -> dict[str, Any]:
    report = directory / f"{name}.json"
    command = [str(BIN / "assertly"), "run", ".", "--plain", "-j", str(jobs), "-o", str(report)]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *extra], cwd=directory, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr}")
    summary = json.loads(report.read_text())["summary"]
    return {"wall_s": wall, "run_s": summary["duration_ms"] / 1000, "passed": summary["passed"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--sleep", type=float, default=0.2)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    ray = str(BIN / "ray")
    results: dict[str, Any] = {
        "tests": args.tests,
        "sleep_s": args.sleep,
        "jobs": args.jobs,
        "cores": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        write_project(directory, args.tests, args.sleep)
        results["local"] = timed_run(directory, "local", [], args.jobs)
        results["ray_own_cluster"] = timed_run(directory, "ray", ["--backend", "ray"], args.jobs)
        head = [ray, "start", "--head", "--include-dashboard", "false", "--disable-usage-stats"]
        started = time.perf_counter()
        subprocess.run([*head, "--node-ip-address", "127.0.0.1"], capture_output=True, check=True)
        results["ray_start_s"] = time.perf_counter() - started
        try:
            results["ray_running_cluster"] = timed_run(
                directory, "ray-auto", ["--backend", "ray", "--ray-address", "auto"], args.jobs
            )
        finally:
            subprocess.run([ray, "stop"], capture_output=True, check=False)
    ideal = args.tests * args.sleep / args.jobs
    print(
        f"{args.tests} tests, agent sleeps {args.sleep:g} s, -j {args.jobs}, {os.cpu_count()} cores"
    )
    print(f"(calls alone, perfectly overlapped: {ideal:.1f} s)")
    print(f"{'run':<22}{'wall s':>9}{'run s':>9}{'passed':>8}")
    for name in ("local", "ray_own_cluster", "ray_running_cluster"):
        found = results[name]
        print(f"{name:<22}{found['wall_s']:>9.2f}{found['run_s']:>9.2f}{found['passed']:>8}")
    print(f"ray start --head: {results['ray_start_s']:.2f} s")
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "ray.json").write_text(json.dumps(results, indent=2) + "\n")
    shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
