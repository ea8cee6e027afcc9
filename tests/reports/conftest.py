"""One real sample run shared by the report tests: 7 tests in 2 suites (pass, fail, error,
flaky, skip, injected agent output) and an eval file whose suite passes with one failing case.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assertly.runner import RunOptions, RunRecord, run

AGENT = r"""
import json, os, sys
q = json.load(sys.stdin)
if q.get("crash"):
    sys.stderr.write("index unavailable\n")
    sys.exit(3)
if "text" in q:
    sys.stdout.write(q["text"])
    sys.exit(0)
if q.get("flaky"):
    # Trials may run concurrently: claim a trial number atomically; the second one fails.
    here, n = os.path.dirname(os.path.abspath(__file__)), 0
    while True:
        try:
            os.close(os.open(os.path.join(here, f"claim.{q['flaky']}.{n}"), os.O_CREAT | os.O_EXCL))
            break
        except FileExistsError:
            n += 1
    print(json.dumps({"status": "error" if n % 3 == 1 else "success", "results": []}))
    sys.exit(0)
results = [{"file": f"journal/{i}.md"} for i in range(q.get("n", 1))]
print(json.dumps({"status": "success", "results": results}))
"""


def _tests(injected: str) -> dict[str, Any]:
    return {
        "agent": "notes",
        "test_suites": {
            "search": {
                "tests": [
                    {
                        "id": "ok",
                        "input": {"n": 1},
                        "expect": {"status": "success", "results_min": 1},
                    },
                    {
                        "id": "too-many",
                        "name": "Caps results",
                        "input": {"n": 3},
                        "expect": {"results_max": 1},
                    },
                    {"id": "crash", "input": {"crash": True}, "expect": {"status": "success"}},
                    {
                        "id": "flaky",
                        "trials": 3,
                        "input": {"flaky": "a"},
                        "expect": {"status": "success"},
                    },
                    {
                        "id": "needs-prod",
                        "skip_if": "prod_only",
                        "input": {"n": 1},
                        "expect": {"status": "success"},
                    },
                ]
            },
            "summaries": {
                "tests": [
                    {
                        "id": "injected",
                        "name": "Injected output",
                        "input": {"text": injected},
                        "assertions": [{"type": "contains", "value": "hello"}],
                    },
                    {
                        "id": "plain",
                        "input": {"text": "hello world"},
                        "assertions": [{"type": "contains", "value": "hello"}],
                    },
                ]
            },
        },
    }


def _workflow(bad_output: str) -> str:
    return f"""\
blocks:
  writer:
    assertions:
      - {{type: contains, value: done}}
eval:
  threshold: 0.5
  cases:
    - {{id: good, fixtures: {{writer: all done}}}}
    - {{id: bad, description: writer forgets, fixtures: {{writer: {json.dumps(bad_output)}}}}}
"""


SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """``sample_run(name, injected, bad_eval_output)`` → the finished run and its store."""

    def make(name: str, injected: str, bad_eval_output: str) -> tuple[RunRecord, Path]:
        tmp = tmp_path_factory.mktemp(name)
        (tmp / "agent.py").write_text(AGENT)
        (tmp / "notes.tests.json").write_text(json.dumps(_tests(injected)))
        (tmp / "writer.yaml").write_text(_workflow(bad_eval_output))
        store = tmp / "s.sqlite"
        record = run(
            RunOptions(
                paths=[str(tmp / "notes.tests.json"), str(tmp / "writer.yaml")],
                target=f"cmd:{sys.executable} {tmp / 'agent.py'}",
                store_path=str(store),
                facts={"prod_only": True},
                pass_threshold="all",
                concurrency=1,  # trials in order: the flaky agent fails its second call
            )
        )
        return record, store

    return make
