"""Date assertions (engine/expect/dates.py): ``all_dates_between``, ``dates_within_days``,
``all_dates_in_year``.

Spec A: ISO 8601 with ``Z`` or offsets; a naive value is UTC; a date-only value is midnight UTC;
a date-only ``end`` bound means the end of that day; an unparseable date fails; "now" is
injectable; the year is compared in UTC.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

import assertly
from assertly import AssertionResult, CheckContext, ConfigError, Outcome

PATH = "results[*].metadata.created"


def only(expect: dict[str, Any], response: Any, **kwargs: Any) -> AssertionResult:
    result = assertly.compile(expect).check(response, **kwargs)
    assert len(result.results) == 1
    return result.results[0]


def created(*values: Any) -> dict[str, Any]:
    return {"results": [{"metadata": {"created": value}} for value in values]}


def between(start: str, end: str) -> dict[str, Any]:
    return {"all_dates_between": {"path": PATH, "start": start, "end": end}}


def problems(expect: Any) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        assertly.compile(expect)
    return [(p.location, p.message) for p in caught.value.problems]


JANUARY = between("2026-01-01", "2026-01-31")

# --- all_dates_between ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "inside"),
    [
        ("2026-01-15T10:00:00Z", True),
        ("2026-01-15T10:00:00z", True),
        ("2026-01-01T00:00:00Z", True),  # start is inclusive (date-only start = midnight)
        ("2025-12-31T23:59:59Z", False),
        ("2026-01-31T23:59:59.999999Z", True),  # date-only end = end of that day
        ("2026-01-31T23:30:00Z", True),
        ("2026-02-01T00:00:00Z", False),
        # Offsets are converted to UTC before comparing.
        ("2026-02-01T00:30:00+02:00", True),  # 2026-01-31T22:30Z
        ("2026-01-31T20:00:00-05:00", False),  # 2026-02-01T01:00Z
        ("2026-01-01T01:00:00+02:00", False),  # 2025-12-31T23:00Z
        ("2025-12-31T22:00:00-03:00", True),  # 2026-01-01T01:00Z
        # A naive value is UTC.
        ("2026-01-31T23:30:00", True),
        ("2026-02-01T00:00:00", False),
        # A date-only value is midnight UTC.
        ("2026-01-31", True),
        ("2026-01-01", True),
        ("2026-02-01", False),
        # Fractions and a space separator are ISO 8601 too.
        ("2026-01-20 08:15:00.250+00:00", True),
    ],
)
def test_between_date_only_bounds(value: str, inside: bool) -> None:
    result = only(JANUARY, created(value))
    assert result.outcome is (Outcome.PASSED if inside else Outcome.FAILED), result


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run with a local time zone far from UTC, so "naive means UTC" is really tested."""
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("far_from_utc")
def test_naive_values_and_now_are_utc_not_local_time() -> None:
    assert only(JANUARY, created("2026-01-31T23:30:00")).passed
    assert not only(JANUARY, created("2026-02-01T00:00:00")).passed
    assert not only(JANUARY, created("2025-12-31T23:59:59")).passed
    in_2026 = {"all_dates_in_year": {"path": PATH, "year": 2026}}
    assert not only(in_2026, created("2025-12-31T20:00:00")).passed
    week = {"dates_within_days": {"path": PATH, "days": 7}}
    assert only(week, created("2026-01-08T00:00:00"), now="2026-01-15T00:00:00").passed
    assert not only(week, created("2026-01-07T23:00:00"), now="2026-01-15T00:00:00").passed


def test_between_datetime_bounds_are_inclusive() -> None:
    expect = between("2026-01-10T12:00:00Z", "2026-01-20T12:00:00Z")
    assert only(expect, created("2026-01-10T12:00:00Z", "2026-01-20T12:00:00Z")).passed
    assert only(expect, created("2026-01-10T13:00:00+01:00")).passed  # = start
    assert not only(expect, created("2026-01-20T12:00:01Z")).passed
    assert not only(expect, created("2026-01-10T11:59:59Z")).passed


def test_between_offset_bounds() -> None:
    # The window is 2026-01-01T00:00+05:00 .. 2026-01-01T23:59+05:00, i.e. 2025-12-31T19:00Z ..
    expect = between("2026-01-01T00:00:00+05:00", "2026-01-01T23:59:00+05:00")
    assert only(expect, created("2025-12-31T19:00:00Z")).passed
    assert not only(expect, created("2026-01-01T19:00:00Z")).passed


def test_between_message_for_a_day_outside_the_range() -> None:
    result = only(JANUARY, created("2026-01-15T10:00:00Z", "2026-02-05T10:00:00Z"))
    assert result.outcome is Outcome.FAILED
    assert result.message == "Date 2026-02-05 is outside range 2026-01-01 to 2026-01-31"
    assert result.path == "results[1].metadata.created"
    assert result.expected == {"start": "2026-01-01", "end": "2026-01-31"}
    assert result.actual == "2026-02-05T10:00:00Z"


def test_between_message_uses_the_utc_day() -> None:
    result = only(JANUARY, created("2026-01-01T01:00:00+02:00"))
    assert result.message == "Date 2025-12-31 is outside range 2026-01-01 to 2026-01-31"


def test_between_message_within_a_bound_day_names_the_times() -> None:
    expect = between("2026-01-10T12:00:00Z", "2026-01-31")
    result = only(expect, created("2026-01-10T11:00:00Z"))
    assert result.message == (
        "Date 2026-01-10T11:00:00Z is outside range 2026-01-10T12:00:00Z to 2026-01-31"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("yesterday", "'yesterday'"),
        ("2026-13-01", "'2026-13-01'"),
        ("2026-02-30T10:00:00Z", "'2026-02-30T10:00:00Z'"),
        ("", "''"),
        (20260101, "20260101"),
        (None, "null"),
        (True, "true"),
    ],
)
def test_unparseable_dates_fail(value: Any, shown: str) -> None:
    for expect in (
        JANUARY,
        {"dates_within_days": {"path": PATH, "days": 7}},
        {"all_dates_in_year": {"path": PATH, "year": 2026}},
    ):
        result = only(expect, created("2026-01-05T00:00:00Z", value), now="2026-01-06T00:00:00Z")
        assert result.outcome is Outcome.FAILED
        assert result.message == (
            f"Value {shown} at results[1].metadata.created is not an ISO 8601 date"
        )
        assert result.path == "results[1].metadata.created"


def test_between_parameters() -> None:
    assert problems(between("soon", "2026-13-31")) == [
        ("expect.all_dates_between.start", "'soon' is not an ISO 8601 date such as 2026-01-01"),
        ("expect.all_dates_between.end", "'2026-13-31' is not an ISO 8601 date such as 2026-01-31"),
    ]
    assert problems(between("2026-02-01", "2026-01-31")) == [
        ("expect.all_dates_between", "start 2026-02-01 is after end 2026-01-31")
    ]
    # A date-only end is the end of its day, so start and end on one day is a valid range.
    assert assertly.compile(between("2026-01-31T18:00:00Z", "2026-01-31"))
    [(location, message)] = problems({"all_dates_between": {"path": PATH, "start": "2026-01-01"}})
    assert location == "expect.all_dates_between.end"
    assert message.startswith("required parameter is missing")
    [(location, message)] = problems(
        {"all_dates_between": {"path": PATH, "start": 2026, "end": "2026-01-31"}}
    )
    assert location == "expect.all_dates_between.start"
    assert message.startswith("input should be a valid string, got 2026")


# --- dates_within_days ----------------------------------------------------------------------

WEEK = {"dates_within_days": {"path": PATH, "days": 7}}
NOW = "2026-01-15T00:00:00Z"


@pytest.mark.parametrize(
    ("value", "within"),
    [
        ("2026-01-15T00:00:00Z", True),
        ("2026-01-08T00:00:00Z", True),  # exactly 7 days: inclusive
        ("2026-01-07T23:59:59Z", False),
        ("2026-01-22T00:00:00Z", True),  # the future counts as distance too
        ("2026-01-22T00:00:01Z", False),
        ("2026-01-08", True),  # date-only = midnight UTC
        ("2026-01-08T01:00:00+01:00", True),  # = 2026-01-08T00:00Z
        ("2026-01-07T23:00:00-01:00", True),  # = 2026-01-08T00:00Z
        ("2026-01-08T00:00:00+01:00", False),  # = 2026-01-07T23:00Z
        ("2026-01-08T00:00:00", True),  # naive = UTC
    ],
)
def test_within_days(value: str, within: bool) -> None:
    result = only(WEEK, created(value), now=NOW)
    assert result.outcome is (Outcome.PASSED if within else Outcome.FAILED), result


def test_within_days_message() -> None:
    result = only(WEEK, created("2026-01-14T00:00:00Z", "2026-01-23T00:00:00Z"), now=NOW)
    assert result.message == (
        "Date 2026-01-23T00:00:00Z is 8.0 days from now (2026-01-15T00:00:00+00:00), "
        "more than 7 days"
    )
    assert result.path == "results[1].metadata.created"
    assert result.expected == {"days": 7.0, "now": "2026-01-15T00:00:00+00:00"}


def test_within_days_message_is_precise_enough_to_show_the_excess() -> None:
    result = only(WEEK, created("2026-01-07T23:00:00Z"), now=NOW)
    assert result.message.startswith("Date 2026-01-07T23:00:00Z is 7.042 days from now")
    result = only(WEEK, created("2026-01-07T23:59:59Z"), now=NOW)
    assert result.message.startswith("Date 2026-01-07T23:59:59Z is 7 days, 0:00:01 from now")


@pytest.mark.parametrize(
    "now",
    [
        "2026-01-15T00:00:00Z",
        "2026-01-15T02:00:00+02:00",
        "2026-01-15",
        datetime(2026, 1, 15, tzinfo=UTC),
        datetime(2026, 1, 15),  # naive = UTC
        datetime(2026, 1, 14, 19, tzinfo=timezone(timedelta(hours=-5))),
        date(2026, 1, 15),
    ],
)
def test_now_is_injectable_in_every_form(now: Any) -> None:
    assert only(WEEK, created("2026-01-08T00:00:00Z"), now=now).passed
    assert not only(WEEK, created("2026-01-07T23:00:00Z"), now=now).passed


def test_now_from_the_context() -> None:
    response = created("2026-01-08T00:00:00Z")
    assert only(WEEK, response, context={"now": NOW}).passed
    assert only(WEEK, response, context=CheckContext(now=NOW)).passed
    assert not only(WEEK, response, context={"now": "2026-03-01"}).passed
    # The `now` argument wins over the context's.
    assert only(WEEK, response, context={"now": "2026-03-01"}, now=NOW).passed


def test_now_defaults_to_the_clock() -> None:
    today = datetime.now(UTC)
    fresh = created((today - timedelta(days=1)).isoformat())
    old = created((today - timedelta(days=30)).isoformat())
    assert only(WEEK, fresh).passed
    assert not only(WEEK, old).passed


def test_fractional_and_zero_days() -> None:
    half = {"dates_within_days": {"path": PATH, "days": 0.5}}
    assert only(half, created("2026-01-14T12:00:00Z"), now=NOW).passed
    assert not only(half, created("2026-01-14T11:59:00Z"), now=NOW).passed
    zero = {"dates_within_days": {"path": PATH, "days": 0}}
    assert only(zero, created(NOW), now=NOW).passed
    assert not only(zero, created("2026-01-15T00:00:01Z"), now=NOW).passed


def test_within_days_parameters() -> None:
    assert problems({"dates_within_days": {"path": PATH, "days": -1}}) == [
        ("expect.dates_within_days.days", "days must be >= 0, got -1")
    ]
    for bad in ("7", True, None):
        assert problems({"dates_within_days": {"path": PATH, "days": bad}}) == [
            (
                "expect.dates_within_days.days",
                f'input should be a number, got {bad!r} (e.g. {{path: "results[*].created", '
                "days: 7})",
            )
        ]


# --- all_dates_in_year ----------------------------------------------------------------------

IN_2026 = {"all_dates_in_year": {"path": PATH, "year": 2026}}


@pytest.mark.parametrize(
    ("value", "inside"),
    [
        ("2026-01-01T00:00:00Z", True),
        ("2026-12-31T23:59:59Z", True),
        ("2026-06-01", True),
        ("2025-12-31T23:00:00-05:00", True),  # 2026-01-01T04:00Z
        ("2026-01-01T01:00:00+02:00", False),  # 2025-12-31T23:00Z
        ("2026-12-31T22:00:00-03:00", False),  # 2027-01-01T01:00Z
        ("2027-01-01", False),
    ],
)
def test_year_is_compared_in_utc(value: str, inside: bool) -> None:
    result = only(IN_2026, created(value))
    assert result.outcome is (Outcome.PASSED if inside else Outcome.FAILED), result


def test_year_message() -> None:
    result = only(IN_2026, created("2026-03-01", "2026-01-01T01:00:00+02:00"))
    assert result.message == "Date 2026-01-01T01:00:00+02:00 is in 2025 (UTC), not 2026"
    assert result.path == "results[1].metadata.created"
    assert result.expected == 2026


def test_year_parameters() -> None:
    for bad in ("2026", True, 2026.0):
        [(location, message)] = problems({"all_dates_in_year": {"path": PATH, "year": bad}})
        assert location == "expect.all_dates_in_year.year"
        assert message.startswith(f"input should be a valid integer, got {bad!r}")


# --- wildcard rules -------------------------------------------------------------------------

DATE_EXPECTS = [JANUARY, WEEK, IN_2026]


@pytest.mark.parametrize("expect", DATE_EXPECTS, ids=lambda e: next(iter(e)))
def test_wildcard_rules(expect: dict[str, Any]) -> None:
    vacuous = only(expect, {"results": []}, now=NOW)
    assert vacuous.outcome is Outcome.PASSED
    assert vacuous.details == {"vacuous": True}
    missing = only(expect, {"status": "ok"}, now=NOW)
    assert missing.message == "Missing field: results[*].metadata.created (results is missing)"
    lacking = only(expect, {"results": [{"metadata": {"created": NOW}}, {"metadata": {}}]}, now=NOW)
    assert lacking.message == (
        "Missing field: results[*].metadata.created (results[1].metadata.created is missing)"
    )
    assert only(expect, "no json", now=NOW).message == "response is not JSON"


def test_single_date_path() -> None:
    expect = {
        "all_dates_between": {"path": "generated_at", "start": "2026-01-01", "end": "2026-01-31"}
    }
    assert only(expect, {"generated_at": "2026-01-02T03:04:05Z"}).passed
    assert only(expect, {"generated_at": "2026-03-01"}).message == (
        "Date 2026-03-01 is outside range 2026-01-01 to 2026-01-31"
    )
