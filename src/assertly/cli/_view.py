"""``assertly view``: browse the run store in a local web viewer, or export it as files."""

from __future__ import annotations

import sys

import click

from .._terminal import terminal_safe
from ._support import EXIT_PASSED, EXIT_USAGE, default_store, store_option, usage_errors

__all__ = ["view_command"]


@click.command("view")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@click.option(
    "--export",
    "export_dir",
    metavar="DIR",
    default=None,
    help="Write the pages and JSON as static files to DIR (of RUN..., or of every run) "
    "instead of serving them.",
)
def view_command(
    runs: tuple[str, ...],
    store_path: str | None,
    host: str,
    port: int,
    no_open: bool,
    export_dir: str | None,
) -> None:
    """Browse the runs in a read-only web viewer on this machine (until Ctrl-C).

    With --export DIR, write the same pages and JSON as files for any static file server
    (a CI artifact): RUN... (ids, last, last~N, blessed) or every run.
    """
    from ..store import RunQueries
    from ..viewer import Site

    with usage_errors():
        store = store_path or default_store()
        queries = RunQueries(store)
    if export_dir is not None:
        from ..viewer import export_site

        with usage_errors():
            try:
                written = export_site(Site(queries, background=False), export_dir, runs, store)
            except OSError as error:
                click.echo(f"error: cannot write {export_dir}: {error.strerror or error}", err=True)
                sys.exit(EXIT_USAGE)
        click.echo(f"wrote {len(written)} files to {terminal_safe(export_dir)} (open index.html)")
        sys.exit(EXIT_PASSED)
    if runs:
        click.echo("error: RUN... is for --export; the viewer shows every run", err=True)
        sys.exit(EXIT_USAGE)
    from ..viewer import serve
    from ..viewer._app import is_loopback

    if not is_loopback(host):
        click.echo(
            f"warning: listening on {terminal_safe(host)}: anyone who can reach it on that "
            "network can read every run (inputs, outputs, secrets the agent echoed)",
            err=True,
        )

    def ready(url: str) -> None:
        click.echo(f"assertly view: {url} (read-only; Ctrl-C stops)")
        if not no_open:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(Site(queries), host=host, port=port, store_label=store, ready=ready)
    except OSError as error:
        click.echo(f"error: cannot listen on {terminal_safe(host)}:{port}: {error}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        pass
    click.echo("assertly view: stopped")
    sys.exit(EXIT_PASSED)
