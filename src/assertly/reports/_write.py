"""Write a run to a file in the format its extension names."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..runner import RunRecord
from ._json import write_json
from ._junit import render_junit

__all__ = ["FORMATS", "replace_file", "write_report"]

FORMATS = (".json", ".xml", ".md", ".html")
# Agent output may hold lone surrogates (valid JSON escapes that no encoding can write): they
# are written as \udXXX text.
_SURROGATES = "backslashreplace"


def write_report(run: RunRecord, path: str | Path, redact: set[str] | None = None) -> None:
    """Write ``run`` to ``path``: ``.json``, ``.xml`` (JUnit), ``.md`` or ``.html``.

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
    if suffix == ".xml":
        data = render_junit(run)
    elif suffix == ".md":
        from ._markdown import render_markdown

        data = render_markdown(run).encode("utf-8", _SURROGATES)
    elif suffix == ".html":
        from ._html import render_html

        data = render_html(run).encode("utf-8", _SURROGATES)
    else:
        raise ValueError(f"unknown report format {suffix!r}: use .json, .xml, .md or .html")
    for secret in redact or ():
        data = data.replace(secret.encode(), b"[REDACTED]")
    _replace(target, lambda handle: handle.write(data))


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
