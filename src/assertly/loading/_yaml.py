"""The YAML loader: the YAML 1.2 core schema, building only JSON values.

PyYAML implements YAML 1.1, where ``yes``, ``no``, ``on`` and ``off`` are booleans, ``12:30``
is the number 750, ``2026-01-01`` is a date and ``017`` is 15. In a test file those turn
``expect: {status: yes}`` into a comparison with ``true``. Test files, expectation files and
configs are read with the 1.2 core schema instead, where only ``true``/``false`` are
booleans, only ``null``/``~``/nothing is null, numbers are decimal (or ``0o``/``0x``), and
everything else is a string: date assertions parse their strings themselves.

Only JSON values are built. Tags for other kinds (``!!binary``, ``!!set``, ``!!omap``,
``!!pairs``, ``!!timestamp``, ``!!python/…``, any local ``!tag``) and NaN or infinities are
refused where they are written.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

__all__ = ["NOT_JSON_TAG", "int_of", "yaml_loader"]

_CORE = "tag:yaml.org,2002:"

# YAML 1.2.2, 10.3.2 (the core schema's tag resolution), plus `<<` merge keys: not in 1.2, but
# widely used to share settings between configs, and they build plain mappings.
_RESOLVERS: list[tuple[str, str, str]] = [
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", "~nN\0"),
    ("merge", r"^(?:<<)$", "<"),
]

NOT_JSON_TAG = (
    "could not determine a constructor for the tag {tag}: only JSON values are allowed "
    "(strings, numbers, true/false, null, lists and mappings)"
)


def _implicit_resolvers() -> dict[Any, list[tuple[str, re.Pattern[str]]]]:
    table: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    for name, pattern, first in _RESOLVERS:
        compiled = re.compile(pattern)
        for char in first:
            table.setdefault("" if char == "\0" else char, []).append((_CORE + name, compiled))
    return table


def _construct_int(loader: Any, node: Any) -> int:
    return int_of(loader.construct_scalar(node))


def int_of(text: str) -> int:
    """An integer of the core schema: decimal (leading zeros too), ``0o`` octal, ``0x`` hex."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    return sign * int(digits, 10)  # "017" is seventeen in YAML 1.2


def _construct_float(loader: Any, node: Any) -> float:
    import yaml

    text = loader.construct_scalar(node)
    if "inf" in text.lower() or "nan" in text.lower():
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{text} is not a JSON value (NaN and infinities are not numbers in JSON); "
            "write a number, or quote it to make a string",
            node.start_mark,
        )
    value = float(text)
    if value in (math.inf, -math.inf):  # `1e400`: out of range, as JSON's readers refuse it
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{text} is out of range for a number (it would be read as infinity); write a "
            "smaller number, or quote it to make a string",
            node.start_mark,
        )
    return value


def _construct_bool(loader: Any, node: Any) -> bool:
    import yaml

    text = loader.construct_scalar(node)
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    raise yaml.constructor.ConstructorError(
        None, None, f"cannot read {text!r} as bool (write true or false)", node.start_mark
    )


def _construct_null(loader: Any, node: Any) -> None:
    import yaml

    text = loader.construct_scalar(node)
    if text not in ("", "~", "null", "Null", "NULL"):
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot read {text!r} as null", node.start_mark
        )


def _construct_not_json(loader: Any, node: Any) -> Any:
    import yaml

    tag = node.tag.replace(_CORE, "!!")
    raise yaml.constructor.ConstructorError(
        None, None, NOT_JSON_TAG.format(tag=repr(tag)), node.start_mark
    )


_LOADERS: dict[bool, Any] = {}


def yaml_loader(*, fast: bool = True) -> Any:
    """The loader class: libyaml's parser when ``fast`` (and installed), else PyYAML's own.

    Both resolve scalars by the YAML 1.2 core schema and construct only JSON values; a value
    that does not fit its tag (``!!int abc``) is a YAML error at its place.
    """
    loader = _LOADERS.get(fast)
    if loader is None:
        loader = _LOADERS[fast] = _build(fast)
    return loader


def _build(fast: bool) -> Any:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader
    safe = yaml.constructor.SafeConstructor

    class Loader(base):  # type: ignore[valid-type,misc]
        yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = _implicit_resolvers()
        yaml_constructors: ClassVar[dict[Any, Any]] = {
            _CORE + "str": safe.construct_yaml_str,
            _CORE + "seq": safe.construct_yaml_seq,
            _CORE + "map": safe.construct_yaml_map,
            _CORE + "int": _construct_int,
            _CORE + "float": _construct_float,
            _CORE + "bool": _construct_bool,
            _CORE + "null": _construct_null,
            None: _construct_not_json,
        }

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except yaml.YAMLError:
                raise
            except Exception as error:  # ValueError, KeyError, IndexError, TypeError …
                reason = f"cannot read {node.value!r} as {node.tag.rsplit(':', 1)[-1]}"
                detail = "" if isinstance(error, KeyError) else str(error)
                raise yaml.constructor.ConstructorError(
                    None, None, f"{reason} ({detail})" if detail else reason, node.start_mark
                ) from None

    return Loader
