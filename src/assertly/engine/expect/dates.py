"""Date assertions: ``all_dates_between``, ``dates_within_days``, ``all_dates_in_year``.

Dates are ISO 8601 with ``Z`` or an offset; a value with no offset is UTC; a date-only value
is midnight UTC, except as the ``end`` bound of ``all_dates_between``, where it means the end
of that day. "Now" comes from the check (``now=`` / ``--now``) so runs are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath
from .._result import AssertionResult, failed, passed
from .._values import fmt
from ._common import Number, Params, WildcardChecker

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen, Loop


def _emit_moment(gen: FastGen, where: FastGen | Loop, var: str) -> str:
    """The variable of ``var`` parsed as a date (`parse_date`); the value must be one.

    `parse_date`'s first step is inlined (one C call for a well-formed datetime); anything
    else goes through `parse_date` itself.
    """
    moment = gen.fresh("m")
    iso, parse, utc = gen.const(_FROMISOFORMAT), gen.const(parse_date), gen.const(UTC)
    where.statement(
        f"if type({var}) is str:\n"
        f"    try:\n"
        f"        {moment} = {iso}({var})\n"
        f"    except ValueError:\n"
        f"        {moment} = {parse}({var})\n"
        f"    else:\n"
        f"        if {moment}.tzinfo is None: {moment} = {moment}.replace(tzinfo={utc})\n"
        f"else:\n"
        f"    {moment} = None"
    )
    where.require(f"{moment} is not None")
    return moment


_END_OF_DAY = time(23, 59, 59, 999999)
_FROMISOFORMAT = datetime.fromisoformat  # one bound method, a constant of generated code
_ZERO = timedelta(0)


def parse_date(text: Any, *, end_of_day: bool = False) -> datetime | None:
    """Parse an ISO 8601 date or datetime into an aware datetime; None when it is not one.

    The result keeps the offset it was written with (comparisons are offset-aware); take
    ``.astimezone(UTC)`` for UTC fields.
    """
    if type(text) is not str:
        return None
    if not end_of_day:
        try:  # the common, well-formed case in one C call (3.11 reads "Z" and offsets)
            moment = datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    source = text.strip()
    if source.endswith(("Z", "z")):
        source = source[:-1] + "+00:00"
    try:
        if len(source) == 10:
            day = date.fromisoformat(source)
            return datetime.combine(day, _END_OF_DAY if end_of_day else time(), tzinfo=UTC)
        moment = datetime.fromisoformat(source)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _not_a_date(key: str, path: DotPath, index: tuple[int, ...], value: Any) -> AssertionResult:
    location = path.location(index)
    return failed(
        key,
        f"Value {fmt(value)} at {location} is not an ISO 8601 date",
        path=location,
        actual=value,
    )


class BetweenParams(Params):
    """Parameters of ``all_dates_between``."""

    path: str
    start: str
    end: str


class DatesBetween(WildcardChecker):
    """Every date lies within [start, end]."""

    __slots__ = ("end", "end_text", "start", "start_text")

    def __init__(
        self, path: DotPath, start: datetime, end: datetime, start_text: str, end_text: str
    ) -> None:
        self.key = "all_dates_between"
        self.path = path
        self.start = start
        self.end = end
        self.start_text = start_text
        self.end_text = end_text

    def describe(self) -> str:
        return f"every {self.path.text} between {self.start_text} and {self.end_text}"

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        moment = _emit_moment(gen, where, var)
        where.require(f"{gen.const(self.start)} <= {moment} <= {gen.const(self.end)}")
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        start, end = self.start, self.end
        for position, value in enumerate(values):
            moment = parse_date(value)
            if moment is None:
                return _not_a_date(self.key, path, indexes[position], value)
            if start <= moment <= end:
                continue
            day = moment.astimezone(UTC).date()
            if day < start.date() or day > end.date():
                # The seed's wording: whole days read best when the day itself is outside.
                message = (
                    f"Date {day.isoformat()} is outside range "
                    f"{start.date().isoformat()} to {end.date().isoformat()}"
                )
            else:
                message = f"Date {value} is outside range {self.start_text} to {self.end_text}"
            return failed(
                self.key,
                message,
                path=path.location(indexes[position]),
                expected={"start": self.start_text, "end": self.end_text},
                actual=value,
            )
        return passed(self.key)


@expect_assertion("all_dates_between", params=BetweenParams)
def build_all_dates_between(value: Any, ctx: BuildContext) -> Checker | None:
    """Every date at the path lies between start and end (inclusive)."""
    params = ctx.model(
        BetweenParams, value, '{path: "results[*].created", start: "2026-01-01", end: "2026-01-31"}'
    )
    if params is None:
        return None
    start = parse_date(params.start)
    end = parse_date(params.end, end_of_day=True)
    if start is None:
        ctx.at("start").problem(f"{params.start!r} is not an ISO 8601 date such as 2026-01-01")
    if end is None:
        ctx.at("end").problem(f"{params.end!r} is not an ISO 8601 date such as 2026-01-31")
    if start is not None and end is not None and start > end:
        ctx.problem(f"start {params.start} is after end {params.end}")
        return None
    path = ctx.at("path").dot_path(params.path)
    if path is None or start is None or end is None:
        return None
    return DatesBetween(path, start, end, params.start, params.end)


class WithinDaysParams(Params):
    """Parameters of ``dates_within_days``."""

    path: str
    days: Number


def _span(distance: timedelta, limit: float) -> str:
    """A distance in days, precise enough to show it exceeds ``limit`` (7.0 vs 7 reads wrong)."""
    days = distance.total_seconds() / 86400
    for digits in (1, 3):
        text = f"{days:.{digits}f}"
        if float(text) > limit:
            return f"{text} days"
    return str(distance)


class DatesWithinDays(WildcardChecker):
    """Every date is within ``days`` of now, before or after."""

    __slots__ = ("days", "span")

    def __init__(self, path: DotPath, days: float) -> None:
        self.key = "dates_within_days"
        self.path = path
        self.days = days
        self.span = timedelta(days=days)

    def describe(self) -> str:
        return f"every {self.path.text} within {self.days:g} days of now"

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        moment = _emit_moment(gen, where, var)
        where.require(f"abs({gen.ctx()}.now - {moment}) <= {gen.const(self.span)}")
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        now = ctx.now
        for position, value in enumerate(values):
            moment = parse_date(value)
            if moment is None:
                return _not_a_date(self.key, path, indexes[position], value)
            distance = abs(now - moment)
            if distance <= self.span:
                continue
            return failed(
                self.key,
                f"Date {value} is {_span(distance, self.days)} from now ({now.isoformat()}), "
                f"more than {self.days:g} days",
                path=path.location(indexes[position]),
                expected={"days": self.days, "now": now.isoformat()},
                actual=value,
            )
        return passed(self.key)


@expect_assertion("dates_within_days", params=WithinDaysParams)
def build_dates_within_days(value: Any, ctx: BuildContext) -> Checker | None:
    """Every date at the path is within N days of now (now is injectable)."""
    params = ctx.model(WithinDaysParams, value, '{path: "results[*].created", days: 7}')
    if params is None:
        return None
    if params.days < 0:
        ctx.at("days").problem(f"days must be >= 0, got {params.days!r}")
        return None
    path = ctx.at("path").dot_path(params.path)
    return DatesWithinDays(path, float(params.days)) if path else None


class InYearParams(Params):
    """Parameters of ``all_dates_in_year``."""

    path: str
    year: int


class DatesInYear(WildcardChecker):
    """Every date falls in the given year (UTC)."""

    __slots__ = ("year",)

    def __init__(self, path: DotPath, year: int) -> None:
        self.key = "all_dates_in_year"
        self.path = path
        self.year = year

    def describe(self) -> str:
        return f"every {self.path.text} in {self.year}"

    def emit_value(self, gen: FastGen, where: FastGen | Loop, var: str) -> bool:
        moment = _emit_moment(gen, where, var)
        zero, utc = gen.const(_ZERO), gen.const(UTC)
        where.require(
            f"({moment}.year if {moment}.utcoffset() == {zero} "
            f"else {moment}.astimezone({utc}).year) == {gen.const(self.year)}"
        )
        return True

    def check_values(
        self,
        path: DotPath,
        values: list[Any],
        indexes: Sequence[tuple[int, ...]],
        ctx: CheckContext,
    ) -> AssertionResult:
        for position, value in enumerate(values):
            moment = parse_date(value)
            if moment is None:
                return _not_a_date(self.key, path, indexes[position], value)
            year = moment.year if moment.utcoffset() == _ZERO else moment.astimezone(UTC).year
            if year != self.year:
                return failed(
                    self.key,
                    f"Date {value} is in {year} (UTC), not {self.year}",
                    path=path.location(indexes[position]),
                    expected=self.year,
                    actual=value,
                )
        return passed(self.key)


@expect_assertion("all_dates_in_year", params=InYearParams)
def build_all_dates_in_year(value: Any, ctx: BuildContext) -> Checker | None:
    """Every date at the path falls in the year (compared in UTC)."""
    params = ctx.model(InYearParams, value, '{path: "results[*].created", year: 2026}')
    if params is None:
        return None
    path = ctx.at("path").dot_path(params.path)
    return DatesInYear(path, params.year) if path else None
