"""A matrix run (two targets) in the viewer: stored by the real runner with two ``cmd:``
agents, read back as a matrix by the JSON API, the pages and the static export."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from matrix_support import DISAGREE, ROWS
from viewer_support import HOSTILE

from assertly.store import Filters, RunQueries
from assertly.viewer import Site, export_site


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
            kind = response.headers["Content-Type"]
            return response.status, json.loads(body) if "json" in kind else body.decode()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _matrix(data: dict[str, Any]) -> list[tuple[str, dict[str, str | None]]]:
    """(test id, {target: verdict}) of each row of an API page."""
    return [
        (row["id"], {t: c and c["status"] for t, c in row["cells"].items()})
        for row in data["matrix"]["rows"]
    ]


def test_the_runner_stores_the_matrix_the_viewer_reads(matrix_store: dict[str, Any]) -> None:
    queries = RunQueries(matrix_store["store"])
    info = queries.run_info(matrix_store["matrix"])
    assert info["targets"] == ["base", "cand"]
    assert info["tests"] == 2 * len(ROWS)
    assert queries.run_info(matrix_store["single"])["targets"] == []
    counts = queries.matrix_counts(matrix_store["matrix"], "all", False)
    assert counts == {
        "by_target": {
            "base": {"passed": len(ROWS) - 1, "failed": 1, "error": 0, "skipped": 0},
            "cand": {"passed": len(ROWS) - 3, "failed": 3, "error": 0, "skipped": 0},
        },
        "rows": len(ROWS),
        "disagree": len(DISAGREE),
    }


def test_the_api_gives_the_matrix_rows_cells_and_per_target_totals(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    run_id = matrix_store["matrix"]
    status, data = _get(f"{matrix_server}/api/runs/{run_id}")
    assert status == 200
    assert data["targets"] == ["base", "cand"]
    assert _matrix(data) == [(name, {"base": b, "cand": c}) for name, b, c in ROWS]
    assert [row["disagree"] for row in data["matrix"]["rows"]] == [
        name in DISAGREE for name, _, _ in ROWS
    ]
    assert data["matrix"]["disagree"] == len(DISAGREE)
    # Each cell names its test, and the page's tests are every cell of its rows, in run order.
    cells = [c["key"] for row in data["matrix"]["rows"] for c in row["cells"].values()]
    assert [test["key"] for test in data["tests"]] == cells
    assert cells[:2] == ["mx.tests.yaml::mx::ok0[base]", "mx.tests.yaml::mx::ok0[cand]"]
    assert [test["target"] for test in data["tests"][:2]] == ["base", "cand"]
    by_target = data["summary"]["by_target"]
    assert list(by_target) == ["base", "cand"]
    assert by_target["cand"]["passed"] == len(ROWS) - 3
    assert by_target["cand"]["failed"] == 3
    assert by_target["cand"]["pass_rate"] == pytest.approx((len(ROWS) - 3) / len(ROWS))
    low, high = by_target["base"]["pass_rate_ci95"]
    assert 0 < low < by_target["base"]["pass_rate"] < high <= 1
    assert data["summary"]["total"] == 2 * len(ROWS)
    assert data["page"] == {
        "offset": 0,
        "limit": 50,
        "total": len(ROWS),
        "matched": len(ROWS),
        "next_offset": None,
        "unit": "rows",
    }


def test_the_disagree_filter_pages_the_rows_that_differ(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    api = f"{matrix_server}/api/runs/{matrix_store['matrix']}"
    _, data = _get(api + "?disagree=1")
    assert [row["id"] for row in data["matrix"]["rows"]] == DISAGREE
    assert data["filters"] == {"disagree": "1"}
    assert data["page"]["matched"] == len(DISAGREE)
    # Paged like every list: one row a page, the next page where the first ends.
    _, first = _get(api + "?disagree=1&limit=1")
    assert [row["id"] for row in first["matrix"]["rows"]] == DISAGREE[:1]
    assert first["page"]["next_offset"] == 1
    assert [t["key"] for t in first["tests"]] == [
        "mx.tests.yaml::mx::two[base]",
        "mx.tests.yaml::mx::two[cand]",
    ]
    _, second = _get(api + "?disagree=1&limit=1&offset=1")
    assert [row["id"] for row in second["matrix"]["rows"]] == DISAGREE[1:]
    assert second["page"]["next_offset"] is None
    # A status keeps a row when one of its cells has it; with disagree, both must hold.
    _, failed = _get(api + "?status=failed")
    assert [row["id"] for row in failed["matrix"]["rows"]] == ["two", "three", "four"]
    _, both = _get(api + "?status=failed&disagree=1&q=again")
    assert [row["id"] for row in both["matrix"]["rows"]] == ["four"]
    _, passed_agree = _get(api + "?status=passed&suite=mx&limit=2&offset=4")
    assert [row["id"] for row in passed_agree["matrix"]["rows"]] == ["ok4", "two"]


def test_the_runs_list_names_a_matrix_runs_targets(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    _, data = _get(f"{matrix_server}/api/runs")
    runs = {run["run_id"]: run for run in data["runs"]}
    assert runs[matrix_store["matrix"]]["targets"] == ["base", "cand"]
    assert runs[matrix_store["single"]]["targets"] == []  # always there in /api/runs
    _, html = _get(f"{matrix_server}/")
    assert '<code class="target">base</code><code class="target">cand</code>' in html


def test_a_bad_disagree_or_one_on_a_single_target_run_is_a_400(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    status, data = _get(f"{matrix_server}/api/runs/{matrix_store['matrix']}?disagree=maybe")
    assert status == 400 and "disagree=1" in data["error"]["message"]
    status, data = _get(f"{matrix_server}/api/runs/{matrix_store['single']}?disagree=1")
    assert status == 400 and "one target" in data["error"]["message"]


def test_a_single_target_run_has_no_matrix(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    status, data = _get(f"{matrix_server}/api/runs/{matrix_store['single']}")
    assert status == 200
    assert "targets" not in data and "matrix" not in data and "by_target" not in data["summary"]
    assert "unit" not in data["page"] and "target" not in data["tests"][0]
    assert data["page"]["total"] == len(ROWS)
    status, html = _get(f"{matrix_server}/runs/{matrix_store['single']}")
    assert status == 200
    assert 'table class="matrix"' not in html and 'name="disagree"' not in html
    assert ' id="t-' not in html


class _Page(HTMLParser):
    """The matrix cells' links, the ids of the page's tests, and every script of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (target, href)
        self.ids: dict[str, str] = {}  # id of a test: its key
        self.scripts: list[dict[str, str | None]] = []
        self.rows: list[str | None] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "td" and "cell" in (found.get("class") or ""):
            self._in_cell = True
        elif tag == "a" and self._in_cell:
            self.links.append((found["data-target"] or "", found["href"] or ""))
        elif tag == "details" and found.get("id"):
            self.ids[found["id"] or ""] = found["data-key"] or ""
        elif tag == "script":
            self.scripts.append(found)
        elif tag == "tr" and "data-disagree" in found:
            self.rows.append(found["data-disagree"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_the_run_page_shows_the_matrix_each_cell_linking_to_its_test(
    matrix_store: dict[str, Any], matrix_server: str
) -> None:
    status, html = _get(f"{matrix_server}/runs/{matrix_store['matrix']}")
    assert status == 200
    page = _parse(html)
    assert len(page.links) == 2 * len(ROWS)
    keys = [page.ids[href.removeprefix("#")] for _, href in page.links]  # each link lands
    assert keys == [
        f"mx.tests.yaml::mx::{name}[{t}]" for name, _, _ in ROWS for t in ("base", "cand")
    ]
    assert [target for target, _ in page.links[:2]] == ["base", "cand"]
    assert page.rows == ["1" if name in DISAGREE else "0" for name, _, _ in ROWS]
    assert 'id="by-target"' in html and ">(the base)<" not in html  # "base" is the base
    assert re.search(
        r"<code>cand</code></td><td class=\"num\">8</td><td class=\"num\">5</td>", html
    )
    assert f"{len(DISAGREE)} tests where the targets disagree" in html
    assert 'name="disagree" value="1"' in html
    # The hostile input is text: escaped, and no script but the viewer's own.
    assert HOSTILE not in html and "&lt;script&gt;window.__pwned" in html
    assert len(page.scripts) == 1
    status, html = _get(f"{matrix_server}/runs/{matrix_store['matrix']}?disagree=1")
    page = _parse(html)
    assert page.rows == ["1", "1"] and len(page.links) == 4
    assert 'name="disagree" value="1" checked' in html


def test_the_export_holds_the_matrix(matrix_store: dict[str, Any], tmp_path: Path) -> None:
    site = Site(RunQueries(matrix_store["store"]), background=False)
    export_site(site, tmp_path, [matrix_store["matrix"]], "runs")
    html = (tmp_path / f"run-{matrix_store['matrix']}.html").read_text(encoding="utf-8")
    page = _parse(html)
    assert len(page.links) == 2 * len(ROWS)
    assert all(href.removeprefix("#") in page.ids for _, href in page.links)
    assert f'href="run-{matrix_store["matrix"]}.html?disagree=1"' in html
    assert 'name="disagree"' in html
    data = json.loads((tmp_path / "api" / "runs" / f"{matrix_store['matrix']}.json").read_bytes())
    # The JSON report of the whole run (its ``targets`` are the JSON report's to write).
    assert [test["target"] for test in data["tests"][:2]] == ["base", "cand"]


def test_a_matrix_is_paged_by_rows_in_the_export(
    matrix_store: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assertly.viewer._export as export
    import assertly.viewer._pages as pages

    monkeypatch.setattr(export, "STATIC_PAGE", 3)
    monkeypatch.setattr(pages, "STATIC_PAGE", 3)
    site = Site(RunQueries(matrix_store["store"]), background=False)
    export_site(site, tmp_path, [matrix_store["matrix"]], "runs")
    stem = f"run-{matrix_store['matrix']}"
    names = sorted(p.name for p in tmp_path.glob(f"{stem}*.html"))
    assert names == [f"{stem}-p2.html", f"{stem}-p3.html", f"{stem}.html"]  # 8 rows, 3 a page
    last = _parse((tmp_path / f"{stem}-p3.html").read_text(encoding="utf-8"))
    assert len(last.rows) == 2 and len(last.links) == 4


def test_the_queries_keep_a_row_whole(matrix_store: dict[str, Any]) -> None:
    """A text filter that one cell meets keeps its row with all its cells."""
    queries = RunQueries(matrix_store["store"])
    page = queries.matrix_page(
        matrix_store["matrix"], "all", ["base", "cand"], Filters(q="nope"), 0, 10
    )
    assert [row.key for row in page.rows] == ["mx.tests.yaml::mx::two", "mx.tests.yaml::mx::four"]
    assert all(set(row.cells) == {"base", "cand"} for row in page.rows)
    assert page.matched == 2 and page.total == len(ROWS)


def test_a_matrix_run_being_written_shows_pending_and_missing_cells(tmp_path: Path) -> None:
    """Three targets; a cell not judged yet is pending (and never a disagreement), a cell
    not stored at all is shown as missing."""
    from viewer_support import _meta, _trial

    from assertly.store import RunStore
    from assertly.viewer import Links

    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    options = {"pass_threshold": "all", "target_labels": ["a", "b", "c"]}
    store.start_run("live", "2026-01-01T00:00:00Z", options)
    metas = [
        {**_meta(f"x.tests.yaml::s::t{n}[{label}]", "s", [], n), "id": f"t{n}", "target": label}
        for n in range(2)
        for label in "abc"
    ]
    store.save_tests("live", metas[:-1])  # t1[c] was never stored
    for meta, status in zip(metas[:4], ("passed", "failed", None, "passed"), strict=True):
        if status:
            store.save_trial("live", meta["key"], 1, _trial(meta["key"], 1, status, "x"))
    store.close()
    site = Site(RunQueries(path), background=False)
    data = json.loads(site.run_json("live", {}))
    assert _matrix(data) == [
        ("t0", {"a": "passed", "b": "failed", "c": "pending"}),
        ("t1", {"a": "passed", "b": "pending", "c": None}),
    ]
    assert [row["disagree"] for row in data["matrix"]["rows"]] == [True, False]
    by_target = data["summary"]["by_target"]
    assert by_target["c"]["pending"] == 1 and by_target["c"]["pass_rate_ci95"] is None
    assert by_target["a"]["pass_rate_ci95"][1] == 1.0
    html = site.run_page("live", {}, Links())
    assert 'class="cell pending"' in html and 'class="cell missing"' in html
    assert 'data-refresh="2000"' in html  # it refreshes until the run is done
