"""The command line's plumbing shared by its command modules.

Exit codes, usage errors, store and report options, and option values checked before a run.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click

from .._exceptions import AssertlyError, ConfigError, Problem
from .._frontend import check_report_paths, parse_facts, parse_now_option
from .._secrets import safe_message
from .._terminal import inert_json, terminal_safe

__all__ = [
    "EXIT_FAILED",
    "EXIT_PASSED",
    "EXIT_USAGE",
    "FiniteFloat",
    "check_outputs",
    "checked_shard",
    "default_store",
    "echo_json",
    "fact_options",
    "outputs_option",
    "parse_now",
    "print_problems",
    "report_paths",
    "store_option",
    "usage_errors",
    "write_or_fail",
    "write_reports",
]

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def print_problems(error: ConfigError) -> None:
    """Every problem of ``error``, one per line on stderr."""
    # One problem per line; each line inert (problems quote file contents).
    text = safe_message(f"error: {error}")  # no URL password, no value read from ${VAR}
    click.echo("\n".join(map(terminal_safe, text.split("\n"))), err=True)


store_option = click.option(
    "--store", "store_path", default=None, metavar="FILE", help="Run store (default from config)."
)


@contextmanager
def usage_errors() -> Iterator[None]:
    """Turn a user's mistake into a clear message and exit code 2 (never a traceback)."""
    try:
        yield
    except ConfigError as error:
        print_problems(error)
        sys.exit(EXIT_USAGE)
    except AssertlyError as error:
        click.echo(terminal_safe(safe_message(f"error: {error}")), err=True)
        sys.exit(EXIT_USAGE)


def default_store(*, must_exist: bool = True, config_path: str | None = None) -> str:
    """The run store the config names: ``config_path``'s, or the working directory's (or above)."""
    from pathlib import Path

    from ..loading import find_config, load_config

    del must_exist  # the store is opened (and checked) by whoever reads it
    config_file = Path(config_path) if config_path else find_config(Path.cwd())
    return load_config(config_file).store_path


def write_or_fail(output: str, write: Callable[[], Any]) -> None:
    """Run ``write``; a failure to write ``output`` is a usage error (exit code 2)."""
    try:
        write()
    except OSError as error:
        click.echo(f"error: cannot write {output}: {error.strerror or error}", err=True)
        sys.exit(EXIT_USAGE)


class ReportPath(str):
    """A ``-o`` path made absolute when the command starts; `shown` is the path as given.

    A ``py:`` agent runs in assertly's process and may change its working directory
    (``os.chdir``): the reports still go where the user asked, and say so as they were named.
    """

    shown: str


def report_paths(outputs: tuple[str, ...]) -> tuple[str, ...]:
    """Each ``-o`` path, absolute against the current working directory (`ReportPath`)."""
    import os

    resolved = []
    for output in outputs:
        path = ReportPath(os.path.abspath(output))
        path.shown = output
        resolved.append(path)
    return tuple(resolved)


def write_reports(
    record: Any,
    outputs: Sequence[str],
    exit_code: int | None = None,
    sinks: Sequence[Any] = (),
) -> None:
    """Write each ``-o`` report, then exit with the gates' ``exit_code``, if any.

    ``sinks``: the reports the run fed as it went (`ReportSink`, one per output, in order),
    which are finished rather than written whole. Without gates: exit 0 when the run passed
    and 1 otherwise.
    """
    for index, output in enumerate(outputs):
        try:
            if index < len(sinks):
                sinks[index].finish(record)
            else:
                from ..reports import write_report  # no -o: no writer imported

                write_report(record, output)
        except OSError as error:
            reason = error.strerror or str(error)
            click.echo(
                f"error: cannot write {getattr(output, 'shown', output)}: {reason} (the run is "
                f"stored: `assertly report {record.run_id} -o FILE` writes it again)",
                err=True,
            )
            sys.exit(EXIT_USAGE)
        click.echo(f"wrote {getattr(output, 'shown', output)}")
    if exit_code is None:
        exit_code = EXIT_PASSED if record.ok else EXIT_FAILED
    sys.exit(exit_code)


class FiniteFloat(click.FloatRange):
    """A FloatRange that also refuses nan and infinities.

    click's range lets nan through (every comparison with it is false); issue 29: numbers
    from the command line are bounded.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def checked_shard(value: str | None) -> str | None:
    """``--shard I/N`` as given, once it is known to be well formed (a usage error if not)."""
    if value is None:
        return None
    from ..runner._options import parse_shard

    try:
        parse_shard(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    return value.replace(" ", "")


def outputs_option(*, required: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-o/--output FILE``, repeatable: the report files a command writes."""
    return click.option(
        "-o",
        "--output",
        "outputs",
        multiple=True,
        required=required,
        metavar="FILE",
        help="Report file: .json .xml .md .html .csv .jsonl (repeatable).",
    )


def parse_now(now: str | None) -> datetime | None:
    """``--now`` as a time (None when not given); a usage error if it is not ISO 8601."""
    try:
        return parse_now_option(now)
    except ValueError as error:
        raise ConfigError([Problem("--now", str(error))], title="invalid --now") from None


def echo_json(data: Any) -> None:
    """``data`` as indented JSON on stdout, inert on a terminal."""
    from .._json import to_json_bytes

    sys.stdout.write(inert_json(to_json_bytes(data, indent=True)).decode() + "\n")


def fact_options(values: tuple[str, ...]) -> dict[str, bool]:
    """``--fact NAME=BOOL`` options as a mapping; a usage error if one is malformed."""
    try:
        return parse_facts(values)
    except ValueError as error:
        raise ConfigError([Problem("--fact", str(error))]) from None


def check_outputs(outputs: tuple[str, ...]) -> tuple[str, ...]:
    """The ``-o`` paths, absolute (`report_paths`); a usage error if a format is unknown."""
    try:
        check_report_paths(outputs)
    except ValueError as error:
        raise ConfigError([Problem("-o", str(error))]) from None
    return report_paths(outputs)  # absolute now: an agent may change the directory
