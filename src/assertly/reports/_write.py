"""Write a run to a file in the format its extension names."""

from __future__ import annotations

import contextlib
import html
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .._records import RunRecord
from .._secrets import redact_text
from ._json import write_json

__all__ = [
    "FORMATS",
    "replace_file",
    "write_report",
]

FORMATS = (".json", ".xml", ".md", ".html", ".csv", ".jsonl")
# Agent output may hold lone surrogates (valid JSON escapes that no encoding can write): they
# are written as \udXXX text.
_SURROGATES = "backslashreplace"


def write_report(run: RunRecord, path: str | Path, redact: set[str] | None = None) -> None:
    """Write ``run`` to ``path``: ``.json .xml`` (JUnit) ``.md .html .csv .jsonl``.

    The report is written to a temporary file beside ``path``, flushed to disk, then renamed
    over it: a crash or a full disk leaves the previous report whole, never a truncated one.

    Raises:
        ValueError: The extension names no known format.
        OSError: The report could not be written (the previous one is untouched).
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".json":  # streamed: a run of any size
        _replace(target, lambda handle: write_json(run, handle, redact))
        return
    if suffix in (".csv", ".jsonl"):  # exports, streamed too
        from ._csv import write_csv
        from ._jsonl import write_jsonl

        export = write_csv if suffix == ".csv" else write_jsonl
        _replace(target, lambda handle: export(run, handle, redact))
        return
    if suffix == ".xml":
        from ._junit import render_junit

        text = render_junit(run).decode()
    elif suffix == ".md":
        from ._markdown import render_markdown

        text = render_markdown(run)
    elif suffix == ".html":
        from ._html import render_html

        text = render_html(run)
    else:
        raise ValueError(
            f"unknown report format {suffix!r}: use .json, .xml, .md, .html, .csv or .jsonl"
        )
    if redact:
        # Secrets in a run from the store are gone already; this run may not come from one.
        secrets = set(redact)
        if suffix in (".html", ".xml"):  # as the markup escapes them: &#34; &quot; &amp; …
            secrets |= {_markup_escaped(secret) for secret in redact}
            secrets |= {html.escape(secret) for secret in redact}
        text = redact_text(text, secrets)
    data = text.encode("utf-8", _SURROGATES)
    _replace(target, lambda handle: handle.write(data))


def _markup_escaped(text: str) -> str:
    """``text`` as Jinja (MarkupSafe) escapes it in the HTML report."""
    for char, entity in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&#34;"),
        ("'", "&#39;"),
    ):
        text = text.replace(char, entity)
    return text


def _default_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _default_file_mode()


def replace_file(target: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Write through ``write`` into a temporary file beside ``target``, then rename it over.

    A crash or a full disk leaves the previous file whole, never a truncated one.
    """
    _replace(Path(target), write)


def _replace(target: Path, write: Callable[[BinaryIO], object]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
    )
    try:
        with open(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(partial, _FILE_MODE)  # mkstemp's file is private; a report is not
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
