"""What ``assertly run`` accepts, shared by the CLI, the pytest plugin, resume and recheck.

Also how the options are stored with a run and read back from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any

from .._records import PassThreshold
from .._secrets import mask_url

__all__ = ["RunOptions", "options_dict", "parse_shard", "restore_options"]


@dataclass(slots=True)
class RunOptions:
    """Everything ``assertly run`` accepts."""

    paths: list[str] = field(default_factory=list)
    target: str | None = None
    # A matrix run's targets (`--target LABEL=SPEC`), label -> spec, in order: the first is the
    # base of comparisons.
    targets: dict[str, str] = field(default_factory=dict)
    concurrency: int | None = None
    trials: int | None = None
    pass_threshold: PassThreshold | None = None
    fail_fast: bool = False
    agents: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    test_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    keyword: str | None = None
    now: datetime | None = None
    facts: dict[str, bool] = field(default_factory=dict)
    timeout_s: float | None = None
    rate_limit: float | None = None
    resume: str | None = None
    store_path: str | None = None
    config_path: str | None = None
    shard: str | None = None  # "I/N": the I-th (1-based) of N disjoint parts of the tests
    backend: str = "local"  # "local", or "ray": calls and judging on a Ray cluster
    ray_address: str | None = None  # None: a local Ray cluster; "auto" or "ray://host:port"
    judge_cache: str | None = None  # rw (default), ro, off or replay
    cache: str | None = None  # the agent-response cache: rw, ro, off (default) or replay
    max_cost_usd: float | None = None  # the run budget: agents' reported cost plus the judge's
    name: str | None = None  # --name (or ASSERTLY_RUN_NAME): what the run is called in lists


# More parts than any CI fans out to; the number is stored with the run (issue 29: integers
# from the command line are bounded before they reach Python's or SQLite's limits).
MAX_SHARDS = 10_000


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` → ``(I, N)``, with 1 <= I <= N.

    Raises:
        ValueError: Not of that form; the message says what would be right.
    """
    index, _, count = text.partition("/")
    index, count = index.strip(), count.strip()
    if not (index.isascii() and index.isdigit() and count.isascii() and count.isdigit()):
        raise ValueError(f"--shard takes I/N, the I-th of N parts (e.g. 2/4), got {text!r}")
    if len(count) > len(str(MAX_SHARDS)) or int(count) > MAX_SHARDS:
        raise ValueError(f"--shard {text}: N must be at most {MAX_SHARDS:,}")
    number, parts = (int(index) if len(index) <= len(count) else int(count) + 1), int(count)
    if not 1 <= number <= parts:
        raise ValueError(f"--shard {text}: I must be between 1 and N (1/{parts} … {parts}/{parts})")
    return number, parts


# Options a resumed run or a recheck does not take from the stored run. --fail-fast: the
# failure that stopped the run is stored, so it would stop the resumed run at once (resuming is
# how the tests it skipped get run). --resume and --store only say where the run is.
# --backend and --ray-address say where it runs this time, not what the run is.
_NOT_RESTORED = frozenset({"fail_fast", "resume", "store_path", "backend", "ray_address"})


def restore_options(options: RunOptions, stored: dict[str, Any]) -> None:
    """Fill every option the command line left unset from a stored run's options.

    Used by ``--resume`` and ``assertly recheck``, so a resumed or re-checked run keeps the
    paths, target, filters, ``--now``, facts, trials, pass threshold, timeout, concurrency,
    rate limit and config file of the run it continues. Facts merge: a ``--fact`` given again
    overrides that fact only.
    """
    for item in fields(RunOptions):
        name = item.name
        value = stored.get(name)
        if name in _NOT_RESTORED or value is None:
            continue
        if name == "facts":
            options.facts = {**value, **options.facts}
        elif not getattr(options, name):
            setattr(options, name, datetime.fromisoformat(value) if name == "now" else value)


def options_dict(options: RunOptions, threshold: str, problems: list[str]) -> dict[str, Any]:
    """The options as stored with a run (what `restore_options` reads back)."""
    data = asdict(options)
    for name in ("target", "store_path"):  # stored with no password (`mask_url`)
        if isinstance(data.get(name), str):
            data[name] = mask_url(data[name])
    data["targets"] = {label: mask_url(spec) for label, spec in options.targets.items()}
    data["now"] = options.now.isoformat() if options.now else None
    data["pass_threshold"] = threshold
    data["problems"] = problems
    return data
