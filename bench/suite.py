"""The benchmark suite behind `make bench`: assertly against its peers, in one run.

Not a test, and never part of `make test`. Every figure of the table comes from this run, on
inputs generated here from one seed, so every ratio compares the same work:

* engine: responses judged per second, in-process, for engine_bench's mixes (a typed list and
  an expect dict of 10 assertions each); the same typed-list workload through runsight-core
  (`run_assertions_sync`, in its own venv), through promptfoo's `assertions.runAssertions`
  (in-process, Node) and through `promptfoo eval` (echo provider, outputs as variables, CLI
  start-up subtracted), and a hand-written Python baseline. The peers' verdicts are compared
  with assertly's, assertion by assertion, on every response.
* end to end: `assertly run` over a 5,000-case fixture suite (8 typed assertions each) against
  `promptfoo eval` on the same cases: wall time and peak RSS.
* runner: 2,000 tests against a local HTTP agent answering after 50 ms, at -j 64: tests per
  second as a fraction of the ideal 64 / 0.05 s = 1,280/s.
* diff: `assertly diff` of two stored runs of 1,000,000 tests each (text and JSON).
* start-up: `assertly --version` and `python -c "import assertly"`, and the peers' own, in
  interleaved rounds (mean and median of every command's runs).
* trajectory: tool-call assertions (`tool-called`, `tool-sequence`, `tool-call-count`, four
  trajectory assertions) against a plain `contains` (and `is-json`, which parses JSON as they
  must) on the same tool-calling responses, in every format assertly reads: checks per second
  and the ratio of times, overall and per format (`--only trajectory`).

This machine's speed moves by up to twofold for seconds at a time, so the tools are timed in
interleaved rounds (see `interleaved`), and the suite reports how much CPU other processes took
during each section, warning when that inflates the figures.

    .venv/bin/python bench/suite.py                  # the full run (5 to 10 minutes)
    .venv/bin/python bench/suite.py --quick          # smaller inputs, about 2 minutes
    .venv/bin/python bench/suite.py --update-docs    # also rewrite the table in docs/performance.md

Peers are installed on demand into bench/.peers/ (bench/peers.py); one that cannot be installed
is reported as such. Results: the table on stdout (progress on stderr), and
bench/results/latest.json with every raw figure.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import assertly
import diff_bench
import engine_bench as eb
import peers as peer_install
import scaleout_bench
import trajectory_workload as tw
import viewer_bench
import workload as wl

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS = ROOT / "results" / "latest.json"
DOCS = REPO / "docs" / "performance.md"
ASSERTLY = Path(sys.executable).parent / "assertly"
GNU_TIME = Path("/usr/bin/time")
CONCURRENCY = 64
DELAY_S = 0.05
IDEAL_PER_S = CONCURRENCY / DELAY_S  # 1,280 tests/s
CHUNKS = 7  # each peer judges 1/7 of the outputs per engine round
TYPED_NAMES = [entry["type"] for entry in eb.TYPED]
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
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    core = eb._pin_to_one_core()
    times = []
    try:
        for _ in range(samples):
            started = time.perf_counter()
            total = 0
            for i in range(200_000):
                total += i * i
            times.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
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


def _rate(value: float, unit: str) -> str:
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


# --- engine ------------------------------------------------------------------------------------

# Why the engine figures interleave: this machine's vCPUs change speed by up to twofold for
# seconds at a time (the speed probe shows it), so two tools timed one after the other can meet
# different machines. Instead the suite times them in rounds: in every round, assertly, the
# baseline, runsight-core and promptfoo each judge for a similar slice of time (the peers one
# chunk of the outputs each, in turn), so every tool's figure is averaged over the same
# stretch of time. A figure is total time over responses judged, in all its slots.


def assertly_passes(typed: assertly.Expectation, outputs: Sequence[str]) -> list[str]:
    """Per-assertion verdicts of mix (a), one '1'/'0' string per response."""
    return ["".join("1" if r.passed else "0" for r in typed.check(t).results) for t in outputs]


def compare(
    ours: Sequence[str], theirs: Sequence[str | None], outputs: Sequence[str], limit: int = 3
) -> dict[str, Any]:
    """Where a peer's per-assertion verdicts differ from assertly's."""
    by_type: Counter[str] = Counter()
    examples = []
    differing = missing = 0
    for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        if other is None or len(other) != len(mine):
            missing += 1
            continue
        diffs = [i for i, (a, b) in enumerate(zip(mine, other, strict=True)) if a != b]
        if not diffs:
            continue
        differing += 1
        by_type.update(TYPED_NAMES[i] for i in diffs)
        if len(examples) < limit:
            verdicts = {TYPED_NAMES[i]: {"assertly": mine[i], "peer": other[i]} for i in diffs}
            examples.append({"response": index, "verdicts": verdicts, "output": outputs[index]})
    return {
        "responses_compared": len(ours) - missing,
        "responses_without_verdicts": missing,
        "responses_differing": differing,
        "assertions_differing_by_type": dict(by_type),
        "examples": examples,
    }


class Worker:
    """A peer's engine in its own process, judging one chunk per `PASS k` (peer_*.py/.mjs)."""

    def __init__(self, command: list[str], env: dict[str, str], verdicts: Path, log: Path):
        self.verdicts_path = verdicts
        self._log = log.open("w")
        self.process = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        self.slots: list[tuple[float, int]] = []

    def ready(self) -> dict[str, Any]:
        """Wait for the untimed pass; its verdicts."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "READY":
            self.close()
            raise RuntimeError(f"peer worker failed: see {self._log.name}")
        found: dict[str, Any] = json.loads(self.verdicts_path.read_text())
        return found

    def timed(self, chunk: int) -> None:
        """One timed chunk."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"PASS {chunk}\n")
        self.process.stdin.flush()
        seconds, responses = self.process.stdout.readline().split()
        self.slots.append((float(seconds), int(responses)))

    def close(self) -> None:
        """QUIT, and wait."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.write("QUIT\n")
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def start_workers(run: Run, outputs: list[str], chunks: int) -> dict[str, Worker]:
    """The installed peers' engine workers, loaded and past their untimed pass."""
    workers: dict[str, Worker] = {}
    if (runsight := run.peer("runsight")) is not None:
        assertions = [dict(entry) for entry in eb.TYPED]
        for entry in assertions:
            if entry["type"] == "is-json":
                entry.setdefault("value", None)  # see wl.RUNSIGHT_SUBSTITUTIONS
        spec = run.work / "runsight_in.json"
        spec.write_text(
            json.dumps({"assertions": assertions, "outputs": outputs, "chunks": chunks})
        )
        verdicts = run.work / "runsight_verdicts.json"
        command = [
            str(runsight.executable),
            str(ROOT / "peer_runsight.py"),
            str(spec),
            str(verdicts),
        ]
        workers["runsight"] = Worker(
            command, peer_install.PEER_ENV, verdicts, run.work / "runsight.log"
        )
    if (promptfoo := run.peer("promptfoo")) is not None:
        asserts = [wl.promptfoo_assert(entry) for entry in eb.TYPED]
        spec = run.work / "promptfoo_in.json"
        spec.write_text(json.dumps({"assertions": asserts, "outputs": outputs, "chunks": chunks}))
        verdicts = run.work / "promptfoo_verdicts.json"
        command = [
            "node",
            str(ROOT / "peer_promptfoo.mjs"),
            str(promptfoo.package_dir),
            str(spec),
            str(verdicts),
        ]
        env = {**peer_install.PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(run.work / "pfhome")}
        workers["promptfoo"] = Worker(command, env, verdicts, run.work / "promptfoo.log")
    return workers


def _pass_s(loop: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    loop()
    return time.perf_counter() - started


def interleaved(run: Run, typed: assertly.Expectation, outputs: list[str]) -> dict[str, Any]:
    """Mix (a) by assertly, the baseline and every installed peer, in interleaved rounds."""
    sizes = run.sizes
    rounds = sizes.rounds  # a multiple of CHUNKS: every chunk is timed as often as the others
    log(f"engine: starting the peers' workers ({', '.join(run.peers) or 'none'})")
    workers = start_workers(run, outputs, CHUNKS)
    found: dict[str, Any] = {}
    try:
        ours = assertly_passes(typed, outputs)  # untimed: verdicts and warm-up
        base = ["".join("1" if ok else "0" for ok in eb.baseline_typed(t)) for t in outputs]
        run.agreement["hand-written baseline"] = compare(ours, base, outputs)
        for key, worker in workers.items():
            verdicts = worker.ready()
            found[key] = {k: v for k, v in verdicts.items() if k != "passes"}
            run.agreement[f"{key} in-process"] = compare(ours, verdicts["passes"], outputs)

        def judge_all() -> None:
            for text in outputs:
                typed.check(text)

        def baseline_all() -> None:
            for text in outputs:
                all(eb.baseline_typed(text))

        # Each round gives assertly and the baseline about `slot_s` of passes over all outputs.
        per_pass = {"assertly": _pass_s(judge_all), "baseline": _pass_s(baseline_all)}
        loops = {"assertly": judge_all, "baseline": baseline_all}
        repeats = {k: max(1, round(sizes.slot_s / v)) for k, v in per_pass.items()}
        slots: dict[str, list[tuple[float, int]]] = {"assertly": [], "baseline": []}
        log(
            f"engine: {rounds} interleaved rounds; per round {repeats['assertly']} assertly "
            f"passes, {repeats['baseline']} baseline passes, one chunk (1/{CHUNKS}) per peer"
        )
        affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        core = eb._pin_to_one_core()
        try:
            for number in range(rounds):
                for key, loop in loops.items():
                    for _ in range(repeats[key]):
                        slots[key].append((_pass_s(loop), len(outputs)))
                for worker in workers.values():
                    worker.timed(number % CHUNKS)
        finally:
            if affinity is not None:
                os.sched_setaffinity(0, affinity)
    finally:
        for worker in workers.values():
            worker.close()
    for key, worker in workers.items():
        slots[key] = worker.slots
    for key, taken in slots.items():
        seconds, responses = sum(s for s, _ in taken), sum(r for _, r in taken)
        found.setdefault(key, {}).update(
            slots=taken,
            timed_s=seconds,
            responses_judged=responses,
            us_per_response=seconds / responses * 1e6,
            responses_per_s=responses / seconds,
        )
    found["rounds"], found["chunks"], found["cpu_pinned"] = rounds, CHUNKS, core
    return found


def _timed(found: dict[str, Any]) -> str:
    return f"{found['timed_s']:.1f} s timed, {found['responses_judged']:,} judged"


def section_engine(run: Run) -> None:
    """Responses judged per second: mix (a) against the baseline and the peers; (b), (c), (b')."""
    sizes = run.sizes
    n = sizes.engine
    rng = random.Random(eb.SEED)
    typed, expect = assertly.compile(eb.TYPED), assertly.compile(eb.EXPECT)
    typed_items = eb.make_responses(rng, n, wl.TYPED_WEIGHTS)
    expect_items = eb.make_responses(rng, n, {"json": 0.75, "fenced": 0.25})
    assert typed_items == wl.typed_outputs(n), "the peers must get mix (a)'s exact outputs"
    outputs = [text for _, text in typed_items]
    found = interleaved(run, typed, outputs)
    engine: dict[str, Any] = {"responses": n, "mix_a": found}
    run.results["engine"] = engine
    kinds = Counter(kind for kind, _ in typed_items)
    engine["mix_a_kinds"] = dict(kinds)
    engine["mix_a_mean_chars"] = sum(len(t) for t in outputs) / n

    a = found["assertly"]
    a_us = a["us_per_response"]
    table = run.table
    label = f"(a) typed list, 10 assertions, {n:,} responses"
    table.add(
        "engine",
        label,
        f"assertly {assertly.__version__}",
        _rate(a["responses_per_s"], "resp/s"),
        1.0,
        f"{a_us:.1f} µs/response, one core; {_timed(a)}",
    )
    rows = [
        ("baseline", "hand-written Python", "hand-written baseline", ""),
        (
            "runsight",
            f"{run.peer_name('runsight')} in-process",
            "runsight in-process",
            ", one core",
        ),
        ("promptfoo", f"{run.peer_name('promptfoo')} in-process", "promptfoo in-process", ""),
    ]
    for key, tool, agreement, where in rows:
        if key not in found:
            table.add("engine", "(a)", tool, run.missing(key))
            continue
        us = found[key]["us_per_response"]
        differ = run.agreement[agreement]["responses_differing"]
        table.add(
            "engine",
            "(a)",
            tool,
            _rate(found[key]["responses_per_s"], "resp/s"),
            us / a_us,
            f"{us:,.1f} µs{where}; {_timed(found[key])}; {differ} of {n:,} responses judged "
            "differently"
            + (
                f"; assertly takes {a_us / us:.2f}x its time (target <= {eb.TARGETS['(a)']:g}x)"
                if key == "baseline"
                else ""
            ),
        )
    promptfoo_eval_row(run, outputs, a_us)
    expect_mixes(run, typed, expect, typed_items, expect_items)


def expect_mixes(
    run: Run,
    typed: assertly.Expectation,
    expect: assertly.Expectation,
    typed_items: list[tuple[str, str]],
    expect_items: list[tuple[str, str]],
) -> None:
    """(b), (c), (b'): assertly alone (no peer has the expect dict), one after the other."""
    sizes, table, n = run.sizes, run.table, run.sizes.engine
    engine = run.results["engine"]
    dicts = [("dict", json.loads(text)) for kind, text in expect_items if kind == "json"]
    plans = {
        ("(b)", "expect dict, 10 assertions"): [(expect, *item) for item in expect_items],
        ("(c)", "mixed, alternating (a)/(b)"): [
            (typed, *typed_items[i]) if i % 2 == 0 else (expect, *expect_items[i]) for i in range(n)
        ],
        ("(b')", "expect dict on parsed dicts"): [(expect, *item) for item in dicts],
    }
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    eb._pin_to_one_core()
    mixes = []
    try:
        for (name, description), plan in plans.items():
            seconds = _pass_s(lambda plan=plan: [e.check(r) for e, _, r in plan])
            passes = max(3, math.ceil(sizes.rounds * sizes.slot_s / seconds))
            mixes.append(eb.bench_engine(name, description, plan, passes))
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
    engine["mixes"] = [asdict(mix) for mix in mixes]
    floors = expect_floors(run, expect, {"(b)": expect_items, "(b')": dicts})
    for mix in mixes:
        us = sum(mix.runs_s) / len(mix.runs_s) / mix.responses * 1e6
        note = f"{us:.1f} µs/response; {sum(mix.runs_s):.1f} s timed"
        if mix.name == "(b)":
            note += "; no peer has the expect-dict dialect"
        table.add(
            "engine",
            f"{mix.name} {mix.description}",
            "assertly",
            _rate(1e6 / us, "resp/s"),
            None,
            note,
        )
        if mix.name in floors:
            floor_row(table, mix.name, floors[mix.name])
    found = engine["mix_a"]
    a_ratio = found["assertly"]["us_per_response"] / found["baseline"]["us_per_response"]
    engine["over_floor"] = {"(a)": a_ratio, **{k: v["ratio"] for k, v in floors.items()}}


def floor_row(table: Table, name: str, floor: dict[str, Any]) -> None:
    """The hand-written floor of an expect-dict mix, with assertly's ratio to it."""
    ours, mine = floor["assertly_us"], floor["floor_us"]
    table.add(
        "engine",
        name,
        "hand-written Python",
        _rate(1e6 / mine, "resp/s"),
        mine / ours,
        f"{mine:.1f} µs; interleaved with assertly's {ours:.1f} µs over {floor['rounds']} "
        f"rounds: assertly takes {floor['ratio']:.2f}x its time (target <= "
        f"{eb.TARGETS[name]:g}x); {floor['disagreements']} of {floor['responses']:,} "
        "responses judged differently",
    )


def expect_floors(
    run: Run, expect: assertly.Expectation, items: dict[str, list[tuple[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """(b) and (b') against the hand-written floor, in alternating passes on one core."""
    found: dict[str, dict[str, Any]] = {}
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    eb._pin_to_one_core()
    try:
        for name, pairs in items.items():
            responses = [response for _, response in pairs]
            disagreements = sum(
                eb.baseline_expect(r) != [x.passed for x in expect.check(r).results]
                for r in responses
            )

            def ours(responses: list[Any] = responses) -> None:
                for response in responses:
                    expect.check(response)

            def floor(responses: list[Any] = responses) -> None:
                for response in responses:
                    all(eb.baseline_expect(response))

            seconds = _pass_s(ours)
            rounds = max(6, math.ceil(run.sizes.rounds * run.sizes.slot_s / seconds / 2))
            spent = {"assertly": 0.0, "floor": 0.0}
            for _ in range(rounds):
                spent["assertly"] += _pass_s(ours)
                spent["floor"] += _pass_s(floor)
            count = len(responses) * rounds
            ours_us, floor_us = spent["assertly"] / count * 1e6, spent["floor"] / count * 1e6
            found[name] = {
                "assertly_us": ours_us,
                "floor_us": floor_us,
                "ratio": ours_us / floor_us,
                "rounds": rounds,
                "responses": len(responses),
                "disagreements": disagreements,
            }
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
    run.results["engine"]["expect_floors"] = found
    return found


def promptfoo_eval(
    peer: peer_install.Peer, config: dict[str, Any], work: Path, name: str
) -> tuple[dict[str, Any], Path]:
    """`promptfoo eval` on a generated config: offline, a fresh config directory and database."""
    directory = work / name
    directory.mkdir()
    config_path = directory / "promptfooconfig.yaml"
    wl.write_promptfoo_config(config_path, config)
    out = directory / "out.json"
    env = {**peer_install.PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(directory / "home")}
    command = [
        str(peer.executable), "eval", "-c", str(config_path),
        "--no-cache", "--no-progress-bar", "-o", str(out),
    ]  # fmt: skip
    figures = run_measured(command, cwd=directory, log_file=directory / "eval.log", env=env)
    # promptfoo exits 100 when a test failed, as assertly exits 1: both are a finished run.
    figures["finished"] = out.exists() and figures["exit_code"] in (0, 100)
    return figures, out


def promptfoo_eval_row(run: Run, outputs: list[str], assertly_us: float) -> None:
    """Mix (a) through `promptfoo eval`: the cost per response, start-up subtracted."""
    promptfoo = run.peer("promptfoo")
    if promptfoo is None:
        run.table.add("engine", "(a)", "promptfoo eval", run.missing("promptfoo"))
        return
    n, name = len(outputs), run.peer_name("promptfoo")
    log(f"engine: promptfoo eval, echo provider, on 10 and on {n:,} tests")
    small, _ = promptfoo_eval(
        promptfoo, wl.promptfoo_config(outputs[:10], eb.TYPED, "engine, 10"), run.work, "pf_10"
    )
    full, out = promptfoo_eval(
        promptfoo, wl.promptfoo_config(outputs, eb.TYPED, "engine"), run.work, "pf_engine"
    )
    found: dict[str, Any] = {"tests_10": small, "tests_all": full}
    run.results["engine"]["promptfoo_eval"] = found
    if not (full["finished"] and small["finished"]):
        code = full["exit_code"] if not full["finished"] else small["exit_code"]
        run.table.add("engine", "(a)", f"{name} eval", f"failed: exit {code}", None, "see eval.log")
        return
    echoed, passes = wl.promptfoo_verdicts(out)
    ours = assertly_passes(assertly.compile(eb.TYPED), outputs)
    theirs = ["".join("1" if p else "0" for p in row) if row else None for row in passes]
    agreement = compare(ours, theirs, outputs)
    agreement["outputs_not_echoed_verbatim"] = sum(
        e != o for e, o in zip(echoed, outputs, strict=True)
    )
    run.agreement["promptfoo eval"] = agreement
    # Judging cost per response: the difference between the two runs (start-up, config
    # loading and the fixed costs of an eval cancel out).
    us = (full["wall_s"] - small["wall_s"]) / (n - 10) * 1e6
    found.update(us_per_response=us, responses_per_s=1e6 / us)
    run.table.add(
        "engine",
        "(a)",
        f"{name} eval (echo)",
        _rate(1e6 / us, "resp/s"),
        us / assertly_us,
        f"{us:,.0f} µs = ({full['wall_s']:.1f} s - {small['wall_s']:.1f} s for 10) / {n - 10:,}; "
        f"{agreement['responses_differing']} of {n:,} responses judged differently",
    )


# --- end to end --------------------------------------------------------------------------------


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
    outputs = [text for _, text in wl.typed_outputs(n, seed=eb.SEED + 1)]
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


# --- scale -------------------------------------------------------------------------------------


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
    outputs = [text for _, text in wl.typed_outputs(5_000, seed=eb.SEED + 2)]
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


# --- trajectory ---------------------------------------------------------------------------------

TRAJECTORY_WORKLOADS: dict[str, list[dict[str, Any]]] = {
    "contains": tw.CONTAINS,
    "is-json": [{"type": "is-json"}],
    "tool-called": tw.TOOL_CALLED,
    "tool-sequence": tw.TOOL_SEQUENCE,
    "tool-call-count": tw.TOOL_CALL_COUNT,
    "4 x contains": tw.FOUR_CONTAINS,
    "4 trajectory": tw.FOUR_TRAJECTORY,
}


def section_trajectory(run: Run) -> None:
    """Trajectory checks per second against a plain `contains` on the same responses.

    Every timed check builds the `Response` from the output as the runner does, so a JSON
    text reply is parsed, and its calls read, within the check. Workloads and formats are
    timed in interleaved rounds on one core. Each slot is a few milliseconds, so a burst of
    another process's work can double one; a figure is the best of its rounds, the time the
    work takes when nothing else interferes, for assertly and `contains` alike.
    """
    n = run.sizes.engine
    rng = random.Random(eb.SEED + 16)
    items = tw.make_responses(rng, n)
    by_format = {name: items[index :: len(tw.FORMATS)] for index, name in enumerate(tw.FORMATS)}
    compiled = {name: assertly.compile(spec) for name, spec in TRAJECTORY_WORKLOADS.items()}
    verdicts: dict[str, dict[str, int]] = {}
    for name, expectation in compiled.items():  # untimed: warm-up and a look at the verdicts
        outcomes = Counter(
            expectation.check(output, context=context).outcome.value for output, context in items
        )
        verdicts[name] = dict(outcomes)
    log(f"trajectory: {len(compiled)} workloads x {len(by_format)} formats, {n:,} responses")
    timed: dict[tuple[str, str], float] = {}
    rounds = run.sizes.rounds * 4
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    eb._pin_to_one_core()
    try:
        for _ in range(rounds):
            for format, group in by_format.items():
                for name, expectation in compiled.items():

                    def loop(expectation: Any = expectation, group: Any = group) -> None:
                        for output, context in group:
                            expectation.check(output, context=context)

                    key = (name, format)
                    timed[key] = min(timed.get(key, math.inf), _pass_s(loop))
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
    checks = {name: len(TRAJECTORY_WORKLOADS[name]) for name in compiled}
    per_check_us: dict[str, float] = {}
    per_format: dict[str, dict[str, float]] = {}
    for name in compiled:
        seconds = sum(timed[(name, format)] for format in by_format)
        per_check_us[name] = seconds / (n * checks[name]) * 1e6
        per_format[name] = {
            format: timed[(name, format)] / (len(group) * checks[name]) * 1e6
            for format, group in by_format.items()
        }
    run.results["trajectory"] = {
        "responses": n,
        "rounds": rounds,
        "workloads": TRAJECTORY_WORKLOADS,
        "verdicts": verdicts,
        "us_per_check": per_check_us,
        "us_per_check_by_format": per_format,
    }
    label = f"{n:,} tool-calling responses, 5 formats, best of {rounds} rounds"
    base = per_check_us["contains"]
    for name in compiled:
        us = per_check_us[name]
        if name.startswith("4 "):
            reference, against = per_check_us["4 x contains"], "4 x contains"
        else:
            reference, against = base, "contains"
        note = f"{us:.2f} µs/check, {us / reference:.2f}x the time of {against}"
        if name in ("tool-called", "tool-sequence", "tool-call-count", "4 trajectory"):
            base_by_format = per_format[against]
            ratios = ", ".join(
                f"{format} {per_format[name][format] / base_by_format[format]:.1f}x"
                for format in by_format
            )
            note += f" (by format: {ratios})"
        run.table.add("trajectory", label, name, _rate(1e6 / us, "checks/s"), None, note)


# --- runner ------------------------------------------------------------------------------------


def section_runner(run: Run) -> None:
    """2,000 tests at -j 64 against the 50 ms agent: tests/s and the fraction of 1,280/s."""
    n = run.sizes.runner
    log(f"runner: {n:,} tests against a 50 ms HTTP agent at -j {CONCURRENCY}")
    directory = run.work / "runner"
    directory.mkdir()
    outputs = [text for _, text in wl.typed_outputs(n)]
    test_file, _ = wl.write_test_suite(directory, outputs, eb.TYPED, "runner")
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
        _rate(found["tests_per_s"], "tests/s"),
        None,
        f"{found['fraction_of_ideal']:.0%} of the ideal {IDEAL_PER_S:,.0f}/s; "
        f"{seconds:.2f} s as the run reports it",
    )
    run.table.add(
        "runner",
        label,
        "assertly run: the process",
        _rate(found["tests_per_s_wall"], "tests/s"),
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


# --- start-up ----------------------------------------------------------------------------------


def section_startup(run: Run) -> None:
    """`assertly --version`, `import assertly`, the interpreter's floor; the peers' own.

    In rounds, like the engine: every round runs every command, the short ones several times,
    so that each command gets about `Sizes.min_timed_s` of runs spread over the same stretch of
    time.
    """
    sizes = run.sizes
    python = sys.executable
    commands: list[tuple[str, str, str, list[str], dict[str, str] | None, str | None]] = [
        ("assertly --version", "assertly --version", "assertly",
         [str(ASSERTLY), "--version"], None, "assertly --version"),
        ("import assertly", 'python -c "import assertly"', "assertly",
         [python, "-c", "import assertly"], None, "import assertly"),
        ("python -c pass", "python -c pass", "the interpreter alone",
         [python, "-c", "pass"], None, None),
    ]  # fmt: skip
    if (promptfoo := run.peer("promptfoo")) is not None:
        commands.append(
            ("promptfoo --version", "CLI --version", run.peer_name("promptfoo"),
             [str(promptfoo.executable), "--version"], peer_install.PEER_ENV,
             "assertly --version")
        )  # fmt: skip
    if (runsight := run.peer("runsight")) is not None:
        commands.append(
            ("import runsight_core.assertions.deterministic", "import the assertion engine",
             run.peer_name("runsight"),
             [str(runsight.executable), "-c", "import runsight_core.assertions.deterministic"],
             peer_install.PEER_ENV, "import assertly")
        )  # fmt: skip
    rounds = sizes.startup_runs
    # One untimed run each (file cache, bytecode) also sizes the rounds.
    first = {key: wall_of(command, env) for key, _, _, command, env, _ in commands}
    repeats = {key: max(1, math.ceil(sizes.min_timed_s / (rounds * t))) for key, t in first.items()}
    log(
        f"start-up: {rounds} rounds of every command, short ones repeated "
        f"(>= {sizes.min_timed_s:g} s per command)"
    )
    walls: dict[str, list[float]] = {key: [] for key in first}
    for _ in range(rounds):
        for key, _, _, command, env, _ in commands:
            walls[key] += [wall_of(command, env) for _ in range(repeats[key])]
    found: dict[str, Any] = {}
    for key, workload, tool, _, _, versus in commands:
        taken = walls[key]
        mean, median = sum(taken) / len(taken), statistics.median(taken)
        found[key] = {"mean_s": mean, "median_s": median, "walls_s": taken}
        ratio = mean / found[versus]["mean_s"] if versus else None
        note = f"mean of {len(taken)} runs (median {median * 1000:,.0f} ms)"
        if key.startswith("import runsight"):
            note += "; imports litellm"
        run.table.add("start-up", workload, tool, f"{mean * 1000:,.0f} ms", ratio, note)
    run.results["startup"] = found


# --- main --------------------------------------------------------------------------------------


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


def print_agreement(agreement: dict[str, Any]) -> None:
    """Every peer's verdicts against assertly's, with the first disagreements."""
    if not agreement:
        return
    print("\nverdicts against assertly's on the same responses:")
    for name, found in agreement.items():
        if "cases" in found:
            by_type = ", ".join(
                f"{k} {v}" for k, v in sorted(found.get("assertions_differing_by_type", {}).items())
            )
            print(
                f"  {name}: {found['cases_differing']} of {found['cases']:,} cases differ in "
                "pass/fail or score" + (f" ({by_type})" if by_type else "")
            )
            continue
        by_type = ", ".join(
            f"{k} {v}" for k, v in sorted(found["assertions_differing_by_type"].items())
        )
        line = (
            f"  {name}: {found['responses_differing']} of {found['responses_compared']:,} "
            "responses differ, assertion by assertion"
        )
        if by_type:
            line += f" ({by_type})"
        if found["responses_without_verdicts"]:
            line += f"; {found['responses_without_verdicts']} without verdicts"
        if found.get("outputs_not_echoed_verbatim"):
            line += f"; {found['outputs_not_echoed_verbatim']} outputs not echoed verbatim"
        print(line)
        for example in found["examples"]:
            print(f"    response {example['response']}: {json.dumps(example['verdicts'])}")
            print(f"      output: {example['output'][:120]!r}")


def update_docs(run: Run, peers: dict[str, peer_install.Peer], created: datetime) -> None:
    """Replace the measured part of docs/performance.md, between its markers."""
    start, end = "<!-- bench:table:start -->", "<!-- bench:table:end -->"
    text = DOCS.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{DOCS}: markers {start} and {end} not found")
    m, results = run.results["machine"], run.results
    lines = [
        start,
        f"Measured on {created:%Y-%m-%d} at {created:%H:%M} UTC by `make bench"
        + (" BENCH_ARGS=--quick" if results["quick"] else "")
        + f"`, assertly {results['assertly']} at commit `{results['commit']}`, in "
        + f"{results['total_s']:.0f} s.",
        "",
        f"- machine: {m['nproc']} CPUs (`nproc`), {m['cpu']} (/proc/cpuinfo), {m['memory']}",
        f"- Python {m['python']}, Node {m['node']}, {m['platform']}",
    ]
    for peer in peers.values():
        took = f", installed in {peer.install_s:.0f} s" if peer.install_s else ""
        lines.append(f"- peer: {peer.status}{took}")
    lines += ["", run.table.markdown(), "", RATIO_NOTE, ""]
    lines += [f"- {results['contention_line']}", f"- {speed_line(results['speed_probe'])}"]
    lines += [f"- {warning}" for warning in results["contention_warnings"]]
    for name, found in run.agreement.items():
        if "cases" in found:
            lines.append(
                f"- verdicts, {name}: {found['cases_differing']} of {found['cases']:,} cases "
                "differ from assertly's in pass/fail or score"
            )
        else:
            lines.append(
                f"- verdicts, {name}: {found['responses_differing']} of "
                f"{found['responses_compared']:,} responses differ from assertly's, assertion "
                "by assertion"
            )
    lines.append(end)
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    DOCS.write_text(before + "\n".join(lines) + after, encoding="utf-8")
    print(f"updated {DOCS.relative_to(REPO)}")


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


# --- diff ----------------------------------------------------------------------------------------


def section_diff(run: Run) -> None:
    """`assertly diff` of two runs of N tests each (1 % regressed), text and JSON: wall, RSS."""
    count = run.sizes.diff
    log(f"diff: building two runs of {count:,} tests in one store")
    directory = run.work / "diff"
    directory.mkdir()
    store = directory / "diff.sqlite"
    diff_bench.build_store(store, count)
    found: dict[str, Any] = {"tests": count, "store_mb": store.stat().st_size / 2**20}
    for label, extra in (("text", []), ("json", ["--format", "json", "-o", "diff.json"])):
        log(f"diff: assertly diff base cand ({label})")
        command = [str(ASSERTLY), "diff", "base", "cand", "--store", str(store), *extra]
        found[label] = run_measured(command, cwd=directory, log_file=directory / f"{label}.log")
    run.results["diff"] = found
    for label in ("text", "json"):
        measured = found[label]
        workload = f"2 runs x {count:,} tests, 1 % regressed"
        if measured["exit_code"] != 1:  # regressions: exit 1 is the right answer
            run.table.add("diff", workload, f"assertly diff ({label})", "failed")
            continue
        run.table.add(
            "diff",
            workload,
            f"assertly diff --format {label}: wall",
            f"{measured['wall_s']:.1f} s",
            1.0,
            f"peak RSS {measured['max_rss_kb'] / 1024:,.0f} MiB (targets: under 60 s, 200 MB); "
            f"store {found['store_mb']:,.0f} MiB",
        )
    shutil.rmtree(directory, ignore_errors=True)


# --- viewer --------------------------------------------------------------------------------------


def section_viewer(run: Run) -> None:
    """`assertly view`: the first page of an N-test run (complete responses, first and warm)."""
    count = run.sizes.diff
    log(f"viewer: building a store with a run of {count:,} tests")
    directory = run.work / "viewer"
    directory.mkdir()
    store = directory / "view.sqlite"
    viewer_bench.build_store(store, count)
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
    shutil.rmtree(directory, ignore_errors=True)


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
        note = f"{_rate(cpu, unit)} per CPU-second"
        run.table.add(
            "similar", workload, f"assertly similar: {name}", _rate(wall, f"{unit}/s"), None,
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


# --- scale-out -----------------------------------------------------------------------------------


def section_scaleout(run: Run) -> None:
    """The PostgreSQL store against SQLite, and the Ray backend against a local run."""
    count = run.sizes.stores
    outputs = [text for _, text in wl.typed_outputs(5_000, seed=eb.SEED + 3)]
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


SECTIONS: dict[str, Callable[[Run], None]] = {
    "engine": section_engine,
    "end to end": section_end_to_end,
    "runner": section_runner,
    "py agent": section_py_agent,
    "start-up": section_startup,
    "scale": section_scale,
    "diff": section_diff,
    "trajectory": section_trajectory,
    "viewer": section_viewer,
    "similar": section_similar,
    "scale-out": section_scaleout,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every section, print the table, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats")
    parser.add_argument("--no-peers", action="store_true", help="neither install nor run peers")
    parser.add_argument("--update-docs", action="store_true", help="rewrite docs/performance.md")
    parser.add_argument("-o", "--output", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        help="run only this section (repeatable; the docs are not updated)",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    created = datetime.now(UTC)
    sizes = Sizes.make(args.quick)
    prepare_bytecode()
    peers = install_peers(args.no_peers)

    run = Run(sizes, peers, Path(tempfile.mkdtemp(prefix="assertly-bench-")))
    run.results.update(
        created=created.isoformat(timespec="seconds"),
        commit=eb._git_commit(),
        assertly=assertly.__version__,
        machine=machine(),
        quick=args.quick,
        seed=eb.SEED,
        sizes=asdict(sizes),
        peers={key: {**asdict(peer), "status": peer.status} for key, peer in peers.items()},
        substitutions={
            "promptfoo": wl.PROMPTFOO_SUBSTITUTIONS,
            "runsight-core": wl.RUNSIGHT_SUBSTITUTIONS,
        },
    )
    log("speed probe")
    run.results["speed_probe"] = speed_probe(40)
    contention = Contention()
    try:
        for name, section in SECTIONS.items():
            if not args.only or name in args.only:
                contention.measure(name, lambda section=section: section(run))
    finally:
        if os.environ.get("BENCH_KEEP_WORKDIR"):
            log(f"kept {run.work}")
        else:
            shutil.rmtree(run.work, ignore_errors=True)

    m = run.results["machine"]
    header = (
        f"assertly {assertly.__version__} benchmark suite, {created:%Y-%m-%d %H:%M} UTC"
        f"{' (--quick)' if args.quick else ''}, commit {run.results['commit']}; "
        f"{m['nproc']} x {m['cpu']}, {m['memory']}, Python {m['python']}, Node {m['node']}"
    )
    peers_line = "peers: " + ("; ".join(p.status for p in peers.values()) or "none (--no-peers)")
    print(header)
    print(peers_line)
    print()
    print(run.table.text())
    print()
    print(RATIO_NOTE)
    print(contention.line())
    print(speed_line(run.results["speed_probe"]))
    for warning in contention.warnings():
        print(warning)
    print_agreement(run.agreement)
    run.results.update(
        contention=contention.sections,
        contention_line=contention.line(),
        contention_warnings=contention.warnings(),
        agreement=run.agreement,
        table=run.table.rows,
        table_markdown=run.table.markdown(),
        total_s=time.perf_counter() - started,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(run.results, indent=2, default=str) + "\n", encoding="utf-8")
    shown = args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output
    print(f"\nwrote {shown} ({run.results['total_s']:.0f} s)")
    if args.update_docs and not args.only:
        update_docs(run, peers, created)
    return 0


if __name__ == "__main__":
    sys.exit(main())
