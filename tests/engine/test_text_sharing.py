"""The text assertions' shared, cheaper reads give the verdicts of a plain reference (issue 35).

A response is normalised once (`Response.nfc_text`, and `folded_text` made from it), its JSON
read once (`whole_json`, which knows prose is not JSON by its first character), and words are
counted without a string per word. Each is compared here, on generated texts (Unicode, NFC and
NFD spellings, empty, whitespace of every kind), with the straightforward way it replaced.
"""

from __future__ import annotations

import json
import re
import tracemalloc
import unicodedata
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import assertly
from assertly._json import has_long_digit_run, loads, loads_first_try
from assertly.engine import Response, _response
from assertly.engine._response import _FENCE_LINE, NOT_JSON, _fence_lines, iter_json_values
from assertly.engine._text import IDEOGRAPHIC, count_words, fold, lstrip_edges, nfc
from assertly.engine._values import json_equal
from assertly.engine.typed.structure import _citation, _fenced

# --- plain references: the code these reads replaced -----------------------------------------

_WORD = re.compile(f"[{IDEOGRAPHIC}]|[^\\W_{IDEOGRAPHIC}][^\\s\u200b{IDEOGRAPHIC}]*")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]\S*")


def words_reference(text: str) -> int:
    """One match per word, as `count_words` counted before (a list of every word)."""
    return len((_ASCII_WORD if text.isascii() else _WORD).findall(text))


def fold_reference(text: str) -> str:
    """`fold` as written before: NFC of the raw text, casefold, NFC, the dot after ``i``."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return unicodedata.normalize("NFC", folded).replace("i\u0307", "i")


def json_reference(text: str) -> Any:
    """The whole text read by `loads` (after a byte order mark), or `NOT_JSON`."""
    try:
        return loads(text.removeprefix("\ufeff"))
    except ValueError:
        return NOT_JSON


# --- generated texts -------------------------------------------------------------------------

# Every kind of character the reads treat differently: ASCII letters, digits, punctuation and
# controls; each whitespace the regex's \s knows (ASCII's separators \x1c-\x1f too), the
# zero-width space; accented letters precomposed and decomposed, Turkish i's, the German ß and
# ligatures that fold to several letters; ideographs, kana, Thai; emoji; the byte order mark.
_PIECES = st.sampled_from(
    [
        *"aZ09_-.,:;!?'\"(){}[]/\\@#*~`",
        *(" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x00", "\x7f"),
        *("\x85", "\xa0", "\u2003", "\u3000", "\u200b", "\u2060", "\ufeff", "\u200e"),
        *("\xe9", "e\u0301", "\xc5", "A\u030a", "\u0130", "\u0131", "\xdf", "\ufb01"),
        *("\u03a3", "\u03c2", "\u0301", "\u0307", "\u65e5", "\u672c", "\u8a9e", "\u3072"),
        *("\u30ab", "\u0e44", "\u0e17", "\U0001f642", "\U0001f44d\U0001f3fd", "\uff11"),
        *("\u0663", "\xb2", "word", "x-y", "42", "\u2014"),
    ]
)
TEXTS = st.one_of(st.lists(_PIECES, max_size=40).map("".join), st.text(max_size=30))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
# JSON with whitespace (JSON's own, and what JSON does not allow) and prose around it.
_EDGES = st.sampled_from(["", " ", "\n\t\r ", "\ufeff", "\ufeff ", "\x0c", "\xa0", "x", "Here: "])
JSON_TEXTS = st.builds(
    lambda before, value, indent, after: before + json.dumps(value, indent=indent) + after,
    _EDGES,
    JSON_VALUES,
    st.sampled_from([None, 2]),
    st.sampled_from(["", " ", "\n", " x", "]"]),
)
LITERALS = st.sampled_from(
    [
        *("", " ", "true", "false", "null", "nul", "trueish", "NaN", "Infinity", "-Infinity"),
        *("-", "+1", "1e400", "01", "-0", '"\\ud800"', "[1,]", "{}", "[" * 40),
        "12345678901234567890123",
    ]
)


def _spellings(text: str) -> list[str]:
    return [text] + [unicodedata.normalize(form, text) for form in ("NFC", "NFD", "NFKC")]


# --- word-count ------------------------------------------------------------------------------


@given(TEXTS)
@example("")
@example(" \x1c\x1d\x1e\x1f ")
@example("- — • ... state-of-the-art")
@example("a\x1cb\x85c\xa0d\u200be")
@settings(max_examples=400)
def test_count_words_is_the_reference_count(text: str) -> None:
    for spelling in _spellings(text):
        assert count_words(spelling) == words_reference(spelling)


@given(st.text(st.characters(max_codepoint=127), max_size=60))
@settings(max_examples=300)
def test_ascii_words_are_counted_as_the_unicode_rule_counts_them(text: str) -> None:
    # The ASCII count (no regex) and the general rule agree wherever both apply.
    assert count_words(text) == len(_WORD.findall(text)) == words_reference(text)


# --- one normalisation -----------------------------------------------------------------------


@given(TEXTS)
@example("İstanbul")
@example("Straße ﬁle")
@settings(max_examples=400)
def test_shared_nfc_and_folded_text_are_the_reference_forms(text: str) -> None:
    for spelling in _spellings(text):
        response = Response(spelling)
        assert response.nfc_text == unicodedata.normalize("NFC", spelling)
        assert response.folded_text == fold_reference(spelling) == fold(spelling)
    # Any spelling of the same text folds to the same caseless form.
    nfc_form, nfd_form = (unicodedata.normalize(form, text) for form in ("NFC", "NFD"))
    assert Response(nfd_form).folded_text == Response(nfc_form).folded_text


def test_the_output_is_normalised_once_per_check() -> None:
    response = Response("Cafe\u0301 crème")
    nfc_text = response.nfc_text
    assert response.nfc_text is nfc_text  # cached, not normalised again
    assert response.folded_text == "café crème"
    assert response.folded_text is response.folded_text


# --- one JSON read ---------------------------------------------------------------------------


@given(st.one_of(JSON_TEXTS, TEXTS, LITERALS, st.tuples(_EDGES, LITERALS).map("".join)))
@example("")
@example(" \t\n")
@example("\ufeff")
@example("\ufeff\ufeff{}")
@settings(max_examples=400)
def test_whole_json_is_the_reference_reading(text: str) -> None:
    expected = json_reference(text)
    for response in (Response(text), Response(text.encode("utf-8", "surrogatepass"))):
        if response.decode_errors:
            continue  # (a lone surrogate as bytes: another text once decoded)
        value = response.whole_json
        assert (value is NOT_JSON) == (expected is NOT_JSON), text
        if expected is not NOT_JSON:
            assert json_equal(value, expected)
        assert not response.too_deep
    # The unchecked read refuses no text that is JSON by orjson's rules, and takes over.
    response = Response(text)
    unchecked = response.unchecked_json()
    if unchecked is NOT_JSON:
        assert expected is NOT_JSON or text.lstrip(" \t\n\r\ufeff")[:1] in set('{["-0123456789tfn')
    value = response.whole_json
    assert (value is NOT_JSON) == (expected is NOT_JSON)


@given(st.text(st.sampled_from("0123456789 ,.-:x\u00e9"), max_size=300), st.integers(1, 40))
@settings(max_examples=300)
def test_long_digit_runs_are_found_at_every_length(chunk: str, repeat: int) -> None:
    text = chunk * repeat  # up to 12,000 characters: short, sampled and windowed texts
    assert has_long_digit_run(text) == bool(re.search("[0-9]{19}", text))


# --- verdicts of whole expectations ----------------------------------------------------------

TYPED = [
    {"type": "contains", "value": "café"},
    {"type": "icontains", "value": "ISTANBUL"},
    {"type": "icontains", "value": "STRASSE"},
    {"type": "word-count", "value": {"min": 2, "max": 6}},
    {"type": "is-json"},
    {"type": "contains-json"},
    {"type": "equals", "value": "ok", "transform": "json_path:$.status"},
    {"type": "starts-with", "value": "{"},
    {"type": "not-icontains", "value": "ERROR"},
]


def reference_verdicts(text: str) -> list[bool]:
    """The verdicts of `TYPED`, each read the plain way."""
    whole = json_reference(text)
    folded = fold_reference(text)
    nfc_text = unicodedata.normalize("NFC", text)
    prose = type(whole) is not dict and type(whole) is not list
    status = whole.get("status") if type(whole) is dict else None
    return [
        "café" in nfc_text,
        "istanbul" in folded,
        "strasse" in folded,
        2 <= words_reference(text) <= 6,
        whole is not NOT_JSON,
        _contains_json(text) if prose else True,
        type(status) is str and nfc(status) == "ok",
        text.startswith("{") or lstrip_edges(nfc_text).startswith("{"),
        "error" not in folded,
    ]


def _contains_json(text: str) -> bool:
    """``contains-json`` on text that is not one object or array: a value found in it."""
    return any(
        not _citation(value) or _fenced(text, start)
        for start, _end, value in iter_json_values(text)
    )


_CHECKED = assertly.compile(TYPED)
_WORDS = st.sampled_from(
    [
        *("café", "cafe\u0301", "İstanbul", "ISTANBUL", "Straße", "STRASSE", "error", "ERROR"),
        *("ok", "o\u0301k", "日本", " ", "\n", "\u3000", "\u200b", "—", "{", "}", "[1]", "x"),
        '{"status": "ok"}',
    ]
)
OUTPUTS = st.one_of(
    st.lists(_WORDS, max_size=8).map("".join),
    st.builds(json.dumps, st.fixed_dictionaries({"status": _WORDS})),
    TEXTS,
)


@given(OUTPUTS)
@example('{"status": "ok"}')
@example(' {"status": "o\u0301k"}')
@example("cafe\u0301 in İstanbul")
@settings(max_examples=300, deadline=None)
def test_expectation_verdicts_are_the_reference_verdicts(text: str) -> None:
    expected = reference_verdicts(text)
    fast = [result.passed for result in _CHECKED.check(text).results]
    detailed = [result.passed for result in _CHECKED._check_detailed(text).results]
    assert fast == detailed == expected, text


# --- fences ----------------------------------------------------------------------------------

_FENCE_PIECES = st.sampled_from(["`", "```", "````", "json", "JSON", "py", " ", "\t", "\r", "\n"])


@given(st.lists(st.one_of(_FENCE_PIECES, _PIECES), max_size=30).map("".join))
@example("````x y\n```json\n{}\n```\n")
@settings(max_examples=400)
def test_fence_lines_are_the_regex_search(text: str) -> None:
    # Fences are tried only where ``` is: the same matches as the regex's own search.
    assert [m.span() for m in _fence_lines(text)] == [m.span() for m in _FENCE_LINE.finditer(text)]


# --- one parse per check ---------------------------------------------------------------------

_JSON_THREE = [
    {"type": "is-json"},
    {"type": "contains-json", "value": {"type": "object", "required": ["status"]}},
    {"type": "equals", "value": "ok", "transform": "json_path:$.status"},
    {"type": "levenshtein", "value": "ok", "threshold": 1, "transform": "json_path:$.status"},
]


@pytest.mark.parametrize(
    "output",
    ['{"status": "ok"}', '{"status": "no"}', "Here it is: {}", '[1, {"status": "ok"}]', "x"],
)
def test_every_json_assertion_of_a_check_shares_one_parse(
    output: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = loads_first_try

    def counted(text: str) -> Any:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(_response, "loads_first_try", counted)
    expectation = assertly.compile(_JSON_THREE)
    for judged in (expectation.check(output), expectation._check_detailed(output)):
        assert len(judged.results) == len(_JSON_THREE)
    # Only JSON-looking text is handed to the parser, once per check whatever the path.
    assert len(calls) == (2 if output[0] in "{[" else 0)


def test_words_are_counted_without_a_string_per_word() -> None:
    # 200,000 words: a list of them (findall's) would take ~12 MB; one pass takes the text's
    # size twice at most (its bytes, then their marks).
    text = "one two, three - four\n" * 50_000
    non_ascii = text.replace("two", "tw\u00f6")
    tracemalloc.start()
    try:
        assert count_words(text) == 200_000
        ascii_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        assert count_words(non_ascii) == 200_000
        other_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ascii_peak < 2.5 * len(text)
    # Outside ASCII, the regex lists one shared empty string per word: 8 bytes a word.
    assert other_peak < 10 * 200_000


def test_caseless_text_is_made_once_per_response() -> None:
    response = Response("The INCIDENT report " * 100)
    folded = response.folded_text
    tracemalloc.start()
    try:
        for _ in range(10):
            assert response.folded_text is folded
            assert response.nfc_text is response.text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200  # no copy of the 2,000-character text
