r"""Python ``re`` patterns rewritten for RE2 and the ``regex`` module, with re's meaning.

The same text means different things to different engines: ``\d`` is Unicode in ``re`` and
ASCII in RE2, ``$`` also matches before a final newline in ``re`` only, each engine has its
own Unicode tables and case folding, and RE2 reads ``{,3}`` as text. So a pattern is never
handed over as written. It is rebuilt from ``re``'s own parse tree, and every set of
characters (a class, ``\w``, a letter under ``ignore_case``) is spelt out as the exact code
points ``re`` itself matches, found by asking ``re``. What a target cannot express with the
same meaning raises `Untranslatable` (RE2 has no look-arounds, back-references or ``\b``
beyond ASCII); the ``regex`` module can express all of it.
"""

from __future__ import annotations

import functools
import re
import re._constants as _c  # type: ignore[import-not-found]
from typing import Any, Literal

__all__ = ["Untranslatable", "translate"]

Target = Literal["re2", "regex"]

_SURROGATES = range(0xD800, 0xE000)


class Untranslatable(Exception):
    """The target engine cannot express this pattern with ``re``'s meaning."""


@functools.cache
def _every_character() -> str:
    """Every code point, surrogates included, once (about 4 MB, built on first need)."""
    return "".join(map(chr, range(0x110000)))


@functools.cache
def _matched_ranges(pattern: str, flags: int) -> tuple[tuple[int, int], ...]:
    r"""The code points the one-character ``pattern`` matches under ``flags``, as ranges.

    Code points stand in order in `_every_character`, so each maximal run of matched ones is a
    match of ``(?:pattern)+``: one match object per range, not one per code point (``\W``
    or ``[^b]``, a million points, took 0.3-0.5 s that way; as runs, under 25 ms).
    """
    runs = re.finditer(f"(?:{pattern})+", _every_character(), flags)
    return tuple((run.start(), run.end() - 1) for run in runs)


def _char(point: int, target: Target) -> str:
    return f"\\x{{{point:x}}}" if target == "re2" else f"\\U{point:08x}"


def _class(ranges: tuple[tuple[int, int], ...], target: Target) -> str:
    if target == "re2":  # RE2 reads UTF-8 text, which holds no surrogates
        ranges = tuple(
            piece
            for low, high in ranges
            for piece in ((low, min(high, 0xD7FF)), (max(low, 0xE000), high))
            if piece[0] <= piece[1]
        )
    if not ranges:
        return "[^\\x{0}-\\x{10ffff}]" if target == "re2" else "(?!)"
    parts = [
        _char(low, target) if low == high else f"{_char(low, target)}-{_char(high, target)}"
        for low, high in ranges
    ]
    return "[" + "".join(parts) + "]"


_CATEGORY_SOURCE = {
    _c.CATEGORY_DIGIT: r"\d",
    _c.CATEGORY_NOT_DIGIT: r"\D",
    _c.CATEGORY_SPACE: r"\s",
    _c.CATEGORY_NOT_SPACE: r"\S",
    _c.CATEGORY_WORD: r"\w",
    _c.CATEGORY_NOT_WORD: r"\W",
}


def _set_source(items: Any) -> str:
    """The items of a parsed set (``IN``) written back as a Python class."""
    parts = []
    for op, arg in items:
        if op is _c.NEGATE:
            parts.append("^")
        elif op is _c.LITERAL:
            parts.append(re.escape(chr(arg)) if chr(arg) not in "^" else "\\^")
        elif op is _c.RANGE:
            parts.append(f"{re.escape(chr(arg[0]))}-{re.escape(chr(arg[1]))}")
        elif op is _c.CATEGORY:
            parts.append(_CATEGORY_SOURCE[arg])
        else:
            raise Untranslatable(f"set item {op}")
    return "[" + "".join(parts) + "]"


_CASE_FLAGS = re.IGNORECASE | re.ASCII


def translate(tree: Any, flags: int, *, target: Target) -> str:
    """``re``'s parse tree of a pattern as a pattern for ``target``, with re's meaning.

    Raises:
        Untranslatable: ``target`` cannot express part of it with the same meaning.
    """
    return _Translator(target).sequence(tree, flags, top=True)


class _Translator:
    def __init__(self, target: Target) -> None:
        self.target = target

    def one_of(self, source: str, flags: int) -> str:
        """A class of exactly the code points ``re`` matches with ``source`` under ``flags``."""
        return _class(_matched_ranges(source, flags & _CASE_FLAGS), self.target)

    def sequence(self, items: Any, flags: int, *, top: bool = False) -> str:
        out = []
        last = len(items) - 1
        for index, (op, arg) in enumerate(items):
            out.append(self.node(op, arg, flags, at_end=top and index == last))
        return "".join(out)

    def node(self, op: Any, arg: Any, flags: int, *, at_end: bool = False) -> str:
        regex_only = self.target == "regex"
        if op is _c.LITERAL:
            if flags & re.IGNORECASE:
                return self.one_of(re.escape(chr(arg)), flags)
            if arg in _SURROGATES and not regex_only:
                return _class((), self.target)  # never in UTF-8 text
            return _char(arg, self.target)
        if op is _c.NOT_LITERAL:
            return self.one_of("[^" + re.escape(chr(arg)) + "]", flags)
        if op is _c.IN:
            return self.one_of(_set_source(arg), flags)
        if op is _c.ANY:  # any character, or any but a newline
            every = ((0, 0x10FFFF),) if flags & re.DOTALL else ((0, 9), (11, 0x10FFFF))
            return _class(every, self.target)
        if op is _c.BRANCH:
            return "(?:" + "|".join(self.sequence(branch, flags) for branch in arg[1]) + ")"
        if op is _c.SUBPATTERN:
            group, add, remove, body = arg
            inner = self.sequence(body, (flags | add) & ~remove)
            capture = group is not None and regex_only  # kept for back-references
            return f"({inner})" if capture else f"(?:{inner})"
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            low, high, body = arg
            if op is _c.POSSESSIVE_REPEAT and not regex_only:
                raise Untranslatable("possessive repeat")
            bounds = f"{{{low},}}" if high == _c.MAXREPEAT else f"{{{low},{high}}}"
            suffix = {_c.MAX_REPEAT: "", _c.MIN_REPEAT: "?", _c.POSSESSIVE_REPEAT: "+"}[op]
            return f"(?:{self.sequence(body, flags)}){bounds}{suffix}"
        if op is _c.AT:
            return self.anchor(arg, flags, at_end)
        if not regex_only:
            raise Untranslatable(str(op))  # look-arounds, back-references, atomic groups
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            direction, body = arg
            kind = (
                ("=" if op is _c.ASSERT else "!")
                if direction == 1
                else ("<=" if op is _c.ASSERT else "<!")
            )
            return f"(?{kind}{self.sequence(body, flags)})"
        if op is _c.GROUPREF:
            reference = f"\\g<{arg}>"
            return f"(?i:{reference})" if flags & re.IGNORECASE else f"(?:{reference})"
        if op is _c.GROUPREF_EXISTS:
            group, yes, no = arg
            otherwise = "|" + self.sequence(no, flags) if no is not None else ""
            return f"(?({group}){self.sequence(yes, flags)}{otherwise})"
        if op is _c.ATOMIC_GROUP:
            return f"(?>{self.sequence(arg, flags)})"
        raise Untranslatable(str(op))

    def anchor(self, code: Any, flags: int, at_end: bool) -> str:
        multiline = bool(flags & re.MULTILINE)
        regex_only = self.target == "regex"
        if code is _c.AT_BEGINNING:
            return "(?m:^)" if multiline else "\\A"
        if code is _c.AT_BEGINNING_STRING:
            return "\\A"
        if code is _c.AT_END_STRING:
            return "\\Z" if regex_only else "\\z"
        if code is _c.AT_END:
            if multiline:
                return "(?m:$)"
            if regex_only:
                return "(?=\\n?\\Z)"
            if at_end:
                # re's `$` also matches before a final newline. At the very end of the pattern
                # consuming that newline changes no verdict, and RE2 has no look-ahead.
                return "\\n?\\z"
            raise Untranslatable("$ before the end of the pattern")
        if code in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY) and regex_only:
            word = self.one_of(r"\w", flags)
            other = self.one_of(r"\W", flags)
            if code is _c.AT_BOUNDARY:
                return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            # Not a boundary, and (as in re) never in an empty text.
            return f"(?:(?<={word})(?={word})|(?<={other})(?!{word})|(?<!{word})(?={other}))"
        raise Untranslatable(str(code))
