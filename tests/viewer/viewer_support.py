"""A small run store for the viewer's tests, and the viewer served on a free loopback port."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assertly.store import RunQueries, RunStore
from assertly.viewer import Site

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
LONG = "\n".join(f"line {n}: " + "lorem ipsum " * 6 for n in range(200))


def _check(assertion: str, outcome: str, message: str = "") -> dict[str, Any]:
    return {
        "results": [
            {
                "assertion": assertion,
                "outcome": outcome,
                "passed": outcome == "passed",
                "score": 1.0 if outcome == "passed" else 0.0,
                "message": message,
            }
        ]
    }


def _trial(key: str, number: int, status: str, output: Any, **extra: Any) -> dict[str, Any]:
    failures = extra.pop("failures", [])
    checks = extra.pop("checks", [_check("contains", status if status != "error" else "error")])
    return {
        "test_key": key,
        "trial": number,
        "status": status,
        "duration_ms": 12.5,
        "steps": [
            {
                "name": key,
                "status": status,
                "response": output,
                "checks": checks if output is not None else [],
                "error": None,
                "latency_ms": 12.5,
                "cost_usd": 0.0012,
                "model": "m-1",
                "score": 1.0 if status == "passed" else 0.0,
                "tokens": {"total": 42},
            }
        ]
        if output is not None
        else [],
        "failures": failures,
        "error": extra.pop("error", None),
        "reason": extra.pop("reason", None),
        "score": 1.0 if status == "passed" else 0.0,
    }


def _meta(key: str, suite: str, tags: list[str], input_: Any, **extra: Any) -> dict[str, Any]:
    test_id = key.rsplit("::", 1)[-1]
    return {
        "key": key,
        "id": test_id,
        "name": test_id,
        "suite": suite,
        "file": f"{suite}.tests.yaml",
        "line": 3,
        "tags": tags,
        "input": input_,
        "definition": extra.pop("definition", f"def-{test_id}"),
        **extra,
    }


def _tests(regress: bool) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(meta, trials) of each test of a run; ``regress``: the candidate's changes."""
    found = []
    ok = "search::finds_notes"
    found.append(
        (
            _meta(f"s.tests.yaml::{ok}", "search", ["smoke"], {"q": "notes"}),
            [_trial(f"s.tests.yaml::{ok}", 1, "passed", {"status": "success", "results": [1, 2]})],
        )
    )
    key = "s.tests.yaml::search::caps_results"
    status = "failed" if regress else "passed"
    failure = {
        "step": key,
        "assertion": "max_results",
        "outcome": "failed",
        "message": "Expected at most 1 result, got 3",
        "expected": {"max": 1},
        "actual": 3,
        "path": "$.results",
    }
    found.append(
        (
            _meta(key, "search", ["smoke", "limits"], {"q": "all"}),
            [
                _trial(
                    key,
                    1,
                    status,
                    {"results": [1, 2, 3]},
                    failures=[failure] if regress else [],
                    checks=[_check("max_results", status, failure["message"] if regress else "")],
                )
            ],
        )
    )
    key = "p.tests.yaml::privacy::injected_output"
    found.append(
        (
            _meta(key, "privacy", ["security"], {"q": HOSTILE}),
            [
                _trial(
                    key,
                    1,
                    "failed",
                    HOSTILE,
                    failures=[
                        {
                            "step": key,
                            "assertion": "not_contains",
                            "outcome": "failed",
                            "message": f"Output contains {HOSTILE}",
                            "expected": HOSTILE,
                            "actual": HOSTILE,
                        }
                    ],
                    checks=[_check("not_contains", "failed", HOSTILE)],
                )
            ],
        )
    )
    key = "p.tests.yaml::privacy::long_answer"
    found.append(
        (
            _meta(key, "privacy", [], "summarise everything"),
            [_trial(key, n, "passed", LONG) for n in (1, 2, 3)],
        )
    )
    key = "p.tests.yaml::privacy::crash"
    found.append(
        (
            _meta(key, "privacy", [], None),
            [_trial(key, 1, "error", None, error="agent exited with code 3", checks=[])],
        )
    )
    key = "p.tests.yaml::privacy::needs_prod"
    found.append(
        (
            _meta(key, "privacy", ["prod"], None),
            [_trial(key, 1, "skipped", None, reason="needs prod", checks=[])],
        )
    )
    key = "p.tests.yaml::privacy::majority"
    # Two of three trials passed: passed under the test's own threshold "majority".
    found.append(
        (
            _meta(key, "privacy", [], "x", pass_threshold="majority"),
            [
                _trial(key, 1, "passed", "yes"),
                _trial(key, 2, "failed", "no"),
                _trial(key, 3, "passed", "yes"),
            ],
        )
    )
    return found


def build_store(path: Path, *, running: bool = False, extra_tests: int = 0) -> dict[str, str]:
    """Runs ``base`` (all passing but one) and ``cand`` (one regression); with ``running``, a
    third run ``live`` that has no finish yet. ``extra_tests`` adds passing tests to cand."""
    store = RunStore(path)
    for run_id, started, regress in (
        ("base", "2026-01-01T00:00:00Z", False),
        ("cand", "2026-01-02T00:00:00Z", True),
    ):
        store.start_run(run_id, started, {"pass_threshold": "all"})
        tests = _tests(regress)
        if regress:
            for n in range(extra_tests):
                key = f"x.tests.yaml::bulk::t{n:04d}"
                tests.append((_meta(key, "bulk", [], n), [_trial(key, 1, "passed", f"a{n}")]))
        store.save_tests(run_id, [meta for meta, _ in tests])
        for meta, trials in tests:
            for trial in trials:
                store.save_trial(run_id, meta["key"], trial["trial"], trial)
        store.finish_run(run_id, started.replace("00:00Z", "00:01Z"), 1234.0)
    if running:
        store.start_run("live", "2026-01-03T00:00:00Z", {"pass_threshold": "all"})
        tests = _tests(False)
        store.save_tests("live", [meta for meta, _ in tests])
        meta, trials = tests[0]
        store.save_trial("live", meta["key"], 1, trials[0])
    store.close()
    return {"base": "base", "cand": "cand"}


def add_trial_to_live(path: Path) -> None:
    """The live run goes on: its second test gets its verdict."""
    store = RunStore(path)
    meta, trials = _tests(False)[1]
    store.save_trial("live", meta["key"], 1, trials[0])
    store.close()


def finish_live(path: Path) -> None:
    store = RunStore(path)
    store.finish_run("live", "2026-01-03T00:01:00Z", 60_000.0)
    store.close()


@contextmanager
def serving(store: Path) -> Iterator[str]:
    """The viewer's real aiohttp server on a free port of 127.0.0.1, in a thread; its URL."""
    from aiohttp import web

    from assertly.viewer._app import build_app

    started = threading.Event()
    found: dict[str, Any] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        found["loop"] = loop

        async def start() -> web.AppRunner:
            app = build_app(Site(RunQueries(store)), store_label=str(store))
            runner = web.AppRunner(app, access_log=None, handle_signals=False)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            found["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            return runner

        runner = loop.run_until_complete(start())
        found["stop"] = asyncio.Event()
        started.set()
        loop.run_until_complete(found["stop"].wait())
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10), "the viewer did not start"
    try:
        yield f"http://127.0.0.1:{found['port']}"
    finally:
        found["loop"].call_soon_threadsafe(found["stop"].set)
        thread.join(10)
