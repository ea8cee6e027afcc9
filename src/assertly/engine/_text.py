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
    "lstrip_edges",
    "nfc",
    "strip_edges",
]

# Characters that carry no visible content at the edges of an output: whitespace (str.strip's
# set) plus the byte order mark, zero-width space, word joiner and the bidirectional marks.
_INVISIBLE = "\ufeff\u200b\u2060\u200e\u200f"


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C (ASCII and already-normal text returned as is)."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def fold(text: str) -> str:
    """Caseless form of ``text``: NFC, Unicode full case folding, NFC again.

    Folding can decompose (``İ`` folds to ``i`` + U+0307 COMBINING DOT ABOVE); that dot is
    dropped after an ``i``, so ``İstanbul`` matches ``istanbul`` as a Turkish reader expects.
    The dotless ``\u0131`` stays a letter of its own: no locale-free folding maps it to ``i``.
    """
    folded = nfc(text).casefold()
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
# Pieces of text between whitespace or zero-width spaces (U+200B, which separates words in
# some scripts), each ideograph a piece of its own.
_PIECE = re.compile(f"[{IDEOGRAPHIC}]|[^\\s\u200b{IDEOGRAPHIC}]+")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
# An ASCII run of only punctuation or symbols ("-", "--", "*"), standing between spaces.
_ASCII_SYMBOLS_ONLY = re.compile(r"(?<!\S)[^\sA-Za-z0-9]+(?!\S)")


def count_words(text: str) -> int:
    """The number of words: runs between whitespace, each Chinese or Japanese character a word.

    A run without a letter or digit (a dash, a bullet, an emoji) is not a word; a hyphenated
    compound (``state-of-the-art``) is one.
    """
    if text.isascii():
        words = text.split()
        if _ASCII_SYMBOLS_ONLY.search(text) is None:
            return len(words)
        return sum(1 for word in words if _LETTER_OR_DIGIT.search(word))
    return sum(1 for piece in _PIECE.findall(text) if _LETTER_OR_DIGIT.search(piece))
