"""The viewer over a big run: the first page of a run of N tests, served by ``assertly view``.

Builds the store of ``diff_bench`` (two runs of N tests), starts the real command on a free
loopback port, and times complete responses (first byte to last) of the run's first page as
JSON and as HTML, unfiltered and filtered by status, cold (the first request after start) and
warm. Used by ``bench/suite.py`` (section "viewer"); alone: ``python bench/viewer_bench.py [N]``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import diff_bench

build_store = diff_bench.build_store

PATHS = {
    "api first page": "api/runs/cand?limit=50",
    "page /runs/{id}": "runs/cand",
    "api failed only": "api/runs/cand?status=failed&limit=50",
    "api page 1,000": "api/runs/cand?limit=50&offset=49950",
}


def _get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        assert response.status == 200
    return time.perf_counter() - started


def measure(store: Path, repeats: int = 5) -> dict[str, Any]:
    """Seconds per complete response of each path: the first request, and the best of the
    repeats after it."""
    command = [
        str(Path(sys.executable).parent / "assertly"),
        "view", "--store", str(store), "--port", "0", "--no-open",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[2]
        found: dict[str, Any] = {}
        for name, path in PATHS.items():
            cold = _get(url + path)
            warm = min(_get(url + path) for _ in range(repeats))
            found[name] = {"cold_s": cold, "warm_s": warm}
        return found
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)


def main() -> int:
    tests = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    directory = Path(tempfile.mkdtemp())
    store = directory / "view.sqlite"
    diff_bench.build_store(store, tests)
    for name, times in measure(store).items():
        first, warm = times["cold_s"] * 1000, times["warm_s"] * 1000
        print(f"{name:>18}: first {first:7.1f} ms, then {warm:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
