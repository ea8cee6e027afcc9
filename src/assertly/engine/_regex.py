"""Regular expressions that finish in bounded time.

Patterns are compiled once. Python's ``re`` is ~20x faster per call than the RE2 binding on the
short strings agents return, but backtracks exponentially on patterns such as ``^(a+)+$``. So:

* a pattern with no nested or alternated repetition (the overwhelming majority) runs on ``re``
  *on texts short enough* that ``re``'s worst case (polynomial in the text's length for such a
  pattern: `_cost_bound`) stays under `RE_WORK_BUDGET` steps; a longer text goes to the
  bounded engine below, which gives the same verdict;
* a pattern with a repetition inside a repetition (``(a+)+``, ``(a|aa)*``), anywhere
  (look-arounds and atomic groups included), runs on RE2, whose time is linear in the input;
* such a pattern that RE2 cannot run (back-references, look-arounds) runs on the ``regex``
  module with a time limit (``engine == "regex-timeout"``); a search that runs out of time
  raises `TimeoutError`, which makes that assertion an ``error``, never a pass. The limit is
  shared by every such search of one evaluation (`one_time_limit`), not given to each.

Matching is always a *search* (anywhere in the text), as in the seed references.
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

__all__ = [
    "Pattern",
    "RegexTimeout",
    "compile_pattern",
    "may_backtrack",
    "one_time_limit",
    "within_one_time_limit",
]

# The stdlib's own pattern parser (3.11+) tells us the structure of a pattern exactly.
import re._parser as _sre_parse  # type: ignore[import-not-found]
from re._constants import (  # type: ignore[import-not-found]
    ASSERT,
    ASSERT_NOT,
    AT,
    AT_BEGINNING,
    AT_BEGINNING_STRING,
    ATOMIC_GROUP,
    BRANCH,
    GROUPREF,
    GROUPREF_EXISTS,
    LITERAL,
    MAX_REPEAT,
    MIN_REPEAT,
    POSSESSIVE_REPEAT,
    SUBPATTERN,
)

_REPEATS = {MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT}


def _children(op: Any, arg: Any) -> Any:
    """The sub-patterns of one parsed node (every kind that holds one)."""
    if op in _REPEATS:
        return (arg[2],)
    if op is SUBPATTERN:
        return (arg[-1],)
    if op is BRANCH:
        return arg[1]
    if op is ASSERT or op is ASSERT_NOT:  # (direction, body): `^(?=(a+)+b)` is as risky
        return (arg[1],)
    if op is ATOMIC_GROUP:
        return (arg,)
    if op is GROUPREF_EXISTS:
        return tuple(branch for branch in arg[1:] if branch is not None)
    return ()


def _any_node(items: Any, test: Callable[[Any, Any], bool]) -> bool:
    """True when ``test(op, arg)`` holds for some node of the parsed pattern."""
    return any(
        test(op, arg) or any(_any_node(child, test) for child in _children(op, arg))
        for op, arg in items
    )


def _branch(op: Any, arg: Any) -> bool:
    return op is BRANCH


def _variable(op: Any, arg: Any) -> bool:
    """A repetition that can take more than one count (``a?``, ``a{1,2}``, ``a+``)."""
    return op in _REPEATS and arg[0] != arg[1]


def _nested_repeat(op: Any, arg: Any) -> bool:
    """A repetition whose body repeats or alternates: the shape that backtracks badly.

    Any body repetition of varying count counts, however small its maximum: ``(a{1,2})*``
    splits a run of ``a`` in Fibonacci-many ways and ``(?:a?){28}`` in 2**28, exponential
    on ``re`` just as ``(a+)+`` is.
    """
    if op not in _REPEATS or arg[1] <= 1:
        return False
    body = arg[2]
    return _any_node(body, _variable) or _any_node(body, _branch)


def _is_risky(items: Any) -> bool:
    """True when a repetition contains another repetition or an alternation."""
    return _any_node(items, _nested_repeat)


# `re` backtracks; for a pattern `_is_risky` lets through, the number of ways it can try is
# bounded by `_cost_bound`. A search stays on `re` while that bound, for the text's length, is
# under this many steps (re does about 10^9 simple steps a second here, so well under 0.1 s
# even at a tenth of that speed); longer texts go to RE2 or the time-limited engine.
RE_WORK_BUDGET = 20_000_000


def _cost_bound(items: Any) -> tuple[int, int]:
    """``(ways, degree)``: ``re`` tries at most ``ways * (n + 1) ** degree`` paths per start.

    Each repetition that can take a varying number of turns (``*``, ``+``, ``{2,5}``) and each
    back-reference multiplies the paths by at most ``n + 1`` (n: the text's length): one more
    degree. Alternatives add their ways; a sequence multiplies them. Look-arounds and atomic
    groups are counted as if they backtracked too (an overestimate, never an underestimate).
    Only meaningful for a pattern that is not `_is_risky` (no repetition inside another).
    """
    ways, degree = 1, 0
    for op, arg in items:
        if op in _REPEATS:
            body_ways, body_degree = _cost_bound(arg[2])
            ways *= body_ways
            degree += body_degree + (1 if arg[1] != arg[0] else 0)
        elif op is BRANCH or op is GROUPREF_EXISTS:
            branches = arg[1] if op is BRANCH else [b for b in arg[1:] if b is not None]
            bounds = [_cost_bound(branch) for branch in branches]
            ways *= sum(b[0] for b in bounds) + (1 if op is GROUPREF_EXISTS else 0)
            degree += max(b[1] for b in bounds)
        elif op is GROUPREF:
            degree += 1
        else:
            for child in _children(op, arg):
                child_ways, child_degree = _cost_bound(child)
                ways *= child_ways
                degree += child_degree
    return ways, degree


def _longest_text_for_re(tree: Any) -> int | None:
    """The longest text `re` may search with this pattern; None: any (linear) length."""
    ways, degree = _cost_bound(tree)
    if degree == 0 and ways <= 1_000:
        return None  # a fixed set of fixed-length paths per start: linear in the text
    # The search itself tries every start: one more degree.
    limit = int((RE_WORK_BUDGET / ways) ** (1 / (degree + 1))) - 1
    return max(limit, 0)


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
        literal = _literal(tree, compiled)
        longest = None if literal is not None else _longest_text_for_re(tree)
        if longest is not None:
            return Pattern(source, "re", _ReUpTo(compiled, longest, tree, source), literal)
        return Pattern(source, "re", compiled, literal)
    flags = tree.state.flags
    if _engine == "re-up-to":  # tests: re on short texts, a bounded engine on longer ones
        return Pattern(source, "re", _ReUpTo(compiled, 0, tree, source))
    if _engine in ("", "re2"):
        re2_pattern = _re2_compile(tree, flags)
        if re2_pattern is not None:
            return Pattern(source, "re2", _Re2Search(re2_pattern, tree, flags, source))
        if _engine == "re2":
            raise ValueError(f"RE2 cannot run {source!r} with re's meaning")
    # RE2 cannot express it (back-references, look-arounds, \b): backtrack, with a limit.
    return Pattern(source, "regex-timeout", _TimedSearch(_regex_compile(tree, flags), source))


def _bounded_search(tree: Any, source: str) -> Any:
    """RE2, else the time-limited regex module, for ``tree``: the engines with a bound."""
    flags = tree.state.flags
    re2_pattern = _re2_compile(tree, flags)
    if re2_pattern is not None:
        return _Re2Search(re2_pattern, tree, flags, source)
    return _TimedSearch(_regex_compile(tree, flags), source)


class _ReUpTo:
    """``search`` on ``re`` for texts up to ``longest`` characters, a bounded engine beyond.

    The bounded engine gives re's verdict (`_translate`), so only the time differs.
    """

    __slots__ = ("bounded", "compiled", "longest", "source", "tree")

    def __init__(self, compiled: re.Pattern[str], longest: int, tree: Any, source: str) -> None:
        self.compiled = compiled
        self.longest = longest
        self.tree = tree
        self.source = source
        self.bounded: Any = None

    def search(self, text: str) -> Any:
        if len(text) <= self.longest:
            return self.compiled.search(text)
        if self.bounded is None:  # compiled on the first long text only
            self.bounded = _bounded_search(self.tree, self.source)
        return self.bounded.search(text)


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


# The time the backtracking searches of the current evaluation may still take, per thread;
# None outside an evaluation (then each search has `SEARCH_TIMEOUT_S`). A limit per search let
# `all_match_pattern` over 10,000 values, each search just under it, take 10,000 s on one
# response (issue 29). Only time spent *in* such searches counts: parsing a large output or
# RE2's linear work never eats into it.
_evaluation = threading.local()


def one_time_limit(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, its backtracking searches sharing one time limit.

    Nested calls share the outermost limit.
    """
    if getattr(_evaluation, "left", None) is not None:
        return function(*args, **kwargs)
    _evaluation.left = SEARCH_TIMEOUT_S
    try:
        return function(*args, **kwargs)
    finally:
        _evaluation.left = None


def under_shared_limit(search: Callable[[float], Any], timeout: float) -> Any:
    """``search(timeout)``, cut to what the check's shared limit has left, spending from it.

    For backtracking searches outside this module (JSONPath filter functions). Outside
    `one_time_limit`, ``search(timeout)`` as it is.

    Raises:
        TimeoutError: The shared limit is spent (or the search ran out of time).
    """
    left = getattr(_evaluation, "left", None)
    if left is None:
        return search(timeout)
    if min(timeout, left) <= 0:
        raise TimeoutError
    start = time.monotonic()
    try:
        return search(min(timeout, left))
    finally:
        _evaluation.left = left - (time.monotonic() - start)


def within_one_time_limit() -> bool:
    """Whether this thread is inside `one_time_limit`."""
    return getattr(_evaluation, "left", None) is not None


def may_backtrack(pattern: Pattern) -> bool:
    """Whether ``pattern`` may search on the time-limited engine (so needs `one_time_limit`).

    False for a pattern that runs on ``re`` whatever the text, or on RE2 (or ``re``, then RE2
    for long texts); those never touch the limit but for a text with a lone surrogate, which
    RE2 cannot read: that search still has a limit of its own.
    """
    search = getattr(pattern.search, "__self__", None)
    if type(search) is _TimedSearch:
        return True
    if type(search) is _ReUpTo:
        from ._regex_translate import Untranslatable, translate

        try:
            translate(search.tree, search.tree.state.flags, target="re2")
        except Untranslatable:
            return True
    return False


class _TimedSearch:
    """``search`` on the regex module with a time limit."""

    __slots__ = ("compiled", "source")

    def __init__(self, compiled: Any, source: str) -> None:
        self.compiled = compiled
        self.source = source

    def search(self, text: str) -> Any:
        left = getattr(_evaluation, "left", None)
        if left is None:  # outside an evaluation: this search alone
            timeout, shared = SEARCH_TIMEOUT_S, ""
        else:
            timeout, shared = left, " (the limit of all its searches on this response)"
        start = time.monotonic()
        try:
            if timeout <= 0:
                raise TimeoutError
            return self.compiled.search(text, timeout=timeout)
        except TimeoutError:
            raise RegexTimeout(
                f"pattern {self.source!r} backtracked for more than {SEARCH_TIMEOUT_S:g} s"
                f"{shared} on this output; simplify the pattern"
            ) from None
        finally:
            if left is not None:
                _evaluation.left = left - (time.monotonic() - start)
