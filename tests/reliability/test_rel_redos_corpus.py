"""Promise 2 for regexes: the known catastrophic pattern families stay bounded (issue 35).

Each family of the ReDoS corpus, on adversarial texts of 5 to 50 KB, through the public
``regex`` / ``not-regex`` assertions (and ``all_match_pattern``): a nested repetition runs on
RE2 and gets its true verdict; one RE2 cannot run (a look-around or back-reference) runs on
the ``regex`` module under the check's time limit and gets its verdict or, out of time, an
``error``, never a pass. On ``re`` each of these would backtrack for hours, in one C call no
signal interrupts. Time bounds here only guard against hangs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

import assertly
from assertly import Outcome
from assertly.engine._regex import compile_pattern

# The OWASP example of an e-mail validation regex that backtracks exponentially.
EMAIL = (
    r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}"
    r"(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$"
)
Text = Callable[[int], str]


def _a_then_bang(size: int) -> str:
    return "a" * size + "!"


def _words_then_bang(size: int) -> str:
    return ("word " * size)[:size] + "!"


# (pattern, adversarial text of a given size, whether re finds a match in it)
RE2_FAMILIES: list[tuple[str, Text, bool]] = [
    (r"^(a+)+$", _a_then_bang, False),
    (r"(a+)+$", _a_then_bang, False),
    (r"^(a|aa)*$", _a_then_bang, False),
    (r"(a|aa)*$", _a_then_bang, True),  # the empty match at the end
    (r"(a*)*b", lambda size: "a" * size, False),
    (r"(\w+\s?)+$", _words_then_bang, False),
    (r"(\w+\s?)+$", lambda size: ("word " * size)[:size], True),
    (r"(.*a){12}", lambda size: "a" * 11 + "x" * size, False),
    (r"(.*a){12}", lambda size: "xa" * 12 + "x" * size, True),
    (EMAIL, _a_then_bang, False),
    (EMAIL, lambda size: "a" * size + "@example.com", True),
]

# Families RE2 cannot run: the `regex` module with the check's time limit. The last field:
# whether the family is known to backtrack far past the limit on 20 KB (then both assertions
# must be errors: the test cannot pass on verdicts alone).
TIME_LIMITED_FAMILIES: list[tuple[str, Text, bool, bool]] = [
    (r"^(a|aa)+(?<=a)$", _a_then_bang, False, True),
    (r"(?=(a|aa)+\1?c)", lambda size: "a" * size, False, True),
    (r"^(\w+\s?)+\1$", _words_then_bang, False, False),
    (r"\b(a+)+\b!", lambda size: "a" * size + "b", False, False),
    (r"^(?:(a|b)\1?)+$", lambda size: "ab" * (size // 2) + "!", False, False),
    (r"^(?:(a|b)\1?)+$", lambda size: "ab" * (size // 2), True, False),
]


def _regex_and_not_regex(pattern: str, text: str) -> tuple[assertly.CheckResult, float]:
    expectation = assertly.compile(
        [{"type": "regex", "value": pattern}, {"type": "not-regex", "value": pattern}]
    )
    started = time.perf_counter()
    result = expectation.check(text)
    return result, time.perf_counter() - started


@pytest.mark.parametrize("size", [5_000, 50_000])
@pytest.mark.parametrize(("pattern", "make", "found"), RE2_FAMILIES)
def test_nested_repetitions_get_their_verdict_on_re2(
    pattern: str, make: Text, found: bool, size: int
) -> None:
    # First: were it on re, the search below would not end (one C call no signal stops).
    assert compile_pattern(pattern).engine == "re2"
    text = make(size)
    result, elapsed = _regex_and_not_regex(pattern, text)
    regex, not_regex = result.results
    assert (regex.outcome, not_regex.outcome) == (
        (Outcome.PASSED, Outcome.FAILED) if found else (Outcome.FAILED, Outcome.PASSED)
    )
    assert elapsed < 10, elapsed  # milliseconds on RE2; only a hang fails this
    values = assertly.compile({"all_match_pattern": {"path": "items[*]", "regex": pattern}})
    assert values.check({"items": [text]}).passed is found


@pytest.mark.parametrize(("pattern", "make", "found", "runs_out"), TIME_LIMITED_FAMILIES)
def test_patterns_re2_cannot_run_end_in_a_verdict_or_an_error_never_a_wrong_pass(
    pattern: str, make: Text, found: bool, runs_out: bool
) -> None:
    assert compile_pattern(pattern).engine == "regex-timeout"
    result, elapsed = _regex_and_not_regex(pattern, make(20_000))
    regex, not_regex = result.results
    # Each gets its true verdict, or, when the shared time limit ran out, an error.
    assert regex.outcome in (Outcome.PASSED if found else Outcome.FAILED, Outcome.ERROR)
    assert not_regex.outcome in (Outcome.FAILED if found else Outcome.PASSED, Outcome.ERROR)
    if runs_out:
        assert (regex.outcome, not_regex.outcome) == (Outcome.ERROR, Outcome.ERROR)
    for item in (regex, not_regex):
        if item.outcome is Outcome.ERROR:
            assert "backtracked for more than 1 s" in item.message
            assert result.outcome is Outcome.ERROR and not result.passed
    # The regex module's limit counts CPU time: a loaded machine stretches it in wall time.
    assert elapsed < 30, elapsed
