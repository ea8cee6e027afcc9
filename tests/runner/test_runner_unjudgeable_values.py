"""Values that cannot be judged are errors, never verdicts: NaN and infinite costs or latencies
wherever they come from, a Python agent's NaN (never stored as ``null``) or its None."""

from __future__ import annotations

import json
import uuid

import pytest
from runner_support import HttpAgent, Project

METRIC_ASSERTIONS = {
    "cost": {"type": "cost", "threshold": 1.0},
    "not-cost": {"type": "not-cost", "threshold": 1.0},
    "latency": {"type": "latency", "threshold": 60000},
    "not-latency": {"type": "not-latency", "threshold": 60000},
}


def _metric_tests(payload: dict[str, object]) -> list[dict[str, object]]:
    return [
        {"id": name, "input": payload, "assertions": [assertion]}
        for name, assertion in METRIC_ASSERTIONS.items()
    ]


@pytest.mark.parametrize("reported", ["NaN", "nan", "Infinity", "-inf", "inf"])
def test_a_non_finite_cost_header_is_an_error_for_cost_and_not_cost(
    project: Project, http_server: HttpAgent, reported: str
) -> None:
    project.write("assertly.yaml", {"agents": {"api": http_server.url("/metrics")}})
    tests = _metric_tests({"cost": reported, "latency": reported})
    project.write("m.tests.yaml", {"agent": "api", "test_suites": {"m": {"tests": tests}}})
    result = project.run("run", ".")
    assert result.exit_code == 1
    for name in METRIC_ASSERTIONS:
        trial = result.tests[name]["trials"][0]
        assert result.status(name) == "error", (name, trial)
        attribute = "cost_usd" if "cost" in name else "latency_ms"
        message = trial["failures"][0]["message"]
        assert message.startswith(f"{attribute} is "), message
        assert "not a finite number" in message


def test_a_finite_cost_header_is_judged(project: Project, http_server: HttpAgent) -> None:
    project.write("assertly.yaml", {"agents": {"api": http_server.url("/metrics")}})
    tests = _metric_tests({"cost": "0.5", "latency": "12"})
    project.write("m.tests.yaml", {"agent": "api", "test_suites": {"m": {"tests": tests}}})
    result = project.run("run", ".")
    assert {name: result.status(name) for name in METRIC_ASSERTIONS} == {
        "cost": "passed",
        "not-cost": "failed",
        "latency": "passed",
        "not-latency": "failed",
    }


def test_a_nan_cost_in_a_metadata_file_is_an_error(project: Project) -> None:
    # Python's json.dump writes NaN unless told not to; the file is still read.
    tests = [
        {"id": name, "input": {"mode": "meta", "cost": "nan"}, "assertions": [assertion]}
        for name, assertion in METRIC_ASSERTIONS.items()
        if "cost" in name
    ]
    project.tests_file("meta.tests.yaml", {"s": tests})
    result = project.run("run", ".", "--target", project.agent)
    for name in ("cost", "not-cost"):
        assert result.status(name) == "error"
        message = result.tests[name]["trials"][0]["failures"][0]["message"]
        assert message == "cost_usd is nan, not a finite number, so cost cannot be judged"


def python_agent(project: Project, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """Write ``source`` as an importable module with a unique name; return the name."""
    name = f"py_agent_{uuid.uuid4().hex[:8]}"
    project.write(f"{name}.py", source)
    monkeypatch.syspath_prepend(str(project.root))
    return name


NAN_AGENT = """
from assertly import TargetResponse

def value(payload):
    return {"status": "success", "score": float("nan")}

def nested(payload):
    return {"status": "success", "results": [{"relevance": float("-inf")}]}

def bare(payload):
    return float("inf")

def cost(payload):
    return TargetResponse({"status": "success"}, cost_usd=float("nan"))
"""


def test_a_python_agent_returning_nan_is_an_error_not_null(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = python_agent(project, monkeypatch, NAN_AGENT)
    project.tests_file(
        "nan.tests.yaml",
        {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]},
    )
    for function, shown in (("value", "nan"), ("nested", "-inf"), ("bare", "inf")):
        result = project.run("run", ".", "--target", f"py:{name}:{function}")
        assert result.status("t") == "error", function
        error = result.tests["t"]["trials"][0]["error"]
        assert f"returned a value holding {shown}, which is not JSON" in error
    project.tests_file(
        "nan.tests.yaml",
        {"s": [{"id": "t", "input": {}, "assertions": [{"type": "not-cost", "threshold": 1}]}]},
    )
    result = project.run("run", ".", "--target", f"py:{name}:cost")
    assert result.status("t") == "error"


NONE_AGENT = """
def forgot(payload):
    payload["seen"] = True  # no return

def null_text(payload):
    return "null"
"""


def test_a_python_agent_returning_none_is_an_error(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Judged as JSON null, a forgotten `return` would pass every not- assertion.
    name = python_agent(project, monkeypatch, NONE_AGENT)
    project.tests_file(
        "none.tests.yaml",
        {"s": [{"id": "t", "input": {}, "assertions": [{"type": "not-contains", "value": "x"}]}]},
    )
    forgot = project.run("run", ".", "--target", f"py:{name}:forgot")
    assert forgot.status("t") == "error"
    assert (
        "returned None, so there is no output to judge" in forgot.tests["t"]["trials"][0]["error"]
    )
    null = project.run("run", ".", "--target", f"py:{name}:null_text")
    assert null.status("t") == "passed"


def test_latency_of_a_recorded_response_is_not_measured(project: Project) -> None:
    # A recorded answer took no time to "call": latency is an error unless the record says.
    tests = [
        {"id": name, "input": {}, "assertions": [assertion]}
        for name, assertion in METRIC_ASSERTIONS.items()
    ]
    project.tests_file("rec.tests.yaml", {"s": tests})
    bare = "\n".join(json.dumps({"id": name, "output": "ok"}) for name in METRIC_ASSERTIONS)
    project.write("bare.jsonl", bare + "\n")
    result = project.run("run", ".", "--target", "fixtures:bare.jsonl")
    for name in METRIC_ASSERTIONS:
        assert result.status(name) == "error", name
        message = result.tests[name]["trials"][0]["failures"][0]["message"]
        assert "was not measured for this output" in message
    measured = "\n".join(
        json.dumps({"id": name, "output": "ok", "latency_ms": 120, "cost_usd": 0.5})
        for name in METRIC_ASSERTIONS
    )
    project.write("measured.jsonl", measured + "\n")
    result = project.run("run", ".", "--target", "fixtures:measured.jsonl")
    assert {name: result.status(name) for name in METRIC_ASSERTIONS} == {
        "cost": "passed",
        "not-cost": "failed",
        "latency": "passed",
        "not-latency": "failed",
    }
