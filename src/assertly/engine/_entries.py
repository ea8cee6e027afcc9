"""What a registered assertion is (`Entry`), and the decorators built-in families register with.

A leaf of the engine's import graph: it imports nothing from assertly, so every family module
can import its decorator without importing the registry. The decorators only fill the
`BUILTINS` tables; the registry reads them after importing the family modules its manifest
names (`assertly.engine._manifest`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["BUILTINS", "Builder", "Dialect", "Entry", "expect_assertion", "typed_assertion"]

Dialect = Literal["expect", "typed"]
# ``build(spec, ctx)`` with ``ctx`` a `BuildContext`. Typed Any here: this leaf imports no engine
# module, not even for type checking, since `_base` reads the registry, which reads this.
Builder = Callable[[Any, Any], Any]


@dataclass(frozen=True, slots=True)
class Entry:
    """A registered assertion.

    Attributes:
        name: The key (expect dialect) or ``type`` (typed dialect) users write.
        build: Compile-time factory: ``build(spec, ctx)`` returns a checker or None after
            recording problems on ``ctx``.
        summary: One line for docs and ``--help``.
        params: A pydantic model of the parameters, or a tuple of them for alternative forms,
            when it has one (used for JSON Schema).
        builtin: False for user and plugin assertions.
        options: Typed dialect: a strict pydantic model of the ``config`` mapping, or None when
            the assertion takes no options. Checked for built-ins before they build; a user
            assertion receives its ``config`` as written.
        threshold: Typed dialect: whether ``threshold`` means something to the assertion (a
            threshold given to one that ignores it is a configuration error).
        value: Typed dialect: whether ``value`` means something to the assertion.
    """

    name: str
    build: Builder
    summary: str = ""
    params: Any = None
    builtin: bool = True
    options: Any = None
    threshold: bool = False
    value: bool = True


# The built-in assertions, filled by the decorators below as family modules are imported.
BUILTINS: dict[Dialect, dict[str, Entry]] = {"expect": {}, "typed": {}}


def _add_builtin(dialect: Dialect, entry: Entry) -> None:
    table = BUILTINS[dialect]
    known = table.get(entry.name)
    if known is not None and known.build is not entry.build:
        raise ValueError(f"assertion {entry.name!r} is already registered")
    table[entry.name] = entry


def expect_assertion(
    name: str, *, summary: str = "", params: Any = None
) -> Callable[[Builder], Builder]:
    """Register a built-in expect-dict assertion builder."""

    def decorate(build: Builder) -> Builder:
        _add_builtin("expect", Entry(name, build, summary or first_line(build), params))
        return build

    return decorate


def typed_assertion(
    name: str,
    *,
    summary: str = "",
    options: Any = None,
    threshold: bool = False,
    value: bool = True,
) -> Callable[[Builder], Builder]:
    """Register a built-in typed-list assertion builder.

    Args:
        name: The ``type`` users write.
        summary: One line for docs; the builder's first docstring line by default.
        options: A strict pydantic model of the ``config`` mapping; None: no options.
        threshold: Whether the assertion reads ``threshold``.
        value: Whether the assertion reads ``value``.
    """

    def decorate(build: Builder) -> Builder:
        entry = Entry(
            name,
            build,
            summary or first_line(build),
            options=options,
            threshold=threshold,
            value=value,
        )
        _add_builtin("typed", entry)
        return build

    return decorate


def first_line(function: Callable[..., Any]) -> str:
    """The first line of ``function``'s docstring ("" without one)."""
    doc = inspect.getdoc(function) or ""
    return doc.splitlines()[0] if doc else ""
