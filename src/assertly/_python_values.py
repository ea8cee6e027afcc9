"""Python values as the JSON values they stand for: what a Python agent returns, made judgeable.

assertly judges text and JSON values. A Python caller often holds something else: an SDK's
reply (the OpenAI and Anthropic clients return pydantic models), a pydantic or dataclass
result of an agent framework, a date. `as_json_value` reads such a value as JSON, as their
own libraries write JSON: a pydantic model as it writes itself (``model_dump(mode="json",
by_alias=True)``: the API's field names, its serializers, its dates); a dataclass field by
field; a date ``isoformat()``; an enum its value; a tuple an array; what else pydantic
writes as JSON (a URL, a path, a duration) as it writes it. It refuses what has no single
JSON reading rather than judge a stand-in such as its ``repr``: NaN and infinities (JSON
writers make them null, another value; inside a model too, found in its Python form), a set
(no order), a `Decimal` or `Fraction` (no exact JSON number), bytes inside a value, an
iterator (reading it uses it up), any other object. Inside a model, the model's own JSON
form decides (its sets are lists, its decimals strings). It imports nothing from assertly;
pydantic-core only when a value needs it.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import decimal
import enum
import fractions
import math
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
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise NotJsonValue(repr(value))  # JSON writers would make it null: another value
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
        return _convert(float.__float__(value))  # (NaN is refused as such)
    dump = getattr(kind, "model_dump", None)
    if dump is not None and hasattr(kind, "model_fields"):
        return _model(value, dump)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if kind.__module__.startswith("numpy") and callable(getattr(kind, "tolist", None)):
        return _convert(value.tolist())  # numpy arrays and scalars
    if not isinstance(value, _NO_READING):
        # What else pydantic writes as JSON (a URL, a path, a duration, an IP address …), as
        # it writes it inside a model.
        from pydantic_core import to_jsonable_python

        try:
            written = to_jsonable_python(value)
        except Exception:  # whatever it raises, the value has no reading here
            written = value
        if type(written) in PLAIN_TYPES:
            return _convert(written)
    raise NotJsonValue(_article(_name(kind)))


def _model(value: Any, dump: Any) -> Any:
    """A pydantic v2 model, as it writes itself for JSON.

    Its aliases (the API's names), its serializers, dates as the API wrote them. Its JSON
    mode writes NaN and infinities as null, a value the agent never returned: refused,
    found in its Python form.
    """
    try:
        written = dump(value, mode="json", by_alias=True, warnings=False)
        where = _non_finite(dump(value, mode="python", by_alias=True, warnings=False))
    except Exception as error:  # a computed field that raises, a value pydantic refuses
        name = _article(_name(type(value)))
        raise NotJsonValue(
            f"{name} that pydantic cannot write ({type(error).__name__}: {error})"
        ) from None
    if where is not None:
        raise NotJsonValue(where[0], where[1])
    return _convert(written)


def _dataclass(value: Any) -> dict[str, Any]:
    fields = {}
    for field in dataclasses.fields(value):
        try:
            fields[field.name] = _convert(getattr(value, field.name))
        except NotJsonValue as error:
            raise error.inside(f".{field.name}") from None
        except Exception as error:  # a property-like field that raises
            raise NotJsonValue(
                f"a field that cannot be read ({error!r})", f".{field.name}"
            ) from None
    return fields


def _non_finite(value: Any) -> tuple[str, str] | None:
    """The first NaN or infinity in a model's Python form, and where: (its repr, the path)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if type(item) is float or isinstance(item, float):
            if not math.isfinite(item):
                return repr(float(item)), where
        elif isinstance(item, dict):
            stack.extend((child, f"{where}.{key}") for key, child in item.items())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return None


# No single JSON reading: a set has no order, a Decimal or a Fraction no exact JSON number,
# a complex number none at all, bytes no text but by a guess of their encoding (pydantic
# would write them as a list in hash order, strings, and UTF-8); an iterator would be used up
# (an endless one never ends). Inside a model, the model's own JSON form decides instead.
_NO_READING = (
    set,
    frozenset,
    decimal.Decimal,
    fractions.Fraction,
    complex,
    bytes,
    bytearray,
    memoryview,
    collections.abc.Iterator,
)


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
