"""The benchmark suite's harness: processes, timing, machine load, the table, the shared run.

Every section of bench/suite.py (bench/sections/) measures through these: `run_measured` for
a command's wall time and peak RSS, `pass_s` and `pinned` for in-process loops on one core,
`Contention` and `speed_probe` for how much the machine itself moved, `Table` for the printed
and Markdown table, and `Run` for what the sections share (sizes, peers, scratch directory,
results).
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import assertly
import peers as peer_install

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS = ROOT / "results" / "latest.json"
ASSERTLY = Path(sys.executable).parent / "assertly"
GNU_TIME = Path("/usr/bin/time")
RATIO_NOTE = (
    "x assertly: the tool's time (or memory) for the same work divided by assertly's, measured "
    "in this run on the same inputs; above 1, assertly is faster (or smaller)."
)


def log(message: str) -> None:
    """Progress on stderr, so that stdout is the table."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- processes ---------------------------------------------------------------------------------


def run_measured(
    command: Sequence[str], *, cwd: Path, log_file: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run a command: wall time, peak RSS (GNU time -v, else wait4, its mechanism), exit code."""
    full_env = {**os.environ, **(env or {})}
    with log_file.open("w", encoding="utf-8") as out:
        started = time.perf_counter()
        if GNU_TIME.exists():
            stats = log_file.with_suffix(".time")
            completed = subprocess.run(
                [str(GNU_TIME), "-v", "-o", str(stats), *command],
                cwd=cwd,
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
            wall = time.perf_counter() - started
            text = stats.read_text(encoding="utf-8", errors="replace")
            match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
            rss_kb = int(match.group(1)) if match else None
            code, how = completed.returncode, "/usr/bin/time -v"
        else:
            process = subprocess.Popen(
                command, cwd=cwd, env=full_env, stdout=out, stderr=subprocess.STDOUT
            )
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            rss_kb, code, how = usage.ru_maxrss, os.waitstatus_to_exitcode(status), "wait4"
    return {"wall_s": wall, "max_rss_kb": rss_kb, "exit_code": code, "measured_with": how}


def wall_of(command: Sequence[str], env: dict[str, str] | None = None) -> float:
    """Wall time of one run of ``command`` (output discarded; it must succeed)."""
    started = time.perf_counter()
    subprocess.run(
        command,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def assertly_run(
    directory: Path, name: str, test_file: Path, target: str | None, *extra: str
) -> Any:
    """`assertly run FILE [--target …] --plain --store NAME.sqlite`, measured."""
    targeting = ["--target", target] if target else []
    command = [
        str(ASSERTLY), "run", str(test_file), *targeting, "--plain",
        "--store", str(directory / f"{name}.sqlite"), *extra,
    ]  # fmt: skip
    return run_measured(command, cwd=directory, log_file=directory / f"{name}.log")


def pass_s(loop: Callable[[], object]) -> float:
    """Wall time of one call of ``loop``, after a collection (no collector debt carried in)."""
    gc.collect()
    started = time.perf_counter()
    loop()
    return time.perf_counter() - started


def pin_to_one_core() -> int | None:
    """Pin this process to the lowest core it may run on (that core), or None where it cannot."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
    except OSError:
        return None
    return core


@contextlib.contextmanager
def pinned() -> Iterator[int | None]:
    """Run the block pinned to one core (yields it, or None), then restore the affinity."""
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    core = pin_to_one_core()
    try:
        yield core
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)


class Contention:
    """CPU time other processes took while a section ran (/proc/stat minus our own usage).

    The machine has two cores; anything else running inflates every figure. The result says
    how much, per section, instead of leaving it unknown.
    """

    def __init__(self) -> None:
        self.sections: dict[str, dict[str, float]] = {}

    @staticmethod
    def _sample() -> tuple[float, float, float, float] | None:
        try:
            fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
        own = sum(
            getattr(resource.getrusage(who), name)
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
            for name in ("ru_utime", "ru_stime")
        )
        busy = (user + nice + system + irq + softirq) / tick
        return time.perf_counter(), busy, own, steal / tick

    def measure(self, name: str, section: Callable[[], None]) -> None:
        """Run ``section`` and record what the rest of the machine did meanwhile."""
        before = self._sample()
        try:
            section()
        finally:
            after = self._sample()
            if before is not None and after is not None:
                wall = after[0] - before[0]
                others = max(0.0, (after[1] - before[1]) - (after[2] - before[2]))
                self.sections[name] = {
                    "wall_s": wall,
                    "own_cpu_s": after[2] - before[2],
                    "others_cpu_s": others,
                    "others_cores": others / wall if wall else 0.0,
                    "steal_s": after[3] - before[3],
                }

    def warnings(self, limit: float = 0.25) -> list[str]:
        """Sections during which other processes used more than ``limit`` cores."""
        return [
            f"WARNING: other processes used {found['others_cores']:.2f} cores on average while "
            f"the {name} section ran: its figures are inflated; rerun on a quiet machine"
            for name, found in self.sections.items()
            if found["others_cores"] > limit
        ]

    def line(self) -> str:
        """One line for the output."""
        parts = [f"{name} {found['others_cores']:.2f}" for name, found in self.sections.items()]
        return (
            "other processes' CPU use while each section ran, in cores (of "
            f"{os.cpu_count()}): " + ", ".join(parts)
        )


def speed_probe(samples: int) -> dict[str, Any]:
    """Time one fixed pure-Python loop again and again, pinned to the engine's core.

    On a steady machine every sample takes the same time. The spread (and the share of samples
    near the fastest) says how much the machine's own speed moved during the run.
    """
    times = []
    with pinned() as core:
        for _ in range(samples):
            started = time.perf_counter()
            total = 0
            for i in range(200_000):
                total += i * i
            times.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    fastest = min(times)
    return {
        "core": core,
        "samples_ms": times,
        "min_ms": fastest,
        "median_ms": statistics.median(times),
        "max_ms": max(times),
        "share_within_25pct_of_min": sum(t <= 1.25 * fastest for t in times) / len(times),
    }


def speed_line(probe: dict[str, Any]) -> str:
    """One line for the output."""
    return (
        f"speed probe (a fixed loop, {len(probe['samples_ms'])} samples on CPU {probe['core']}): "
        f"min {probe['min_ms']:.1f} ms, median {probe['median_ms']:.1f} ms, max "
        f"{probe['max_ms']:.1f} ms; {probe['share_within_25pct_of_min']:.0%} of samples within "
        "25% of the fastest"
    )


# --- the table ---------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"


def rate(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:,.1f} {unit}"


@dataclass
class Table:
    """Rows of (section, workload, tool, result, x assertly, note)."""

    rows: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    head: tuple[str, ...] = ("section", "workload", "tool", "result", "x assertly", "note")

    def add(
        self,
        section: str,
        workload: str,
        tool: str,
        result: str,
        ratio: float | None = None,
        note: str = "",
    ) -> None:
        """One row; ``ratio`` is the tool's figure over assertly's."""
        self.rows.append((section, workload, tool, result, _x(ratio), note))

    def text(self) -> str:
        """Aligned columns; the note column is left ragged."""
        rows = [self.head, *self.rows]
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        lines = []
        for row in rows:
            cells = [
                row[i].rjust(widths[i]) if i in (3, 4) else row[i].ljust(widths[i])
                for i in range(5)
            ]
            lines.append(("  ".join(cells) + "  " + row[5]).rstrip())
        lines.insert(1, "-" * max(len(line) for line in lines))
        return "\n".join(lines)

    def markdown(self) -> str:
        """A Markdown table."""
        lines = ["| " + " | ".join(self.head) + " |", "|---|---|---|--:|--:|---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in self.rows]
        return "\n".join(lines)


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Sizes:
    """How much work each section does."""

    engine: int
    rounds: int  # interleaved engine rounds, a multiple of CHUNKS
    slot_s: float  # assertly's and the baseline's timed work per round
    min_timed_s: float  # start-up: at least this long per command
    e2e: int
    e2e_runs: int
    runner: int
    startup_runs: int
    scale: tuple[int, ...] = (100_000, 1_000_000)
    diff: int = 1_000_000  # tests in each of the two runs compared
    stores: int = 100_000  # recorded cases into SQLite and into PostgreSQL
    ray_tests: int = 2_000  # calls of a 50 ms agent, local and on Ray

    @classmethod
    def make(cls, quick: bool) -> Sizes:
        """Full or --quick."""
        if quick:
            return cls(1_000, rounds=7, slot_s=0.2, min_timed_s=1.5, e2e=1_000, e2e_runs=1,
                       runner=2_000, startup_runs=3, scale=(20_000, 100_000),
                       diff=100_000, stores=20_000, ray_tests=400)  # fmt: skip
        return cls(5_000, rounds=14, slot_s=0.5, min_timed_s=5.0, e2e=5_000, e2e_runs=2,
                   runner=2_000, startup_runs=5)  # fmt: skip


@dataclass
class Run:
    """What the sections share: sizes, peers, a scratch directory, the table, the results."""

    sizes: Sizes
    peers: dict[str, peer_install.Peer]
    work: Path
    table: Table = field(default_factory=Table)
    results: dict[str, Any] = field(default_factory=dict)
    agreement: dict[str, Any] = field(default_factory=dict)

    def peer(self, key: str) -> peer_install.Peer | None:
        """The installed peer, or None."""
        found = self.peers.get(key)
        return found if found is not None and found.installed else None

    def peer_name(self, key: str) -> str:
        """Name and version, for the table."""
        found = self.peer(key)
        name = {"runsight": "runsight-core", "promptfoo": "promptfoo"}[key]
        return f"{name} {found.version}" if found else name

    def missing(self, key: str) -> str:
        """Why a peer has no figure."""
        found = self.peers.get(key)
        return "not run (--no-peers)" if found is None else found.status


# --- the machine and the peers ---------------------------------------------------------------


def machine() -> dict[str, Any]:
    """nproc, CPU model, memory, Python and Node versions."""
    cpu = memory = None
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        memory = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError, IndexError):
        pass
    node = shutil.which("node")
    node_version = None
    if node:
        completed = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
        node_version = completed.stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": memory,
        "python": platform.python_version(),
        "node": node_version,
        "platform": platform.platform(),
    }


def prepare_bytecode() -> None:
    """Bytecode caches, as a normal (non-editable) installation has them.

    This machine may set PYTHONDONTWRITEBYTECODE, which would make every timed `assertly`
    start compile its source first.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(assertly.__file__).parent)],
        check=False,
    )


def install_peers(skip: bool) -> dict[str, peer_install.Peer]:
    """Peers first: a fresh clone installs them here, before anything is timed."""
    if skip:
        log("peers: skipped (--no-peers)")
        return {}
    log("peers: installing what is missing into bench/.peers/ (the first run: minutes)")
    peers = peer_install.install_all()
    for peer in peers.values():
        log(f"peers: {peer.status}")
    return peers


def git_commit() -> str | None:
    """The checkout's short commit, or None outside git."""
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except OSError:
        return None
    commit = completed.stdout.strip()
    return commit or None
