"""``llm-rubric`` through the pytest plugin, against the fake judge server (issue 29).

pytest runs in a real subprocess (as a user runs it), with and without a run store, and with
pytest-xdist workers. The judge's answers depend on the agent's output, so a test that passes
and one that fails show that the judge really judged (an error is never a pass).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAI
from test_judge_run import by_content, write_polite_tests

AGENT = "import json, sys; q = json.load(sys.stdin); print(json.dumps({'answer': q['say']}))"


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {
        "agents": {"bot": f"cmd:{sys.executable} agent.py"},
        "judge": {"base_url": fake.url, "model": "judge-1"},
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    write_polite_tests(tmp_path)
    fake.answers(by_content)
    return tmp_path


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def outcomes(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """``{test: PASSED | FAILED | ERROR}`` from pytest's -rA summary."""
    found: dict[str, str] = {}
    for line in result.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            found[rest.split(" ")[0].rsplit("::", 1)[-1]] = word
    return found


def report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_llm_rubric_under_pytest_judges_without_a_store_error(
    project: Path, fake: FakeOpenAI
) -> None:
    # issue 29, first contact: "StoreError: cannot write to the run store :memory:: SQLite
    # objects created in a thread can only be used in that same thread"
    result = pytest_in(project, "polite.tests.yaml")
    assert "StoreError" not in result.stdout + result.stderr
    assert outcomes(result) == {"thanks": "PASSED", "rude": "FAILED"}, result.stdout[-3000:]
    assert len(fake.requests) == 2


def test_llm_rubric_under_pytest_with_a_store_caches_and_counts(
    project: Path, fake: FakeOpenAI
) -> None:
    # issue 29, first contact: the same with --assertly-store; the judge cache lives in the
    # run store, so a second session asks the judge nothing, and the report counts both.
    args = ("polite.tests.yaml", "--assertly-store", "runs.sqlite")
    first = pytest_in(project, *args, "--assertly-report", "first.json")
    assert outcomes(first) == {"thanks": "PASSED", "rude": "FAILED"}, first.stdout[-3000:]
    summary = report(project / "first.json")["summary"]
    assert (summary["judge_calls"], summary["judge_cached"]) == (2, 0)
    assert summary["judge_tokens"] > 0
    assert len(fake.requests) == 2

    second = pytest_in(project, *args, "--assertly-report", "second.json")
    assert outcomes(second) == {"thanks": "PASSED", "rude": "FAILED"}, second.stdout[-3000:]
    summary = report(project / "second.json")["summary"]
    assert (summary["judge_calls"], summary["judge_cached"]) == (0, 2)
    assert len(fake.requests) == 2  # nothing asked again


def test_llm_rubric_under_pytest_xdist(project: Path, fake: FakeOpenAI) -> None:
    # issue 29, first contact: the same with `-n 2` (each worker has its own loop thread and
    # its own connection to the run store; their judge spends add up in the one run).
    result = pytest_in(
        project,
        "polite.tests.yaml",
        "-n",
        "2",
        "--assertly-store",
        "runs.sqlite",
        "--assertly-report",
        "r.json",
    )
    assert "StoreError" not in result.stdout + result.stderr
    assert outcomes(result) == {"thanks": "PASSED", "rude": "FAILED"}, result.stdout[-3000:]
    summary = report(project / "r.json")["summary"]
    assert (summary["passed"], summary["failed"], summary["errored"]) == (1, 1, 0)
    assert summary["judge_calls"] + summary["judge_cached"] == 2
