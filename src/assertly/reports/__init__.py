"""Rendering verdicts for people and machines: console, JSON, JUnit XML, Markdown, HTML.

Run reports read the run records of `assertly._records` and never import the runner
(tests/reports/test_reports_layering.py); the one-check text rendering needs only the engine,
so names are imported on first use and ``assertly check`` loads only the check renderer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attributes

if TYPE_CHECKING:
    from ._check_text import render_check
    from ._console import ConsoleReporter
    from ._json import render_json
    from ._junit import render_junit
    from ._streamed import ReportSink
    from ._write import write_report

__all__ = [
    "ConsoleReporter",
    "ReportSink",
    "render_check",
    "render_json",
    "render_junit",
    "write_report",
]

_HOMES = {
    "ConsoleReporter": "._console",
    "ReportSink": "._streamed",
    "render_check": "._check_text",
    "render_json": "._json",
    "render_junit": "._junit",
    "write_report": "._write",
}

__getattr__ = attributes(__name__, _HOMES)
