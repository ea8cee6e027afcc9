r"""Text made inert for a terminal: what an agent wrote can never move the cursor.

Agent outputs, messages quoting them, stderr tails and file contents reach the console. A
control character in them could erase a line (``\r``, backspace), recolour or hide text (ESC
sequences), ring the bell, start a new line that looks like ``PASSED`` (``\n``, U+2028), or
reorder what is shown (bidirectional overrides). Each is shown as its escape instead.
"""

from __future__ import annotations

import re

__all__ = ["inert_json", "inert_text", "terminal_safe"]

_ESCAPES = {
    **{code: f"\\x{code:02x}" for code in range(0x20)},
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
    0x7F: "\\x7f",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},  # C1 controls (CSI is 0x9b)
    # Bidirectional embeddings, overrides and isolates, and the marks that act like them.
    **{code: f"\\u{code:04x}" for code in range(0x202A, 0x202F)},
    **{code: f"\\u{code:04x}" for code in range(0x2066, 0x206A)},
    0x061C: "\\u061c",
    0x200E: "\\u200e",
    0x200F: "\\u200f",
    0x2028: "\\u2028",  # line separator
    0x2029: "\\u2029",  # paragraph separator
}


def terminal_safe(text: str) -> str:
    r"""``text`` with control characters shown as escapes, and lone surrogates escaped.

    Meant for one line of console output: a newline inside it is shown as ``\n``.
    """
    if text.isascii() and text.isprintable():
        return text
    safe = text.translate(_ESCAPES)
    return safe.encode("utf-8", "backslashreplace").decode("utf-8")


# A document keeps its lines and tabs; every other control is shown as its escape.
_DOCUMENT_ESCAPES = {code: escape for code, escape in _ESCAPES.items() if code not in (9, 10)}


def inert_text(text: str) -> str:
    r"""A whole document (Markdown, text) made inert, its newlines and tabs kept.

    What `terminal_safe` does to one line — C0 and C1 controls, DEL, bidirectional overrides
    and isolates, U+2028/U+2029 shown as escapes (``\x1b``, ``\x9b``, ``\u202e``), lone
    surrogates as ``\udXXX`` — but ``\n`` and ``\t`` are left as they are. Every writer of
    Markdown or text (reports, ``diff``, anything printed) passes its text through this.
    """
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return text
    safe = text.translate(_DOCUMENT_ESCAPES)
    return safe.encode("utf-8", "backslashreplace").decode("utf-8")


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
# UTF-8 of what JSON may hold raw but a terminal obeys: DEL, C1 controls, the bidirectional
# marks, overrides and isolates (U+061C, U+200E/F, U+202A-E, U+2066-9), U+2028/U+2029.
_JSON_RAW = re.compile(
    b"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _json_escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))


def inert_json(data: bytes) -> bytes:
    r"""JSON text (UTF-8) with the characters a terminal obeys written as ``\uXXXX``.

    JSON must escape only C0 controls; a writer leaves DEL, C1 controls (``\x9b`` is CSI),
    bidirectional overrides and U+2028/U+2029 raw, and a terminal (or an old JavaScript
    reader, for U+2028) acts on them. They can only be inside strings, so escaping them keeps
    the very same JSON value.
    """
    return _JSON_RAW.sub(_json_escape, data)
