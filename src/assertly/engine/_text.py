"""How text assertions read text: Unicode NFC, case folding, and the edges of an output.

The same words can be spelt with different code points: ``é`` is one code point (NFC) or ``e``
plus a combining accent (NFD), and macOS file names, some keyboards and some models produce
the second. Text assertions compare NFC forms, so a user never sees ``'café' not in 'café'``.
"""

from __future__ import annotations

import unicodedata

__all__ = ["fold", "lstrip_edges", "nfc", "strip_edges"]

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
    while True:
        stripped = text.strip().strip(_INVISIBLE)
        if stripped == text:
            return stripped
        text = stripped


def lstrip_edges(text: str) -> str:
    """``text`` without whitespace and invisible marks at its start."""
    while True:
        stripped = text.lstrip().lstrip(_INVISIBLE)
        if stripped == text:
            return stripped
        text = stripped
