"""What a run's verdicts depend on beyond its test files: kept with the run, checked later.

- `verdict_config`: a digest of each config part that changes verdicts (sensitive prefixes,
  shape, facts, judge settings, plugins, ``--now``). ``--resume`` refuses a run whose parts
  changed since it started (`refuse_changed_config`): its stored verdicts were judged under
  the old ones.
- `shard_plan`: what a shard is a part of (filters, the config digest, the whole test set with
  each test's definition digest), for ``assertly merge`` (`assertly._digests`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._digests import canonical, plan_digest, tests_sum
from .._exceptions import ConfigError, Problem
from ..loading import ConfigModel, TestCase, definition_digest
from ._options import RunOptions
from ._selection import TestPlan

__all__ = [
    "describe_selection",
    "refuse_changed_config",
    "refuse_other_filters",
    "selection_of",
    "shard_plan",
    "verdict_config",
]

# The config parts that change verdicts, as they are called in messages, each with how to read
# it. Trials and pass thresholds are in each test's definition digest instead (a test whose
# trials or threshold changed is run again on --resume); see docs/decisions.md.
_PARTS: dict[str, Callable[[ConfigModel, RunOptions], Any]] = {
    "sensitive_prefixes": lambda config, options: config.sensitive_prefixes,
    "shape": lambda config, options: config.shape,
    "facts (config and --fact)": lambda config, options: {**config.facts, **options.facts},
    # The judge's API key is a secret and changes no verdict: never hashed, never stored.
    "judge": lambda config, options: (
        config.judge.model_dump(exclude={"api_key"}) if config.judge is not None else None
    ),
    "plugins": lambda config, options: config.plugins,
    # The time that time-dependent assertions judge against; None: the clock, as it goes.
    "--now": lambda config, options: options.now.isoformat() if options.now else None,
}


def verdict_config(config: ConfigModel, options: RunOptions) -> dict[str, Any]:
    """The digest of each config part that changes verdicts, and of them all."""
    parts = {name: definition_digest(read(config, options)) for name, read in _PARTS.items()}
    return {"digest": definition_digest(parts), "parts": parts}


def refuse_changed_config(
    current: dict[str, Any], stored: dict[str, Any], run_id: str, warn: Callable[[str], None]
) -> None:
    """``--resume``: refuse a run whose verdict-changing config parts changed since it began.

    A run stored before runs kept the digest is resumed with a warning (nothing to compare).

    Raises:
        ConfigError: A part changed; the message names each one and says what to do.
    """
    kept = stored.get("verdict_config")
    if not isinstance(kept, dict) or not isinstance(kept.get("parts"), dict):
        warn(
            f"run {run_id} was stored without a digest of its config: whether sensitive_prefixes, "
            "shape, facts, judge, plugins or --now changed since it began cannot be checked"
        )
        return
    if kept.get("digest") == current["digest"]:
        return
    parts: dict[str, Any] = kept["parts"]
    changed = [name for name, value in current["parts"].items() if parts.get(name, value) != value]
    unknown = [name for name in current["parts"] if name not in parts]
    if unknown:  # parts a later assertly checks: not stored with this run
        warn(f"run {run_id} was stored without a digest of {', '.join(unknown)}: not checked")
    if not changed:
        return
    raise ConfigError(
        [
            Problem(
                "--resume",
                f"run {run_id} was judged with another {', '.join(changed) or 'config'} than the "
                "config and options now give: its stored verdicts would not be those of this "
                "config, so it is not resumed. Start a new run (without --resume), or "
                f"`assertly recheck {run_id}` to judge its stored responses again under the "
                "config as it is now",
            )
        ]
    )


# The options that pick a run's tests, with their flags: a resume keeps the run's own.
_FILTERS = {
    "agents": "--agent",
    "suites": "--suite",
    "test_ids": "--test",
    "tags": "--tag",
    "keyword": "-k",
    "shard": "--shard",
}


def _filter_value(value: Any) -> Any:
    if isinstance(value, list | tuple | set):
        return sorted(value) or None
    return value or None


def refuse_other_filters(options: RunOptions, stored: dict[str, Any], run_id: str) -> None:
    """``--resume`` with other filters than the run's: refused before anything runs.

    A resumed run drops the stored tests its plan no longer holds (removed from the files);
    a narrower filter given to a resume would drop verdicts of tests that still exist.

    Raises:
        ConfigError: A filter given differs from the run's; the message names it.
    """
    changed = [
        flag
        for name, flag in _FILTERS.items()
        if name in stored and _filter_value(getattr(options, name)) != _filter_value(stored[name])
    ]
    if changed:
        raise ConfigError(
            [
                Problem(
                    "--resume",
                    f"run {run_id} was run with other {', '.join(changed)} than given now: a "
                    "resumed run keeps its own filters (give none, or the same); start a new "
                    "run for another selection",
                )
            ]
        )


def selection_of(options: RunOptions) -> dict[str, Any]:
    """The options that pick a shard's tests or change their verdicts (shown by merge)."""
    return {
        "agents": sorted(options.agents),
        "suites": sorted(options.suites),
        "test_ids": sorted(options.test_ids),
        "tags": sorted(options.tags),
        "keyword": options.keyword,
        "now": options.now.isoformat() if options.now else None,
        "count": int(options.shard.partition("/")[2]) if options.shard else None,
    }


def shard_plan(
    whole: TestPlan,
    definition_of: Callable[[TestCase], str],
    options: RunOptions,
    config: dict[str, Any],
) -> dict[str, Any]:
    """The plan of a shard run: its selection, config digest and the whole test set's digest.

    ``whole`` is every test the filters keep, before the split, and every eval suite's file:
    every shard of one split computes the same plan.
    """
    count, total = tests_sum((test.key, definition_of(test)) for test in whole)
    plan: dict[str, Any] = {
        "selection": selection_of(options),
        "config": config["digest"],
        "tests": count,
        "sum": total,
        "evals": whole.eval_files,
    }
    if whole.matrix is not None:  # a matrix run's labels, in order: the merged run's columns
        plan["targets"] = list(whole.matrix.labels)
    plan["digest"] = plan_digest(plan)
    return plan


def describe_selection(selection: Any) -> str:
    """A shard's selection in a message: the filters given, or ``no filters``."""
    if not isinstance(selection, dict):
        return repr(selection)
    given = {name: value for name, value in selection.items() if value and name != "count"}
    return canonical(given).decode() if given else "no filters"
