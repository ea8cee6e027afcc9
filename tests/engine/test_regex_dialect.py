"""One regex dialect: Python's ``re``. Whichever engine runs a pattern (``re``, RE2 or the
``regex`` module with a time limit), the verdict is the one ``re`` gives."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly.engine._regex import compile_pattern

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
ENGINES = ["re2", "regex-timeout"]


def verdicts(pattern: str, text: str, *, ignore_case: bool = False) -> dict[str, bool | None]:
    """The verdict of each engine that can run ``pattern`` (None: it cannot)."""
    found: dict[str, bool | None] = {}
    for engine in ["", *ENGINES]:
        try:
            compiled = compile_pattern(pattern, ignore_case=ignore_case, _engine=engine)
        except ValueError:
            found[engine or "auto"] = None
            continue
        found[engine or "auto"] = compiled.search(text) is not None
    return found


# Every difference between re and the other engines we know of, each with a text on which
# the engines would disagree if the pattern were handed over as written.
DIFFERENCES = [
    (r"^(?:a+)+$", "aaa\n"),  # $ before a final newline
    (r"^(?:a+)+$", "aaa\n\n"),
    (r"(?:a+)+$x", "aa\nx"),  # $ inside the pattern
    (r"^(?:\d+)+$", "١٢٣"),  # Arabic-Indic digits are \d in re
    (r"^(?:\w+)+$", "élan"),  # Unicode letters are \w in re
    (r"^(?:\w+)+$", "機械学習"),
    (r"^(?:\s+)+$", "\u00a0\u2003"),  # Unicode spaces are \s in re
    (r"^(?:\s+)+$", "\v\x1c"),  # \v and the file separators are \s in re, not in RE2
    (r"\b(?:a+)+\b", "éaa"),  # no boundary between é and a in re
    (r"\B(?:a+)+", "éaa"),
    (r"^(?:a{,3})+$", "aaa"),  # {,3} is a repeat in re, text in RE2
    (r"^(?:a{,3})+$", "a{,3}"),
    (r"(?:a+)+\Z", "aa\n"),  # \Z is the very end
    (r"(?:a+)+\Z", "aa"),
    (r"^(?:.+)+$", "a\nb"),  # . and newlines
    (r"(?s)^(?:.+)+$", "a\nb"),
    (r"(?m)^(?:b+)+$", "a\nbb\nc"),
    (r"(?x) ^ (?: a + ) + $ ", "aa"),  # verbose
    (r"(?i)^(?:é+)+$", "ÉÉ"),
    (r"(?i)^(?:k+)+$", "\u212a"),  # Kelvin sign folds to k
    (r"(?i)^(?:s+)+$", "\u017f"),  # long s folds to s
    (r"(?i)^(?:ß+)+$", "SS"),  # re folds one character at a time: no match
    (r"(?a)^(?:\w+)+$", "élan"),  # ASCII flag
    (r"^(?:[^a]+)+$", "\n\n"),
    (r"^(?:[a-c\d]+)+$", "b٣"),
    (r"^(?:\W+)+$", "_"),
    (r"^(\w+)+\1$", "abab"),  # back-reference
    (r"^(?:(?=a)\w+)+$", "ab"),  # look-ahead
    (r"(?<=x)(?:a+)+", "xaa"),  # look-behind
]


@pytest.mark.parametrize(("pattern", "text"), DIFFERENCES)
def test_every_engine_gives_re_s_verdict(pattern: str, text: str) -> None:
    expected = re.search(pattern, text) is not None
    found = verdicts(pattern, text)
    assert found["auto"] == expected
    assert found["regex-timeout"] == expected
    assert found["re2"] in (None, expected), found


@pytest.mark.parametrize(
    "pattern", [r"^(?:a+)+$", r"^(?:\d+)+$", r"(?i)^(?:é+)+$", r"^(?:[a-c\d]+)+$"]
)
def test_re2_runs_what_it_can_express(pattern: str) -> None:
    assert compile_pattern(pattern).engine == "re2"


@pytest.mark.parametrize("pattern", [r"^(\w+)+\1$", r"\b(?:a+)+\b", r"(?:a+)+$x"])
def test_what_re2_cannot_express_runs_on_the_regex_module(pattern: str) -> None:
    assert compile_pattern(pattern).engine == "regex-timeout"


def test_catastrophic_patterns_stay_fast_and_right() -> None:
    pattern = compile_pattern(r"^(a+)+$")
    assert pattern.engine == "re2"
    assert pattern.search("a" * 5000 + "b") is None
    assert pattern.search("a" * 5000 + "\n") is not None


def test_a_lone_surrogate_does_not_break_re2() -> None:
    pattern = compile_pattern(r"(?:a+)+b")
    assert pattern.engine == "re2"
    assert pattern.search("\ud800aab") is not None
    assert pattern.search("\ud800aa") is None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("[[:alpha:]]+", "POSIX classes such as [[:alpha:]] are not Python regular expressions"),
        ("[[:digit:]]", "POSIX classes such as [[:alpha:]] are not Python regular expressions"),
        ("[ab&&c]", "Python reads this set differently from other regex engines"),
        ("[ab--c]", "Python reads this set differently from other regex engines"),
        ("[a||b]", "Python reads this set differently from other regex engines"),
        ("[[a]", "Python reads this set differently from other regex engines"),
    ],
)
def test_sets_whose_meaning_differs_by_engine_are_refused(pattern: str, message: str) -> None:
    with pytest.raises(assertly.ConfigError) as info:
        assertly.compile([{"type": "regex", "value": pattern}])
    assert message in str(info.value)
    with pytest.raises(assertly.ConfigError, match=re.escape(message)):
        assertly.compile({"all_match_pattern": {"path": "results[*].file", "regex": pattern}})


def test_a_refused_set_is_refused_every_time() -> None:
    # re caches compiled patterns and warns once; the refusal must not depend on that.
    for _ in range(3):
        with pytest.raises(ValueError, match="POSIX"):
            compile_pattern("[[:alpha:]]")


_atoms = st.sampled_from(
    [
        *("a", "b", "é", "É", "k", "K", "\u212a", "ß", "1", "٣", " ", "\n", "."),
        *(r"\d", r"\w", r"\s", r"\W", "[ab]", "[^a]", "[a-cé]", r"[\d\s]", "(?:ab|a)"),
        *("^", "$", r"\b", r"\Z"),
    ]
)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_atoms, min_size=1, max_size=4))
    body = "".join(parts)
    repeat = draw(st.sampled_from(["+", "*", "{,2}", "{1,3}", "+?"]))
    prefix = draw(st.sampled_from(["", "(?i)", "(?m)", "(?s)", "(?a)", "^"]))
    suffix = draw(st.sampled_from(["", "$", "b", r"\Z"]))
    return f"{prefix}(?:(?:{body}){repeat})+{suffix}"


_texts = st.text(alphabet="abéÉkK\u212aßSs1٣ \n_", max_size=8)


@PROPERTY
@given(pattern=patterns(), text=_texts)
def test_engines_agree_with_re_on_random_patterns(pattern: str, text: str) -> None:
    try:
        re.compile(pattern)
    except re.error:
        return
    expected = re.search(pattern, text) is not None
    found = verdicts(pattern, text)
    assert found["auto"] == expected, (found, pattern, text)
    assert found["regex-timeout"] == expected, (found, pattern, text)
    assert found["re2"] in (None, expected), (found, pattern, text)


def test_ignore_case_config_agrees_on_every_engine() -> None:
    for engine in ["", *ENGINES]:
        compiled = compile_pattern(r"^(?:straße)+$", ignore_case=True, _engine=engine)
        assert compiled.search("STRAßE") is not None
        assert compiled.search("STRASSE") is None  # as re: one character at a time


# issue 29, probe "Unbounded" 1: `^(?=(a+)+b)` ran on re (no time limit) because the nested
# repetition sat inside a look-ahead, which the risk check did not look into.
@pytest.mark.parametrize(
    "pattern",
    [r"^(?=(a+)+b)", r"(?!(a+)+b)x", r"(?<=x)(?=(a|aa)*c)", r"(?>(a+)+)b", r"(a)?(?(1)(a+)+|b)"],
)
def test_a_nested_repetition_anywhere_never_runs_on_re(pattern: str) -> None:
    assert compile_pattern(pattern).engine != "re"


def test_the_look_ahead_probe_keeps_re_s_verdict() -> None:
    pattern = compile_pattern(r"^(?=(a+)+b)")
    assert pattern.search("a" * 20 + "b") is not None
    assert pattern.search("a" * 20) is None


# issue 29, probe "Unbounded" 1: a pattern with no nested repetition can still backtrack
# polynomially on re (`a*a*a*c` on 300 `a`s took 0.6 s, on 3,000 it would take hours), so a
# text longer than re's bound for that pattern goes to RE2 / the time-limited engine.
def test_a_polynomial_pattern_leaves_re_on_long_texts() -> None:
    from assertly.engine._regex import _ReUpTo

    pattern = compile_pattern(r"a*a*a*a*c")
    assert pattern.engine == "re"
    assert isinstance(pattern.search.__self__, _ReUpTo)
    assert pattern.search.__self__.longest < 300
    assert pattern.search("a" * 3000) is None
    assert pattern.search("a" * 3000 + "c") is not None


@pytest.mark.parametrize("pattern", [r"\d{3}-\d{4}", "hello|world", "^journal/", r"\bcat\b"])
def test_patterns_linear_on_re_stay_on_re_for_any_length(pattern: str) -> None:
    assert type(compile_pattern(pattern).search.__self__).__name__ == "Pattern"


_flat_atoms = st.sampled_from(
    [
        *("a", "b", "é", "k", "\u212a", "ß", "1", "٣", " ", "\n", "."),
        *(r"\d", r"\w", r"\s", "[ab]", "[^a]", "(ab|a)", r"\1", "(?=a)", "(?!b)", r"\b"),
        *("a*", "a+?", r"\w+", r"\s*", "[ab]{1,3}", ".*", "(a)", "^", "$", r"\Z"),
    ]
)


@PROPERTY
@given(
    parts=st.lists(_flat_atoms, min_size=1, max_size=5),
    prefix=st.sampled_from(["", "(?i)", "(?m)", "(?s)", "(?a)"]),
    text=_texts,
)
def test_the_bounded_engine_for_long_texts_agrees_with_re(
    parts: list[str], prefix: str, text: str
) -> None:
    pattern = prefix + "".join(parts)
    try:
        re.compile(pattern)
    except re.error:
        return
    expected = re.search(pattern, text) is not None
    # `re-up-to` with a bound of 0: what every text longer than re's bound runs on.
    bounded = compile_pattern(pattern, _engine="re-up-to")
    assert (bounded.search(text) is not None) == expected, (pattern, text)


# issue 29 red team (break-bounded), probe "small nested count": a repetition inside a
# repetition ran on re when the inner one's maximum was at most 16. `^(a{1,2})*$` on 34 `a`s
# and a `b` took 2.7 s (Fibonacci-many splits), `^(?:a?){28}b` on 28 `a`s took 9 s, each one
# uninterruptible C call; both are exponential however small the inner count.
@pytest.mark.parametrize(
    "pattern", [r"^(a{1,2})*$", r"^(?:a?){28}b", r"^(?:(?:a{2,3}){1,2})+$", r"(?:x{0,1}y?){5}z"]
)
def test_a_nested_repetition_of_small_count_never_runs_on_re(pattern: str) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.engine != "re"
    for text in ("", "ab", "aab", "aaaaab", "xyz", "aaa"):  # short: re is quick on these
        assert (compiled.search(text) is None) == (re.search(pattern, text) is None), text
    assert compiled.search("a" * 40 + "!") is None  # seconds to hours on re


@pytest.mark.parametrize("pattern", [r"(\d{3}-){2}\d{4}", r"(?:ab{2}){1,9}c"])
def test_a_fixed_count_inside_a_repetition_stays_on_re(pattern: str) -> None:
    assert compile_pattern(pattern).engine == "re"


class _FakeClock:
    """``time.monotonic`` for `_regex`: each reading 0.4 s after the last (no real timing)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def monotonic(self) -> float:
        self.readings += 1
        self.now += 0.4
        return self.now


# issue 29 (bound2), probe "many searches, each under the limit": the regex module's 1 s limit
# was per search, so `all_match_pattern` over 10,000 values, or several regex assertions, each
# search just under the limit, took N x 1 s on one response. All the time-limited searches of
# one check now share one limit. A fake clock makes each search look 0.4 s long.
@pytest.mark.parametrize(
    ("expectation", "response"),
    [
        (
            {"all_match_pattern": {"path": "results[*].file", "regex": "^(?=(a+)+b)"}},
            {"results": [{"file": "ab"} for _ in range(20)]},
        ),
        ([{"type": "regex", "value": "^(?=(a+)+b)"} for _ in range(5)], "ab"),
        ([{"type": "not-regex", "value": r"(x)\1"} for _ in range(5)], "ab" * 3000),
    ],
)
def test_one_check_s_backtracking_searches_share_one_time_limit(
    monkeypatch: pytest.MonkeyPatch, expectation: object, response: object
) -> None:
    import assertly.engine._regex as regex_module

    compiled = assertly.compile(expectation)
    assert compiled.check(response).outcome == assertly.Outcome.PASSED  # real clock: quick
    clock = _FakeClock()
    monkeypatch.setattr(regex_module, "time", clock, raising=False)
    result = compiled.check(response)
    assert result.outcome == assertly.Outcome.ERROR  # never a pass, negated or not
    assert any("backtracked" in item.message for item in result.results)
    monkeypatch.setattr(regex_module, "time", _FakeClock(), raising=False)
    assert compiled.check(response).outcome == assertly.Outcome.ERROR  # each check: a new limit


def test_patterns_off_the_time_limited_engine_never_read_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import assertly.engine._regex as regex_module

    clock = _FakeClock()
    monkeypatch.setattr(regex_module, "time", clock, raising=False)
    compiled = assertly.compile(
        [{"type": "regex", "value": r"\d+"}, {"type": "regex", "value": "(a+)+$"}]
    )
    assert not compiled.backtracks
    for _ in range(20):
        assert compiled.check("12 aaa").outcome == assertly.Outcome.PASSED
    assert clock.readings == 0
