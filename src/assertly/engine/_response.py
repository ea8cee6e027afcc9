"""Responses as agents really send them: a JSON value, JSON text, or prose around JSON.

A `Response` is built once per check and parsed at most once per view:

* ``text`` — the output as text (JSON values are serialised compactly);
* ``whole_json`` — the whole text parsed as JSON, used by the typed dialect (``is-json``,
  ``equals``, transforms): prose is *not* searched here;
* ``json`` — the expect dialect's view: the whole text, else a fenced ```` ```json ```` block,
  else the first balanced JSON object in the text; ``extracted`` records which.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

import orjson

from ._values import dumps

__all__ = ["NOT_JSON", "Response", "iter_json_values"]


class _NotJson:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


NOT_JSON: Final[Any] = _NotJson()
_UNSET: Final[Any] = object()

_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON|jsonc)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_OPENERS = re.compile(r"[\[{]")
_OPENER_RUN = re.compile(r"[\[{][\[{\s]*")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# NaN and Infinity are not JSON; the stdlib decoder accepts them unless told otherwise.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def iter_json_values(text: str, openers: str = "{[") -> Iterator[tuple[int, int, Any]]:
    """Yield ``(start, end, value)`` for each outermost JSON object/array in ``text``.

    Values are found left to right; after a value parses, scanning resumes after it. Each
    attempt stops at the first byte that cannot continue a JSON value, and nesting deeper than
    the interpreter's recursion limit is given up, so adversarial text (thousands of ``{``)
    costs time roughly linear in its length.
    """
    pattern = _OPENERS if openers == "{[" else re.compile("[" + re.escape(openers) + "]")
    position = 0
    raw_decode = _DECODER.raw_decode
    while True:
        match = pattern.search(text, position)
        if match is None:
            return
        start = match.start()
        try:
            value, end = raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        except RecursionError:
            # Too deep to judge: skip the run of openers up to its last one instead of one
            # byte at a time (``[`` * 3000 would cost a recursion-deep attempt per byte).
            run = _OPENER_RUN.match(text, start)
            position = max(start + 1, run.end() - 1) if run else start + 1
            continue
        yield start, end, value
        position = end


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return NOT_JSON


class Response:
    """One output under test, normalised lazily.

    Args:
        value: A JSON value (dict, list, str, number, bool, None) or the raw output as ``str``
            or ``bytes``. Text is kept as received; bytes are decoded as UTF-8, with invalid
            sequences replaced (and ``decode_errors`` set).
    """

    __slots__ = ("_json", "_text", "_whole", "decode_errors", "extracted", "is_text")

    def __init__(self, value: Any) -> None:
        self.extracted: str | None = None
        self.decode_errors = False
        if isinstance(value, bytes | bytearray | memoryview):
            raw = bytes(value)
            try:
                value = raw.decode("utf-8")
            except UnicodeDecodeError:
                value = raw.decode("utf-8", errors="replace")
                self.decode_errors = True
        if isinstance(value, str):
            self.is_text = True
            self._text: str = value
            self._whole: Any = _UNSET
            self._json: Any = _UNSET
        else:
            self.is_text = False
            self._text = _UNSET
            self._whole = value
            self._json = value

    @property
    def text(self) -> str:
        """The output as text; a JSON value is serialised compactly (non-ASCII kept)."""
        text = self._text
        if text is _UNSET:
            text = self._text = dumps(self._whole)
        return text

    @property
    def whole_json(self) -> Any:
        """The whole output parsed as JSON, or `NOT_JSON`."""
        whole = self._whole
        if whole is _UNSET:
            whole = self._whole = _loads(self._text)
        return whole

    @property
    def json(self) -> Any:
        """The JSON the expect dialect judges: whole text, fenced block or embedded object."""
        found = self._json
        if found is _UNSET:
            found = self.whole_json
            if found is NOT_JSON:
                found = self._extract()
            self._json = found
        return found

    def _extract(self) -> Any:
        text = self._text
        for fence in _FENCE.finditer(text):
            value = _loads(fence.group(1))
            if value is not NOT_JSON:
                self.extracted = "fenced"
                return value
        for _start, _end, value in iter_json_values(text, "{"):
            self.extracted = "embedded"
            return value
        return NOT_JSON
