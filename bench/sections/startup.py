"""The start-up section: `assertly --version`, `import assertly`, the peers' own."""

from __future__ import annotations

import math
import statistics
import sys
from typing import Any

import peers as peer_install
from harness import ASSERTLY, Run, log, wall_of


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
