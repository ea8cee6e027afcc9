r"""Text made inert for a terminal: what an agent wrote can never move the cursor.

Agent outputs, messages quoting them, stderr tails and file contents reach the console. A
control character in them could erase a line (``\r``, backspace), recolour or hide text (ESC
sequences), ring the bell, start a new line that looks like ``PASSED`` (``\n``, U+2028), or
reorder what is shown (bidirectional overrides). Each is shown as its escape instead.
"""

from __future__ import annotations

__all__ = ["terminal_safe"]

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
