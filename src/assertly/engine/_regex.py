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
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["Pattern", "RegexTimeout", "compile_pattern"]

# The stdlib's own pattern parser (3.11+) tells us the structure of a pattern exactly.
import re._parser as _sre_parse  # type: ignore[import-not-found]
from re._constants import (  # type: ignore[import-not-found]
    AT,
    AT_BEGINNING,
    AT_BEGINNING_STRING,
    BRANCH,
    LITERAL,
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
        literal: For a pattern that is plain text, optionally after ``^`` (``^journal/``):
            ``(anchored, text)``, so generated code can test ``startswith`` or ``in``
            instead of searching; None for any other pattern.
    """

    __slots__ = ("engine", "literal", "search", "source")

    def __init__(
        self, source: str, engine: str, compiled: Any, literal: tuple[bool, str] | None = None
    ) -> None:
        self.source = source
        self.engine = engine
        self.search = compiled.search
        self.literal = literal

    def __repr__(self) -> str:
        return f"Pattern({self.source!r}, engine={self.engine!r})"


def _parse(source: str, flags: int) -> Any:
    """The parse tree ``re`` makes of ``source``, refusing sets whose meaning differs by engine.

    Refused: ``[[:alpha:]]``, ``[a&&b]``, ``[a--b]``, ``[a||b]``.

    Python's ``re`` reads ``[[:alpha:]]`` as the set ``[:alph`` followed by ``]`` and warns
    that the meaning may change; RE2 and the ``regex`` module read a POSIX class. A pattern
    whose verdict depended on the engine would be a trap, so it is an error in every engine.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        try:
            return _sre_parse.parse(source, flags)
        except FutureWarning as warning:
            if "nested set" in str(warning) and "[:" in source:
                reason = (
                    "POSIX classes such as [[:alpha:]] are not Python regular expressions; "
                    r"write [^\W\d_] for letters, [0-9] or \d for digits, \s for spaces"
                )
            else:
                reason = (
                    f"{warning}: Python reads this set differently from other regex engines; "
                    "escape the bracket or operator (\\[, \\&, \\-, \\|, \\~)"
                )
            raise ValueError(f"invalid regular expression {source!r}: {reason}") from None


def _literal(tree: Any, compiled: re.Pattern[str]) -> tuple[bool, str] | None:
    """``(anchored, text)`` when searching ``compiled`` means ``startswith`` / ``in``."""
    if compiled.flags != re.UNICODE:  # no ignore-case, multiline, verbose … (nor inline ones)
        return None
    items = list(tree)
    anchored = bool(items) and items[0] in ((AT, AT_BEGINNING), (AT, AT_BEGINNING_STRING))
    if anchored:
        items = items[1:]
    if not all(op is LITERAL for op, _ in items):
        return None
    return anchored, "".join(chr(code) for _, code in items)


def compile_pattern(source: str, *, ignore_case: bool = False, _engine: str = "") -> Pattern:
    """Compile a pattern once, choosing an engine that keeps matching time bounded.

    Every engine gives the verdict Python's ``re`` gives (the dialect users write and test
    with): risky patterns are handed to RE2 or the ``regex`` module as a pattern *generated
    from re's own parse tree* (`_translate`), never as the text the user wrote.

    Args:
        source: The pattern as written (Python ``re`` syntax).
        ignore_case: Match letters in any case (``re.IGNORECASE``).
        _engine: Tests only: force ``re2`` or ``regex-timeout`` for a risky-or-not pattern.

    Raises:
        ValueError: The pattern is not a valid regular expression (message from ``re``), or
            uses set syntax whose meaning differs between engines.
    """
    flags = re.IGNORECASE if ignore_case else 0
    try:
        tree = _parse(source, flags)  # first: re.compile would warn instead of refusing
        compiled = re.compile(source, flags)
    except re.error as error:
        raise ValueError(f"invalid regular expression {source!r}: {error}") from None
    if not _engine and not _is_risky(tree):
        return Pattern(source, "re", compiled, _literal(tree, compiled))
    flags = tree.state.flags
    if _engine in ("", "re2"):
        re2_pattern = _re2_compile(tree, flags)
        if re2_pattern is not None:
            return Pattern(source, "re2", _Re2Search(re2_pattern, tree, flags, source))
        if _engine == "re2":
            raise ValueError(f"RE2 cannot run {source!r} with re's meaning")
    # RE2 cannot express it (back-references, look-arounds, \b): backtrack, with a limit.
    return Pattern(source, "regex-timeout", _TimedSearch(_regex_compile(tree, flags), source))


def _re2_compile(tree: Any, flags: int) -> Any:
    """RE2 compiled from the translation, or None when RE2 cannot give re's verdict."""
    from ._regex_translate import Untranslatable, translate

    try:
        text = translate(tree, flags, target="re2")
    except Untranslatable:
        return None
    try:
        import re2

        options = re2.Options()
        options.log_errors = False
        options.max_mem = 64 << 20
        return re2.compile(text, options)
    except Exception:  # a repeat count above 1,000, a program too large: not for RE2
        return None


def _regex_compile(tree: Any, flags: int) -> Any:
    import regex

    from ._regex_translate import translate

    return regex.compile(translate(tree, flags, target="regex"), regex.VERSION0)


class _Re2Search:
    """``search`` on RE2; text RE2 cannot take (lone surrogates) goes to the regex module."""

    __slots__ = ("compiled", "fallback", "flags", "source", "tree")

    def __init__(self, compiled: Any, tree: Any, flags: int, source: str) -> None:
        self.compiled = compiled
        self.tree = tree
        self.flags = flags
        self.source = source
        self.fallback: Any = None

    def search(self, text: str) -> Any:
        try:
            return self.compiled.search(text)
        except UnicodeEncodeError:  # RE2 reads UTF-8, which cannot hold a lone surrogate
            if self.fallback is None:
                self.fallback = _TimedSearch(_regex_compile(self.tree, self.flags), self.source)
            return self.fallback.search(text)


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
