"""Filter values that match nothing: a typo in ``--suite`` must not silently run fewer tests."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence

from .._exceptions import Problem
from ..loading import Dataset, TestCase

__all__ = ["unmatched_filters"]


def _unmatched(option: str, kind: str, given: Sequence[str], known: Iterable[str]) -> list[Problem]:
    names = sorted(set(known))
    problems = []
    for value in given:
        if value in names:
            continue
        close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        listed = ", ".join(names[:20]) + (", …" if len(names) > 20 else "") or "none"
        problems.append(
            Problem(option, f"'{value}' matches no {kind} in these files{hint}; {kind}s: {listed}")
        )
    return problems


def unmatched_filters(
    tests: Sequence[TestCase],
    datasets: Sequence[Dataset],
    *,
    agents: Sequence[str],
    suites: Sequence[str],
    test_ids: Sequence[str],
) -> list[Problem]:
    """A problem for each ``--agent``, ``--suite`` or ``--test`` value that matches nothing.

    Each value is checked on its own, against every test loaded (before any filter), so one
    misspelt value among several is caught too. ``--test`` patterns are not checked when a
    dataset is loaded: its case ids are known only once its lines are read.
    """
    problems = _unmatched(
        "--agent", "agent", agents, [t.agent for t in tests] + [d.agent for d in datasets]
    )
    problems += _unmatched(
        "--suite", "suite", suites, [t.suite for t in tests] + [d.suite for d in datasets]
    )
    if datasets:
        return problems
    ids = sorted({test.id for test in tests})
    for pattern in test_ids:
        if any(fnmatch.fnmatchcase(test_id, pattern) for test_id in ids):
            continue
        close = difflib.get_close_matches(pattern, ids, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        problems.append(Problem("--test", f"'{pattern}' matches no test id in these files{hint}"))
    return problems
