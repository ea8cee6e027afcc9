"""The ``assertly`` command line. Thin: parses arguments and calls the rooms below.

Exit codes: 0 everything passed; 1 something failed or errored; 2 usage or configuration error
(nothing was judged); 130 Ctrl-C and 143 SIGTERM during a run (every finished trial stored).
"""

from __future__ import annotations

import gc
from typing import Any

import click

from .. import __version__
from .._exceptions import AssertlyError
from .._secrets import safe_message
from .._terminal import terminal_safe
from ._check import check_command, schema_command
from ._compare import bless_command, diff_command
from ._merge import merge_command
from ._run import run_command, validate_command
from ._stored import recheck_command, report_command
from ._support import EXIT_USAGE
from ._view import view_command

_GC_THRESHOLD = 20_000


class _Main(click.Group):
    """The ``assertly`` group, which keeps tracebacks for ``--debug``.

    An unexpected exception (a bug in assertly, never a user's mistake) is one line on stderr
    and exit code 2; with ``--debug`` its traceback is shown instead.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except AssertlyError as error:  # e.g. a damaged store met while writing the reports
            click.echo(terminal_safe(safe_message(f"error: {error}")), err=True)
            ctx.exit(EXIT_USAGE)
        except Exception as error:
            if ctx.params.get("debug"):
                raise
            reason = safe_message(" ".join(str(error).split())[:500])
            click.echo(
                f"internal error: {type(error).__name__}: {terminal_safe(reason)} "
                "(run with --debug for the traceback)",
                err=True,
            )
            ctx.exit(EXIT_USAGE)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assertly")
@click.option(
    "--debug",
    is_flag=True,
    envvar="ASSERTLY_DEBUG",
    help="Show the traceback of an internal error.",
)
def main(debug: bool) -> None:
    """Exact, fast verdicts on AI agent and LLM responses."""
    # A command allocates records by the thousand, almost all freed by reference counting:
    # Python's default of a collection every 700 allocations spent ~5 % of a 5,000-test run
    # scanning objects that live until exit (the loaded tests). Cycles are still collected.
    # Only the command line does this; the library leaves its host's collector alone.
    gc.set_threshold(_GC_THRESHOLD, 20, 20)


for _command in (
    check_command,
    run_command,
    validate_command,
    report_command,
    recheck_command,
    schema_command,
    diff_command,
    bless_command,
    merge_command,
    view_command,
):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
