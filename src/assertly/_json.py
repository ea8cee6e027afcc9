"""assertly's JSON codec: exact parsing, and writing of any value.

Parsing keeps big integers exact and reads any depth up to `MAX_JSON_DEPTH`; writing is
compact or indented, and what orjson refuses goes through the standard library. Every layer
uses it: the engine parses responses, loading reads JSON files, the store and reports write.
It imports nothing from assertly.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

import orjson

__all__ = [
    "DEEP_MARKER",
    "EXACT_DECODER",
    "MAX_JSON_DEPTH",
    "REPORT_MAX_DEPTH",
    "TOO_DEEP_MESSAGE",
    "JsonTooDeep",
    "dumps",
    "finite_float",
    "has_long_digit_run",
    "iter_brackets",
    "json_depth",
    "loads",
    "loads_deep",
    "loads_first_try",
    "loads_nested",
    "loads_stdlib",
    "nested_too_deep",
    "report_json_bytes",
    "surrogate_refused",
    "to_json_bytes",
]

# How deeply nested a response's JSON may be and still be judged. orjson stops at 1,024
# levels; JSON nested deeper than that (up to this limit) is parsed by the standard library's
# pure-Python scanner, whose recursion does not consume the C stack (Python 3.11+).
MAX_JSON_DEPTH = 10_000


class JsonTooDeep(ValueError):
    """JSON text nested deeper than `MAX_JSON_DEPTH`: it cannot be judged."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP_MESSAGE)


TOO_DEEP_MESSAGE = (
    f"the output's JSON is nested more than {MAX_JSON_DEPTH:,} levels deep; assertly judges "
    f"JSON nested up to {MAX_JSON_DEPTH:,} levels"
)

_DUMP_OPTIONS = orjson.OPT_NON_STR_KEYS


# orjson reads integers beyond 64 bits as floats, which would make 10**30 equal 10**30 + 1.
# Any run of 19 digits may be such an integer; such text is read by the stdlib, exactly.
#
# Looking for that run costs more than it finds, so a cheaper test goes first. A run of 19
# digits covers 19 consecutive positions, which always include two consecutive multiples of 9
# (the first multiple of 9 in the run, 9k, is at most 8 past its start, the next 9 further).
# So when the text's every 9th character has no two adjacent digits, there is no such run:
# one C-level slice, a translate of a ninth of the text and a find, about a third of the full
# test (which maps every byte to "digit or not" and looks for 19 in a row). When the sample
# does have adjacent digits (ids, timestamps, numbers: common in agents' replies), a run can
# only be near them: one holding positions 9k and 9k + 9 starts at 9k - 8 at the earliest and
# ends at 9k + 18 at the latest. So only those windows of the text get the full test, unless
# there are many (a long number, an array of numbers), when the whole text gets it. Neither
# test ever misses a run, nor sees one that is not there. Digits are ASCII, so a non-ASCII
# character is never taken for one: the sample and windows of text are encoded to ASCII with
# every other character replaced by "?" (one byte each, so a position in the sample's bytes
# is its position in the sample; lone surrogates are replaced too).
_DIGIT_MAP = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
_STRIDE = 9
_SHORT = 19 * _STRIDE  # below this, the sample would be hardly smaller than the text
_WINDOWS = 4  # sample hits looked at one by one; more, and the whole text is tested
_WINDOWED = 4096  # shorter text with a hit in its sample is tested whole, not by windows


def has_long_digit_run(text: str | bytes) -> bool:
    """Whether ``text`` holds 19 digits in a row, so that orjson may not read it exactly.

    Never wrong either way (see the comment above).
    """
    # `find`, not `in`: `in` on bytes first tries its operand as an integer, and the
    # exception that raises and clears costs more than the search.
    if len(text) < _SHORT:
        return len(text) >= 19 and _ascii(text).translate(_DIGIT_MAP).find(_LONG_RUN) >= 0
    return _run_near_hits(text, _ascii(text[::_STRIDE]).translate(_DIGIT_MAP))


def _run_near_hits(text: str | bytes, sample: bytes) -> bool:
    """`has_long_digit_run` of a long text, given its every 9th character mapped to digits."""
    hit = sample.find(b"00")
    if hit >= 0 and len(text) < _WINDOWED:
        # Each window costs about as much as the full test of 1,000 characters (C calls'
        # fixed cost): below this length the full test goes first.
        return _ascii(text).translate(_DIGIT_MAP).find(_LONG_RUN) >= 0
    windows = _WINDOWS
    while hit >= 0:
        if not windows:
            return _ascii(text).translate(_DIGIT_MAP).find(_LONG_RUN) >= 0
        windows -= 1
        at = hit * _STRIDE
        window = text[max(at - _STRIDE, 0) : at + 2 * _STRIDE + 1]
        if _ascii(window).translate(_DIGIT_MAP).find(_LONG_RUN) >= 0:
            return True
        hit = sample.find(b"00", hit + 1)
    return False


def _ascii(text: str | bytes) -> bytes:
    """Bytes in which a digit is where the text has one (see the comment above)."""
    if isinstance(text, bytes):
        return text  # (a str subclass, numpy.str_ from a py: target, is encoded below)
    return text.encode("ascii", "replace")  # ASCII text: the fast path, a copy


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite_float(literal: str) -> float:
    """A JSON number literal as a float; one that overflows to infinity is refused."""
    value = float(literal)
    if value in (math.inf, -math.inf):  # orjson: "number out of range"
        raise ValueError(f"{literal} is out of range for a JSON number")
    return value


# The stdlib's decoder made to accept what orjson accepts, so whether a text is JSON never
# depends on which parser read it (`loads` takes the stdlib's for big integers and lone
# surrogates): no NaN/Infinity, no number that overflows to infinity, and only JSON's own
# whitespace around the value (`_strict_decode`).
EXACT_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)
_JSON_SPACE = " \t\n\r"
# orjson refuses a lone surrogate, escaped (`"\ud800"`, which JSON's grammar allows and
# JavaScript writes) or as a character of the text; the stdlib reads both, and so does
# `loads`: the value holds the surrogate, and every writer shows it as the text \ud800.
_SURROGATE_REFUSALS = (
    "no low surrogate",
    "invalid high surrogate",
    "invalid low surrogate",
    "str is not valid UTF-8: surrogates",
)


def _strict_decode(decoder: json.JSONDecoder, text: str) -> Any:
    """``text`` decoded whole by a stdlib ``decoder``, around JSON's whitespace only.

    Raises:
        json.JSONDecodeError: The text is not JSON.
        ValueError: A number or a constant JSON does not have (`EXACT_DECODER`'s hooks).
        RecursionError: The decoder nested past the interpreter's limit.
    """
    stripped = text.strip(_JSON_SPACE)
    value, end = decoder.raw_decode(stripped)
    if end != len(stripped):
        raise json.JSONDecodeError("Extra data", stripped, end)
    return value


_orjson_loads = orjson.loads  # (a global: one lookup less per parse)


def loads(text: str | bytes) -> Any:
    """Parse JSON text exactly: orjson, or the stdlib for big integers and lone surrogates.

    Raises:
        json.JSONDecodeError: The text is not JSON (orjson's error is a subclass), with
            ``msg``, ``lineno`` and ``colno``; or ValueError for nesting beyond the limits.
    """
    try:
        return loads_first_try(text)
    except orjson.JSONDecodeError as error:
        if not surrogate_refused(error):
            raise
    return loads_stdlib(text if isinstance(text, str) else bytes(text).decode("utf-8"))


def loads_first_try(text: str | bytes) -> Any:
    """`loads`, but a text orjson refuses for a lone surrogate raises that refusal.

    For callers that handle a failure anyway (the engine's, for every response that is not
    JSON): they ask `surrogate_refused` there and retry with `loads_stdlib`, so a failure does
    not pay for a second handler inside `loads` (~0.3 µs).
    """
    if type(text) is str:
        # The common case: `has_long_digit_run` inlined up to its sample (every response and
        # every tool call's arguments come here; a call costs a tenth of a parse).
        if len(text) >= _SHORT:
            sample = text[::_STRIDE].encode("ascii", "replace").translate(_DIGIT_MAP)
            # Adjacent digits in the sample: the windows around them (the sample not redone).
            clear = sample.find(b"00") < 0 or not _run_near_hits(text, sample)
        else:
            clear = (
                len(text) < 19
                or text.encode("ascii", "replace").translate(_DIGIT_MAP).find(_LONG_RUN) < 0
            )
        if clear:
            return _orjson_loads(text)
    elif isinstance(text, bytes | bytearray):
        if not has_long_digit_run(bytes(text)):
            return _orjson_loads(text)
        text = text.decode("utf-8")
    elif not has_long_digit_run(text):
        return _orjson_loads(text)
    return loads_stdlib(text)


def surrogate_refused(error: ValueError) -> bool:
    """Whether orjson refused a text for a lone surrogate (which `loads_stdlib` reads)."""
    message = getattr(error, "msg", None)
    return message is not None and message.startswith(_SURROGATE_REFUSALS)


def loads_stdlib(text: str) -> Any:
    """``text`` parsed by the standard library, by orjson's rules but for lone surrogates.

    Raises:
        json.JSONDecodeError: The text is not JSON; ValueError for nesting beyond the limits.
    """
    try:
        return _strict_decode(EXACT_DECODER, text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_STRUCTURE = re.compile(r'["\\\[\]{}]')


def iter_brackets(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """``(position, bracket)`` of every ``[ ] { }`` outside JSON strings, from ``start``.

    Only structural characters are visited (a regex jumps between them), so the cost is
    linear in the text and small for prose.
    """
    in_string = False
    skip_to = -1
    for match in _STRUCTURE.finditer(text, start):
        position = match.start()
        if position < skip_to:
            continue
        char = text[position]
        if in_string:
            if char == "\\":
                skip_to = position + 2  # the escaped character is never structure
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield position, char


def json_depth(text: str) -> int:
    """The deepest nesting of brackets outside strings."""
    depth = deepest = 0
    for _position, char in iter_brackets(text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_DEEP_LOCK = threading.Lock()
_DEEP_DECODER: Any = None


def loads_deep(text: str) -> Any:
    """`loads`, also for JSON nested deeper than orjson's 1,024 levels.

    Raises:
        JsonTooDeep: The text nests deeper than `MAX_JSON_DEPTH`.
        ValueError: The text is not JSON.
    """
    try:
        return loads(text)
    except ValueError as error:
        if not nested_too_deep(error):
            raise
    return loads_nested(text)


def nested_too_deep(error: ValueError) -> bool:
    """Whether a `loads` error is about nesting, not syntax (cheap: no message formatting)."""
    message = getattr(error, "msg", None)
    if message is None:
        message = str(error)
    return message.startswith(("depth limit exceeded", "JSON nested too deeply"))


def loads_nested(text: str, *, most: int = MAX_JSON_DEPTH) -> Any:
    """JSON nested deeper than orjson reads, up to `MAX_JSON_DEPTH` (`loads_deep`'s slow path).

    Args:
        text: The JSON text.
        most: The deepest nesting read (the run store reads back records that hold an
            output nested up to `MAX_JSON_DEPTH` levels, a few levels down).

    Raises:
        JsonTooDeep: The text nests deeper than ``most``.
        ValueError: The text is not JSON.
    """
    depth = json_depth(text)
    if depth > most:
        raise JsonTooDeep
    global _DEEP_DECODER  # noqa: PLW0603 - built once, on first use
    if _DEEP_DECODER is None:
        import json.scanner

        decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)
        decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
        _DEEP_DECODER = decoder
    # Three Python frames per level; the lock keeps two threads from lowering the limit under
    # each other.
    with _DEEP_LOCK:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 3 * depth + 1000))
        try:
            return _strict_decode(_DEEP_DECODER, text)
        finally:
            sys.setrecursionlimit(limit)


def _write_deep(value: Any, *, ascii_only: bool) -> str:
    """Compact JSON of a value of any depth, without recursion (for what the encoders refuse)."""
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            parts.append(item.text)
        elif isinstance(item, dict):
            parts.append("{")
            stack.append(_CLOSE_OBJECT)
            entries = list(item.items())
            for index in range(len(entries) - 1, -1, -1):
                key, child = entries[index]
                stack.append(child)
                stack.append(_Text(json.dumps(str(key), ensure_ascii=ascii_only) + ":"))
                if index:
                    stack.append(_COMMA)
        elif isinstance(item, list | tuple):
            parts.append("[")
            stack.append(_CLOSE_ARRAY)
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_COMMA)
        else:
            parts.append(
                json.dumps(item, ensure_ascii=ascii_only, allow_nan=False, default=repr)
                if not isinstance(item, float) or math.isfinite(item)
                else "null"  # as orjson writes NaN and infinities
            )
    return "".join(parts)


class _Text:
    """Text already written as JSON (a key, a bracket), as opposed to a string value."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_CLOSE_OBJECT, _CLOSE_ARRAY, _COMMA = _Text("}"), _Text("]"), _Text(",")


def dumps(value: Any) -> str:
    """Compact JSON text of a value, non-ASCII kept as is."""
    try:
        return orjson.dumps(value, option=_DUMP_OPTIONS).decode()
    except (TypeError, orjson.JSONEncodeError):
        # orjson stops at 64-bit integers; the stdlib writes any integer. Values that are not
        # JSON at all (NaN, sets, objects) still need to read well in a message.
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            pass
        except RecursionError:
            return _write_deep(value, ascii_only=False)  # the output's own text, not a stand-in
        try:
            return repr(value)
        except RecursionError:
            return "<value nested too deeply to print>"


def _finite(value: Any) -> Any:
    """A copy of ``value`` with NaN and infinities as None.

    Recursive: it is called only on values the stdlib could write but for them, so of a depth
    it can walk.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(child) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(child) for child in value]
    return value


def _surrogate_as_text(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each lone surrogate as the JSON text of a backslash and udXXX."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(f"\\\\u{ord(char):04x}" for char in bad), error.end


_SURROGATE_AS_TEXT = "assertly-json-surrogate"
codecs.register_error(_SURROGATE_AS_TEXT, _surrogate_as_text)


def to_json_bytes(data: Any, *, indent: bool = False, keep_surrogates: bool = False) -> bytes:
    r"""Serialise report data: orjson, or the stdlib for what orjson refuses (huge integers).

    A lone surrogate (from a valid ``"\ud800"`` escape in an agent's JSON) is written as the
    text ``\ud800``: as an escape the document would be refused by strict readers (orjson,
    I-JSON), and raw it is not UTF-8. ``keep_surrogates`` writes it as the escape instead, so
    that the run store reads back the very value (it reads with a lenient reader).
    """
    options = _DUMP_OPTIONS | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(data, option=options)
    except (TypeError, orjson.JSONEncodeError):
        try:
            text = json.dumps(
                data,
                ensure_ascii=keep_surrogates,
                indent=2 if indent else None,
                default=repr,
                allow_nan=False,
            )
        except ValueError:  # NaN or an infinity (a reported cost): null, as orjson writes them
            return to_json_bytes(_finite(data), indent=indent, keep_surrogates=keep_surrogates)
        except RecursionError:  # a judged output nested up to MAX_JSON_DEPTH levels
            text = _write_deep(data, ascii_only=keep_surrogates)
        # Surrogates only ever sit inside strings, where the text \udXXX is valid.
        return text.encode("utf-8", _SURROGATE_AS_TEXT)


# How deeply the documents assertly writes for other programs (reports, the viewer's API) may
# nest, counting every array and object from the document's root. Readers stop much earlier
# than the judging limit: Ruby's JSON at 100 levels, Rust's serde_json at 128, jq 1.6 at 256,
# Python's json near its recursion limit (~1,000); a 9,990-level output made the JSON report
# unreadable by jq and Python (issue 29). Deeper values are written as their JSON text.
REPORT_MAX_DEPTH = 100
DEEP_MARKER = f"[JSON nested deeper than the report's {REPORT_MAX_DEPTH} levels, as text] "


def report_json_bytes(data: Any, *, indent: bool = False, level: int = 0) -> bytes:
    """`to_json_bytes` for a document others read: nesting capped at `REPORT_MAX_DEPTH`.

    A container that would open a level beyond the cap is written as a string: `DEEP_MARKER`
    followed by its compact JSON text (nothing is lost; the store keeps the value itself).

    Args:
        data: The value.
        indent: Two-space indentation.
        level: How many arrays and objects of the document already enclose ``data``.
    """
    text = to_json_bytes(data, indent=indent)
    levels = REPORT_MAX_DEPTH - level
    if text.count(b"[") + text.count(b"{") <= levels:  # cannot nest deeper: the common case
        return text
    cut: list[bool] = []
    capped = _capped(data, levels, cut)
    return to_json_bytes(capped, indent=indent) if cut else text


def _capped(value: Any, levels: int, cut: list[bool]) -> Any:
    """``value`` with every container that opens level ``levels + 1`` as marked JSON text.

    Recursive, but never deeper than ``levels`` (at most `REPORT_MAX_DEPTH`) calls.
    """
    if isinstance(value, dict):
        if levels <= 0:
            cut.append(True)
            return DEEP_MARKER + dumps(value)
        return {key: _capped(child, levels - 1, cut) for key, child in value.items()}
    if isinstance(value, list | tuple):
        if levels <= 0:
            cut.append(True)
            return DEEP_MARKER + dumps(value)
        return [_capped(child, levels - 1, cut) for child in value]
    return value
