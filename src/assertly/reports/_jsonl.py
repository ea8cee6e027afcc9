"""The JSON Lines export: one JSON object per test, one test per line.

Each line is the test's entry of the JSON report's ``tests`` array, the same value (nesting
capped as there, secrets redacted, controls a terminal obeys escaped), so a tool reads one
test at a time (``jq -c``, DuckDB's ``read_json``, a data frame) without parsing the whole
report. Written line by line: a stored run of a million tests never sits in memory.
"""

from __future__ import annotations

from typing import BinaryIO

from .._json import report_json_bytes
from .._records import RunRecord, TestRecord
from .._secrets import redact_text
from .._terminal import inert_json

__all__ = ["jsonl_line", "write_jsonl"]

# How deep the JSON report's test entries sit (the document, its ``tests`` array): each line
# is capped as that entry is, so both hold the same value.
_ENTRY_LEVEL = 2


def jsonl_line(test: TestRecord, secrets: frozenset[str] = frozenset()) -> bytes:
    """One test's line of ``run -o report.jsonl`` (with its line break)."""
    line = report_json_bytes(test.to_dict(), level=_ENTRY_LEVEL)
    if secrets:
        line = redact_text(line.decode(), secrets).encode()
    return inert_json(line) + b"\n"


def write_jsonl(run: RunRecord, handle: BinaryIO, redact: set[str] | None = None) -> None:
    """Write ``run -o report.jsonl`` to ``handle``: each test's report entry on its own line."""
    secrets = frozenset(secret for secret in redact or () if secret)
    for test in run.tests:
        handle.write(jsonl_line(test, secrets))
