"""Every checker that writes generated code is drawn by the equivalence properties.

A checker class with an ``emit`` method writes its pass test into the generated fast function
(engine/_fast.py); the properties of test_fast_path.py and test_fast_path_trajectory.py prove
that code agrees with the checker's own `check`, but only for the assertions their strategies
draw. The emitters are found by introspection (every built-in family loaded, every leaf
subclass of `Checker` with ``emit``), and named with the assertions that build them from the
catalogue of test_properties.py (an example of every assertion); a new emitter, or a new
assertion built on one, that the strategies never draw fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import test_fast_path
import test_fast_path_trajectory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import EXPECTATIONS

import assertly
from assertly import Expectation
from assertly.engine._base import Checker
from assertly.engine._registry import load_families
from assertly.engine.typed._wrapper import TypedAssertion

DRAWS = settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _subclasses(cls: type) -> Iterator[type]:
    for subclass in cls.__subclasses__():
        yield subclass
        yield from _subclasses(subclass)


def emitter_classes() -> set[type]:
    """The concrete (leaf) checker classes of the built-in assertions that have ``emit``."""
    load_families()
    return {
        cls
        for cls in _subclasses(Checker)
        if cls.__module__.startswith("assertly.engine.")
        and hasattr(cls, "emit")
        and not cls.__subclasses__()
    }


def _slots(checker: Checker) -> Iterator[Any]:
    for cls in type(checker).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(checker, name):
                yield getattr(checker, name)


def checkers_in(checker: Checker) -> Iterator[Checker]:
    """``checker`` and every checker inside it (``one_of`` alternatives, negated forms …)."""
    yield checker
    for value in _slots(checker):
        items = value if isinstance(value, tuple | list) else (value,)
        for item in items:
            for inner in item if isinstance(item, tuple | list) else (item,):
                if isinstance(inner, Checker):
                    yield from checkers_in(inner)


# test_properties.py has no trajectory assertions: one example of each.
TRAJECTORY_EXAMPLES: list[Any] = [
    {
        "tools_called": ["search"],
        "tools_not_called": ["delete"],
        "tool_sequence": ["search", "answer"],
        "max_tool_calls": 3,
    },
    [
        {"type": "tool-called", "value": {"name": "search", "args": {"q": "x"}}},
        {"type": "tool-sequence", "value": ["search", "answer"]},
        {"type": "tool-call-count", "value": {"max": 3}},
    ],
]


def emitted(expectation: Expectation) -> set[tuple[type, str]]:
    """The (emitter class, assertion name) pairs of a compiled expectation.

    The typed wrapper (a ``not-`` form, a transform) writes the same code around any checker,
    whose own pair is counted: it is named by its class alone.
    """
    return {
        (type(checker), "" if isinstance(checker, TypedAssertion) else checker.key)
        for top in expectation._checkers
        for checker in checkers_in(top)
        if hasattr(checker, "emit")
    }


def catalogued() -> set[tuple[type, str]]:
    """The emitter pairs of test_properties.py's examples of every assertion."""
    pairs: set[tuple[type, str]] = set()
    for expectation in EXPECTATIONS.values():
        pairs |= emitted(expectation)
    for spec in TRAJECTORY_EXAMPLES:
        pairs |= emitted(assertly.compile(spec))
    return pairs


def drawn() -> set[tuple[type, str]]:
    """The emitter pairs the equivalence properties' strategies draw (a fixed sample)."""
    pairs: set[tuple[type, str]] = set()
    strategies = st.one_of(
        test_fast_path.expect_dicts(),
        test_fast_path.typed_lists(),
        test_fast_path_trajectory.expect_dicts(),
        test_fast_path_trajectory.typed_lists(),
    )

    @DRAWS
    @given(strategies)
    def collect(spec: Any) -> None:
        pairs.update(emitted(assertly.compile(spec)))

    collect()
    return pairs


def test_every_emitter_is_in_the_catalogue() -> None:
    # An emitter class no example builds would escape the check below.
    missing = emitter_classes() - {cls for cls, _ in catalogued()}
    assert not missing, sorted(cls.__qualname__ for cls in missing)


def test_every_emitter_is_drawn_by_the_equivalence_properties() -> None:
    missing = catalogued() - drawn()
    assert not missing, sorted(f"{cls.__qualname__} ({key})" for cls, key in missing)


def test_the_introspection_finds_the_emitters() -> None:
    names = {cls.__qualname__ for cls in emitter_classes()}
    assert {"InRange", "FieldContainsText", "ToolCalled", "Contains"} <= names
    assert "TraceChecker" not in names  # a base, not built by any assertion
