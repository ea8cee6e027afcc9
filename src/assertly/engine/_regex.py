"""Regular expressions that finish in bounded time.

Patterns are compiled once. Python's ``re`` is ~20x faster per call than the RE2 binding on the
short strings agents return, but backtracks exponentially on patterns such as ``^(a+)+$``. So:

* a pattern with no nested or alternated repetition (the overwhelming majority) runs on ``re``,
  which is linear-ish for such patterns;
* a pattern with a repetition inside a repetition (``(a+)+``, ``(a|aa)*``) runs on RE2, whose
  time is linear in the input;
* such a pattern that RE2 cannot run (back-references, look-arounds) runs on the ``regex``
  module with a time limit per search (``engine == "regex-timeout"``); a search that runs
  out of time raises `TimeoutError`, which makes that assertion an ``error``, never a pass.

Matching is always a *search* (anywhere in the text), as in the seed references.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["Pattern", "RegexTimeout", "compile_pattern"]

# The stdlib's own pattern parser (3.11+) tells us the structure of a pattern exactly.
import re._parser as _sre_parse  # type: ignore[import-not-found]
from re._constants import (  # type: ignore[import-not-found]
    BRANCH,
    MAX_REPEAT,
    MAXREPEAT,
    MIN_REPEAT,
    SUBPATTERN,
)

_REPEATS = {MAX_REPEAT, MIN_REPEAT}


def _children(op: Any, arg: Any) -> Any:
    """The sub-patterns of one parsed node."""
    if op in _REPEATS:
        return (arg[2],)
    if op is SUBPATTERN:
        return (arg[-1],)
    if op is BRANCH:
        return arg[1]
    return ()


def _any_node(items: Any, test: Callable[[Any, Any], bool]) -> bool:
    """True when ``test(op, arg)`` holds for some node of the parsed pattern."""
    return any(
        test(op, arg) or any(_any_node(child, test) for child in _children(op, arg))
        for op, arg in items
    )


def _unbounded(op: Any, arg: Any) -> bool:
    return op in _REPEATS and (arg[1] == MAXREPEAT or arg[1] > 16)


def _branch(op: Any, arg: Any) -> bool:
    return op is BRANCH


def _nested_repeat(op: Any, arg: Any) -> bool:
    """A repetition whose body repeats or alternates: the shape that backtracks badly."""
    if op not in _REPEATS or arg[1] <= 1:
        return False
    body = arg[2]
    return _any_node(body, _unbounded) or _any_node(body, _branch)


def _is_risky(items: Any) -> bool:
    """True when a repetition contains another repetition or an alternation."""
    return _any_node(items, _nested_repeat)


class Pattern:
    """A compiled pattern with a ``search`` method and the name of the engine running it.

    Attributes:
        source: The pattern as written.
        engine: ``re``, ``re2`` or ``regex-timeout`` (risky pattern RE2 could not run).
        search: ``search(text)`` returning a match object or None.
    """

    __slots__ = ("engine", "search", "source")

    def __init__(self, source: str, engine: str, compiled: Any) -> None:
        self.source = source
        self.engine = engine
        self.search = compiled.search

    def __repr__(self) -> str:
        return f"Pattern({self.source!r}, engine={self.engine!r})"


def compile_pattern(source: str, *, ignore_case: bool = False) -> Pattern:
    """Compile a pattern once, choosing an engine that keeps matching time bounded.

    Raises:
        ValueError: The pattern is not a valid regular expression (message from ``re``).
    """
    flags = re.IGNORECASE if ignore_case else 0
    try:
        compiled = re.compile(source, flags)
    except re.error as error:
        raise ValueError(f"invalid regular expression {source!r}: {error}") from None
    if not _is_risky(_sre_parse.parse(source, flags)):
        return Pattern(source, "re", compiled)
    try:
        import re2

        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = not ignore_case
        return Pattern(source, "re2", re2.compile(source, options))
    except Exception:
        pass
    # RE2 has no back-references or look-arounds: backtrack, but never without a limit.
    import regex

    bounded = regex.compile(source, regex.IGNORECASE if ignore_case else 0)
    return Pattern(source, "regex-timeout", _TimedSearch(bounded, source))


SEARCH_TIMEOUT_S = 1.0


class RegexTimeout(TimeoutError):
    """A search on the ``regex-timeout`` engine ran out of time."""


class _TimedSearch:
    """``search`` on the regex module with a time limit."""

    __slots__ = ("compiled", "source")

    def __init__(self, compiled: Any, source: str) -> None:
        self.compiled = compiled
        self.source = source

    def search(self, text: str) -> Any:
        try:
            return self.compiled.search(text, timeout=SEARCH_TIMEOUT_S)
        except TimeoutError:
            raise RegexTimeout(
                f"pattern {self.source!r} backtracked for more than {SEARCH_TIMEOUT_S:g} s "
                "on this output; simplify the pattern"
            ) from None
