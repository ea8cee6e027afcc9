"""The generated fast path: one specialised function that says "every assertion passed".

Most responses pass, and a passing response needs no result objects, messages or locations.
So an expectation is also compiled (lazily, on its first check) into one Python function, as
fastjsonschema and attrs do: each checker that can writes its yes/no test into a `FastGen`,
walks over the same array are merged into one loop, a path read twice is read once, and every
value the user wrote (keys, expected values, compiled patterns, date bounds, sets) is bound as
a constant of the function (``_c0``, ``_c1`` …), never formatted into its source. A checker that
cannot emit code is called as is inside the function, provided calling it twice is harmless
(a built-in; never a user's custom assertion, which makes the whole expectation skip the fast
path).

The function returns:

* True when every assertion passed plainly (its result would be the shared `passed(key)`:
  definite, non-vacuous, score 1, no details): the caller returns the expectation's prebuilt
  result; when trajectory assertions are among them, whose full pass names the format the
  tool calls were read from (`traced_pass`), the format instead (a str), and the caller
  returns the prebuilt result for that format;
* otherwise a tuple with one entry per checker: the shared pass of an emitting checker whose
  test held, a called checker's own result, and None where the generated test failed; the
  detailed path judges only the None entries (their messages are its alone) and aggregates;
* False (or an exception) when no verdict is certain: a path that could not be followed, an
  empty array (a vacuous pass is marked), a response without JSON. The detailed path then
  judges everything.

Each checker's tests clear only its own flag (``ok3``), so a response failing one assertion
still has every other one decided in the same walk. tests/engine/test_fast_path.py checks that
both paths agree on every verdict, score and message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._response import NOT_JSON
from ._result import PASSED, AssertionResult, passed, traced_pass
from ._values import json_equal
from .trajectory._read import read_trace, trace_of

if TYPE_CHECKING:
    from ._base import Checker

__all__ = ["Fast", "FastFunction", "FastGen", "Loop", "build_fast"]

FastFunction = Callable[[Any, Any], Any]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "_MISSING"


_MISSING = _Missing()


class _Scope:
    """Statements at one indentation level, with the paths already read there."""

    __slots__ = ("indent", "lines", "memo")

    def __init__(self, indent: str) -> None:
        self.indent = indent
        self.lines: list[str] = []
        self.memo: dict[tuple[str, str], str] = {}


class Loop:
    """One walk over an array, shared by the checkers reading it; they add tests to its body."""

    __slots__ = ("_gen", "array", "before", "body", "empty", "flags", "item")

    def __init__(self, gen: FastGen, array: str, item: str) -> None:
        self._gen = gen
        self.array = array
        self.item = item
        self.empty = gen.fresh("empty")  # true when the array is an empty list
        self.before: list[str] = []  # statements before the loop (a sorted check's "previous")
        self.body = _Scope("            ")
        # The checkers judging elements, and whether an empty array is a vacuous pass for
        # them (marked so in their result) or a plain one. Not an array: the detailed path.
        self.flags: dict[str, bool] = {}

    def value(self, suffix: Sequence[str]) -> str:
        """The variable holding ``item.<suffix>``, `_MISSING` where an element lacks it."""
        var = self.item
        for key in suffix:
            var = self._gen._key(self.body, var, key)
        return var

    def require(self, condition: str) -> None:
        """Add a test every element must pass (for the checker being emitted)."""
        flag = self._gen.flag
        self.body.lines.append(f"if {flag} and not ({condition}): {flag} = False")

    def statement(self, code: str) -> None:
        """Add a statement (or several lines, indented relative to each other) to the body."""
        self.body.lines.extend(code.split("\n"))


class FastGen:
    """Collects the code of one expectation's fast function."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {
            "_NOT_JSON": NOT_JSON,
            "_MISSING": _MISSING,
            "_json_equal": json_equal,
        }
        self._const_names: dict[int, str] = {}
        self._top = _Scope("    ")
        self._loops: dict[tuple[str, ...], Loop] = {}
        self._loop_order: list[Loop] = []
        self._counter = 0
        self._data = False
        self._text: dict[str, str] = {}
        self.flag = "ok"  # the flag of the checker being emitted: false once it cannot pass
        self.flags: list[str] = []
        self.vacuous: dict[str, str] = {}  # flag -> the `empty` variable of its loop
        self.uses_ctx = False
        self.uses_response = False
        self._trace = False
        self._trace_at = self._trace_end = 0  # the statements reading the trace
        self._names = False  # whether `trn` holds the trace's names
        self.traced: set[str] = set()  # flags of checkers whose full pass names the format

    def begin(self, index: int) -> None:
        """Start emitting checker ``index``: its tests clear its own flag."""
        self.flag = f"ok{index}"
        self.flags.append(self.flag)

    # --- names ------------------------------------------------------------------------------

    def fresh(self, stem: str = "v") -> str:
        """A new variable name (generated, never user text)."""
        self._counter += 1
        return f"{stem}{self._counter}"

    def const(self, value: Any) -> str:
        """Bind ``value`` as a constant of the function; returns its name."""
        # By identity: each value is bound once (it stays alive in the namespace, so its id
        # cannot be reused by another object while generating).
        name = self._const_names.get(id(value))
        if name is None:
            name = self._const_names[id(value)] = f"_c{len(self._const_names)}"
            self.namespace[name] = value
        return name

    # --- statements -------------------------------------------------------------------------

    def require(self, condition: str) -> None:
        """Add a test the response must pass (for the checker being emitted)."""
        flag = self.flag
        self._top.lines.append(f"if {flag} and not ({condition}): {flag} = False")

    def statement(self, code: str) -> None:
        """Add a top-level statement (or several lines, indented relative to each other)."""
        self._top.lines.extend(code.split("\n"))

    def ctx(self) -> str:
        """The name of the function's `CheckContext` argument (for code that reads it)."""
        self.uses_ctx = True
        return "ctx"

    # --- the response -----------------------------------------------------------------------

    def data(self) -> str:
        """The variable holding the response's JSON (the expect dialect's view)."""
        if not self._data:
            self._data = True
            self._top.lines.append("if data is _NOT_JSON: return False")
        return "data"

    @property
    def takes_data(self) -> bool:
        """Whether the function reads nothing but the JSON: then it takes the JSON itself."""
        return self._data and not self.uses_response

    def text(self, view: str) -> str:
        """A text view of the response: ``text``, ``nfc_text``, ``folded_text``, ``whole_json``."""
        name = self._text.get(view)
        if name is None:
            self.uses_response = True
            name = self._text[view] = self.fresh("t")
            self._top.lines.append(f"{name} = response.{view}")
        return name

    def trace(self) -> str:
        """The variable holding the tool-call `Trace` (read once per response, and cached).

        The checker being emitted is a trajectory assertion: its full pass names the trace's
        format. A response without a trace leaves the fast path (the detailed path gives the
        error). The context may be None here: without one, the response's own calls count.
        """
        if not self._trace:
            self._trace = True
            self.uses_response = True
            self.namespace["_trace_of"] = trace_of
            self.namespace["_read_trace"] = read_trace
            self._trace_at = len(self._top.lines)
            # `trace_of`, inlined (a call less per response): the response's own calls, or
            # the context's reported ones (read by `trace_of` the first time).
            self.statement(
                "if ctx is None:\n"
                "    tr = response.trace_cache\n"
                "    if tr is None: tr = response.trace_cache = _read_trace(response)\n"
                "else:\n"
                "    tr = response.trace_cache if ctx.tool_calls is None else ctx.trace_cache\n"
                "    if tr is None: tr = _trace_of(response, ctx)\n"
                "if type(tr) is str: return False"
            )
            self._trace_end = len(self._top.lines)
        self.traced.add(self.flag)
        return "tr"

    def trace_names(self) -> str:
        """The variable holding the trace's names (bound once: no attribute read per test).

        The checker being emitted reads the trace, as with `trace`.
        """
        trace = self.trace()
        if not self._names:
            self._names = True
            self._top.lines.append(f"trn = {trace}.names")
        return "trn"

    def _key(self, scope: _Scope, var: str, key: str) -> str:
        # A value that is missing, or under a non-object, reads as `_MISSING`, which fails
        # every test (each tests a type, identity or `json_equal` first): only the checkers
        # reading it fail, and the detailed path says where the path broke.
        found = scope.memo.get((var, key))
        if found is not None:
            return found
        name = self.fresh()
        scope.lines.append(
            f"{name} = {var}.get({self.const(key)}, _MISSING) if type({var}) is dict else _MISSING"
        )
        scope.memo[(var, key)] = name
        return name

    def field(self, keys: Sequence[str], start: str | None = None) -> str:
        """The variable holding the value at ``keys`` from the JSON root, or `_MISSING`."""
        var = self.data() if start is None else start
        for key in keys:
            var = self._key(self._top, var, key)
        return var

    def each(self, prefix: Sequence[str], *, vacuous: bool) -> Loop:
        """The walk over the array at ``prefix`` (shared by every checker using it).

        Args:
            prefix: The keys leading to the array.
            vacuous: What the checker being emitted returns for an empty array: a pass marked
                vacuous (True), or its plain pass (False).
        """
        key = tuple(prefix)
        loop = self._loops.get(key)
        if loop is None:
            array = self.field(key)
            loop = self._loops[key] = Loop(self, array, self.fresh("item"))
            self._loop_order.append(loop)
        if loop.flags.setdefault(self.flag, vacuous) is not vacuous:
            raise ValueError(f"{self.flag}: an empty array cannot be both vacuous and plain")
        if vacuous:
            self.vacuous[self.flag] = loop.empty
        return loop

    def wildcard(self, path: Any, *, vacuous: bool) -> tuple[Loop, str] | None:
        """For a ``keys[*].keys`` `DotPath`: its loop and the variable of each value."""
        from ._paths import KEY, WILD

        segments = path.segments
        stars = [i for i, (kind, _) in enumerate(segments) if kind == WILD]
        if len(stars) != 1 or any(kind not in (KEY, WILD) for kind, _ in segments):
            return None
        star = stars[0]
        loop = self.each([arg for _, arg in segments[:star]], vacuous=vacuous)
        return loop, loop.value([arg for _, arg in segments[star + 1 :]])

    def match_test(self, pattern: Any, var: str) -> str:
        """A test that the `Pattern` finds a match in the string ``var``.

        Plain text (optionally after ``^``) is ``in`` / ``startswith``; any other pattern
        calls the very search the detailed path calls (its engine and time limit included).
        """
        literal = pattern.literal
        if literal is None:
            return f"{self.const(pattern.search)}({var}) is not None"
        anchored, text = literal
        if anchored:
            return f"{var}.startswith({self.const(text)})"
        return f"{self.const(text)} in {var}"

    def equal_test(self, var: str, expected: Any) -> str:
        """A test that ``var`` equals ``expected`` exactly as `json_equal` says."""
        kind = type(expected)
        if expected is None:
            return f"{var} is None"
        if kind is bool:
            return f"{var} is {expected!r}"  # True/False are singletons, bools only
        if kind is str:
            return f"type({var}) is str and {var} == {self.const(expected)}"
        if kind is int or kind is float:
            # 1 == 1.0, but a bool is never a number.
            return (
                f"(type({var}) is int or type({var}) is float) and {var} == {self.const(expected)}"
            )
        return f"_json_equal({var}, {self.const(expected)})"

    # --- the function -----------------------------------------------------------------------

    def source(self, results: Sequence[str], shared: Sequence[str]) -> str:
        """The function's source.

        Args:
            results: Per checker, the expression of its result when it passed (the shared pass
                of an emitting checker, guarded by its flag; a called checker's own result).
            shared: The conditions under which every result is the shared plain pass.
        """
        lines = ["def _fast(data, ctx):" if self.takes_data else "def _fast(response, ctx):"]
        lines += [f"    {flag} = True" for flag in self.flags]
        if self._data and not self.takes_data:
            lines.append("    data = response.json")
        lines += [self._top.indent + line for line in self._top.lines]
        for loop in self._loop_order:
            lines += ["    " + line for line in loop.before]
            array, empty = loop.array, loop.empty
            vacuous = [flag for flag, mark in loop.flags.items() if mark]
            lines.append(f"    {empty} = False")
            lines.append(f"    if type({array}) is not list:")
            lines.append("        " + " = ".join([*loop.flags, "_"]) + " = False")
            lines.append(f"    elif not {array}:")
            lines.append(f"        {empty} = True")
            lines.append("        " + " = ".join([*vacuous, "_"]) + " = False")
            lines.append("    else:")
            lines.append(f"        for {loop.item} in {array}:")
            lines += [loop.body.indent + line for line in loop.body.lines] or ["            pass"]
        done = "tr.format" if self._trace else "True"
        lines.append("    if " + (" and ".join(shared) or "True") + f": return {done}")
        lines.append("    return (" + "".join(f"{r}, " for r in results) + ")")
        return "\n".join(lines) + "\n"

    @property
    def trace_only(self) -> bool:
        """Whether every test reads the trace and nothing else (then `trace_source` exists)."""
        return (
            self._trace
            and self.traced == set(self.flags)
            and not self._data
            and not self._text
            and not self._loop_order
            and not self.uses_ctx
        )

    def trace_source(self, results: Sequence[str], shared: Sequence[str]) -> str:
        """The same function for a trace read beforehand: ``_fast_trace(tr)``, without reading.

        Only for `trace_only` code: the statements that read the trace are left out, and the
        rest, every test of the trace, is as in `source`.
        """
        top = self._top.lines[: self._trace_at] + self._top.lines[self._trace_end :]
        lines = ["def _fast_trace(tr):"]
        lines += [f"    {flag} = True" for flag in self.flags]
        lines += [self._top.indent + line for line in top]
        lines.append("    if " + (" and ".join(shared) or "True") + ": return tr.format")
        lines.append("    return (" + "".join(f"{r}, " for r in results) + ")")
        return "\n".join(lines) + "\n"


class _ByFormat(dict[str, AssertionResult]):
    """A traced checker's full pass per trace format (`traced_pass`), looked up in C."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def __missing__(self, trace_format: str) -> AssertionResult:
        found = self[trace_format] = traced_pass(self.key, trace_format)
        return found


class Fast:
    """An expectation's generated code: the function (see the module's docstring) and its source."""

    __slots__ = ("function", "source", "takes_data", "trace_function", "traced", "uses_ctx")

    def __init__(
        self,
        function: FastFunction,
        source: str,
        uses_ctx: bool,
        takes_data: bool,
        traced: frozenset[int] = frozenset(),
        trace_function: Callable[[Any], Any] | None = None,
    ) -> None:
        self.function = function
        self.source = source
        self.uses_ctx = uses_ctx  # False: the function is called with None for ctx
        # True: called with the response's JSON (a dict response as is, no `Response` built).
        self.takes_data = takes_data
        # The checkers whose full pass names the trace's format (`traced_pass`).
        self.traced = traced
        # When every assertion judges the tool-call trace alone: the same tests on a trace
        # read beforehand (`trajectory._read.peek_trace`), so that a passing output needs no
        # `Response` (`Expectation.check`).
        self.trace_function = trace_function

    def passes(self, checkers: Sequence[Checker], trace_format: str | None) -> list[Any]:
        """Every checker's full pass, for a response of this trace format (None: no trace)."""
        traced = self.traced
        return [
            traced_pass(checker.key, trace_format)
            if trace_format is not None and index in traced
            else passed(checker.key)
            for index, checker in enumerate(checkers)
        ]


def build_fast(checkers: Sequence[Checker]) -> Fast | None:
    """The generated code of an expectation, or None when it cannot have a fast path."""
    gen = FastGen()
    results: list[str] = []
    shared: list[str] = []
    traced: set[int] = set()
    for index, checker in enumerate(checkers):
        emit = getattr(checker, "emit", None)
        gen.begin(index)
        if emit is not None and emit(gen):
            if gen.flag in gen.traced:
                traced.add(index)
                by_format = gen.const(_ByFormat(checker.key))
                results.append(f"{by_format}[tr.format] if {gen.flag} else None")
                shared.append(gen.flag)
                continue
            result = f"{gen.const(passed(checker.key))} if {gen.flag} else None"
            empty = gen.vacuous.get(gen.flag)
            if empty is not None:
                vacuous = AssertionResult(checker.key, PASSED, 1.0, details={"vacuous": True})
                result = f"{gen.const(vacuous)} if {empty} else ({result})"
            results.append(result)
            shared.append(gen.flag)
            continue
        if not checker.fast_pure():
            return None  # user code: must run once per response, on the detailed path only
        result = gen.fresh("r")
        gen.uses_response = True
        gen.statement(f"{result} = {gen.const(checker.check)}(response, {gen.ctx()})")
        results.append(result)
        shared.append(f"{result} is {gen.const(passed(checker.key))}")
    source = gen.source(results, shared)
    if gen.trace_only:
        source += "\n\n" + gen.trace_source(results, shared)
    namespace = dict(gen.namespace)
    # Only generated names and operators are in the text; user values are in `namespace`.
    exec(compile(source, "<assertly fast path>", "exec"), namespace)
    return Fast(
        namespace["_fast"],
        source,
        gen.uses_ctx,
        gen.takes_data,
        frozenset(traced),
        namespace.get("_fast_trace"),
    )
