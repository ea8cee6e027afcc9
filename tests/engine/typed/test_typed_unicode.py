"""Text assertions read text the way people do: NFC forms, Unicode case folding, and edges
without invisible marks (docs/assertions.md, "How text is compared")."""

from __future__ import annotations

import os
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertly
from assertly import Outcome

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def outcome(spec: dict[str, Any], output: Any) -> Outcome:
    return assertly.compile([spec]).check(output).outcome


WORDS = ["café crème", "Việt Nam", "한국어", "Ångström", "ñandú"]


@pytest.mark.parametrize("word", WORDS)
@pytest.mark.parametrize("kind", ["contains", "icontains", "starts-with", "equals", "regex"])
def test_nfc_and_nfd_spellings_match_both_ways(kind: str, word: str) -> None:
    composed = unicodedata.normalize("NFC", word)
    decomposed = nfd(word)
    assert composed != decomposed
    for written, output in ((composed, decomposed), (decomposed, composed)):
        # Patterns are matched against NFC text, so they are written composed.
        value = composed if kind == "regex" else written
        assert outcome({"type": kind, "value": value}, output) is Outcome.PASSED
        assert outcome({"type": f"not-{kind}", "value": value}, output) is Outcome.FAILED


def test_contains_all_and_any_match_across_forms() -> None:
    output = nfd("un café et une crème")
    assert outcome({"type": "contains-all", "value": ["café", "crème"]}, output).value == "passed"
    result = assertly.compile([{"type": "contains-all", "value": ["café", "thé"]}]).check(output)
    assert result.results[0].message == "Output is missing 'thé'"
    assert outcome({"type": "contains-any", "value": ["thé", "crème"]}, output).value == "passed"


@pytest.mark.parametrize(
    ("value", "output", "expected"),
    [
        ("istanbul", "İSTANBUL", Outcome.PASSED),  # İ folds to i + dot, and the dot is dropped
        ("İstanbul", "istanbul", Outcome.PASSED),
        ("ISTANBUL", "istanbul", Outcome.PASSED),
        ("istanbul", "\u0131stanbul", Outcome.FAILED),  # dotless i is its own letter
        ("STRASSE", "straße", Outcome.PASSED),  # full case folding: ß is ss
        ("ΣΊΣΥΦΟΣ", "σίσυφος", Outcome.PASSED),  # final sigma
    ],
)
def test_icontains_uses_unicode_case_folding(value: str, output: str, expected: Outcome) -> None:
    assert outcome({"type": "icontains", "value": value}, output) is expected


def test_invisible_marks_inside_the_text_count() -> None:
    # A right-to-left mark or zero-width space between letters is part of the text: it is not
    # hidden from contains (a message shows it).
    assert outcome({"type": "contains", "value": "abc"}, "a\u200fbc") is Outcome.FAILED
    assert outcome({"type": "contains", "value": "abc"}, "a\u200bbc") is Outcome.FAILED
    # At the edges they are not part of the answer for equals and starts-with.
    assert outcome({"type": "equals", "value": "abc"}, "\u200fabc\u200e") is Outcome.PASSED
    assert outcome({"type": "starts-with", "value": "abc"}, "\ufeffabc") is Outcome.PASSED


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Hello", Outcome.PASSED),
        ("Hello\n", Outcome.PASSED),
        ("  Hello\t\r\n", Outcome.PASSED),
        ("\ufeffHello", Outcome.PASSED),
        ("Hello\u3000", Outcome.PASSED),  # ideographic space is whitespace
        ("Hello.", Outcome.FAILED),
        ("Hel lo", Outcome.FAILED),
        ("hello", Outcome.FAILED),
    ],
)
def test_equals_ignores_only_the_edges(output: str, expected: Outcome) -> None:
    assert outcome({"type": "equals", "value": "Hello"}, output) is expected


def test_equals_with_inner_whitespace_in_the_value_is_exact() -> None:
    spec = {"type": "equals", "value": "line one\nline two\n"}
    assert outcome(spec, "line one\nline two") is Outcome.PASSED
    assert outcome(spec, "line one\n\nline two") is Outcome.FAILED


_text = st.text(
    alphabet=st.sampled_from([*"aeiouAEIOU cnCN", "\u0301", "\u0303", "\u0308", "é", "ñ"]),
    max_size=20,
)


@PROPERTY
@given(output=_text, start=st.integers(0, 20), length=st.integers(1, 6))
def test_contains_is_blind_to_normal_forms(output: str, start: int, length: int) -> None:
    needle = unicodedata.normalize("NFC", output)[start : start + length]
    if not needle:
        return
    for written in (needle, nfd(needle)):
        for shown in (output, nfd(output), unicodedata.normalize("NFC", output)):
            expected = unicodedata.normalize("NFC", written) in unicodedata.normalize("NFC", shown)
            got = outcome({"type": "contains", "value": written}, shown)
            assert (got is Outcome.PASSED) == expected


@pytest.mark.parametrize(
    ("output", "words"),
    [
        ("one two three", 3),
        ("Hello - world", 2),  # a lone dash is not a word
        ("Hello — world • again", 3),
        ("state-of-the-art design", 2),  # a hyphenated compound is one word
        ("我爱你。", 3),  # each Chinese character is a word; punctuation is not
        ("日本語のテキスト", 8),
        ("我爱Python 3", 4),
        ("สวัสดีครับ ผม", 2),  # Thai: a run between spaces (splitting needs a dictionary)
        ("a\u200bb c", 3),  # a zero-width space separates words
        ("दिल दाल", 2),
        ("😀 hi", 1),
        ("  \n ", 0),
    ],
)
def test_word_count_counts_words_people_count(output: str, words: int) -> None:
    result = assertly.compile([{"type": "word-count", "value": words}]).check(output)
    assert result.passed, result.results[0].message
    over = assertly.compile([{"type": "word-count", "value": words + 1}]).check(output)
    assert over.results[0].message.endswith(f"got {words}")


@PROPERTY
@given(words=st.lists(st.text(alphabet="abcXYZ019", min_size=1, max_size=6), max_size=12))
def test_word_count_of_plain_words_is_the_number_of_words(words: list[str]) -> None:
    output = " ".join(words)
    assert assertly.compile([{"type": "word-count", "value": len(words)}]).check(output).passed


@pytest.mark.parametrize(
    ("expect", "response"),
    [
        ({"contains": "café"}, {"status": nfd("un café")}),
        ({"contains": nfd("café")}, 'prose around "un café"'),
        ({"summary_contains": "crème"}, {"summary": nfd("la crème")}),
        ({"message_contains": nfd("Ñandú")}, {"message": "un Ñandú"}),
        ({"field_contains": {"path": "a.b", "text": "é"}}, {"a": {"b": nfd("é")}}),
    ],
)
def test_expect_dict_text_keys_match_across_forms(expect: Any, response: Any) -> None:
    assert assertly.compile(expect).check(response).passed
