"""The JSON report: the shape pinned in the runner spec (other tools parse it).

Written test by test, so a run of a million tests never holds its report in memory; the bytes
are those of the whole document serialised at once with two-space indentation. Nesting is
capped at `REPORT_MAX_DEPTH` levels (deeper values as marked JSON text), so every common JSON
reader can read the report.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from .._digests import RecordsDigest
from .._json import loads, report_json_bytes, to_json_bytes
from .._records import RunRecord
from .._secrets import redact_text
from .._terminal import inert_json

__all__ = [
    "render_json",
    "report_entries_end",
    "report_entry",
    "report_head",
    "report_tail",
    "write_json",
]

_INDENT = b"  "


def _member(name: str, value: Any, depth: int) -> bytes:
    """``"name": value`` indented for ``depth`` as part of an object."""
    text = _indented(report_json_bytes(value, indent=True, level=depth), depth)
    return _INDENT * depth + to_json_bytes(name) + b": " + text


def _indented(text: bytes, depth: int) -> bytes:
    # Strings in JSON escape their newlines, so every newline here is between tokens.
    return text.replace(b"\n", b"\n" + _INDENT * depth)


def _array(items: Iterable[Any], depth: int) -> Iterator[bytes]:
    """A JSON array of ``items`` at ``depth``, one chunk per item."""
    first = True
    for item in items:
        yield _array_item(item, depth, first)
        first = False
    yield _array_end(depth, empty=first)


def _array_item(item: Any, depth: int, first: bool) -> bytes:
    prefix = b"[\n" if first else b",\n"
    text = report_json_bytes(item, indent=True, level=depth + 1)
    return prefix + _INDENT * (depth + 1) + _indented(text, depth + 1)


def _array_end(depth: int, *, empty: bool) -> bytes:
    return b"[]" if empty else b"\n" + _INDENT * depth + b"]"


def _digested(
    kind: str, items: Iterable[Any], digest: RecordsDigest | None, secrets: frozenset[str]
) -> Iterator[Any]:
    """``items`` as they are, each added to ``digest`` as a reader of the report will see it.

    That is, after JSON and the redaction of secrets: the merge recomputes the digest from the
    report it reads.
    """
    for item in items:
        if digest is not None:
            # As written: an entry sits two levels deep (the report, its array), and a value
            # nested past the report's cap is written as text (a shard with a 101-level output
            # failed its own records_digest in `assertly merge`).
            text = report_json_bytes(item, level=2)
            if secrets:
                text = redact_text(text.decode(), secrets).encode()
            digest.add(kind, loads(text))
        yield item


def _chunks(run: RunRecord, secrets: frozenset[str] = frozenset()) -> Iterator[bytes]:
    # A shard's report carries its plan and a digest of its records, for `assertly merge`.
    digest = RecordsDigest() if run.shard else None
    yield from report_head(run)
    tests = (test.to_dict() for test in run.tests)
    yield from _array(_digested("test", tests, digest, secrets), 1)
    yield from report_tail(run, digest, secrets)


def report_head(run: RunRecord) -> Iterator[bytes]:
    """The report up to its ``tests`` array: run_id, started_at, name, summary (and matrix)."""
    yield b"{\n"
    yield _member("run_id", run.run_id, 1) + b",\n"
    yield _member("started_at", run.started_at, 1) + b",\n"
    if run.name:  # --name
        yield _member("name", run.name, 1) + b",\n"
    summary = run.summary()
    if run.targets:  # a matrix run: each target's totals and each against the first
        from ..compare._matrix import matrix_view

        view = matrix_view(run)
        assert view is not None
        yield _member("targets", view.targets, 1) + b",\n"
        summary["by_target"] = view.by_target()
        yield _member("summary", summary, 1) + b",\n"
        yield _member("comparison", view.comparison(), 1) + b",\n"
    else:
        yield _member("summary", summary, 1) + b",\n"
    yield _INDENT + b'"tests": '


def report_entry(test: dict[str, Any], first: bool, digest: RecordsDigest | None) -> bytes:
    """One test's entry of the ``tests`` array, as `write_json` writes it (and digests it)."""
    for item in _digested("test", (test,), digest, frozenset()):
        return inert_json(_array_item(item, 1, first))
    raise AssertionError("unreachable")


def report_entries_end(*, empty: bool) -> bytes:
    """What closes the ``tests`` array after its entries."""
    return _array_end(1, empty=empty)


def report_tail(
    run: RunRecord, digest: RecordsDigest | None, secrets: frozenset[str] = frozenset()
) -> Iterator[bytes]:
    """The report after its ``tests`` array: evals, problems, warnings (and a shard's parts)."""
    yield b",\n" + _INDENT + b'"evals": '
    evals = (suite.to_dict() for suite in run.evals)
    yield from _array(_digested("eval", evals, digest, secrets), 1)
    yield b",\n" + _member("problems", run.problems, 1)
    yield b",\n" + _member("warnings", run.warnings, 1)
    if run.shard:  # which part of a sharded suite this run is, for `assertly merge`
        yield b",\n" + _member("shard", run.shard, 1)
        yield b",\n" + _member("plan", run.plan, 1)
    if digest is not None:
        yield b",\n" + _member("records_digest", digest.hexdigest(), 1)
    yield b"\n}\n"


def write_json(run: RunRecord, handle: BinaryIO, redact: set[str] | None = None) -> None:
    """Write ``run -o report.json`` to ``handle``: run_id, summary, tests, evals, problems.

    A matrix run's report also has ``targets`` (the labels, the base first),
    ``summary.by_target`` and ``comparison`` (each target against the first): see
    `assertly.compare._matrix`.
    """
    secrets = frozenset(secret for secret in redact or () if secret)
    for chunk in _chunks(run, secrets):
        # A secret lives inside one string, so inside one chunk.
        data = redact_text(chunk.decode(), secrets).encode() if secrets else chunk
        handle.write(inert_json(data))  # C1 controls, bidi overrides: escaped, same value


def render_json(run: RunRecord, redact: set[str] | None = None) -> bytes:
    """``run -o report.json`` as bytes."""
    buffer = io.BytesIO()
    write_json(run, buffer, redact)
    return buffer.getvalue()
