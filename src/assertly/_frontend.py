"""What the two front ends (the ``assertly`` command line and the pytest plugin) both read.

``--fact``, ``--now``, ``--target`` and report file names mean the same in both; each front end
turns the `ValueError` these raise into its own kind of usage error (``ConfigError`` for the
command line, ``pytest.UsageError`` for the plugin), with the same message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime

from .engine._context import parse_now

__all__ = [
    "REPORT_SUFFIXES",
    "check_report_paths",
    "check_target",
    "parse_targets",
    "fact_value",
    "now_iso",
    "parse_facts",
    "parse_now_option",
]

REPORT_SUFFIXES = (".json", ".xml", ".md", ".html", ".csv", ".jsonl")

_TRUE = ("true", "1", "yes")
_BOOLEANS = (*_TRUE, "false", "0", "no")


def parse_facts(values: Iterable[str]) -> dict[str, bool]:
    """``NAME=true|false`` items (also 1/0, yes/no) as a mapping; the last one of a name wins.

    Raises:
        ValueError: An item is not ``NAME=BOOL``.
    """
    facts: dict[str, bool] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name or value.lower() not in _BOOLEANS:
            raise ValueError(f"expected NAME=true|false, got {item!r}")
        facts[name] = value.lower() in _TRUE
    return facts


def fact_value(
    name: str, given: Mapping[str, bool], declared: Callable[[], Mapping[str, bool]]
) -> bool | None:
    """A ``skip_if`` fact: the command line's first, then the environment, then the config.

    ``skip_if: CI`` with ``CI=true`` in the environment holds. ``declared`` returns the
    config's facts; it is called only when neither of the others has the fact (reading the
    config may fail). None when nothing declares the fact.
    """
    if name in given:
        return given[name]
    value = os.environ.get(name)
    if value is not None:
        return value.strip().lower() in ("1", "true", "yes", "on")
    return declared().get(name)


def parse_now_option(text: str | None) -> datetime | None:
    """``--now``: an ISO 8601 time (None when not given).

    Raises:
        ValueError: The text is not an ISO 8601 time.
    """
    if text is None:
        return None
    try:
        return parse_now(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time such as 2026-01-31T12:00:00Z") from None


def check_report_paths(paths: Iterable[str]) -> list[str]:
    """Report file names, whose extension picks the format.

    Raises:
        ValueError: A name ends in none of `REPORT_SUFFIXES`.
    """
    chosen = list(paths)
    for path in chosen:
        if not path.lower().endswith(REPORT_SUFFIXES):
            raise ValueError(
                f"{path!r}: the extension picks the format: " + ", ".join(REPORT_SUFFIXES)
            )
    return chosen


def check_target(target: str | None) -> str | None:
    """``--target``: a target spec, or None.

    Raises:
        ValueError: The spec names no kind of target (`assertly.targets.parse_spec`).
    """
    if target is not None:
        from ._exceptions import TargetError
        from .targets import parse_spec  # only when given: the targets import asyncio

        try:
            parse_spec(target)
        except TargetError as error:
            raise ValueError(str(error)) from None
    return target


# What starts a target spec (`targets.parse_spec`): text before an `=` that starts so is part
# of a spec (`cmd:run --x=1`, `http://h/?a=1`), never a label.
_SPEC_START = re.compile(r"^(cmd|py|fixtures|https?):", re.IGNORECASE)
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # loading's TARGET_LABEL_PATTERN


def parse_targets(values: Iterable[str]) -> tuple[str | None, dict[str, str]]:
    """``--target`` given any number of times: ``(bare SPEC or None, {LABEL: SPEC})``.

    One bare SPEC replaces every agent's target (a run of one target); ``LABEL=SPEC`` items
    make a matrix run, each label a column, in the order given (the first is the base).

    Raises:
        ValueError: Several bare SPECs, bare and labelled ones mixed, a label given twice,
            or a label that is not a plain name (``::``, spaces, brackets).
    """
    bare: list[str] = []
    labelled: dict[str, str] = {}
    for value in values:
        name, sep, spec = value.partition("=")
        if not sep or _SPEC_START.match(value) or any(c in name for c in " /\\"):
            bare.append(value)
            continue
        if not _LABEL.match(name):
            raise ValueError(
                f"--target {value}: {name!r} is not a target label: a label is a letter or "
                "digit, then letters, digits, '_', '.' or '-' (at most 64; no '::', spaces "
                "or brackets), as in --target base=cmd:python agent.py"
            )
        if name in labelled:
            raise ValueError(f"--target {value}: the label {name!r} is given twice")
        if not spec.strip():
            raise ValueError(f"--target {value}: give the SPEC after '{name}='")
        labelled[name] = spec
    if bare and labelled:
        raise ValueError(
            f"--target {bare[0]} has no label beside labelled targets: give every target of a "
            "matrix run a label (--target LABEL=SPEC)"
        )
    if len(bare) > 1:
        raise ValueError(
            "--target is given several times without labels: label each "
            f"(--target base={bare[0]} --target cand={bare[1]}) to run them side by side"
        )
    return (bare[0] if bare else None), labelled


def now_iso() -> str:
    """The current UTC time as stored with a run (``2026-01-31T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
