"""One registry of assertions for both dialects: built-ins, decorated functions and plugins.

* Built-in assertions register themselves with `expect_assertion` / `typed_assertion` (in
  `_entries`, a leaf module) when their family module is imported; the registry imports a
  name's family (`_manifest.HOMES`) the first time a lookup needs the name, and every family
  the manifest lists (`_manifest.FAMILIES`) when it needs them all.
* Users add theirs with the `assertion` decorator (``@assertly.assertion("has-citation")``),
  from a module they name (`load_module`, which also accepts a promptfoo-style ``get_assert``),
  or with an entry point in the group ``assertly.assertions``. Entry points are loaded the
  first time a name is not found, so start-up never pays for them.

Names are looked up once, at compile time; checking never touches the registry.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal

from ._entries import BUILTINS, Dialect, Entry
from ._entries import first_line as _first_line
from ._manifest import FAMILIES, HOMES

__all__ = ["ENTRY_POINT_GROUP", "REGISTRY", "Registry", "assertion"]

ENTRY_POINT_GROUP = "assertly.assertions"


@functools.cache  # once per process; a failed import is not cached, so it is tried again
def load_families() -> None:
    """Import every built-in family module the manifest names."""
    for module in FAMILIES:
        importlib.import_module(module)


class Registry:
    """Assertion names for both dialects, with did-you-mean suggestions."""

    def __init__(self, *, builtins: bool = False) -> None:
        self._entries: dict[Dialect, dict[str, Entry]] = {"expect": {}, "typed": {}}
        self._entry_points_loaded = False
        # The global registry sees the built-in tables of `_entries`, whose family modules (and
        # pydantic with them) are imported on first use, so that `import assertly` stays cheap.
        self._builtins = builtins
        # User functions registered here (by id; the dict keeps them alive, so ids stay unique).
        self._functions: dict[int, Callable[..., Any]] = {}

    def _known(self, dialect: Dialect, name: str) -> Entry | None:
        """This registry's entry for ``name``, else the built-in one (loaded now if need be).

        A built-in name imports its own family only; any other name imports them all.
        """
        entry = self._entries[dialect].get(name)
        if entry is None and self._builtins:
            entry = BUILTINS[dialect].get(name)
            if entry is None:
                home = HOMES[dialect].get(name)
                if home is None:
                    load_families()
                else:
                    importlib.import_module(home)
                entry = BUILTINS[dialect].get(name)
        return entry

    def _all_names(self, dialect: Dialect) -> set[str]:
        names = set(self._entries[dialect])
        if self._builtins:
            load_families()
            names.update(BUILTINS[dialect])
        return names

    def add(self, dialect: Dialect, entry: Entry, *, replace: bool = False) -> None:
        """Register ``entry``; a second registration of a name is an error unless ``replace``."""
        known = self._known(dialect, entry.name)
        if known is not None and not replace and known.build is not entry.build:
            raise ValueError(f"assertion {entry.name!r} is already registered")
        self._entries[dialect][entry.name] = entry

    def get(self, dialect: Dialect, name: str) -> Entry | None:
        """Find an assertion by name, loading plugins the first time a name is unknown."""
        entry = self._known(dialect, name)
        if entry is None and not self._entry_points_loaded:
            self.load_entry_points()
            entry = self._known(dialect, name)
        return entry

    def names(self, dialect: Dialect) -> list[str]:
        """Every registered name of a dialect, sorted."""
        return sorted(self._all_names(dialect))

    def entries(self, dialect: Dialect) -> list[Entry]:
        """Every registered entry of a dialect, sorted by name."""
        found = (self._known(dialect, name) for name in self.names(dialect))
        return [entry for entry in found if entry is not None]

    def suggest(self, dialect: Dialect, name: str) -> str | None:
        """The closest registered name, for ``did you mean``."""
        candidates = self._all_names(dialect)
        normalised = name.replace("-", "_") if dialect == "expect" else name.replace("_", "-")
        if normalised != name and normalised in candidates:
            return normalised
        close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
        return close[0] if close else None

    def load_entry_points(self) -> None:
        """Import every plugin declared in the ``assertly.assertions`` entry-point group."""
        self._entry_points_loaded = True
        from importlib.metadata import entry_points

        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                loaded = point.load()
            except Exception as error:  # one broken plugin must not break every compile
                warnings.warn(
                    f"assertly: could not load the assertion plugin {point.name!r} "
                    f"({point.value}): {type(error).__name__}: {error}",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            if isinstance(loaded, ModuleType):
                self._adopt_module(loaded, point.name)
            elif callable(loaded) and not self._knows(loaded, point.name):
                register_function(self, point.name, loaded, dialects=("expect", "typed"))

    def load_module(self, module_name: str) -> None:
        """Import a user module of assertions.

        Functions decorated with `assertion` are registered (in this registry too, when they
        registered themselves elsewhere on import). A module that defines a promptfoo-style
        ``get_assert(output, context)`` is also registered under the name in its
        ``ASSERTION_NAME`` attribute, or else the last part of the module name.
        """
        module = importlib.import_module(module_name)
        self._adopt_module(module, module_name.rsplit(".", 1)[-1])

    def _knows(self, function: Callable[..., Any], name: str) -> bool:
        return id(function) in self._functions or any(
            self._known(dialect, name) is not None for dialect in ("expect", "typed")
        )

    def _adopt_module(self, module: ModuleType, default_name: str) -> None:
        for value in list(vars(module).values()):
            names = getattr(value, _NAMES_ATTRIBUTE, None)
            if not callable(value) or not isinstance(names, dict):
                continue
            for dialect, name in names.items():
                if self._known(dialect, name) is None:
                    register_function(self, name, value, dialects=(dialect,))
        get_assert = getattr(module, "get_assert", None)
        if callable(get_assert) and id(get_assert) not in self._functions:
            name = getattr(module, "ASSERTION_NAME", default_name)
            register_function(self, name, get_assert, dialects=("expect", "typed"))


REGISTRY = Registry(builtins=True)


# Set by the `assertion` decorator: {dialect: name}, so any registry can adopt the function.
_NAMES_ATTRIBUTE = "__assertly_assertion__"


def register_function(
    registry: Registry,
    name: str,
    function: Callable[..., Any],
    *,
    dialects: tuple[Dialect, ...],
    replace: bool = False,
) -> None:
    """Register a user function ``function(output, context)`` under ``name``."""
    from ._custom import custom_builder  # only when a user registers one: start-up stays light

    build = custom_builder(name, function)
    summary = _first_line(function)
    for dialect in dialects:
        registry.add(dialect, Entry(name, build, summary, None, builtin=False), replace=replace)
    registry._functions[id(function)] = function


def assertion(
    name: str | None = None,
    *,
    dialect: Literal["expect", "typed", "both"] = "both",
    replace: bool = False,
    registry: Registry | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a custom assertion.

    The function is called as ``function(output, context)`` where ``output`` is the response
    text and ``context`` is a dict with ``value``, ``threshold``, ``config``, ``json`` (the
    parsed response or None), ``cost_usd``, ``latency_ms``, ``model``, ``tool_calls`` (as the
    target reported them, or None), ``steps`` and ``now``.
    It returns a bool, a score in [0, 1] (passing at ``threshold``, or above 0 without one), a dict
    ``{"pass": bool, "score": float, "reason": str}``, or an `AssertionResult`. An exception
    becomes an ``error`` result; the run goes on.

    Args:
        name: The name users write; defaults to the function name with ``_`` → ``-`` for the
            typed dialect and as is for the expect dialect.
        dialect: Register for ``expect`` dicts, ``typed`` lists, or ``both``.
        replace: Allow replacing an existing assertion of the same name.
        registry: The registry to use (the global one by default).

    Example:
        >>> import assertly
        >>> @assertly.assertion("mentions-product")
        ... def mentions_product(output, context):
        ...     return context["value"].lower() in output.lower()
    """

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        target = registry or REGISTRY
        if name is not None:
            names = {"expect": name, "typed": name}
        else:
            names = {"expect": function.__name__, "typed": function.__name__.replace("_", "-")}
        chosen: tuple[Dialect, ...] = ("expect", "typed") if dialect == "both" else (dialect,)
        for each in chosen:
            register_function(target, names[each], function, dialects=(each,), replace=replace)
        # Builtins and some callables refuse attributes; they just cannot be adopted later.
        with contextlib.suppress(AttributeError, TypeError):
            setattr(function, _NAMES_ATTRIBUTE, {each: names[each] for each in chosen})
        return function

    return decorate
