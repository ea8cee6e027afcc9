"""The viewer in real headless Chromium (Playwright driving the system's Chromium).

Skipped, with the reason, only when Chromium or Playwright is missing (`.ci/run` installs
Chromium; Playwright is a dev dependency; no browser is ever downloaded).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_support import add_trial_to_live, finish_live

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - the dev extras install it
    sync_playwright = expect = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs chromium (CI: apt-get install -y chromium) and playwright (the dev extras)",
)
SCREENSHOT = Path(__file__).parents[2] / "docs" / "images" / "viewer.png"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # A CSP violation (an inline style or script the pages should not have) is a console error.
    opened.on("console", lambda message: message.type == "error" and errors.append(message.text))
    yield opened
    context.close()
    assert not errors, errors  # no script error and no CSP violation in any page


def test_runs_list_then_a_run_then_filter_then_expand(page: Any, server: str) -> None:
    page.goto(server + "/")
    assert page.locator("table.runs tbody tr").count() == 3
    assert page.locator("#sparkline polyline").count() == 1
    page.click("text=cand")
    page.wait_for_url("**/runs/cand")
    assert page.locator("details.test").count() == 7
    assert page.locator(".card.failed .v").inner_text() == "2"
    # Choosing a status submits the form: the URL carries the filter.
    page.select_option("select[name=status]", "failed")
    page.wait_for_url("**/runs/cand?status=failed")
    assert page.locator("details.test").count() == 2
    page.fill("input[name=q]", "caps")
    page.click("button[type=submit]")
    page.wait_for_url("**/runs/cand?status=failed*q=caps*")
    test = page.locator("details.test")
    assert test.count() == 1
    test.locator("summary").click()
    body = test.locator(".body")
    assert body.is_visible()
    assert "Expected at most 1 result, got 3" in body.inner_text()
    assert '"results"' in body.locator(".output").inner_text()  # pretty JSON output


def test_hostile_output_is_text_and_runs_nothing(page: Any, server: str) -> None:
    page.goto(server + "/runs/cand?q=injected")
    page.locator("details.test summary").first.click()
    page.wait_for_timeout(200)  # an injected onerror would have fired by now
    assert page.evaluate("window.__pwned") is None
    output = page.locator("details.test .output").first.inner_text()
    assert "<script>window.__pwned = 1</script>" in output
    assert '<img src=x onerror="window.__pwned = 2">' in output
    assert page.locator("details.test img").count() == 0
    assert page.locator("script").count() == 1  # the viewer's own


def test_long_output_is_folded(page: Any, server: str) -> None:
    page.goto(server + "/runs/cand?q=lorem")
    page.locator("details.test summary").first.click()
    fold = page.locator("details.fold").first
    assert "show all" in fold.locator("summary").inner_text()
    assert not fold.locator("pre").is_visible()
    fold.locator("summary").click()
    assert "line 199:" in fold.locator("pre").inner_text()


def test_compare_page(page: Any, server: str) -> None:
    page.goto(server + "/")
    page.locator("tr[data-run=cand] >> text=vs previous").click()
    page.wait_for_url("**/compare?base=base&candidate=cand")
    assert "1 regressed" in page.locator("h1").inner_text()
    assert "caps_results" in page.locator("table.changes").inner_text()


def test_a_run_in_progress_updates_live(page: Any, live_server: str, live_store: Path) -> None:
    store = live_store
    page.goto(live_server + "/runs/live")
    assert "running" in page.locator("h1").inner_text()
    page.locator("details.test summary").first.click()  # stays open through updates
    assert page.locator(".card.passed .v").inner_text() == "1"
    add_trial_to_live(store)
    # (The CSP forbids eval, so Playwright's locators wait, not wait_for_function.)
    expect(page.locator(".card.passed .v")).to_have_text("2", timeout=8000)
    finish_live(store)
    expect(page.locator("h1 .live-note")).to_have_count(0, timeout=8000)
    assert page.locator("details.test").first.get_attribute("open") is not None


def test_screenshot(page: Any, server: str, tmp_path: Path) -> None:
    page.goto(server + "/runs/cand?status=failed,error")
    page.locator("details.test summary").first.click()
    shot = tmp_path / "viewer.png"
    page.screenshot(path=str(shot), full_page=False)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
    if os.environ.get("ASSERTLY_UPDATE_SCREENSHOTS"):
        SCREENSHOT.write_bytes(data)


def test_a_matrix_cell_link_opens_its_test(
    page: Any, matrix_store: dict[str, Any], matrix_server: str
) -> None:
    page.goto(f"{matrix_server}/runs/{matrix_store['matrix']}")
    matrix = page.locator("table.matrix")
    assert matrix.locator("tbody tr").count() == 8
    assert matrix.locator("thead code").all_inner_texts() == ["base", "cand"]  # as written
    row = matrix.locator("tbody tr", has_text="two")
    assert row.locator("td.cell").all_inner_texts() == ["✓", "✗"]
    assert page.locator("details.test[open]").count() == 0
    row.locator("a[data-target=cand]").click()
    opened = page.locator("details.test[open]")
    expect(opened).to_have_count(1)
    assert opened.get_attribute("data-key") == "mx.tests.yaml::mx::two[cand]"
    assert "nope" in opened.locator(".output").inner_text()  # the cand agent's answer
    assert page.url.endswith("#" + (opened.get_attribute("id") or "?"))
    # The filter: only the rows where the targets disagree, the checkbox submits the form.
    page.check("input[name=disagree]")
    page.wait_for_url("**?disagree=1")
    assert page.locator("table.matrix tbody tr").count() == 2
    assert page.locator("details.test").count() == 4


def test_an_exported_matrix_filters_in_the_page(
    page: Any, matrix_store: dict[str, Any], tmp_path: Path
) -> None:
    from assertly.store import RunQueries
    from assertly.viewer import Site, export_site

    export_site(Site(RunQueries(matrix_store["store"]), background=False), tmp_path, [], "runs")
    page.goto((tmp_path / f"run-{matrix_store['matrix']}.html").as_uri() + "?disagree=1")
    rows = page.locator("table.matrix tbody tr:not(.hidden)")
    expect(rows).to_have_count(2)
    assert page.locator("details.test:not(.hidden)").count() == 4
    assert page.locator("input[name=disagree]").is_checked()
    rows.first.locator("a[data-target=base]").click()
    expect(page.locator("details.test[open]")).to_have_count(1)
