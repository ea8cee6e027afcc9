"""A conversation test in real headless Chromium, in PostgreSQL and in the static export.

Chromium: a reply holding ``<script>`` and an ``onerror=`` image runs nothing, a link to a
failing turn opens its test and its trial and scrolls to it (served and exported), and no page
breaks the CSP. PostgreSQL: the page of a conversation run is the page SQLite gives. Export:
``assertly view --export`` writes the chat into the run's page.
"""

# The fixtures imported below (Chromium, a page, the seeded store) are named again as the tests'
# parameters: that is how pytest hands them over, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_conversation_view import (
    CRASH,
    HOSTILE_KEY,
    REFUND,
    RUN,
    SIMULATED,
    block_of,
    chat_store,  # noqa: F401  (a fixture)
    parse,
    seed,
    seeded_tests,
)
from test_viewer_browser import (
    CHROMIUM,
    browser,  # noqa: F401  (a fixture: headless Chromium)
    expect,
    page,  # noqa: F401  (a fixture: a page that fails its test on a script or CSP error)
    sync_playwright,
)
from viewer_support import serving

from assertly.store import RunQueries, RunStore
from assertly.viewer import Links, Site

browser_only = pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs chromium (CI: apt-get install -y chromium) and playwright (the dev extras)",
)


@pytest.fixture(scope="module")
def exported(chat_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``assertly view --export DIR``, the command as users run it."""
    from assertly.cli import main

    out = tmp_path_factory.mktemp("export")
    done = CliRunner().invoke(main, ["view", "--store", str(chat_store), "--export", str(out)])
    assert done.exit_code == 0, done.output
    return out


def _hostile_runs_nothing(page: Any) -> None:
    test = page.locator(f'details.test[data-key="{HOSTILE_KEY}"]')
    test.locator("summary").first.click()
    page.wait_for_timeout(300)  # an injected onerror would have fired by now
    assert page.evaluate("window.__pwned") is None
    turn = test.locator("li.turn")
    assert "<script>window.__pwned = 1</script>" in turn.locator(".bubble.user pre").inner_text()
    said = turn.locator(".bubble.agent pre.said").inner_text()
    assert '<img src=x onerror="window.__pwned = 2">' in said
    assert "<script>" in turn.locator("code.tool").inner_text()
    assert "onerror" in turn.locator("li.check").inner_text()
    assert page.locator("details.test img").count() == 0
    assert page.locator("script").count() == 1  # the viewer's own


@browser_only
def test_a_hostile_reply_runs_nothing_served(page: Any, chat_store: Path) -> None:
    with serving(chat_store) as url:
        page.goto(f"{url}/runs/{RUN}")
        _hostile_runs_nothing(page)


@browser_only
def test_a_hostile_reply_runs_nothing_exported(page: Any, exported: Path) -> None:
    page.goto((exported / f"run-{RUN}.html").as_uri())
    _hostile_runs_nothing(page)


def _failing_turn_link_opens_it(page: Any) -> None:
    # Every test starts folded; the failing turn's link at the top of the test opens its trial.
    test = page.locator(f'details.test[data-key="{SIMULATED}"]')
    assert test.get_attribute("open") is None
    test.locator("summary").first.click()
    trials = test.locator("details.trial-chat")
    expect(trials).to_have_count(2)
    trials.nth(1).locator("summary").click()  # fold the failing trial again
    assert trials.nth(1).get_attribute("open") is None
    link = test.locator(".failing-turns a")
    assert link.inner_text() == "✗ trial 2 · conversation"
    link.click()
    end = trials.nth(1).locator(".conversation-end")
    expect(end).to_be_visible()
    assert page.url.endswith("#" + (end.get_attribute("id") or "?"))
    assert "it reached max_turns (4)" in end.inner_text()


@browser_only
def test_a_failing_turn_link_opens_its_trial_served(page: Any, chat_store: Path) -> None:
    with serving(chat_store) as url:
        page.goto(f"{url}/runs/{RUN}")
        _failing_turn_link_opens_it(page)
        # A turn's address, opened as is (a link someone shared): its test opens on it.
        anchor = page.locator(f'details.test[data-key="{REFUND}"]').get_attribute("id")
        page.goto(f"{url}/runs/{RUN}#{anchor}-trial-1-turn-2")
        turn = page.locator(f"#{anchor}-trial-1-turn-2")
        expect(turn).to_be_visible()
        assert "Which order was it?" in turn.inner_text()
        assert "✗ failed" in turn.locator(".turn-verdict").inner_text()


@browser_only
def test_a_failing_turn_link_opens_its_trial_exported(page: Any, exported: Path) -> None:
    page.goto((exported / f"run-{RUN}.html").as_uri())
    _failing_turn_link_opens_it(page)


@browser_only
def test_the_chat_is_laid_out_as_a_chat(page: Any, chat_store: Path) -> None:
    """User bubbles on the right, the agent's on the left; a failing reply looks failed."""
    with serving(chat_store) as url:
        page.goto(f"{url}/runs/{RUN}")
        test = page.locator(f'details.test[data-key="{REFUND}"]')
        test.locator("summary").first.click()
        user = test.locator("li.turn").nth(1).locator(".bubble.user").bounding_box()
        agent = test.locator("li.turn").nth(1).locator(".bubble.agent").bounding_box()
        assert user["x"] > agent["x"] + 100 and agent["y"] > user["y"]
        failed = test.locator("li.turn").nth(1).locator(".bubble.agent")
        passed = test.locator("li.turn").nth(0).locator(".bubble.agent")
        style = "e => getComputedStyle(e).borderLeftColor"
        assert failed.evaluate(style) != passed.evaluate(style)


def _save(path: Path, *keys: str) -> None:
    """Save the seeded trials of ``keys`` into the running run ``live``."""
    store = RunStore(path)
    for meta, trials in seeded_tests():
        if meta["key"] in keys:
            for trial in trials:
                store.save_trial("live", meta["key"], trial.trial, trial.to_dict())
    store.close()


@browser_only
def test_a_live_run_keeps_the_trials_the_reader_folded(page: Any, tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    store.start_run("live", "2026-11-28T20:00:00Z", {"pass_threshold": "all"})
    store.save_tests("live", [meta for meta, _ in seeded_tests()])
    store.close()
    _save(path, SIMULATED)
    with serving(path) as url:
        page.goto(f"{url}/runs/live")
        assert page.locator(".card.failed .v").inner_text() == "1"
        test = page.locator(f'details.test[data-key="{SIMULATED}"]')
        test.locator("summary").first.click()
        trials = test.locator("details.trial-chat")
        # As the page comes: the trial that failed unfolded, the one that passed folded.
        assert [trials.nth(n).get_attribute("open") for n in (0, 1)] == [None, ""]
        trials.nth(0).locator("summary").click()
        trials.nth(1).locator("summary").click()
        _save(path, REFUND)  # the run goes on: the page refreshes itself
        expect(page.locator(".card.failed .v")).to_have_text("2", timeout=8000)
        trials = page.locator(f'details.test[data-key="{SIMULATED}"] details.trial-chat')
        assert [trials.nth(n).get_attribute("open") for n in (0, 1)] == ["", None]
        assert page.locator(f'details.test[data-key="{SIMULATED}"]').get_attribute("open") == ""


def test_a_conversation_page_reads_the_same_from_postgres(
    chat_store: Path, postgres_database: str
) -> None:
    seed(postgres_database)
    local = Site(RunQueries(chat_store), background=False)
    shared = Site(RunQueries(postgres_database), background=False)
    for query in ({}, {"status": "error"}, {"q": "refund"}):
        html = shared.run_page(RUN, query, Links())
        assert html == local.run_page(RUN, query, Links()), query
    page = parse(shared.run_page(RUN, {}, Links()))
    crash = block_of(page, CRASH)
    assert len(crash.all("li", "turn")) == 2
    assert "agent exited with code 3" in crash.all("li", "turn")[-1].text
    simulated = block_of(page, SIMULATED)
    assert "$0.0004 · 61 tokens" in simulated.text  # the simulator's cost survived the store
    assert simulated.all("span", "ended")[0].attrs["data-ended"] == "stop_token"


def test_the_export_holds_the_chat(exported: Path) -> None:
    page = parse((exported / f"run-{RUN}.html").read_text(encoding="utf-8"))
    refund = block_of(page, REFUND)
    assert len(refund.all("li", "turn")) == 3
    link = refund.one("p", "failing-turns").one("a")
    assert link.attrs["href"] == f"#{refund.attrs['id']}-trial-1-turn-2"
    assert page.one("li", "turn", id=link.attrs["href"][1:])  # the link lands in the page
