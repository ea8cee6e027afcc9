"""``assertly run`` and ``validate`` with model-graded assertions against a fake judge server."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml
from click.testing import CliRunner
from fake_openai import FakeOpenAI, Raw, completion, verdict

from assertly.cli import main
from assertly.reports._report_schema import report_schema
from store_support import stored_records_text

AGENT = "import json, sys; q = json.load(sys.stdin); print(json.dumps({'answer': q['say']}))"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    return tmp_path


def write(path: Path, data: Any) -> Path:
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def config(project: Path, fake: FakeOpenAI | None, **judge: Any) -> None:
    data: dict[str, Any] = {"agents": {"bot": f"cmd:{sys.executable} agent.py"}}
    if fake is not None:
        data["judge"] = {"base_url": fake.url, "model": "judge-1", **judge}
    write(project / "assertly.yaml", data)


def write_polite_tests(project: Path) -> Path:
    rubric = [{"type": "llm-rubric", "value": "The answer thanks the user."}]
    return write(
        project / "polite.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "manners": {
                    "tests": [
                        {"id": "thanks", "input": {"say": "Thank you!"}, "assertions": rubric},
                        {"id": "rude", "input": {"say": "Go away."}, "assertions": rubric},
                    ]
                }
            },
        },
    )


def run(*args: str) -> tuple[int, str, dict[str, Any] | None]:
    report = Path("report.json")
    report.unlink(missing_ok=True)
    argv = list(args)
    if argv[0] == "run":
        argv += ["-o", str(report)]
    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    data = json.loads(report.read_text()) if report.exists() else None
    if data is not None:
        jsonschema_rs.validator_for(report_schema()).validate(data)
    return result.exit_code, result.output, data


def by_content(body: dict[str, Any]) -> str:
    """The fake judge's rule: pass what thanks the user."""
    user = body["messages"][-1]["content"]
    if "Thank you!" in user:
        return verdict("pass", 0.95, "it thanks the user")
    return verdict("fail", 0.05, "no thanks")


def test_a_run_judges_caches_and_reports_the_judges_cost(
    project: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-judge-secret-4242")
    config(project, fake, api_key="${JUDGE_KEY_FOR_TEST}", input_usd_per_mtok=10.0)
    write_polite_tests(project)
    fake.answers(by_content)
    code, output, report = run("run", "polite.tests.yaml", "--plain")
    assert code == 1, output
    assert report is not None
    tests = {test["id"]: test for test in report["tests"]}
    assert tests["thanks"]["status"] == "passed" and tests["rude"]["status"] == "failed"
    metrics = tests["thanks"]["trials"][0]["metrics"]
    assert metrics["judge_tokens"] == 120 and metrics["judge_cost_usd"] == pytest.approx(0.001)
    assert metrics["cost_usd"] is None  # the agent's cost stays the agent's
    summary = report["summary"]
    assert summary["judge_calls"] == 2 and summary["judge_tokens"] == 240
    assert summary["judge_cost_usd"] == pytest.approx(0.002)
    assert "no thanks" in json.dumps(tests["rude"]["trials"][0]["failures"])
    assert len(fake.requests) == 2
    assert fake.headers[0]["Authorization"] == "Bearer sk-judge-secret-4242"

    # The same run again: every judgement from the cache, zero requests.
    code, _, report = run("run", "polite.tests.yaml", "--plain")
    assert code == 1 and report is not None
    assert len(fake.requests) == 2
    assert report["summary"]["judge_calls"] == 0 and report["summary"]["judge_cached"] == 2
    assert report["summary"]["judge_cost_usd"] == 0

    # off: asks again; replay: from the cache, and offline.
    run("run", "polite.tests.yaml", "--plain", "--judge-cache", "off")
    assert len(fake.requests) == 4
    code, _, report = run("run", "polite.tests.yaml", "--plain", "--judge-cache", "replay")
    assert report is not None and code == 1 and len(fake.requests) == 4

    # The secret is nowhere in the store.
    data = (project / ".assertly" / "runs.sqlite").read_bytes()
    data += stored_records_text(project / ".assertly" / "runs.sqlite")
    for suffix in ("-wal", "-shm"):
        extra = project / ".assertly" / f"runs.sqlite{suffix}"
        if extra.exists():
            data += extra.read_bytes()
    assert b"sk-judge-secret-4242" not in data
    assert b"sk-judge-secret" not in json.dumps(report).encode()


def test_replay_misses_are_errors_naming_the_mode(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake)
    write_polite_tests(project)
    code, _, report = run("run", "polite.tests.yaml", "--plain", "--judge-cache", "replay")
    assert report is not None and code == 1
    assert {test["status"] for test in report["tests"]} == {"error"}
    assert "--judge-cache replay" in json.dumps(report)
    assert fake.requests == []


def test_max_cost_usd_stops_judging_in_a_run(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake, max_cost_usd=0.01)
    write_polite_tests(project)
    fake.answers(Raw(200, completion(verdict("pass", 1.0), cost=0.02)))
    _, _, report = run("run", "polite.tests.yaml", "--plain", "--concurrency", "1")
    assert report is not None
    statuses = [test["status"] for test in report["tests"]]
    assert statuses == ["passed", "error"]
    assert "max_cost_usd" in json.dumps(report["tests"][1])
    assert len(fake.requests) == 1


def test_validate_without_a_judge_is_a_configuration_error(project: Path) -> None:
    config(project, None)
    write_polite_tests(project)
    code, output, _ = run("validate", "polite.tests.yaml")
    assert code == 2, output
    assert "polite.tests.yaml" in output and "needs a judge model" in output
    # A dataset suite too.
    write(project / "cases.jsonl", '{"id": "a", "output": "Thank you!"}\n')
    write(
        project / "data.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "graded": {"dataset": "cases.jsonl", "expect": {"rubric": "It thanks."}}
            },
        },
    )
    code, output, _ = run("validate", "data.tests.yaml")
    assert code == 2 and "suite graded" in output


def test_validate_with_a_judge_passes(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake)
    write_polite_tests(project)
    code, output, _ = run("validate", "polite.tests.yaml")
    assert code == 0, output
    assert fake.requests == []  # validating calls no model


def test_recorded_dataset_outputs_are_judged(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake)
    write(
        project / "cases.jsonl",
        '{"id": "a", "output": "Thank you!"}\n{"id": "b", "output": "Go away."}\n',
    )
    write(
        project / "data.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "graded": {"dataset": "cases.jsonl", "expect": {"rubric": "It thanks."}}
            },
        },
    )
    fake.answers(by_content)
    _, _, report = run("run", "data.tests.yaml", "--plain")
    assert report is not None
    assert [t["status"] for t in report["tests"]] == ["passed", "failed"]
    with sqlite3.connect(project / ".assertly" / "runs.sqlite") as db:
        assert db.execute("SELECT count(*) FROM judge_cache").fetchone() == (2,)


def test_recheck_judges_again_from_the_cache(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake)
    write_polite_tests(project)
    fake.answers(by_content)
    run("run", "polite.tests.yaml", "--plain")
    assert len(fake.requests) == 2
    report = project / "recheck.json"
    result = CliRunner().invoke(main, ["recheck", "last", "-o", str(report)])
    assert result.exit_code == 1, result.output
    tests = {test["id"]: test["status"] for test in json.loads(report.read_text())["tests"]}
    assert tests == {"thanks": "passed", "rude": "failed"}
    assert len(fake.requests) == 2  # the same requests: the cache answered
    # A changed rubric asks the judge again.
    rubric = [{"type": "llm-rubric", "value": "The answer is short."}]
    data = yaml.safe_load((project / "polite.tests.yaml").read_text())
    for test in data["test_suites"]["manners"]["tests"]:
        test["assertions"] = rubric
    write(project / "polite.tests.yaml", data)
    CliRunner().invoke(main, ["recheck", "last~1", "-o", str(report)])
    assert len(fake.requests) == 4


def test_similar_through_the_endpoint_in_a_run(project: Path, fake: FakeOpenAI) -> None:
    config(project, fake, embedding_model="embed-1")
    write(
        project / "cases.jsonl",
        '{"id": "same", "output": "refund in five days"}\n{"id": "other", "output": "elephants"}\n',
    )
    spec = {"type": "similar", "value": "Refund in five days.", "config": {"provider": "openai"}}
    write(
        project / "sim.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {"sim": {"dataset": "cases.jsonl", "assertions": [spec]}},
        },
    )
    _, _, report = run("run", "sim.tests.yaml", "--plain", "--concurrency", "1")
    assert report is not None
    assert [t["status"] for t in report["tests"]] == ["passed", "failed"]
    # The reference was sent once, then came from the cache.
    assert [r["input"] for r in fake.embedding_requests] == [
        ["refund in five days", "Refund in five days."],
        ["elephants"],
    ]
    assert report["summary"]["judge_calls"] == 2
    code, output, _ = run("validate", "sim.tests.yaml")
    assert code == 0, output


def _slow_costly(body: dict[str, Any]) -> Raw:
    """A judge call that costs $1.00 and takes a moment, so calls overlap at -j 8."""
    time.sleep(0.2)
    return Raw(200, completion(verdict("pass", 1.0), cost=1.0))


# issue 29, probe "Unbounded" 3: max_cost_usd 2.5 at -j 8 with $1.00 calls ended at $8.00;
# the budget is now reserved before each call, so a run ends at most one call over it.
def test_the_budget_is_reserved_so_a_run_overshoots_by_at_most_one_call(
    project: Path, fake: FakeOpenAI
) -> None:
    config(project, fake, max_cost_usd=2.5)
    rubric = [{"type": "llm-rubric", "value": "The answer thanks the user."}]
    tests = [
        {"id": f"t{n}", "input": {"say": f"Thank you {n}!"}, "assertions": rubric}
        for n in range(12)
    ]
    write(project / "many.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
    fake.answers(_slow_costly)
    _, output, report = run("run", "many.tests.yaml", "--plain", "-j", "8")
    assert report is not None, output
    spent = report["summary"]["judge_cost_usd"]
    assert 2.5 <= spent <= 2.5 + 1.0, spent
    assert len(fake.requests) == round(spent)
    statuses = [test["status"] for test in report["tests"]]
    assert statuses.count("passed") == len(fake.requests)
    assert statuses.count("error") == 12 - len(fake.requests)
    assert "budget is spent" in json.dumps(report)


# issue 29, probe "Unbounded" 3: llm-rubric on a 10 MB output sent a 10,000,113-character
# message to the judge; it now sends at most judge.max_input_chars and says that it cut.
@pytest.mark.parametrize("limit", [None, 5_000])
def test_the_judge_is_sent_at_most_max_input_chars(
    project: Path, fake: FakeOpenAI, limit: int | None
) -> None:
    judge = {"base_url": fake.url, "model": "judge-1"}
    if limit is not None:
        judge["max_input_chars"] = limit
    agents = {"big": f"cmd:{sys.executable} big.py"}
    write(project / "assertly.yaml", {"agents": agents, "judge": judge})
    sent = limit or 100_000
    write(project / "big.py", "print('Thank you! ' + 'x' * 10_000_000)")
    rubric = [{"type": "llm-rubric", "value": "It thanks."}]
    tests = [{"id": "big", "input": "hi", "assertions": rubric}]
    write(project / "big.tests.yaml", {"agent": "big", "test_suites": {"s": {"tests": tests}}})
    fake.answers(verdict("fail", 0.1, "too long"))
    _, output, report = run("run", "big.tests.yaml", "--plain")
    assert report is not None, output
    user = fake.requests[0]["messages"][-1]["content"]
    assert len(user) < sent + 1_000
    assert f"its first {sent:,} characters of 10,000,012" in user
    result = json.dumps(report)
    assert f"the judge was sent the first {sent:,} of the output's 10,000,012 characters" in result
    assert "judge.max_input_chars" in result
