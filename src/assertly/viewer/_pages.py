"""The viewer's pages, rendered by Jinja2 with autoescaping on.

No value is ever marked safe: agent output, test names and messages are text in the page, never
markup. The pages carry no inline script or style (the CSP forbids both); one small script
(``static/viewer.js``) refreshes a run still being written and filters exported pages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any
from urllib.parse import quote, urlencode

import jinja2

from .. import __version__
from .._records import TestRecord
from .._terminal import inert_text
from ..reports._analysis import (
    NONE,
    format_cost,
    format_metrics,
    format_ms,
    format_rate,
    label,
    test_detail,
    test_errors,
    test_failures,
    where,
)
from ..reports._waterfall import waterfalls
from ..store import DEFAULT_LIMIT, FILTER_STATUSES, PENDING, Filters, MatrixPage, TestPage
from ._chat import CHECK_SYMBOLS, conversation_view
from ._values import folded

__all__ = ["CSP", "Links", "cell_anchor", "matrix_context", "render"]

# Sent as a header by the server and repeated in each page (exported pages have no server).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
# A <meta> CSP cannot say frame-ancestors (browsers ignore it there, with a console warning).
CSP_META = CSP.replace("; frame-ancestors 'none'", "")


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("assertly.viewer", "templates"),
        autoescape=True,  # every value is escaped; the templates mark nothing safe
        # Controls and bidirectional overrides shown as escapes, never obeyed (Markup is not a
        # plain str: what the template built is left alone).
        finalize=lambda value: inert_text(value) if type(value) is str else value,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(ms=format_ms, rate=format_rate)
    return env


def render(template: str, links: Links, **context: Any) -> str:
    """One page: ``template`` with ``context``, links made by ``links``."""
    return (
        _environment()
        .get_template(template)
        .render(version=__version__, csp=CSP_META, links=links, statuses=FILTER_STATUSES, **context)
    )


@dataclass(frozen=True)
class Links:
    """Where pages link to: the server's routes, or an export's files.

    An export's links are relative, from the directory every exported page is in.
    """

    static: bool = False

    def asset(self, name: str) -> str:
        """The stylesheet or the script."""
        return f"static/{name}" if self.static else f"/static/{name}"

    def runs(self, offset: int = 0) -> str:
        """The runs list."""
        if self.static:
            return "index.html"
        return "/" + (f"?offset={offset}" if offset else "")

    def run(self, run_id: str, params: Mapping[str, Any] | None = None) -> str:
        """A run's page, with filters and paging as URL parameters."""
        query = urlencode({k: v for k, v in (params or {}).items() if v not in ("", None, 0)})
        if self.static:
            page = int((params or {}).get("offset", 0)) // STATIC_PAGE + 1
            name = f"run-{file_name(run_id)}{'' if page == 1 else f'-p{page}'}.html"
            kept = {k: v for k, v in (params or {}).items() if k not in ("offset", "limit")}
            query = urlencode({k: v for k, v in kept.items() if v})
            return name + (f"?{query}" if query else "")
        return f"/runs/{quote(run_id, safe='')}" + (f"?{query}" if query else "")

    def compare(self, base: str, candidate: str) -> str:
        """The comparison of two runs."""
        if self.static:
            return f"compare-{file_name(base)}-{file_name(candidate)}.html"
        return "/compare?" + urlencode({"base": base, "candidate": candidate})

    def api_run(self, run_id: str) -> str:
        """The run as JSON."""
        if self.static:
            return f"api/runs/{file_name(run_id)}.json"
        return f"/api/runs/{quote(run_id, safe='')}"


STATIC_PAGE = 500  # tests per exported page


def file_name(run_id: str) -> str:
    """A run id as part of a file name (ids are ``[A-Za-z0-9._~-]``; ``~`` is kept out)."""
    return run_id.replace("~", "_")


# -- tests ---------------------------------------------------------------------------------


def test_view(test: TestRecord, pending: bool = False) -> dict[str, Any]:
    """Everything a run page shows of one test, as text to escape.

    A ``pending`` test (no trial yet in a run still being written) shows its input only. A
    conversation test (``chat``) shows each trial's transcript instead of inputs and outputs;
    its failures link to their turns.
    """
    if pending:
        test = replace(test, trials=[])
    detail = test_detail(test)
    inputs = [(step, folded(value)) for step, value in test.step_inputs()]
    chat = conversation_view(test, cell_anchor(test.key)) if test.conversation else None
    links = {} if chat is None else chat["step_links"]
    return {
        "test": test,
        "status": PENDING if pending else test.status,
        "label": label(test),
        "where": where(test),
        "errors": test_errors(test),
        "failures": [
            {
                "assertion": f.assertion,
                "outcome": f.outcome,
                "message": f.message,
                "step": f.step if f.step and f.step != test.id else None,
                "href": links.get((f.trials[0], f.step)) if f.trials else None,
                "path": f.path,
                "expected": folded(f.expected) if f.has_expected else None,
                "actual": folded(f.actual) if f.has_actual else None,
                "trials": f.trials,
            }
            for f in test_failures(test)
        ],
        "inputs": inputs,
        "outputs": [
            {
                "step": view.step,
                "trials": view.trials,
                "truncated": view.truncated,
                "value": folded(view.output),
            }
            for view in detail.outputs
        ],
        "more_outputs": detail.more_outputs,
        "trials": [
            {
                "trial": number,
                "status": status,
                "latency": format_ms(metrics["latency_ms"]),
                "cost": format_cost(metrics["cost_usd"]),
                "model": metrics["model"] or NONE,
                "metrics": format_metrics(metrics),
            }
            for number, status, metrics in detail.trials
        ],
        "assertions": [
            {
                "assertion": row.assertion,
                "step": row.step,
                "outcome": row.outcome,
                "outcomes": row.outcomes,
                "score": NONE if row.score is None else f"{row.score:.3g}",
                "message": row.message,
            }
            for row in detail.assertions
        ],
        "multi_trial": len(test.trials) > 1,
        "search": " ".join([test.key, test.name, test.id, test.file]).lower(),
        "pending": pending,
        # A matrix run's cell: the id its matrix cell links to, and its row.
        "anchor": None if test.target is None else cell_anchor(test.key),
        "row": None if test.target is None else cell_anchor(test.base_key),
        # The test's id in the page: a matrix cell's, a conversation's (its turns' links).
        "id": cell_anchor(test.key) if test.target is not None or chat is not None else None,
        "chat": chat,
        "waterfalls": waterfalls(test),
    }


def cell_anchor(key: str) -> str:
    """The HTML id of a test (a matrix cell) or a row, from its key.

    Letters and digits only, whatever the key holds; the same on every page that shows it.
    """
    return "t-" + hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# What a matrix cell shows of a verdict (the console's and Markdown's symbols).
SYMBOLS = {**CHECK_SYMBOLS, PENDING: "…"}


def matrix_context(
    page: MatrixPage, by_target: dict[str, Any] | None, matrix: dict[str, Any] | None
) -> dict[str, Any]:
    """What ``run.html.j2`` shows of a matrix run: per-target totals and the page's rows.

    Args:
        page: The page of rows.
        by_target: Each target's totals (None while a big run is counted).
        matrix: The run's matrix totals (``disagree``: rows whose verdicts differ).
    """
    rows = []
    for row in page.rows:
        first = next(iter(row.cells.values()))
        cells = []
        for target in page.targets:
            test = row.cells.get(target)
            if test is None:
                cells.append({"target": target, "status": "missing", "symbol": "·", "href": None})
                continue
            status = PENDING if test.key in page.pending else test.status
            href = "#" + cell_anchor(test.key)
            cells.append(
                {"target": target, "status": status, "symbol": SYMBOLS[status], "href": href}
            )
        rows.append(
            {
                "key": row.key,
                "anchor": cell_anchor(row.key),
                "suite": first.suite,
                "label": label(first),
                "where": where(first),
                "conversation": first.conversation,
                "disagree": row.disagree,
                "cells": cells,
            }
        )
    return {
        "targets": page.targets,
        "by_target": None
        if by_target is None
        else [{"target": target, "s": by_target[target]} for target in page.targets],
        "disagree": None if matrix is None else matrix["disagree"],
        "rows": rows,
    }


def run_context(
    info: dict[str, Any],
    summary: dict[str, Any] | None,
    page: TestPage,
    filters: Filters,
    links: Links,
    previous: str | None,
) -> dict[str, Any]:
    """What ``run.html.j2`` needs."""
    params: dict[str, Any] = dict(filters.params())
    if page.limit != DEFAULT_LIMIT:
        params["limit"] = page.limit
    pages: dict[str, str | None] = {"prev": None, "next": None}
    if page.offset > 0:
        pages["prev"] = links.run(
            info["run_id"], {**params, "offset": max(0, page.offset - page.limit)}
        )
    if page.next_offset is not None:
        pages["next"] = links.run(info["run_id"], {**params, "offset": page.next_offset})
    return {
        "info": info,
        "s": summary,
        "page": page,
        "filters": filters,
        "tests": [test_view(test, test.key in page.pending) for test in page.tests],
        "pages": pages,
        "previous": previous,
        "live": info["finished_at"] is None or summary is None,
        "suites": sorted({test.suite for test in page.tests}),
        "matrix": None,
    }


def sparkline(rates: list[float | None], width: int = 560, height: int = 64) -> dict[str, Any]:
    """Pass rates (oldest first) as SVG points: a line, and a dot per run."""
    pad = 6
    known = [(i, rate) for i, rate in enumerate(rates) if rate is not None]
    step = (width - 2 * pad) / max(1, len(rates) - 1)
    points = [
        (round(pad + i * step, 1), round(pad + (1 - rate) * (height - 2 * pad), 1))
        for i, rate in known
    ]
    return {
        "width": width,
        "height": height,
        "line": " ".join(f"{x},{y}" for x, y in points),
        "dots": points,
        "rates": [rate for _, rate in known],
    }
