"""The viewer's HTTP API and pages, over a real server on a free loopback port."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from viewer_support import HOSTILE, add_trial_to_live, build_store

from assertly.runner import build_run
from assertly.store import RunStore
from assertly.viewer import CSP


def get(
    url: str, method: str = "GET", host: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    if host:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def get_json(url: str) -> Any:
    status, headers, body = get(url)
    assert status == 200, body[:500]
    assert headers["Content-Type"].startswith("application/json")
    return json.loads(body)


def test_runs_newest_first_with_the_report_summary(server: str, store: Path) -> None:
    data = get_json(f"{server}/api/runs")
    assert [run["run_id"] for run in data["runs"]] == ["live", "cand", "base"]
    cand = data["runs"][1]
    assert set(cand) >= {"run_id", "started_at", "finished_at", "summary"}
    reader = RunStore(store, read_only=True)
    assert cand["summary"] == build_run(reader, "cand").summary()  # the JSON report's numbers
    reader.close()
    assert cand["summary"]["failed"] == 2 and cand["summary"]["skipped"] == 1
    assert data["runs"][0]["finished_at"] is None
    paged = get_json(f"{server}/api/runs?limit=1&offset=1")
    assert [run["run_id"] for run in paged["runs"]] == ["cand"]
    assert paged["next_offset"] == 2 and paged["total"] == 3


def test_a_run_in_the_json_report_shape(server: str, store: Path) -> None:
    data = get_json(f"{server}/api/runs/cand")
    reader = RunStore(store, read_only=True)
    report = build_run(reader, "cand").to_dict()
    reader.close()
    assert data["tests"] == report["tests"]  # inputs, outputs, metrics: the same objects
    assert data["summary"] == report["summary"]
    assert data["page"] == {"offset": 0, "limit": 50, "total": 7, "matched": 7, "next_offset": None}
    majority = next(t for t in data["tests"] if t["id"] == "majority")
    assert majority["status"] == "passed" and majority["pass_threshold"] == "majority"


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("status=failed", ["caps_results", "injected_output"]),
        ("status=failed,error", ["caps_results", "injected_output", "crash"]),
        ("status=passed&tag=smoke", ["finds_notes"]),
        # The verdict over all trials with the test's own threshold, never one trial's status.
        ("status=passed", ["finds_notes", "long_answer", "majority"]),
        ("tag=smoke", ["finds_notes", "caps_results"]),
        ("suite=privacy&status=skipped", ["needs_prod"]),
        ("q=LOREM", ["long_answer"]),  # in an output, either case
        ("q=exited+with+code", ["crash"]),  # in a trial's error
        ("status=failed&limit=1", ["caps_results"]),
        ("status=failed&limit=1&offset=1", ["injected_output"]),
    ],
)
def test_filters_and_pages(server: str, query: str, ids: list[str]) -> None:
    data = get_json(f"{server}/api/runs/cand?{query}")
    assert [test["id"] for test in data["tests"]] == ids


def test_matched_and_next_offset(server: str) -> None:
    data = get_json(f"{server}/api/runs/cand?status=failed&limit=1")
    assert data["page"]["matched"] == 2 and data["page"]["next_offset"] == 1
    data = get_json(f"{server}/api/runs/cand?q=notes&limit=1")
    assert data["page"]["matched"] is None  # not counted: that would read the whole run


def test_run_names_as_users_write_them(server: str) -> None:
    assert get_json(f"{server}/api/runs/last")["run_id"] == "live"
    assert get_json(f"{server}/api/runs/last~1")["run_id"] == "cand"


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/runs/nope", 404, "no run 'nope'"),
        ("/api/runs/last~9", 404, "only 3 runs"),
        ("/api/runs/cand?status=faild", 400, "did you mean 'failed'"),
        ("/api/runs/cand?limit=x", 400, "whole number"),
        ("/api/runs/cand?limit=100000", 400, "more than 500"),
        # issue 29, probe "Unbounded" 4: an offset past 64 bits was HTTP 500 OverflowError.
        ("/api/runs/last?offset=99999999999999999999999", 400, "more than 1000000000000"),
        ("/api/runs?offset=99999999999999999999999", 400, "more than 1000000000000"),
        ("/api/runs/cand?limit=" + "9" * 5000, 400, "more than 500"),
        ("/api/runs/cand?offset=%C2%B2", 400, "whole number"),  # "²": a digit to isdigit()
        ("/api/runs/last~99999999999999999999", 404, "only 3 runs"),
        ("/api/runs/last~%C2%B2", 404, "no run"),
        ("/api/diff?base=base", 400, "name both runs"),
        ("/api/diff?base=/etc/passwd&candidate=cand", 404, "no run"),
        ("/api/nothing", 404, "no page"),
        (
            "/api/runs/cand?stauts=failed",
            400,
            "unknown parameter 'stauts' (did you mean 'status'?)",
        ),
        ("/api/runs?page=2", 400, "this one takes: offset, limit"),
        ("/api/runs/cand/progress?x=1", 400, "unknown parameter 'x'"),
        ("/api/diff?base=base&candidate=cand&alpha=1", 400, "unknown parameter 'alpha'"),
    ],
)
def test_errors_are_json(server: str, path: str, status: int, words: str) -> None:
    code, headers, body = get(server + path)
    assert code == status
    assert headers["Content-Type"].startswith("application/json")
    assert words in json.loads(body)["error"]["message"]


def test_summary_of_a_big_run_is_counted_in_the_background(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from assertly.store import RunQueries
    from assertly.viewer import Site, _queries

    monkeypatch.setattr(_queries, "COUNT_NOW", 3)  # cand's 7 tests make a "big" run
    site = Site(RunQueries(store))
    first = json.loads(site.run_json("cand", {}))
    assert first["summary"] is None or first["summary"]["total"] == 7
    assert len(first["tests"]) == 7  # the page did not wait for the count
    for _ in range(100):
        summary = json.loads(site.run_json("cand", {}))["summary"]
        if summary is not None:
            break
        time.sleep(0.05)
    assert summary is not None and summary["failed"] == 2


def test_unknown_run_page_is_a_404_page(server: str) -> None:
    code, headers, body = get(f"{server}/runs/nope")
    assert code == 404 and headers["Content-Type"].startswith("text/html")
    assert b"no run &#39;nope&#39;" in body


def test_diff_is_assertly_diff_json(server: str, store: Path) -> None:
    from io import BytesIO

    from assertly.compare import compare_runs, open_side
    from assertly.reports._diff import write_diff_json

    data = get_json(f"{server}/api/diff?base=base&candidate=cand")
    expected = BytesIO()
    write_diff_json(compare_runs(open_side("base", store), open_side("cand", store)), expected)
    assert data == json.loads(expected.getvalue())
    assert data["summary"]["regressed"] == 1


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/runs/cand",
        "/runs/cand?status=failed&q=x",
        "/compare?base=base&candidate=cand",
        "/api/runs",
        "/api/runs/cand",
        "/api/runs/live/progress",
        "/api/diff?base=base&candidate=cand",
        "/static/viewer.css",
        "/static/viewer.js",
        "/static/nothing.js",
        "/runs/nope",
        "/api/runs/nope",
    ],
)
def test_every_response_has_the_strict_csp(server: str, path: str) -> None:
    _, headers, _ = get(server + path)
    assert headers["Content-Security-Policy"] == CSP
    assert "default-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_can_be_written(server: str, method: str) -> None:
    for path in ("/api/runs", "/api/runs/cand", "/", "/runs/cand"):
        code, headers, _ = get(server + path, method=method)
        assert code == 405 and headers["Allow"] == "GET, HEAD"
        assert headers["Content-Security-Policy"] == CSP


def test_a_foreign_host_name_is_refused(server: str) -> None:
    """A page elsewhere that rebinds its name to 127.0.0.1 cannot read the runs."""
    code, _, body = get(f"{server}/api/runs", host="evil.example:80")
    assert code == 421 and b"loopback" in body
    assert get(f"{server}/api/runs", host="localhost:1")[0] == 200


def test_pages_escape_agent_output(server: str) -> None:
    _, _, body = get(f"{server}/runs/cand?q=injected")
    page = body.decode()
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert page.count("<script") == 1  # the viewer's own, with src
    assert 'script src="/static/viewer.js"' in page
    assert not re.search(r"<[^>]*\sstyle=", page)  # no inline style (the CSP forbids it)
    assert not re.search(r"<[^>]*\son[a-z]+=", page)  # no element has an event handler


def test_pages_carry_filters_and_pages_in_links(server: str, tmp_path: Path) -> None:
    path = tmp_path / "big.sqlite"
    build_store(path, extra_tests=120)
    from viewer_support import serving

    with serving(path) as url:
        _, _, body = get(f"{url}/runs/cand?suite=bulk")
        page = body.decode()
        assert 'href="/runs/cand?suite=bulk&amp;offset=50"' in page
        assert "tests 1\u201350" in page
        _, _, body = get(f"{url}/runs/cand?suite=bulk&limit=20&offset=20")
        page = body.decode()
        assert 'href="/runs/cand?suite=bulk&amp;limit=20&amp;offset=40"' in page
        assert 'href="/runs/cand?suite=bulk&amp;limit=20"' in page  # back to the first
        assert "tests 21\u201340" in page
        assert 'value="bulk"' in page  # the form shows the filter


def test_the_store_is_opened_read_only(server: str, store: Path) -> None:
    before = store.stat().st_mtime_ns
    for path in ("/", "/runs/cand", "/api/runs/cand", "/compare?base=base&candidate=cand"):
        assert get(server + path)[0] == 200
    assert store.stat().st_mtime_ns == before


def test_progress_of_a_run_being_written(live_server: str, live_store: Path) -> None:
    first = get_json(f"{live_server}/api/runs/live/progress")
    assert first["finished_at"] is None and first["trials"] == 1
    add_trial_to_live(live_store)
    assert get_json(f"{live_server}/api/runs/live/progress")["trials"] == 2
    code, _, body = get(f"{live_server}/runs/live")
    assert code == 200 and b'data-refresh="2000"' in body


def test_a_run_being_written_has_pending_tests_not_errors(
    live_server: str, live_store: Path
) -> None:
    data = get_json(f"{live_server}/api/runs/live")
    assert data["finished_at"] is None
    assert data["summary"]["pending"] == 6 and data["summary"]["errored"] == 0
    assert data["summary"]["passed"] == 1 and data["summary"]["pass_rate"] == 1.0
    statuses = [test["status"] for test in data["tests"]]
    assert statuses == ["passed"] + ["pending"] * 6
    assert data["tests"][1]["trials"] == []
    pending = get_json(f"{live_server}/api/runs/live?status=pending")
    assert len(pending["tests"]) == 6 and pending["page"]["matched"] == 6
    assert get_json(f"{live_server}/api/runs/live?status=error")["tests"] == []
    # Finished, a test that never ran is an error, as in `assertly report`.
    from viewer_support import finish_live

    finish_live(live_store)
    import time

    time.sleep(2.1)  # past the cache's freshness for a run that was still running
    done = get_json(f"{live_server}/api/runs/live")
    assert "pending" not in done["summary"] and done["summary"]["errored"] == 6
    reader = RunStore(live_store, read_only=True)
    assert done["summary"] == build_run(reader, "live").summary()
    reader.close()


def test_hostile_output_is_json_text(server: str) -> None:
    data = get_json(f"{server}/api/runs/cand?q=injected")
    assert data["tests"][0]["trials"][0]["output"] == HOSTILE
