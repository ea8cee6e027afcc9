"""Python values as the JSON values they stand for: what a Python agent returns, made judgeable.

assertly judges text and JSON values. A Python caller often holds something else: an SDK's
reply (the OpenAI and Anthropic clients return pydantic models), a pydantic or dataclass
result of an agent framework, a date. `as_json_value` reads such a value as JSON, as their
own libraries write JSON (a pydantic model's fields under their aliases, the API's names; a
dataclass field by field; a date as ISO 8601; an enum as its value; a tuple as an array),
and refuses what has no single JSON reading (a set: no order; a `Decimal`: no exact JSON
number; bytes inside a value; any other object) rather than judge a stand-in such as its
``repr``. Wherever it sits: inside a model too, which is read with ``model_dump(mode="python")``
and then by these same rules (pydantic's JSON mode writes NaN as null and a set as a list
in hash order). Other values pydantic writes as JSON (a URL, a path, a duration) are
written as it writes them. It imports nothing from assertly; pydantic-core only when such a
value is met.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import uuid
from typing import Any

__all__ = ["PLAIN_TYPES", "READABLE", "NotJsonValue", "as_json_value"]

# Values read as they are (their contents are not walked: the engine's hot path).
PLAIN_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})


READABLE = (
    "assertly reads text or bytes (a whole response), JSON values (dict, list, str, number, "
    "bool, None), and pydantic models, dataclasses, dates, enums and tuples holding them"
)


class NotJsonValue(TypeError):
    """A value with no JSON reading: what it is, and where inside the value."""

    def __init__(self, kind: str, where: str = "") -> None:
        self.kind = kind
        self.where = where
        super().__init__(self._text())

    def _text(self) -> str:
        return f"{self.what} is not a JSON value; {READABLE}"

    @property
    def what(self) -> str:
        """``a set at results[1]``: the value, and where it is (from the top, if inside)."""
        where = self.where.removeprefix(".")
        return f"{self.kind} at {where}" if where else self.kind

    def inside(self, step: str) -> NotJsonValue:
        """The same problem, one level further out (``step``: ``.key`` or ``[3]``)."""
        self.where = step + self.where
        self.args = (self._text(),)
        return self


def as_json_value(value: Any, *, deep: bool = True) -> Any:
    """``value`` as the JSON value it stands for.

    Args:
        value: Any Python value.
        deep: Walk into a plain dict or list too (else it is taken as it is, contents and
            all, at no cost: how the engine takes a response).

    Returns:
        The value itself when it is plain and not ``deep``; else a new JSON value (a copy,
        even of plain containers: the input is never changed).

    Raises:
        NotJsonValue: A value, or a part of it, with no JSON reading (or nested beyond the
            interpreter's recursion limit, as a cycle is).
    """
    if not deep and type(value) in PLAIN_TYPES:
        return value
    try:
        return _convert(value)
    except RecursionError:
        raise NotJsonValue("a value nested too deeply to read (or holding itself)") from None


def _convert(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, dict):
        converted = {}
        for key, child in value.items():
            name = key if type(key) is str else _key(key)
            try:
                converted[name] = _convert(child)
            except NotJsonValue as error:
                raise error.inside(f".{name}") from None
        return converted
    if isinstance(value, list | tuple):
        items = []
        for index, child in enumerate(value):
            try:
                items.append(_convert(child))
            except NotJsonValue as error:
                raise error.inside(f"[{index}]") from None
        return items
    if isinstance(value, enum.Enum):
        return _convert(value.value)
    if isinstance(value, bool):  # (a subclass)
        return bool(value)
    if isinstance(value, str):  # a subclass (numpy.str_): its characters, not its __str__
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    dump = getattr(kind, "model_dump", None)
    if dump is not None and hasattr(kind, "model_fields"):
        # A pydantic v2 model: its fields under their aliases (the API's own names), then
        # read by these rules (its JSON mode would write NaN as null, a set in hash order).
        try:
            fields = dump(value, mode="python", by_alias=True, warnings=False)
        except (ValueError, TypeError, RecursionError) as error:  # pydantic cannot dump it
            raise NotJsonValue(
                f"{_article(_name(kind))} that pydantic cannot dump ({error})"
            ) from None
        return _convert(fields)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {}
        for field in dataclasses.fields(value):
            try:
                fields[field.name] = _convert(getattr(value, field.name))
            except NotJsonValue as error:
                raise error.inside(f".{field.name}") from None
        return fields
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    to_list = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(to_list) and kind.__module__.startswith("numpy"):
        return _convert(to_list())
    if not isinstance(value, _NO_READING):
        # What else pydantic writes as JSON (a URL, a path, a duration, an IP address …), as
        # it writes it inside a model.
        from pydantic_core import to_jsonable_python

        try:
            written = to_jsonable_python(value)
        except (ValueError, TypeError):
            pass
        else:
            if type(written) in PLAIN_TYPES:
                return _convert(written)
    raise NotJsonValue(_article(_name(kind)))


# No single JSON reading: a set has no order, a Decimal no exact JSON number, bytes no text
# but by a guess of their encoding (pydantic would write them as a list in hash order, a
# string, and UTF-8).
_NO_READING = (set, frozenset, decimal.Decimal, bytes, bytearray, memoryview)


def _key(key: Any) -> str:
    """An object key as JSON writes it: a string's characters, an integer's digits."""
    if isinstance(key, enum.Enum):
        key = key.value
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return str(int.__int__(key))
    raise NotJsonValue(f"the key {key!r} ({_name(type(key))})")


def _article(name: str) -> str:
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _name(kind: type) -> str:
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"
