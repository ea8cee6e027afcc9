"""The engine a regex runs on never changes a verdict (issue 35).

`compile_pattern` runs a pattern on Python's ``re`` when it is free of nested repetition and the
text is short enough for re's worst case, on RE2 otherwise, and on the ``regex`` module with a
time limit where RE2 cannot express re's meaning. Patterns drawn from a small grammar (literals,
classes, ``.``, groups, alternation, every quantifier, anchors, and repetitions nested inside
repetitions so that every engine is chosen) and texts over a small alphabet are searched
through every engine the choice could pick, forced one by one, and compared with two oracles:

* ``re.search`` itself, the dialect users write: texts stay short (at most 8 characters) so
  that even an exponential pattern finishes on ``re``;
* the RE2 binding given the pattern *as written*, an engine independent of our translation,
  on texts where the two dialects coincide (ASCII, no newline: there ``\\d``, ``\\w``, ``\\s``,
  ``\\b``, ``.``, ``$`` and case folding mean the same in both), long texts included.

The ``regex`` / ``not-regex`` assertions of the public engine give re's verdict too.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
import re2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import assertly
from assertly.engine._regex import _ReUpTo, compile_pattern

# Sized so that this file runs in under 10 s on two cores (compiling a pattern for the `regex`
# module, every class spelt out, is most of it); a thorough run raises it
# (ASSERTLY_PROPERTY_EXAMPLES=2000), as for the other property tests.
EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))


def sized(share: float) -> settings:
    """Settings for a property test drawing ``share`` of `EXAMPLES` patterns."""
    return settings(
        max_examples=max(10, int(EXAMPLES * share)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


_ATOMS = [
    *("a", "b", "c", "1", " ", "_", ".", r"\."),
    *(r"\d", r"\w", r"\s", r"\W", r"\D", "[a-c]", "[^b]", r"[\d_]", "[ac1]"),
]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{2,}", "*?", "+?", "??", "{1,2}?"]


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """One step of the grammar: a repeated group, a sequence or an alternation of ``inner``."""
    group = st.sampled_from(["(?:{})", "({})"])
    return st.one_of(
        st.tuples(group, inner, st.sampled_from(_QUANTIFIERS)).map(
            lambda parts: parts[0].format(parts[1]) + parts[2]
        ),
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.tuples(group, st.lists(inner, min_size=2, max_size=3)).map(
            lambda parts: parts[0].format("|".join(parts[1]))
        ),
    )


# A quantifier straight on an atom too (`a+`, `\d{2}`), so that flat patterns with several
# repetitions (re with a text-length budget) are as common as nested ones (RE2).
_atom = st.one_of(
    st.sampled_from(_ATOMS),
    st.tuples(st.sampled_from(_ATOMS), st.sampled_from(_QUANTIFIERS)).map("".join),
)
_body = st.recursive(_atom, _grow, max_leaves=6)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """A pattern: optional flags, optional anchors and word boundaries around a body."""
    flags = draw(st.sampled_from(["", "", "(?i)", "(?s)", "(?m)"]))
    # \b is rarer: the `regex` module takes ~30 ms to compile each, with re's \w spelt out.
    start = draw(st.sampled_from(["", "", "", "^", "^", r"\b"]))
    end = draw(st.sampled_from(["", "", "", "$", "$", r"\b"]))
    return flags + start + draw(_body) + end


# Back-references and look-arounds: RE2 cannot run them, so a nested pattern that has one goes
# to the `regex` module with a time limit.
@st.composite
def backtracking_patterns(draw: st.DrawFn) -> str:
    """A grammar pattern with a capture referred back to, or inside a look-around."""
    body = draw(_body)
    shape = draw(
        st.sampled_from(
            [
                r"([abc]){0}\1",
                r"(?=[ab]){0}",
                r"(?![c1]){0}",
                r"(?<=a){0}",
                r"(?<!b){0}",
                "{0}(?=c)",
            ]
        )
    )
    return shape.format(body)


# Non-ASCII too: re reads \d, \w and case differently from RE2 (Arabic-Indic digits, é,
# the Kelvin sign that folds to k), so these test the translation of every class.
_short_text = st.text(alphabet="abc1 _.\nBé٣\u212a", max_size=8)
_dialect_text = st.text(alphabet="abc1 _.B", max_size=8)  # where re and RE2 coincide
# Several texts per pattern: compiling a pattern for every engine costs more than searching.
_short_texts = st.lists(_short_text, min_size=1, max_size=8)
_dialect_texts = st.lists(_dialect_text, min_size=1, max_size=8)


def _found(search: Any, text: str) -> bool:
    return search(text) is not None


def _every_engine(pattern: str) -> dict[str, Any]:
    """The search of every engine `compile_pattern` may choose for ``pattern``.

    ``auto`` is its own choice; ``re2`` and ``regex-timeout`` are forced; ``re-up-to`` is re's
    bounded stand-in past the text-length budget (as if every text were too long for ``re``).
    RE2 is left out where it cannot run the pattern with re's meaning (back-references,
    look-arounds, ``$`` inside the pattern): the choice never picks it there either.
    """
    engines = {"auto": compile_pattern(pattern).search}
    for engine in ("re2", "regex-timeout", "re-up-to"):
        try:
            engines[engine] = compile_pattern(pattern, _engine=engine).search
        except ValueError:
            assert engine == "re2", (pattern, engine)
    return engines


def _assert_agrees(pattern: str, texts: list[str]) -> None:
    engines = _every_engine(pattern)
    for text in texts:
        expected = re.search(pattern, text) is not None
        found = {name: _found(search, text) for name, search in engines.items()}
        assert all(verdict == expected for verdict in found.values()), (pattern, text, found)


@sized(0.8)
@given(pattern=patterns(), texts=_short_texts)
@example(pattern=r"^(?:a+)+$", texts=["aa\n", "aa\n\n"])  # `$` before a final newline
@example(pattern=r"(?:a|ab)*c", texts=["ababc", "abab"])  # nested alternation
@example(pattern=r"a*a*c", texts=["aaa"])  # flat, but re only up to a length budget
@example(pattern=r"(?i)(?:[a-c]{1,3})+B$", texts=["abcb", "abc"])
@example(pattern=r"\b(?:\w+\s?)+\b", texts=["ab c"])  # RE2 has no Unicode \b: regex module
def test_every_engine_gives_re_s_verdict_on_short_texts(pattern: str, texts: list[str]) -> None:
    _assert_agrees(pattern, texts)


@sized(0.5)
@given(pattern=backtracking_patterns(), texts=_short_texts)
@example(pattern=r"([abc])(?:(?:a|b)+)+\1", texts=["abba", "abbb"])
@example(pattern=r"(?<=a)(?:a*)*c", texts=["aac", "c"])
def test_patterns_re2_cannot_run_get_re_s_verdict(pattern: str, texts: list[str]) -> None:
    _assert_agrees(pattern, texts)


@sized(0.5)
@given(pattern=patterns(), texts=_dialect_texts)
def test_every_engine_agrees_with_re2_given_the_pattern_as_written(
    pattern: str, texts: list[str]
) -> None:
    # An oracle independent of our translation: on ASCII texts without newlines the two
    # dialects coincide for this grammar.
    engines = _every_engine(pattern)
    for text in texts:
        expected = re2.search(pattern, text) is not None
        for name, search in engines.items():
            assert _found(search, text) == expected, (pattern, text, name)


@sized(0.5)
@given(pattern=patterns(), text=_dialect_text.filter(bool))
def test_texts_past_re_s_budget_keep_the_verdict(pattern: str, text: str) -> None:
    # The choice by text length: a pattern re runs only up to `longest` characters gets a text
    # just past that, searched by whatever the choice picks then, and by re up to the budget.
    compiled = compile_pattern(pattern)
    chooser = getattr(compiled.search, "__self__", None)
    if type(chooser) is not _ReUpTo or chooser.longest > 5_000:
        return
    long = (text * (chooser.longest // len(text) + 2))[: chooser.longest + 1 + len(text)]
    at_budget = long[: chooser.longest]
    for sample in (long, at_budget):
        assert _found(compiled.search, sample) == (re2.search(pattern, sample) is not None), (
            pattern,
            len(sample),
        )


def _public_verdicts(pattern: str, text: str, *, ignore_case: bool) -> tuple[Any, Any]:
    config = {"config": {"ignore_case": True}} if ignore_case else {}
    outcomes = []
    for kind in ("regex", "not-regex"):
        expectation = assertly.compile([{"type": kind, "value": pattern, **config}])
        outcomes.append(expectation.check(text).outcome)
    return outcomes[0], outcomes[1]


@sized(0.7)
@given(
    pattern=st.one_of(patterns(), backtracking_patterns()),
    text=_short_text,
    ignore_case=st.booleans(),
)
@example(pattern=r"^(a+)+$", text="aaa\n", ignore_case=False)
@example(pattern=r"(?:b|B)+\1?$", text="bB", ignore_case=True)
def test_regex_and_not_regex_assertions_give_re_s_verdict(
    pattern: str, text: str, ignore_case: bool
) -> None:
    try:
        found = re.search(pattern, text, re.IGNORECASE if ignore_case else 0) is not None
    except re.error:
        with pytest.raises(assertly.ConfigError):
            _public_verdicts(pattern, text, ignore_case=ignore_case)
        return
    matched, not_matched = _public_verdicts(pattern, text, ignore_case=ignore_case)
    passed, failed = assertly.Outcome.PASSED, assertly.Outcome.FAILED
    assert (matched, not_matched) == ((passed, failed) if found else (failed, passed)), (
        pattern,
        text,
    )
