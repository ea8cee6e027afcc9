"""Compile an expectation once; check many responses against it.

An expectation is either an *expect dict* (every key one assertion, all must pass) or a *list
of typed assertions* (``{type, value, threshold, weight, metric, transform, config}``, scored
by weighted mean). `compile` detects the dialect, validates everything, and collects every
problem into one `ConfigError`. `Expectation.check` then only walks prebuilt checkers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import orjson

from .._exceptions import ConfigError, Problem
from .._json import dumps
from ._base import BuildContext, Checker, Options
from ._context import CheckContext
from ._regex import RegexTimeout, one_time_limit, within_one_time_limit
from ._registry import REGISTRY, Registry
from ._response import NOT_JSON, Response
from ._result import (
    ERROR,
    FAILED,
    PASSED,
    AssertionResult,
    CheckResult,
)
from ._shape_compile import compile_shape
from .trajectory._quick import quick_trace
from .trajectory._read import peek_trace
from .trajectory._trace import Trace

if TYPE_CHECKING:
    from .graded._judging import FileJudgeRules

__all__ = ["Expectation", "check", "compile"]

_orjson_loads = orjson.loads

_TITLE = "invalid expectation"


class Expectation:
    """A compiled expectation. Build with `assertly.compile`; reuse for every response.

    Attributes:
        dialect: ``"expect"`` (an expect dict) or ``"typed"`` (a list of typed assertions).
        threshold: Pass threshold on the aggregate score, or None (every assertion must pass).
    """

    __slots__ = (
        "_all_pass",
        "_checkers",
        "_fast",
        "_metrics",
        "_trace_checks",
        "_trace_function",
        "_traced",
        "_uniform",
        "_weight_total",
        "_weights",
        "backtracks",
        "dialect",
        "judged",
        "needs_spans",
        "threshold",
    )

    def __init__(
        self,
        dialect: str,
        checkers: Sequence[Checker],
        weights: Sequence[float],
        metrics: Sequence[str | None],
        threshold: float | None,
    ) -> None:
        self.dialect = dialect
        self._checkers = tuple(checkers)
        self._weights = tuple(weights)
        self._metrics = tuple(metrics) if any(metrics) else ()
        self._weight_total = sum(weights)
        self._uniform = all(weight == 1.0 for weight in weights)
        self.threshold = threshold
        self._fast: Any = _UNBUILT  # the generated fast path, built on the first check
        self._trace_function: Any = None  # its `trace_function`, when built and there is one
        # With it, each checker's `TraceChecker.check_trace` (None for any other checker).
        self._trace_checks: tuple[Any, ...] = ()
        self._all_pass: dict[tuple[str | None, str | None], CheckResult] = {}
        # The same results for JSON read whole (not extracted), by trace format alone: the
        # common lookup of a passing trajectory check, without building a key.
        self._traced: dict[str, CheckResult] = {}
        # Whether a model-graded assertion is among the checkers (set by `compile`): the
        # runner then judges in two passes with a `JudgeBoard` (see `_judging`). "config" when
        # one needs the config's judge:, "self" when all name their own endpoint and model.
        self.judged: str | None = None
        # Whether a pattern may run on the time-limited engine (set by `compile`): each check
        # then gives all such searches one limit (`one_time_limit`), not one limit each.
        self.backtracks = False
        # Whether a check needs the call's spans (set by `compile`): the runner asks for them.
        self.needs_spans = False

    def __len__(self) -> int:
        return len(self._checkers)

    def __repr__(self) -> str:
        return f"Expectation({self.dialect}, {len(self._checkers)} assertions)"

    def describe(self) -> list[str]:
        """What each top-level assertion demands, in order."""
        return [checker.describe() for checker in self._checkers]

    def check(
        self,
        response: Any,
        *,
        context: CheckContext | Mapping[str, Any] | None = None,
        now: str | datetime | date | None = None,
    ) -> CheckResult:
        """Judge one response.

        Args:
            response: A JSON value, JSON text, prose (possibly with JSON inside), or bytes;
                or a value that stands for JSON, judged as it (a pydantic model such as an
                SDK's reply, a dataclass, a tuple, a date: see `as_json_value`).
            context: Cost, latency, model and stored steps of the call (`CheckContext` or a
                mapping with those keys).
            now: "Today" for date assertions (ISO string or datetime); defaults to the clock.

        Returns:
            The verdict. Never raises for a response (any text, bytes or JSON value, or a
            value standing for one). Inside a plain dict or list, values are taken as they
            are; one with no JSON reading is never judged by a stand-in (the text
            assertions that would read it are an ``error``).

        Raises:
            TypeError: ``response`` itself is no response: a value with no JSON reading (a
                set, an arbitrary object), which would otherwise be judged by its ``repr``.
        """
        if self.backtracks and not within_one_time_limit():
            # One limit for all this response's backtracking searches.
            result: CheckResult = one_time_limit(self._route, response, context, now)
            return result
        return self._route(response, context, now)

    def _route(
        self,
        response: Any,
        context: CheckContext | Mapping[str, Any] | None,
        now: str | datetime | date | None,
    ) -> CheckResult:
        """`check`'s dispatcher: the trace-only, fast or detailed way for this response.

        The fast path is built on the first check. An expectation whose assertions all judge
        the tool-call trace alone reads it without a `Response` (`_check_trace`); one with a
        fast function tries it first (`_check_fast`); one without judges in detail.
        """
        if self._fast is _UNBUILT:
            self._build_fast()
        if self._trace_function is not None and type(response) is not Response:
            return self._check_trace(response, context, now)
        fast = self._fast
        if fast is None:
            return self._check_detailed(response, context=context, now=now)
        return self._check_fast(fast, response, context, now)

    def _check_trace(
        self,
        response: Any,
        context: CheckContext | Mapping[str, Any] | None,
        now: str | datetime | date | None,
    ) -> CheckResult:
        """The trace-only way: every assertion judges the tool-call trace alone.

        The trace is read without a `Response` where it can be (`peek_trace`); a passing
        output needs none (`Fast.trace_function`). No assertion reads the context but for its
        calls, nor the clock, so a plain dict's calls are read without a `CheckContext`
        (building one costs as much as reading the calls); one with "now" is built, as its
        "now" may be invalid.
        """
        ctx = None
        if context is None and now is None:
            reported = None
        elif now is None and type(context) is dict and "now" not in context:
            reported = context.get("tool_calls")
        else:
            ctx = CheckContext.build(context, now)
            reported = ctx.tool_calls
        try:
            if reported is None and type(response) is str:
                # `peek_trace` of JSON text, its common case inlined (a call less).
                try:
                    trace = _orjson_loads(response)
                except ValueError:
                    trace = peek_trace(response)  # (a byte order mark, or not JSON)
                else:
                    if type(trace) is dict:
                        quick = quick_trace(trace)
                        if type(quick) is Trace:
                            trace = quick
            else:
                trace = peek_trace(response, reported, ctx)
            # `trace`: the trace, or orjson's value of the text when none was read at once.
            verdict = self._trace_function(trace) if type(trace) is Trace else False
        except Exception:  # doubt, never a verdict: the usual way reads and judges again
            trace, verdict = NOT_JSON, False
        if type(verdict) is str:  # every assertion passed; the calls were in this format
            return self._traced.get(verdict) or self._passed(None, verdict)
        return self._trace_not_passed(response, context, now, ctx, trace, verdict)

    def _check_fast(
        self,
        fast: Any,
        response: Any,
        context: CheckContext | Mapping[str, Any] | None,
        now: str | datetime | date | None,
    ) -> CheckResult:
        """The fast way: the generated function says "all passed", or the detailed path judges.

        A parsed response is handed to a function that reads only the JSON without a
        `Response`; anything else is wrapped in one. A function's exception is doubt, never
        a verdict: the detailed path judges (and reports the error).
        """
        if context is None and now is None and not fast.uses_ctx:
            ctx = None  # an empty context (the clock's "now") is made only if needed
        else:
            ctx = CheckContext.build(context, now)
        if fast.takes_data and type(response) is dict:
            try:
                verdict = fast.function(response, ctx)
            except Exception:
                verdict = False
            if verdict is True:
                return self._all_pass.get((None, None)) or self._passed(None)
            response = Response(response)
        else:
            if type(response) is not Response:
                response = Response(response)
            try:
                verdict = fast.function(response.json if fast.takes_data else response, ctx)
            except Exception:
                verdict = False
            if verdict is True:
                return self._passed(response)
            if type(verdict) is str:  # every assertion passed; the calls were in this format
                if response.extracted is None:
                    prebuilt = self._traced.get(verdict)
                else:
                    prebuilt = self._all_pass.get(
                        (response.extracted if response.is_text else None, verdict)
                    )
                return prebuilt or self._passed(response, verdict)
        if ctx is None:
            ctx = CheckContext()
        if verdict:
            # Per checker: its result, or None where only the detailed path can say.
            return self._check_all(response, ctx, verdict)
        return self._check_all(response, ctx)

    def _trace_not_passed(
        self,
        output: Any,
        context: CheckContext | Mapping[str, Any] | None,
        now: str | datetime | date | None,
        ctx: CheckContext | None,
        trace: Any,
        verdict: Any,
    ) -> CheckResult:
        """`check`'s trace-only way, for an output its fast test did not find passing.

        The detailed path's result. Each trace checker judges the trace read already (what
        its `check` does after `trace_of`), so a failure needs no `Response` nor context;
        any other checker (a ``not-`` form that did not pass) judges a `Response` handed the
        trace. ``trace`` may instead be orjson's value of the text (no trace could be read
        without a `Response`): then the fast way (`_check_fast`), on a `Response` handed that
        value.
        """
        known: list[AssertionResult | None] | None = None
        if type(trace) is Trace:
            checkers, judges = self._checkers, self._trace_checks
            known = [*verdict] if verdict else [None] * len(checkers)
            for index, result in enumerate(known):
                if result is None:
                    judge = judges[index]
                    if judge is None:
                        break
                    try:
                        known[index] = judge(trace, True)
                    except Exception as error:  # as `_check_all` does
                        known[index] = _could_not_check(checkers[index], error)
            else:
                return self._combine(known, None)  # type: ignore[arg-type]  # no None left
        response = Response(output)
        if ctx is None:
            ctx = CheckContext.build(context, now)
        if type(trace) is not Trace:
            if trace is not NOT_JSON:
                response.adopt_unchecked(trace)  # (orjson's value: not parsed again)
            return self._check_fast(self._fast, response, ctx, None)  # the usual way
        if ctx.tool_calls is None:
            response.trace_cache = trace
        else:
            ctx.trace_cache = trace
        return self._check_all(response, ctx, known)

    @property
    def source(self) -> str:
        """The generated fast-path function's Python source, for debugging ("" if it has none).

        The fast path decides only that every assertion passed; anything else is judged by
        the detailed path, which alone builds messages. User values are constants of the
        function (``_c0`` …), not part of its text.
        """
        fast = self._build_fast() if self._fast is _UNBUILT else self._fast
        return "" if fast is None else fast.source

    def _build_fast(self) -> Any:
        from ._fast import build_fast
        from .trajectory._checks import TraceChecker

        fast = self._fast = build_fast(self._checkers)
        self._trace_function = None if fast is None else fast.trace_function
        if self._trace_function is not None:
            self._trace_checks = tuple(
                checker.check_trace if isinstance(checker, TraceChecker) else None
                for checker in self._checkers
            )
        return fast

    def _passed(self, response: Response | None, trace_format: str | None = None) -> CheckResult:
        """The result of a response the fast path found passing every assertion plainly.

        One per expectation, way the JSON was found (None: a parsed response) and format of
        the tool calls (trajectory assertions name it): its score is exactly 1.0, as the
        detailed path computes it from scores of 1.0.
        """
        extracted = response.extracted if response is not None and response.is_text else None
        prebuilt = self._all_pass.get((extracted, trace_format))
        if prebuilt is None:
            results = self._fast.passes(self._checkers, trace_format)
            named = _named_scores(results, self._metrics) if self._metrics else None
            prebuilt = CheckResult(
                PASSED, 1.0, results, named, self.threshold, extracted, self._weights
            )
            self._all_pass[(extracted, trace_format)] = prebuilt
            if extracted is None and trace_format is not None:
                self._traced[trace_format] = prebuilt
        return prebuilt

    def _check_detailed(
        self,
        response: Any,
        *,
        context: CheckContext | Mapping[str, Any] | None = None,
        now: str | datetime | date | None = None,
    ) -> CheckResult:
        """`check` without the fast path (tests compare the two)."""
        if type(response) is not Response:
            response = Response(response)
        return self._check_all(response, CheckContext.build(context, now))

    def _check_all(
        self,
        response: Response,
        ctx: CheckContext,
        known: Sequence[AssertionResult | None] | None = None,
    ) -> CheckResult:
        """The detailed path: every checker's full result, messages for what did not pass.

        ``known``: results the fast function already has (the shared pass of a checker whose
        generated test passed, or a called checker's own result); only the None entries are
        judged here.
        """
        checkers = self._checkers
        results: list[AssertionResult | None] = (
            [None] * len(checkers) if known is None else [*known]
        )
        for index, result in enumerate(results):
            if result is None:
                checker = checkers[index]
                try:
                    results[index] = checker.check(response, ctx)
                except Exception as error:
                    # Checkers never raise on purpose; if one does (a regex out of time, a
                    # value nested beyond the interpreter's limits) it is an error and the
                    # rest judge.
                    results[index] = _could_not_check(checker, error)
        extracted = response.extracted if response.is_text else None
        return self._combine(results, extracted)  # type: ignore[arg-type]  # no None left

    def _combine(self, judged: list[AssertionResult], extracted: str | None) -> CheckResult:
        """The check's verdict from every assertion's result (the detailed path's end)."""
        # One loop, not a comprehension per figure: this runs for every response that does not
        # pass, often for one or two assertions, where each comprehension's call is most of it.
        scores = []
        failed_any = errored_any = False
        for result in judged:
            scores.append(result.score)
            outcome = result.outcome
            if outcome == FAILED:
                failed_any = True
            elif outcome == ERROR:
                errored_any = True
        if self._uniform:
            score = sum(scores) / len(scores)
        else:
            score = sum([s * w for s, w in zip(scores, self._weights, strict=True)])
            score /= self._weight_total
        threshold = self.threshold
        if threshold is None:
            # A definite failure outranks an error; an error is never a pass.
            outcome = FAILED if failed_any else ERROR if errored_any else PASSED
        elif score + 1e-12 < threshold:
            outcome = FAILED
        else:
            outcome = ERROR if errored_any else PASSED
        named = _named_scores(judged, self._metrics) if self._metrics else None
        return CheckResult(outcome, score, judged, named, threshold, extracted, self._weights)


_UNBUILT: Any = object()


def _could_not_check(checker: Checker, error: Exception) -> AssertionResult:
    timed_out = isinstance(error, RegexTimeout)
    reason = str(error) if timed_out else f"{type(error).__name__}: {error}"
    return AssertionResult(
        getattr(checker, "key", type(checker).__name__),
        ERROR,
        0.0,
        f"could not judge: {reason}"[:500],
        details={"regex_engine": "regex-timeout"} if timed_out else None,
    )


def _named_scores(
    results: list[AssertionResult], metrics: Sequence[str | None]
) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for result, metric in zip(results, metrics, strict=True):
        if metric:
            sums.setdefault(metric, []).append(result.score)
    return {name: sum(scores) / len(scores) for name, scores in sums.items()}


def compile(
    expectation: Any,
    *,
    threshold: float | None = None,
    sensitive_prefixes: Sequence[str] | None = None,
    shape: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    location: str = "",
    judge_rules: FileJudgeRules | None = None,
) -> Expectation:
    """Compile an expect dict or a list of typed assertions into an `Expectation`.

    Args:
        expectation: A mapping (expect dict) or a list of typed assertion mappings.
        threshold: Pass when the aggregate score reaches this (typed lists and eval cases);
            without it every assertion must pass.
        sensitive_prefixes: File prefixes for ``if_sensitive_results`` (none by default; an
            expectation that uses ``if_sensitive_results`` without them is a configuration
            error).
        shape: Where the fields the expect dict reads live, as JSONPaths
            (``{"results": "$.data.hits", "summary": "$.answer"}``); fields left out are the
            seed's top-level ones. See `compile_shape`.
        registry: Where to look assertion names up (the global registry by default).
        location: Prefix for problem locations (the loader passes file, line and test id).
        judge_rules: What assertions may set of their judge (the loader passes the project
            config's for test files: `FileJudgeRules`); None: anything, as code may.

    Raises:
        ConfigError: Listing every problem found.
    """
    problems: list[Problem] = []
    options = Options(tuple(sensitive_prefixes or ()), judge_rules=judge_rules)
    ctx = BuildContext(registry or REGISTRY, options, problems, location, compile_expect_checkers)
    if shape is not None:
        compiled_shape = compile_shape(shape, ctx.at("shape"))
        if compiled_shape is None:
            raise ConfigError(problems, title=_TITLE)
        options.shape = compiled_shape
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 <= threshold <= 1
    ):
        ctx.at("threshold").problem(f"threshold must be a number in [0, 1], got {threshold!r}")
        threshold = None
    if isinstance(expectation, Mapping):
        if not location:
            ctx = ctx.with_problems(problems, "expect")
        if "type" in expectation and isinstance(expectation.get("type"), str):
            ctx.problem(
                "this looks like one typed assertion ({type: ...}); "
                "write a list of them: [{type: ..., value: ...}]"
            )
            raise ConfigError(problems, title=_TITLE)
        checkers = compile_expect_checkers(expectation, ctx)
        if problems:
            raise ConfigError(problems, title=_TITLE)
        if not checkers:
            raise ConfigError(
                [Problem(ctx.location, "the expect dict has no assertions")], title=_TITLE
            )
        compiled = Expectation("expect", checkers, [1.0] * len(checkers), [], threshold)
        compiled.judged = options.judged
        compiled.needs_spans = options.spans
        compiled.backtracks = options.backtracks
        return compiled
    if isinstance(expectation, list | tuple):
        if not location:
            ctx = ctx.with_problems(problems, "assertions")
        from .typed._wrapper import compile_typed_list

        checkers, weights, metrics = compile_typed_list(expectation, ctx)
        if problems:
            raise ConfigError(problems, title=_TITLE)
        compiled = Expectation("typed", checkers, weights, metrics, threshold)
        compiled.judged = options.judged
        compiled.needs_spans = options.spans
        compiled.backtracks = options.backtracks
        return compiled
    raise ConfigError(
        title=_TITLE,
        problems=[
            Problem(
                location or "expectation",
                "expected an expect dict (mapping) or a list of typed assertions, "
                f"got {type(expectation).__name__}",
            )
        ],
    )


def compile_expect_checkers(spec: Any, ctx: BuildContext) -> list[Checker]:
    """Compile an expect dict (top level or nested) into checkers, recording problems."""
    if not isinstance(spec, Mapping):
        ctx.problem(f"expected a mapping of assertions, got {dumps(spec)}")
        return []
    checkers: list[Checker] = []
    registry = ctx.registry
    for key, value in spec.items():
        key_ctx = ctx.at(str(key))
        entry = registry.get("expect", key) if isinstance(key, str) else None
        if entry is None:
            suggestion = registry.suggest("expect", str(key))
            hint = f" (did you mean '{suggestion}'?)" if suggestion else ""
            key_ctx.problem(f"unknown assertion '{key}'{hint}")
            continue
        before = len(ctx.problems)
        checker = entry.build(value, key_ctx)
        if checker is not None and len(ctx.problems) == before:
            checkers.append(checker)
    return checkers


def check(
    expectation: Any,
    response: Any,
    *,
    context: CheckContext | Mapping[str, Any] | None = None,
    now: str | datetime | date | None = None,
    threshold: float | None = None,
) -> CheckResult:
    """Compile ``expectation`` and check one ``response`` (compile once to check many).

    Raises:
        ConfigError: When the expectation is invalid.
    """
    return compile(expectation, threshold=threshold).check(response, context=context, now=now)
