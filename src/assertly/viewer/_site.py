"""What the viewer serves, as bytes: the JSON API and the pages, for the server and the export.

Each method takes the URL parameters as a plain mapping and returns the body; a bad parameter
raises `QueryError` (HTTP 400) and an unknown run `StoreError` (HTTP 404). Nothing here knows
about HTTP, so the static export writes exactly what the server sends.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._json import report_json_bytes
from .._records import TestRecord
from .._secrets import mask_url
from .._terminal import inert_json
from ..store import (
    PENDING,
    Filters,
    MatrixPage,
    MatrixRow,
    QueryError,
    RunQueries,
    check_params,
    page_bounds,
)
from ._pages import Links, matrix_context, render, run_context, sparkline
from ._queries import SummaryCache, by_target_of, summary_of

__all__ = ["Site", "run_identity"]

RUNS_PAGE = 50  # runs per page of the list
SHORT_COMMIT = 7  # a commit as GitHub and `git log --oneline` show it
PAGING = ("offset", "limit")
RUN_PARAMS = ("status", "suite", "tag", "q", "disagree", *PAGING)
DIFF_PARAMS = ("base", "candidate")


def _row_dict(row: MatrixRow, page: MatrixPage) -> dict[str, Any]:
    """A row of the ``matrix`` of ``GET /api/runs/{run_id}``: a test across the targets."""
    first = next(iter(row.cells.values()))
    return {
        "key": row.key,
        "id": first.id,
        "name": first.name,
        "suite": first.suite,
        "disagree": row.disagree,
        # Each target's cell (None where the run has none: a shard, a run cut short).
        "cells": {
            label: None
            if label not in row.cells
            else {
                "key": row.cells[label].key,
                "status": PENDING
                if row.cells[label].key in page.pending
                else row.cells[label].status,
            }
            for label in page.targets
        },
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def run_identity(info: dict[str, Any]) -> dict[str, Any]:
    """What tells a run apart (`RunQueries.run_info`'s, checked: the store is untrusted).

    ``name`` (None: unnamed), ``files`` (None: stored before runs kept them), ``targets``
    (the labels; empty for a run of one target), ``commit`` and ``commit_short``,
    ``branch``, ``dirty`` (None outside a git work tree) and ``host``.
    """
    files = info.get("files")
    made = info.get("provenance")
    made = made if isinstance(made, dict) else {}
    git = made.get("git")
    git = git if isinstance(git, dict) else {}
    commit = _text(git.get("commit"))
    dirty = git.get("dirty")
    return {
        "name": _text(info.get("name")),
        "files": [str(f) for f in files] if isinstance(files, list) else None,
        "targets": list(info.get("targets") or []),
        "commit": commit,
        "commit_short": commit[:SHORT_COMMIT] if commit else None,
        "branch": _text(git.get("branch")),
        "dirty": dirty if isinstance(dirty, bool) else None,
        "host": _text(made.get("host")),
    }


def _test_dict(test: TestRecord, pending: set[str]) -> dict[str, Any]:
    """A test as the JSON report gives it; one with no trial yet in a running run: pending."""
    if test.key not in pending:
        return test.to_dict()
    return {**replace(test, trials=[]).to_dict(), "status": PENDING}


class Site:
    """The viewer over one run store.

    Args:
        queries: The store's read-only queries.
        background: Count a big run's verdicts on a background thread (the server); False
            counts them while the caller waits (the export).
    """

    def __init__(self, queries: RunQueries, *, background: bool = True) -> None:
        self.queries = queries
        self.summaries = SummaryCache(queries, background=background)

    # -- JSON ------------------------------------------------------------------------------

    def runs_data(
        self, query: Mapping[str, str], only: frozenset[str] | None = None
    ) -> dict[str, Any]:
        """``GET /api/runs``: a page of runs, newest first, each with its summary.

        Args:
            query: ``offset`` and ``limit``.
            only: List only these runs (an export of some runs).
        """
        check_params(query, PAGING)
        offset, limit = page_bounds({"limit": str(RUNS_PAGE), **query})
        rows, total = self.queries.runs(offset, limit + 1)
        if only is not None:
            rows = [row for row in rows if row["run_id"] in only]
            total = len(rows)
        runs = []
        page = rows[:limit]
        previous = self.queries.previous_of([row["run_id"] for row in page])
        blessed = self.queries.blessed()
        for row in page:
            info = self.queries.run_info(row["run_id"])
            before = previous.get(row["run_id"])
            runs.append(
                {
                    "run_id": row["run_id"],
                    **run_identity(info),
                    "blessed": row["run_id"] == blessed,
                    "started_at": row["started_at"],
                    "finished_at": row["finished_at"],
                    "summary": summary_of(self.summaries.get(info), info["duration_ms"]),
                    "tests": info["tests"],
                    "duration_ms": info["duration_ms"],
                    # The run "vs previous" compares with: the one before of the same files
                    # and targets (`RunQueries.previous`); in an export of some runs, one of
                    # them (the export has no page of the others).
                    "previous": None if only is not None and before not in only else before,
                }
            )
        return {
            "runs": runs,
            "offset": offset,
            "limit": limit,
            "total": total,
            "next_offset": offset + limit if len(rows) > limit else None,
        }

    def runs_json(self, query: Mapping[str, str], only: frozenset[str] | None = None) -> bytes:
        """``GET /api/runs`` as JSON."""
        return inert_json(report_json_bytes(self.runs_data(query, only)))

    def _run(self, name: str, query: Mapping[str, str]) -> dict[str, Any]:
        check_params(query, RUN_PARAMS)
        run_id = self.queries.resolve(name)
        info = self.queries.run_info(run_id)
        filters = Filters.parse(dict(query))
        offset, limit = page_bounds(dict(query))
        running = info["finished_at"] is None
        if info["targets"]:
            rows = self.queries.matrix_page(
                run_id, info["threshold"], info["targets"], filters, offset, limit, running=running
            )
            counts = self.summaries.get(info)
            matrix = self.summaries.matrix(info)
            return {
                "info": info,
                "page": rows,
                "filters": filters,
                "counts": counts,
                "matrix": matrix,
            }
        if filters.disagree:
            raise QueryError(
                f"disagree: run {run_id} has one target, so nothing to compare; "
                "it filters a run of several targets (run --target A=SPEC --target B=SPEC)"
            )
        page = self.queries.page(
            run_id, info["threshold"], filters, offset, limit, total=info["tests"], running=running
        )
        counts = self.summaries.get(info)
        if (
            page.matched is None
            and counts is not None
            and not (filters.suite or filters.tag or filters.q)
        ):
            page.matched = sum(counts.get(status, 0) for status in filters.statuses)
        return {"info": info, "page": page, "filters": filters, "counts": counts, "matrix": None}

    def run_size(self, run_id: str) -> int:
        """What a run's pages count: its rows in a matrix run, else its tests."""
        info = self.queries.run_info(run_id)
        matrix = self.summaries.matrix(info) if info["targets"] else None
        if matrix is not None:
            return int(matrix["rows"])
        if info["targets"]:  # counted in the background: ask the store now
            return int(self.queries.matrix_counts(run_id, info["threshold"], False)["rows"])
        return int(info["tests"])

    def run_json(self, name: str, query: Mapping[str, str]) -> bytes:
        """``GET /api/runs/{run_id}``: the JSON report's shape, one page of its tests."""
        found = self._run(name, query)
        info, page = found["info"], found["page"]
        summary = summary_of(found["counts"], info["duration_ms"])
        data: dict[str, Any] = {
            "run_id": info["run_id"],
            "started_at": info["started_at"],
            "finished_at": info["finished_at"],
            "summary": summary,
            "tests": [_test_dict(test, page.pending) for test in page.tests],
            "evals": [suite.to_dict() for suite in info["evals"]],
            "problems": info["problems"],
            "warnings": info["warnings"],
            "page": page.to_dict(),
            "filters": found["filters"].params(),
        }
        if isinstance(page, MatrixPage):
            matrix = found["matrix"]
            data = {"run_id": data.pop("run_id"), "targets": info["targets"], **data}
            if summary is not None:
                summary["by_target"] = by_target_of(matrix, info["targets"])
            data["matrix"] = {
                "targets": page.targets,
                "disagree": None if matrix is None else matrix["disagree"],
                "rows": [_row_dict(row, page) for row in page.rows],
            }
        return inert_json(report_json_bytes(data))

    def progress_json(self, name: str, query: Mapping[str, str]) -> bytes:
        """``GET /api/runs/{run_id}/progress``: finished_at and trials saved so far."""
        check_params(query, ())
        return inert_json(report_json_bytes(self.queries.progress(self.queries.resolve(name))))

    def _diff(self, query: Mapping[str, str]) -> Any:
        from ..compare import compare_runs, open_side

        check_params(query, DIFF_PARAMS)
        base, candidate = (query.get("base", "").strip(), query.get("candidate", "").strip())
        if not base or not candidate:
            raise QueryError("name both runs: ?base=RUN&candidate=RUN (ids, last, last~N)")
        store = self.queries.store_path
        # Runs of the store only: a path here would let a URL read any file of the machine.
        sides = [open_side(self.queries.resolve(name), store) for name in (base, candidate)]
        return compare_runs(sides[0], sides[1])

    def diff_json(self, query: Mapping[str, str]) -> bytes:
        """``GET /api/diff?base=&candidate=``: ``assertly diff --format json``."""
        from ..reports._diff import write_diff_json

        buffer = io.BytesIO()
        write_diff_json(self._diff(query), buffer)
        return buffer.getvalue()

    # -- pages -----------------------------------------------------------------------------

    def runs_page(
        self,
        query: Mapping[str, str],
        links: Links,
        store_label: str,
        only: frozenset[str] | None = None,
    ) -> str:
        """``/``: the runs, newest first, with a pass-rate sparkline."""
        data = self.runs_data(query, only)
        rates = [run["summary"]["pass_rate"] if run["summary"] else None for run in data["runs"]]
        offset, limit = data["offset"], data["limit"]
        return render(
            "runs.html.j2",
            links,
            runs=data["runs"],
            total=data["total"],
            store=mask_url(store_label),
            spark=sparkline(rates[::-1]),
            live=any(run["summary"] is None or not run["finished_at"] for run in data["runs"]),
            prev_link=links.runs(max(0, offset - limit)) if offset else None,
            next_link=links.runs(data["next_offset"]) if data["next_offset"] else None,
        )

    def run_page(
        self,
        name: str,
        query: Mapping[str, str],
        links: Links,
        previous: str | None = None,
    ) -> str:
        """``/runs/{run_id}``: a page of the run's tests, filtered, each expandable.

        Args:
            name: The run.
            query: Filters and paging.
            links: Where links lead.
            previous: The run to compare with (an export's); default: the one before it.
        """
        found = self._run(name, query)
        info = found["info"]
        if previous is None and not links.static:
            previous = self.queries.previous(info["run_id"])
        context = run_context(
            info,
            summary_of(found["counts"], info["duration_ms"]),
            found["page"],
            found["filters"],
            links,
            previous,
        )
        context["who"] = {
            **run_identity(info),
            "blessed": info["run_id"] == self.queries.blessed(),
        }
        if isinstance(found["page"], MatrixPage):
            matrix = found["matrix"]
            context["matrix"] = matrix_context(
                found["page"], by_target_of(matrix, info["targets"]), matrix
            )
        return render("run.html.j2", links, **context)

    def compare_page(self, query: Mapping[str, str], links: Links, api: str) -> str:
        """``/compare?base=&candidate=``: what changed between two runs."""
        from ..reports._diff import comparison_view

        diff = self._diff(query)
        return render(
            "compare.html.j2",
            links,
            c=comparison_view(diff),
            candidate=diff.candidate.run_id,
            api=api,
        )

    @staticmethod
    def error_page(status: int, reason: str, message: str, links: Links) -> str:
        """An error as a page (an unknown run, a bad filter)."""
        return render("error.html.j2", links, status=status, reason=reason, message=message)
