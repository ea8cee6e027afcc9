"""The plugin's ``--assertly-*`` options, and how each is read and checked."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import pytest

from .._frontend import check_report_paths, check_target, parse_facts, parse_now_option

__all__ = [
    "facts_option",
    "now_option",
    "pytest_addoption",
    "report_options",
    "target_option",
    "trials_option",
    "usage",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--assertly-*`` options."""
    group = parser.getgroup("assertly", "assertly: agent test files and workflow eval sections")
    group.addoption(
        "--assertly-target",
        metavar="SPEC",
        help="Answer every agent with this target: cmd:<command>, http(s)://…, "
        "py:module:function or fixtures:<file.jsonl> (default: agents: in the config).",
    )
    group.addoption(
        "--assertly-trials",
        type=int,
        metavar="K",
        help="Trials per test (default: the config's; a test's own trials: wins).",
    )
    group.addoption("--assertly-now", metavar="ISO", help="Reference time for date assertions.")
    group.addoption(
        "--assertly-fact",
        action="append",
        default=[],
        metavar="NAME=BOOL",
        help="Set a fact for skip_if (repeatable); overrides the config's facts.",
    )
    group.addoption(
        "--assertly-store",
        metavar="FILE",
        help="Write every trial to this run store; `assertly report RUN_ID --store FILE` "
        "renders the session afterwards.",
    )
    group.addoption(
        "--assertly-report",
        action="append",
        default=[],
        metavar="FILE",
        help="Write an assertly report at the end (repeatable): .json, .xml, .md, .html, .csv or "
        ".jsonl.",
    )
    group.addoption(
        "--assertly-config",
        metavar="FILE",
        help="The project config (default: assertly.yaml or [tool.assertly] in "
        "pyproject.toml, in the working directory or else the rootdir).",
    )


def usage(option: str, message: str) -> pytest.UsageError:
    """A usage error about ``option`` (pytest prints it and exits with code 4)."""
    return pytest.UsageError(f"{option}: {message}")


def facts_option(values: Iterable[str]) -> dict[str, bool]:
    """``--assertly-fact NAME=BOOL`` (repeatable)."""
    try:
        return parse_facts(values)
    except ValueError as error:
        raise usage("--assertly-fact", str(error)) from None


def target_option(target: str | None) -> str | None:
    """``--assertly-target SPEC``."""
    try:
        return check_target(target)
    except ValueError as error:
        raise usage("--assertly-target", str(error)) from None


def trials_option(trials: int | None) -> int | None:
    """``--assertly-trials K``: 1 to 10000."""
    if trials is not None and not 1 <= trials <= 10_000:
        raise usage("--assertly-trials", f"expected 1 to 10000, got {trials}")
    return trials


def now_option(text: str | None) -> datetime | None:
    """``--assertly-now ISO`` (an empty value means none)."""
    try:
        return parse_now_option(text or None)
    except ValueError as error:
        raise usage("--assertly-now", str(error)) from None


def report_options(reports: Iterable[str]) -> list[str]:
    """``--assertly-report FILE`` (repeatable): the extension picks the format."""
    try:
        return check_report_paths(reports)
    except ValueError as error:
        raise usage("--assertly-report", str(error)) from None
