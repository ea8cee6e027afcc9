"""Write a run to a file in the format its extension names."""

from __future__ import annotations

from pathlib import Path

from ..runner import RunRecord
from ._json import write_json
from ._junit import render_junit

__all__ = ["FORMATS", "write_report"]

FORMATS = (".json", ".xml", ".md", ".html")
# Agent output may hold lone surrogates (valid JSON escapes that no encoding can write): they
# are written as \udXXX text.
_SURROGATES = "backslashreplace"


def write_report(run: RunRecord, path: str | Path, redact: set[str] | None = None) -> None:
    """Write ``run`` to ``path``: ``.json``, ``.xml`` (JUnit), ``.md`` or ``.html``.

    Raises:
        ValueError: The extension names no known format.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".json":  # streamed: a run of any size
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as handle:
            write_json(run, handle, redact)
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
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
