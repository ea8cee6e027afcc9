"""Per-case references: a dataset line's ``vars`` and ``expected`` in the suite's assertions.

A string anywhere in a dataset suite's ``expect``/``assertions`` that is exactly
``{{ expected }}`` or ``{{ vars.NAME }}`` takes the line's value with its JSON type (a number
stays a number, a list a list); inside a longer string the value is interpolated as text (a
string as it is, anything else as compact JSON). A line that lacks a referenced value is an
``error`` naming the line and the name.

The suite's spec is scanned once (`Template`); a case fills it (cheap: only the strings that
hold references are rebuilt) and the filled spec is compiled once per distinct set of the
referenced values (`CaseCompiler`, a bounded cache): lines sharing their references share one
compiled expectation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from .._exceptions import ConfigError, Problem
from ..engine import Expectation

__all__ = ["CaseCompiler", "Template", "fill_text", "has_references", "missing_message"]

_REFERENCE = re.compile(r"\{\{\s*(expected|vars\.([A-Za-z_][A-Za-z0-9_-]*))\s*\}\}")
_WHOLE = re.compile(r"^\s*\{\{\s*(expected|vars\.([A-Za-z_][A-Za-z0-9_-]*))\s*\}\}\s*$")
_MISSING = object()


def has_references(spec: Any) -> bool:
    """Whether any string in ``spec`` (keys excepted) holds a ``{{ … }}`` reference."""
    if isinstance(spec, str):
        return _REFERENCE.search(spec) is not None
    if isinstance(spec, Mapping):
        return any(has_references(value) for value in spec.values())
    if isinstance(spec, list | tuple):
        return any(has_references(item) for item in spec)
    return False


class Template:
    """A spec with references, scanned once.

    Attributes:
        names: Every reference it makes (``expected``, ``vars.NAME``), in order of appearance.
    """

    __slots__ = ("names", "spec")

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        names: dict[str, None] = {}
        self._collect(spec, names)
        self.names = tuple(names)

    def _collect(self, spec: Any, names: dict[str, None]) -> None:
        if isinstance(spec, str):
            for match in _REFERENCE.finditer(spec):
                names.setdefault(match.group(1))
        elif isinstance(spec, Mapping):
            for value in spec.values():
                self._collect(value, names)
        elif isinstance(spec, list | tuple):
            for item in spec:
                self._collect(item, names)

    def values(self, variables: Any, expected: Any) -> dict[str, Any] | list[str]:
        """The line's value of each reference, or the references it lacks.

        Args:
            variables: The line's ``vars`` (a mapping, or missing).
            expected: The line's ``expected`` (`_MISSING` when absent).
        """
        found: dict[str, Any] = {}
        missing: list[str] = []
        for name in self.names:
            if name == "expected":
                value = expected
            else:
                key = name[5:]
                value = variables.get(key, _MISSING) if isinstance(variables, Mapping) else _MISSING
            if value is _MISSING:
                missing.append(name)
            else:
                found[name] = value
        return missing or found

    def fill(self, values: Mapping[str, Any]) -> Any:
        """The spec with every reference replaced by its value."""
        return _fill(self.spec, values)


def _fill(spec: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(spec, str):
        if "{{" not in spec:
            return spec
        whole = _WHOLE.match(spec)
        if whole is not None:
            return values[whole.group(1)]
        return _REFERENCE.sub(lambda match: _as_text(values[match.group(1)]), spec)
    if isinstance(spec, Mapping):
        return {key: _fill(value, values) for key, value in spec.items()}
    if isinstance(spec, list | tuple):
        return [_fill(item, values) for item in spec]
    return spec


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


MISSING = _MISSING


def missing_message(missing: list[str], variables: Any) -> str:
    """What a line lacks: the references ``missing`` it has no value for, and its vars."""
    have = sorted(variables) if isinstance(variables, Mapping) else []
    hint = f" (its vars: {', '.join(have)})" if have else " (it has no vars)"
    hint = "" if missing == ["expected"] else hint
    return f"the line has no value for {{{{ {', '.join(missing)} }}}}{hint}"


def fill_text(text: str, variables: Any, expected: Any) -> tuple[str, list[str]]:
    """``text`` with a line's references filled in, always as text; and those it lacks.

    A conversation's user texts and persona take a line's ``vars``/``expected`` this way
    (`._conversations`): a whole-string reference to a number or list becomes its JSON.
    """
    if "{{" not in text:
        return text, []
    template = Template(text)
    values = template.values(variables, expected)
    if isinstance(values, list):
        return text, values
    filled = template.fill(values)
    return (filled if isinstance(filled, str) else _as_text(filled)), []


# Distinct filled expectations kept per dataset suite (a dataset of unique references compiles
# each line; one of shared references compiles each once).
_KEEP = 1024


class CaseCompiler:
    """Compiles a dataset suite's specs for one line's references.

    Args:
        specs: ``(name, spec, threshold, shape)`` for ``expect`` and ``assertions``; a spec
            without references is compiled once up front.
        compile: ``compile(spec, threshold=, location=, shape=)`` (the loader's).
    """

    def __init__(
        self,
        specs: list[tuple[str, Any, float | None, dict[str, str] | None]],
        compile: Callable[..., Expectation],
    ) -> None:
        self._specs = [
            (name, Template(spec) if has_references(spec) else spec, threshold, shape)
            for name, spec, threshold, shape in specs
        ]
        self._compile = compile
        self._cache: dict[bytes, tuple[list[Expectation], list[Problem]]] = {}

    def checks(
        self, variables: Any, expected: Any, where: str
    ) -> tuple[list[Expectation], list[Problem]]:
        """The compiled checks for one line, or its problems.

        A problem is a missing reference or a value that makes an assertion invalid, located
        at ``where`` (the line).
        """
        values: dict[str, Any] = {}
        missing: list[str] = []
        for _, spec, _, _ in self._specs:
            if isinstance(spec, Template):
                found = spec.values(variables, expected)
                if isinstance(found, list):
                    missing.extend(name for name in found if name not in missing)
                else:
                    values.update(found)
        if missing:
            return [], [Problem(where, missing_message(missing, variables))]
        try:
            key = orjson.dumps(values, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            key = None
        if key is not None and key in self._cache:
            return self._cache[key]
        found_checks: list[Expectation] = []
        problems: list[Problem] = []
        for name, spec, threshold, shape in self._specs:
            filled = spec.fill(values) if isinstance(spec, Template) else spec
            try:
                found_checks.append(
                    self._compile(filled, threshold=threshold, location=name, shape=shape)
                )
            except ConfigError as error:
                for problem in error.problems:
                    problems.append(Problem(f"{where}: {problem.location}", problem.message))
        result = (found_checks, problems)
        if key is not None:
            if len(self._cache) >= _KEEP:
                self._cache.clear()
            self._cache[key] = result
        return result
