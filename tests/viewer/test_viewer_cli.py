"""``assertly view``: the real command (serve until Ctrl-C; export static files)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_viewer_browser import CHROMIUM, sync_playwright

ASSERTLY = [sys.executable, "-m", "assertly.cli"]
if (Path(sys.executable).parent / "assertly").exists():
    ASSERTLY = [str(Path(sys.executable).parent / "assertly")]


def test_serves_until_ctrl_c_then_exits_0(store: Path) -> None:
    process = subprocess.Popen(
        [*ASSERTLY, "view", "--store", str(store), "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("assertly view: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url + "api/runs", timeout=10) as response:
            assert len(json.loads(response.read())["runs"]) == 3
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped" in out and "warning" not in err


def test_a_host_off_loopback_is_warned_about(store: Path) -> None:
    process = subprocess.Popen(
        [*ASSERTLY, "view", "--store", str(store), "--host", "0.0.0.0", "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()  # listening
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
    finally:
        process.kill()
    assert "anyone who can reach it on that network can read every run" in err


def test_a_missing_store_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ASSERTLY, "view", "--store", str(tmp_path / "none.sqlite"), "--no-open"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and "no run store" in done.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_an_unreachable_postgresql_store_is_one_clear_line() -> None:
    done = subprocess.run(
        [*ASSERTLY, "view", "--store", "postgresql://u:secret@127.0.0.1:1/db", "--no-open"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "cannot open the run store postgresql://u:****@127.0.0.1:1/db" in done.stderr
    assert "secret" not in done.stderr and "Traceback" not in done.stderr


def export(store: Path, directory: Path, *runs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASSERTLY, "view", "--store", str(store), "--export", str(directory), *runs],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_export_writes_pages_and_json(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "view"
    done = export(store, out)
    assert done.returncode == 0, done.stderr
    for name in (
        "index.html",
        "run-cand.html",
        "run-base.html",
        "run-live.html",
        "compare-base-cand.html",
        "static/viewer.js",
        "static/viewer.css",
        "api/runs.json",
        "api/runs/cand.json",
        "api/diff/base..cand.json",
    ):
        assert (out / name).is_file(), name
    report = json.loads((out / "api/runs/cand.json").read_text())
    assert len(report["tests"]) == 7 and report["summary"]["failed"] == 2
    page = (out / "run-cand.html").read_text()
    assert 'http-equiv="Content-Security-Policy"' in page and "&lt;script&gt;" in page
    assert 'href="static/viewer.css"' in page  # relative: works from any directory


def test_export_of_named_runs(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "view"
    assert export(store, out, "cand").returncode == 0
    assert (out / "run-cand.html").is_file() and not (out / "run-base.html").exists()
    assert "compare-" not in (out / "run-cand.html").read_text()  # base is not exported
    assert [run["run_id"] for run in json.loads((out / "api/runs.json").read_text())["runs"]] == [
        "cand"
    ]
    done = export(store, tmp_path / "other", "nope")
    assert done.returncode == 2 and "no run 'nope'" in done.stderr


def test_export_of_a_big_run_is_paged(tmp_path: Path) -> None:
    from viewer_support import build_store

    store = tmp_path / "big.sqlite"
    build_store(store, extra_tests=600)  # cand: 607 tests, two files of 500
    out = tmp_path / "view"
    assert export(store, out, "cand").returncode == 0
    first, second = (out / "run-cand.html").read_text(), (out / "run-cand-p2.html").read_text()
    assert 'href="run-cand-p2.html"' in first and 'href="run-cand.html"' in second
    assert first.count('<details class="test') == 500
    assert second.count('<details class="test') == 107
    assert len(json.loads((out / "api/runs/cand.json").read_text())["tests"]) == 607


@pytest.mark.skipif(CHROMIUM is None or sync_playwright is None, reason="needs chromium")
def test_exported_pages_work_from_a_file_server(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "view"
    assert export(store, out).returncode == 0
    handler = partial(SimpleHTTPRequestHandler, directory=str(out))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    assert CHROMIUM is not None
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.goto(url + "/index.html")
            page.click("text=cand")
            page.wait_for_url("**/run-cand.html")
            assert page.locator("details.test:visible").count() == 7
            # Filters from the URL, applied in the page (a file server cannot filter).
            page.goto(url + "/run-cand.html?status=failed")
            assert page.locator("details.test:visible").count() == 2
            page.fill("input[name=q]", "injected")
            page.click("button[type=submit]")
            assert page.locator("details.test:visible").count() == 1
            assert "q=injected" in page.url
            page.locator("details.test:visible summary").click()
            assert page.evaluate("window.__pwned") is None
            page.goto(url + "/compare-base-cand.html")
            assert "1 regressed" in page.locator("h1").inner_text()
            browser.close()
            assert not errors, errors
    finally:
        httpd.shutdown()


def test_view_needs_no_aiohttp_to_import_the_cli() -> None:
    code = "import sys, assertly.cli; print('aiohttp' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert done.stdout.strip() == "False"
