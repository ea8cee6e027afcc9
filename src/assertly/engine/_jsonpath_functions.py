"""The JSONPath environment of ``json_path:`` transforms: bounded ``match`` and ``search``.

python-jsonpath's own ``match()`` and ``search()`` filter functions run a backtracking engine
with no time limit (``$.items[?search(@.a, '(a+)+$')]`` on a 5,000-character value ran for
five minutes, deaf to SIGTERM) and, as RFC 9535 allows, treat an invalid pattern as one that
never matches (``$[?search(@, '[')]`` validated and silently selected nothing). Here both run
with the time limit of every other backtracking search (`SEARCH_TIMEOUT_S`, a `RegexTimeout`
naming the pattern: the assertion ends ``error``), and a literal pattern that does not compile
is refused when the path is compiled, so it is a load error at the test's file and line.

The pattern dialect and every verdict within the limit are the library's own (I-Regexp
mapped to the ``regex`` module by `check_cache`): only the time limit is added. Imported only
when a path needs the general JSONPath machinery (its import is heavy).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from jsonpath import JSONPathEnvironment, JSONPathTypeError
from jsonpath.filter import StringLiteral
from jsonpath.function_extensions import Match, Search

from ._regex import SEARCH_TIMEOUT_S, RegexTimeout, under_shared_limit

__all__ = ["BoundedEnvironment", "first_match"]


# The limit is per query, not per value: each of 200 values taking 0.4 s under a 1 s limit
# per search made one transform run 78 s (red team of issue 29). `first_match` sets the
# query's deadline for the searches of its thread.
_query = threading.local()


def first_match(path: Any, document: Any) -> Any:
    """``path.match(document)``, every filter regex of the query within one time limit."""
    _query.deadline = time.monotonic() + SEARCH_TIMEOUT_S
    try:
        return path.match(document)
    finally:
        _query.deadline = None


def _timed(compiled: Any, pattern: str, value: str, *, whole: bool) -> bool:
    deadline = getattr(_query, "deadline", None)
    timeout = SEARCH_TIMEOUT_S if deadline is None else deadline - time.monotonic()
    try:
        if timeout <= 0:
            raise TimeoutError
        method = compiled.fullmatch if whole else compiled.search
        # Within the check's limit too, when it has one: several queries, one limit.
        return bool(under_shared_limit(lambda limit: method(value, timeout=limit), timeout))
    except TimeoutError:
        raise RegexTimeout(
            f"JSONPath filter pattern {pattern!r} backtracked for more than "
            f"{SEARCH_TIMEOUT_S:g} s on this output; simplify the pattern"
        ) from None


class _BoundedMatch(Match):
    """RFC 9535 ``match()`` (the whole value) with a time limit."""

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(value, str) or not isinstance(pattern, str):
            return False
        compiled = self.check_cache(pattern)
        return compiled is not None and _timed(compiled, pattern, value, whole=True)


class _BoundedSearch(Search):
    """RFC 9535 ``search()`` (anywhere in the value) with a time limit."""

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(value, str) or not isinstance(pattern, str):
            return False
        compiled = self.check_cache(pattern)
        return compiled is not None and _timed(compiled, pattern, value, whole=False)


class BoundedEnvironment(JSONPathEnvironment):  # type: ignore[misc]
    """A strict RFC 9535 environment whose regex functions are bounded and checked early."""

    def setup_function_extensions(self) -> None:
        """The library's functions, with ``match`` and ``search`` replaced."""
        super().setup_function_extensions()
        self.function_extensions["match"] = _BoundedMatch()
        self.function_extensions["search"] = _BoundedSearch()

    def check_well_typedness(self, token: Any, func: Any, args: list[Any]) -> None:
        """The library's checks, then: a literal pattern must compile.

        A pattern computed at run time (taken from the document) still never matches when it
        is invalid, as RFC 9535 says; a pattern written in the path is a mistake to report.
        """
        super().check_well_typedness(token, func, args)
        if not isinstance(func, (_BoundedMatch, _BoundedSearch)) or len(args) != 2:
            return
        pattern = args[1]
        if isinstance(pattern, StringLiteral) and func.check_cache(pattern.value) is None:
            raise JSONPathTypeError(
                f"{token.value}() pattern {pattern.value!r} is not a valid regular expression",
                token=token,
            )
