"""The loading section: a 3 MB test file loaded and compiled, and a 1-test suite's start-up.

Issue 35: a 3 MB test file loads and compiles in <= 0.15 s. The file is generated here from the
engine workload's seed: 5,000-odd tests of a typical agent suite (a name, tags, an input, and
either the 10 typed assertions of engine mix (a) with varied values, or the expect dict of
mix (b)), written as block YAML. Each measurement is a fresh interpreter that imports
`assertly.loading` first (not timed) and then times `load_paths` on the file: reading, parsing,
validating and compiling every test, as ``assertly validate`` and ``assertly run`` do. The
start-up rows time `assertly validate` and `assertly run` of a one-test suite answered by a
``cmd:`` agent, whole processes.
"""

from __future__ import annotations

import copy
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from engine_workload import EXPECT, SEED, TYPED
from harness import ASSERTLY, Run, log, wall_of

TARGET_BYTES = 3 * 1024 * 1024
TARGET_S = 0.15
TOPICS = ["security", "incident", "outage", "phishing", "access review", "backup", "billing"]

# In a fresh interpreter: import the loader, then time one load of the file (seconds).
_TIMED_LOAD = """\
import sys, time
from assertly.loading import load_paths
started = time.perf_counter()
loaded = load_paths([sys.argv[1]])
elapsed = time.perf_counter() - started
assert not loaded.problems and len(loaded.tests) == int(sys.argv[2]), loaded.problems[:3]
print(elapsed)
"""


def _test(index: int, rng: random.Random) -> dict[str, Any]:
    topic = rng.choice(TOPICS)
    test: dict[str, Any] = {
        "id": f"case_{index:05d}",
        "name": f"Searching for {topic} finds ranked notes ({index})",
        "tags": ["search", topic.replace(" ", "-")],
        "input": {"search_text": topic, "limit": rng.randint(1, 10)},
    }
    # Copies: shared objects would be written as YAML anchors and aliases, which test files
    # written by hand seldom have.
    if index % 3 == 2:
        test["expect"] = copy.deepcopy(EXPECT)
        return test
    assertions = copy.deepcopy(TYPED)
    assertions[0]["value"] = topic  # contains: the topic searched
    assertions[5]["value"] = f"Found {rng.randint(1, 5)} {topic} notes in January"
    test["assertions"] = assertions
    return test


def write_big_suite(path: Path, size: int = TARGET_BYTES) -> int:
    """A test file of about ``size`` bytes of block YAML; the number of tests in it."""
    count = 1_000
    for _ in range(2):  # a first file sizes the second
        rng = random.Random(SEED)
        tests = [_test(index, rng) for index in range(count)]
        suites = {
            f"suite_{number:02d}": {"name": f"Suite {number}", "tests": tests[start : start + 250]}
            for number, start in enumerate(range(0, len(tests), 250))
        }
        text = _dump({"agent": "bench", "version": 1, "test_suites": suites})
        count = round(count * size / len(text.encode()))
    path.write_text(text, "utf-8")
    return len(tests)


def _dump(data: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, width=100, allow_unicode=True)


def _one_test_suite(directory: Path) -> Path:
    suite = directory / "one.tests.yaml"
    suite.write_text(
        "agent: echo\nversion: 1\ntest_suites:\n  basic:\n    tests:\n      - id: greets\n"
        "        input: {q: hi}\n        assertions:\n"
        "          - {type: contains, value: hello}\n",
        "utf-8",
    )
    agent = f"cmd:{sys.executable} -c \"print('hello world')\""
    (directory / "assertly.yaml").write_text(f"agents:\n  echo: {json.dumps(agent)}\n", "utf-8")
    return suite


def section_loading(run: Run) -> None:
    """Load and compile a 3 MB test file (fresh processes); validate and run a 1-test suite."""
    directory = run.work / "loading"
    directory.mkdir(parents=True, exist_ok=True)
    big = directory / "big.tests.yaml"
    count = write_big_suite(big)
    size = big.stat().st_size
    runs = max(3, run.sizes.startup_runs)
    log(f"loading: {size / 2**20:.1f} MiB, {count:,} tests, {runs} fresh processes")
    command = [sys.executable, "-c", _TIMED_LOAD, str(big), str(count)]
    loads = [
        float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    ]
    median = statistics.median(loads)
    met = "met" if median <= TARGET_S else "missed"
    run.table.add(
        "loading",
        f"load and compile a {size / 2**20:.1f} MB test file ({count:,} tests)",
        "assertly",
        f"{median * 1000:,.0f} ms",
        None,
        f"median of {runs} fresh processes, imports excluded; target <= 150 ms ({met})",
    )
    suite = _one_test_suite(directory)
    walls: dict[str, list[float]] = {"validate": [], "run": []}
    for _ in range(runs):
        for verb in walls:
            walls[verb].append(_wall_in(directory, [str(ASSERTLY), verb, suite.name]))
    for verb, taken in walls.items():
        run.table.add(
            "start-up",
            f"assertly {verb} of a 1-test suite (cmd: agent)",
            "assertly",
            f"{statistics.median(taken) * 1000:,.0f} ms",
            None,
            f"median of {runs} runs, whole process",
        )
    run.results["loading"] = {
        "file_bytes": size,
        "tests": count,
        "load_s": loads,
        "median_load_s": median,
        "target_s": TARGET_S,
        "one_test_walls_s": walls,
    }


def _wall_in(directory: Path, command: list[str]) -> float:
    """`wall_of` run in ``directory`` (the suite's config is found there)."""
    return wall_of(["sh", "-c", 'cd "$0" && exec "$@"', str(directory), *command])
