"""Recorded traces: OTLP JSON beside a recorded output, in a file, or a directory of them.

A dataset line (or a fixture) may carry ``trace:``: the OTLP JSON document as an exporter
writes it (``{"resourceSpans": [...]}``), or the path of such a file inside the project. A
file holds one document, or one document per line (the OTLP file exporter's JSON lines). A
directory named as a suite's ``dataset`` is a dataset of traces: each trace (per file, per
trace id) is one test, judged with its spans and, as its output, its root span's output.

Decoded once, when the line or file is loaded: the spans become the step's recorded
`SpanSet`, judged by span assertions and ``source: trace`` as a live call's are.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .._json import loads
from .._spans import Span, SpanSet

__all__ = ["MAX_TRACE_BYTES", "read_trace_file", "recorded_trace", "root_output", "trace_files"]

# A trace file is read whole: the limit of a recorded response (64 MiB).
MAX_TRACE_BYTES: Final = 64 * 1024 * 1024
# The attributes a root span's output is read from, in order (OpenInference, GenAI).
_OUTPUT_KEYS: Final = ("output.value", "gen_ai.output.messages", "gen_ai.completion")


def read_trace_file(path: Path) -> list[Span]:
    """The spans of an OTLP JSON file: one document, or one document per line.

    Raises:
        ValueError: Not OTLP JSON (the message says where), or too big.
        OSError: The file cannot be read.
    """
    from ..traces import read_otlp_json

    if path.stat().st_size > MAX_TRACE_BYTES:
        raise ValueError(f"the file is over {MAX_TRACE_BYTES // 2**20} MiB")
    text = path.read_bytes()
    try:
        documents = [loads(text)]
    except ValueError:
        documents = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    documents.append(loads(line))
                except ValueError as error:
                    raise ValueError(f"line {number} is not JSON: {error}") from None
    spans: list[Span] = []
    for document in documents:
        spans += read_otlp_json(document)
    return spans


def recorded_trace(value: Any, base: Path, project: Path | None) -> SpanSet | str:
    """A line's ``trace:`` as spans, or what is wrong with it.

    Args:
        value: An OTLP JSON document, or the path of a file of them (relative to ``base``).
        base: The directory of the file that names it.
        project: The project directory a path must stay inside (None: ``base``).
    """
    from ..traces import OtlpError, group_by_trace, read_otlp_json
    from ._datasets import inside_project

    if isinstance(value, SpanSet):  # decoded already (a directory dataset's trace)
        return value
    try:
        if isinstance(value, str):
            path, reason = inside_project(value, base, project or base)
            if path is None:
                return f"trace: {reason}"
            spans = read_trace_file(path)
        elif isinstance(value, dict):
            spans = read_otlp_json(value)
        else:
            return (
                f"trace: expected an OTLP JSON object {{resourceSpans: [...]}} or the path of "
                f"an OTLP JSON file, got {type(value).__name__}"
            )
    except (OtlpError, ValueError) as error:
        return f"trace: {error}"
    except OSError as error:
        return f"trace: cannot read {value!r}: {error.strerror}"
    if not spans:
        return "trace: it holds no spans"
    traces = group_by_trace(spans)
    if len(traces) > 1:
        # One recorded call is one trace: judging several as one would merge other calls'
        # tool calls and counts into this one (a guess that could pass). A file of many
        # traces is a dataset directory's (each trace a test).
        ids = ", ".join(list(traces)[:3]) + (", ..." if len(traces) > 3 else "")
        return (
            f"trace: it holds {len(traces)} traces ({ids}); a recorded call has one "
            "(a file of several traces can be a dataset directory's, each trace a test)"
        )
    return SpanSet(spans, spans[0].trace_id)


def root_output(spans: SpanSet) -> str:
    """What a recorded trace's root span says the agent answered ("" when it says nothing)."""
    for span in spans.roots():
        for key in _OUTPUT_KEYS:
            value = span.attributes.get(key)
            if isinstance(value, str):
                return _message_text(value) if key == "gen_ai.output.messages" else value
    return ""


def _message_text(value: str) -> str:
    """The text of GenAI output messages (``[{role, parts: [{type: text, content}]}]``).

    The convention records the messages as JSON: the agent's answer is their text parts, not
    the JSON around them. Anything else is returned as written.
    """
    try:
        messages = loads(value)
    except ValueError:
        return value
    if not isinstance(messages, list):
        return value
    texts = [
        part["content"]
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("parts"), list)
        for part in message["parts"]
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("content"), str)
    ]
    return "\n".join(texts) if texts else value


def trace_files(directory: Path) -> Iterator[Path]:
    """The OTLP JSON files of a directory dataset, in name order (``*.json``, ``*.jsonl``)."""
    return iter(
        sorted(
            path
            for path in directory.iterdir()
            if path.is_file() and path.suffix in (".json", ".jsonl")
        )
    )
