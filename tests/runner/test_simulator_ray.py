"""The simulated user on Ray workers (issue 32): its spend reaches the driver's summary.

The conversation runs on a worker of a real local cluster (the cluster of
tests/runner/test_runner_ray.py), which asks the fake simulator itself; what it spent comes
back with each trial, apart from the judge's, as the judge's does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project

pytest.importorskip("ray", reason="the Ray backend's tests need `pip install assertly[ray]`")

from test_runner_ray import cluster
from test_simulator_run import _says, _setup

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
import fake_openai

__all__ = ["cluster"]


@pytest.fixture
def servers() -> Iterator[tuple[Any, Any]]:
    simulator, judge = fake_openai.serve(), fake_openai.serve()
    try:
        yield next(simulator), next(judge)
    finally:
        simulator.close()
        judge.close()


def test_the_workers_simulator_spend_reaches_the_report_and_console(
    project: Project, cluster: None, servers: tuple[Any, Any]
) -> None:
    simulator, judge = servers
    simulator.answers(_says("Where is my refund?", "Thanks [END]"))
    user = {"persona": "A customer who wants a refund.", "first_message": "Hi"}
    _setup(project, simulator, judge, user)
    result = project.run("run", "t.yaml", "--backend", "ray", "--judge-cache", "off")
    assert result.exit_code == 0, result.stdout + result.stderr
    trial = result.tests["refund"]["trials"][0]
    assert [t["user"] for t in trial["turns"]] == ["Hi", "Where is my refund?"]
    assert trial["conversation"]["ended"] == "stop_token"
    assert len(simulator.requests) == 2  # the worker really asked
    summary = result.summary
    assert summary["simulator_calls"] == 2 and summary["simulator_cached"] == 0
    assert summary["simulator_cost_usd"] == pytest.approx(0.02)
    assert summary["judge_calls"] == 1  # apart from the judge's
    assert "simulator: 2 call(s), 0 from the cache, 240 tokens, $0.0200" in result.stdout
