"""``assertly view`` draws a trial's spans as a waterfall (issue 33), in real headless Chromium.

The viewer's CSP forbids inline style, so a bar is an SVG rect placed by its attributes and a
row's indent a class: the page must draw the bars where the spans ran (measured in the browser)
without a single CSP violation (the ``page`` fixture fails on any console error), a hostile span
name runs nothing, and the JSON the viewer serves gives each trial's trace summary.
"""

# The fixtures imported below are named again as the tests' parameters: that is how pytest
# hands them over, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from test_conversation_view import meta
from test_viewer_browser import (
    CHROMIUM,
    browser,  # noqa: F401  (a fixture: headless Chromium)
    page,  # noqa: F401  (a fixture: a page that fails its test on a script or CSP error)
    sync_playwright,
)
from viewer_support import HOSTILE, serving

from assertly._records import StepRecord, TrialRecord
from assertly._spans import SpanEvent, SpanSet
from assertly.store import RunStore
from spans_support import TRACE
from spans_support import span as _span

RUN = "traced"
KEY = "support.tests.yaml::support::traced"

SPANS = SpanSet(
    [
        _span(1, "invoke_agent", None, 0, 100),
        _span(
            2,
            "execute_tool pay",
            1,
            50,
            50,
            status="error",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "pay"},
            events=(SpanEvent("exception", 0, {"exception.type": "TimeoutError"}),),
        ),
        _span(3, HOSTILE, 2, 60, 10),
    ],
    TRACE,
)


@pytest.fixture(scope="module")
def trace_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "runs.sqlite"
    store = RunStore(path)
    store.start_run(RUN, "2026-11-29T01:00:00Z", {"pass_threshold": "all"})
    store.save_tests(RUN, [meta(KEY, "pay 5", conversation=False)])
    step = StepRecord(KEY, "failed", "paid", latency_ms=100.0, spans=SPANS)
    store.save_trial(RUN, KEY, 1, TrialRecord(KEY, 1, "failed", 100.0, [step]).to_dict())
    store.finish_run(RUN, "2026-11-29T01:00:01Z", 1000.0)
    store.close()
    return path


@pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="needs chromium (CI: apt-get install -y chromium) and playwright (the dev extras)",
)
def test_the_waterfall_draws_bars_where_the_spans_ran_under_the_csp(
    page: Any, trace_store: Path
) -> None:
    with serving(trace_store) as url:
        api = json.loads(urllib.request.urlopen(f"{url}/api/runs/{RUN}", timeout=10).read())
        (trial,) = api["tests"][0]["trials"]
        assert trial["trace"]["spans"] == 3 and trial["trace"]["tools"] == ["pay"]
        assert trial["trace"]["error_spans"] == 1
        page.goto(f"{url}/runs/{RUN}")
        page.click("details.test > summary")
        rows = page.locator("table.spans tr")
        assert rows.count() == 3
        assert "✗ execute_tool pay" in rows.nth(1).inner_text()
        assert HOSTILE in rows.nth(2).inner_text()  # shown as text, never run
        assert page.evaluate("() => window.__pwned") is None
        boxes = [rows.nth(n).locator("td.span-bar svg").bounding_box() for n in range(3)]
        bars = [rows.nth(n).locator("rect").bounding_box() for n in range(3)]
        names = [rows.nth(n).locator("td.span-name") for n in range(3)]
        # The root spans the whole track; the tool starts halfway and takes the other half.
        assert bars[0]["width"] == pytest.approx(boxes[0]["width"], rel=0.02)
        assert bars[1]["x"] - boxes[1]["x"] == pytest.approx(boxes[1]["width"] / 2, rel=0.05)
        assert bars[1]["width"] == pytest.approx(boxes[1]["width"] / 2, rel=0.05)
        assert bars[2]["width"] == pytest.approx(boxes[2]["width"] / 10, rel=0.1)
        # Each level of the tree is indented further (a class: no inline style).
        pads = [n.evaluate("e => parseFloat(getComputedStyle(e).paddingLeft)") for n in names]
        assert pads[0] < pads[1] < pads[2]
