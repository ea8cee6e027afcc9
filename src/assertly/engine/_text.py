"""How text assertions read text: Unicode NFC, case folding, and the edges of an output.

The same words can be spelt with different code points: ``é`` is one code point (NFC) or ``e``
plus a combining accent (NFD), and macOS file names, some keyboards and some models produce
the second. Text assertions compare NFC forms, so a user never sees ``'café' not in 'café'``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "IDEOGRAPHIC",
    "NO_SPACE_SCRIPTS",
    "count_words",
    "fold",
    "fold_normal",
    "lstrip_edges",
    "nfc",
    "strip_edges",
]

# Characters that carry no visible content at the edges of an output: whitespace (str.strip's
# set) plus the byte order mark, zero-width space, word joiner and the bidirectional marks.
_INVISIBLE = "\ufeff\u200b\u2060\u200e\u200f"


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C (ASCII and already-normal text returned as is)."""
    if text.isascii():
        return text
    # `normalize` makes the quick check `is_normalized` does (returning normal text as is);
    # asking `is_normalized` first would normalise a text that needs it twice.
    return unicodedata.normalize("NFC", text)


def fold(text: str) -> str:
    """Caseless form of ``text``: NFC, Unicode full case folding, NFC again.

    Folding can decompose (``İ`` folds to ``i`` + U+0307 COMBINING DOT ABOVE); that dot is
    dropped after an ``i``, so ``İstanbul`` matches ``istanbul`` as a Turkish reader expects.
    The dotless ``\u0131`` stays a letter of its own: no locale-free folding maps it to ``i``.
    """
    return fold_normal(nfc(text))


def fold_normal(text: str) -> str:
    """`fold` of a text already in NFC (a response's shared NFC text: not normalised again)."""
    folded = text.casefold()
    if not folded.isascii():
        folded = unicodedata.normalize("NFC", folded).replace("i\u0307", "i")
    return folded


def strip_edges(text: str) -> str:
    """``text`` without whitespace and invisible marks (BOM, zero-width, LRM/RLM) at its ends."""
    return _strip(text, str.strip)


def lstrip_edges(text: str) -> str:
    """``text`` without whitespace and invisible marks at its start."""
    return _strip(text, str.lstrip)


def _strip(text: str, strip: Callable[..., str]) -> str:
    # Alternate until neither removes anything: " \ufeff x" has whitespace on both sides.
    while True:
        stripped = strip(strip(text), _INVISIBLE)
        if stripped == text:
            return stripped
        text = stripped


# Chinese and Japanese are written without spaces, and a character is the unit people count
# (a "word count" of Chinese text is a character count). Thai, Lao, Khmer and Myanmar are
# written without spaces too, but their words span several characters and splitting them
# needs a dictionary: there a run between spaces counts once (for metrics, where n-grams of
# characters are still meaningful, they are split too: `NO_SPACE_SCRIPTS`).
IDEOGRAPHIC = (
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ffff"  # CJK extensions B and later
)
NO_SPACE_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
) + IDEOGRAPHIC
# One match per word: an ideograph alone, or a letter or digit (\W minus "_" excluded) with the
# rest of its run up to whitespace, a zero-width space (U+200B, which separates words in some
# scripts) or an ideograph. A run with no letter or digit never starts a match, and the
# leading class lets the regex engine skip quickly to the next candidate.
_WORD = re.compile(f"[{IDEOGRAPHIC}]|[^\\W_{IDEOGRAPHIC}][^\\s\u200b{IDEOGRAPHIC}]*")
# The same count with no string per word: each match ends with an empty group, so `findall`
# lists the one shared empty string once per word.
_WORD_COUNTED = re.compile(f"(?:{_WORD.pattern})()")
# ASCII text, the common case, is counted with no regex at all: one C pass maps each byte to
# "a" (a letter or digit: a word's start), " " (what the regex's \s matches) or deletes it
# (anything else, which can only continue a word). A run of "a" then stands for each run
# holding a letter or digit, a word; a run with none vanishes into its spaces.
_ASCII_SPACE = frozenset(code for code in range(128) if re.fullmatch(r"\s", chr(code)))
_ASCII_ALNUM = frozenset(code for code in range(128) if re.fullmatch(r"[A-Za-z0-9]", chr(code)))
_WORD_MARKS = bytes(
    ord("a") if code in _ASCII_ALNUM else ord(" ") if code in _ASCII_SPACE else code
    for code in range(256)
)
_NOT_WORD = bytes(code for code in range(128) if code not in _ASCII_ALNUM | _ASCII_SPACE)


def count_words(text: str) -> int:
    """The number of words: runs between whitespace, each Chinese or Japanese character a word.

    A run without a letter or digit (a dash, a bullet, an emoji) is not a word; a hyphenated
    compound (``state-of-the-art``) is one.
    """
    if text.isascii():
        marks = text.encode("ascii").translate(_WORD_MARKS, _NOT_WORD)
        return marks.count(b" a") + marks.startswith(b"a")
    return len(_WORD_COUNTED.findall(text))
