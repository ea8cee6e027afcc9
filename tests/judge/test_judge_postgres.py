"""The judge cache and spend in a PostgreSQL run store (a real server the tests start)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from fake_openai import FakeOpenAI, verdict

from assertly.cli import main

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")


@pytest.fixture
def database(postgres_database: str) -> str:
    """A fresh database on the test server the tests start (see tests/conftest.py)."""
    return postgres_database


def test_a_repeated_run_is_judged_from_the_postgres_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, database: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assertly.yaml").write_text(
        yaml.safe_dump(
            {
                "agents": {"bot": f"cmd:{sys.executable} -c 'print(1)'"},
                "judge": {"base_url": fake.url, "model": "judge-1"},
            }
        )
    )
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "output": "Thanks!"}\n')
    (tmp_path / "t.tests.yaml").write_text(
        yaml.safe_dump(
            {
                "agent": "bot",
                "test_suites": {"s": {"dataset": "cases.jsonl", "expect": {"rubric": "polite"}}},
            }
        )
    )
    fake.answers(verdict("pass", 0.9))
    summaries = []
    for _ in range(2):
        report = tmp_path / "report.json"
        result = CliRunner().invoke(
            main, ["run", "t.tests.yaml", "--plain", "--store", database, "-o", str(report)]
        )
        assert result.exit_code == 0, result.output
        summaries.append(json.loads(report.read_text())["summary"])
    assert len(fake.requests) == 1
    assert (summaries[0]["judge_calls"], summaries[1]["judge_cached"]) == (1, 1)
