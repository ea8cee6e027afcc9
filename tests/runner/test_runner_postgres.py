"""The PostgreSQL run store, against a real PostgreSQL server: the same behaviour as SQLite.

The tests start the server themselves (initdb and pg_ctl in a temporary directory, see
tests/conftest.py); each test gets a database of its own, dropped afterwards. Without
PostgreSQL's binaries the tests are skipped and say why.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed (pip install -e '.[dev]')"
)

PASSWORD = "assertly-test"


@pytest.fixture
def database(postgres_database: str) -> str:
    """A fresh database on the test server (see tests/conftest.py)."""
    return postgres_database


def _suite(project: Project, log: Path) -> None:
    project.tests_file(
        "p.tests.yaml",
        {
            "s": [
                {"id": "ok", "input": {"log": str(log)}, "expect": {"status": "success"}},
                {"id": "bad", "input": {"log": str(log)}, "expect": {"status": "error"}},
                {
                    "id": "twice",
                    "trials": 2,
                    "input": {"log": str(log)},
                    "expect": {"status": "success", "results": {"min": 1}},
                },
            ]
        },
    )


def _verdicts(report: dict[str, Any]) -> dict[str, Any]:
    return {
        test["id"]: (test["status"], [t["status"] for t in test["trials"]], test["passes"])
        for test in report["tests"]
    }


def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return list(connection.execute(query))


def test_a_postgres_store_behaves_as_the_sqlite_one(
    project: Project, database: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    _suite(project, log)
    local = project.run("run", ".", "--target", project.agent)
    shared = project.run("run", ".", "--target", project.agent, "--store", database)
    assert shared.exit_code == local.exit_code == 1
    assert _verdicts(shared.report) == _verdicts(local.report)
    assert shared.counts() == local.counts()
    # Every command reads it: report, resume, recheck, diff, bless and a baseline gate.
    report = project.run("report", "last", "--store", database)
    assert report.exit_code == 1 and _verdicts(report.report) == _verdicts(shared.report)
    calls = len(log.read_text().splitlines())
    resumed = project.run("run", "--resume", "last", "--store", database)
    assert "nothing to resume" in resumed.stderr
    assert len(log.read_text().splitlines()) == calls
    rechecked = project.run("recheck", "last", "--store", database)
    assert _verdicts(rechecked.report) == _verdicts(shared.report)
    diff = project.run("diff", "last~1", "last", "--store", database, "--format", "json")
    assert diff.exit_code == 0
    assert {t["change"] for t in json.loads(diff.stdout)["tests"]} == {"unchanged"}
    assert project.run("bless", "last~1", "--store", database).exit_code == 0
    gated = project.run(
        "run", ".", "--target", project.agent, "--store", database, "--baseline", "blessed"
    )
    assert gated.exit_code == 0 and "gate: 0 regressions" in gated.stdout
    # Nothing went to the SQLite file of the project for the database runs.
    assert project.sql("SELECT COUNT(*) FROM runs")[0][0] == 1


def test_a_changed_test_runs_again_on_resume(
    project: Project, database: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    _suite(project, log)
    project.run("run", ".", "--target", project.agent, "--store", database)
    before = len(log.read_text().splitlines())
    project.tests_file(
        "p.tests.yaml",
        {"s": [{"id": "ok", "input": {"log": str(log)}, "expect": {"status": "error"}}]},
    )
    again = project.run("run", "--resume", "last", "--store", database)
    assert len(log.read_text().splitlines()) == before + 1
    assert again.report["tests"][0]["status"] == "failed"


def test_three_shards_write_one_database_at_once(
    project: Project, database: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    tests = [
        {"id": f"t{n}", "input": {"log": str(log), "mode": "slow", "delay": 0.05},
         "expect": {"status": "success"}}
        for n in range(18)
    ]  # fmt: skip
    project.tests_file("many.tests.yaml", {"s": tests})
    command = [sys.executable, "-m", "assertly.cli", "run", ".", "--target", project.agent]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    # All three start on an empty database: the schema is made once, under a lock.
    shards = [
        subprocess.Popen(
            [*command, "--store", database, "--shard", f"{i}/3", "--plain"],
            cwd=project.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for i in (1, 2, 3)
    ]
    outputs = [shard.communicate(timeout=120)[0].decode() for shard in shards]
    assert [shard.returncode for shard in shards] == [0, 0, 0], outputs
    merged = project.run("merge", "last", "last~1", "last~2", "--store", database)
    assert merged.exit_code == 0
    assert merged.counts() == (18, 18, 0, 0, 0)
    assert len(log.read_text().splitlines()) == 18, "every test ran once, in one shard"
    counts = _rows(database, "SELECT run_id, COUNT(*) FROM trials GROUP BY run_id")
    assert len(counts) == 4 and sum(n for _, n in counts) == 36, "the shards' 18, merged 18"


def test_a_killed_run_resumes_from_the_database(
    project: Project, database: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    tests = [
        {"id": f"t{n:02d}", "input": {"log": str(log), "mode": "slow", "delay": 0.2},
         "expect": {"status": "success"}}
        for n in range(12)
    ]  # fmt: skip
    project.tests_file("slow.tests.yaml", {"s": tests})
    command = [sys.executable, "-m", "assertly.cli", "run", ".", "--target", project.agent]
    run = subprocess.Popen(
        [*command, "--store", database, "-j", "1", "--plain"],
        cwd=project.root,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(psycopg.Error):
                if _rows(database, "SELECT COUNT(*) FROM trials")[0][0] >= 3:
                    break
            time.sleep(0.05)
        run.kill()  # SIGKILL: nothing is flushed or cleaned up
        run.wait(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    stored = _rows(database, "SELECT COUNT(*) FROM trials")[0][0]
    assert 3 <= stored < 12, "killed mid-run"
    resumed = project.run("run", "--resume", "last", "--store", database)
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.counts() == (12, 12, 0, 0, 0)
    per_test = _rows(database, "SELECT test_key, COUNT(*) FROM trials GROUP BY test_key")
    assert len(per_test) == 12 and {n for _, n in per_test} == {1}, "one verdict each"
    # The killed run's claim was taken over; no test it had judged was called again.
    assert len(log.read_text().splitlines()) <= 12 + 1


def test_the_password_is_a_secret(project: Project, database: str, tmp_path: Path) -> None:
    _suite(project, tmp_path / "calls.log")
    result = project.run("run", ".", "--target", project.agent, "--store", database)
    assert result.exit_code == 1
    stored = _rows(database, "SELECT options FROM runs")[0][0]
    assert PASSWORD not in stored and "assertly:****@" in stored
    everything = _rows(
        database,
        "SELECT string_agg(meta, '') FROM tests "
        "UNION ALL SELECT string_agg(record, '') FROM trials",
    )
    assert all(PASSWORD not in (text or "") for (text,) in everything)
    assert PASSWORD not in result.stdout + result.stderr
    assert PASSWORD not in json.dumps(result.report)
    wrong = database.replace(PASSWORD, "not-the-password")
    refused = project.run("report", "last", "--store", wrong)
    assert refused.exit_code == 2
    assert "****@" in refused.stderr and "not-the-password" not in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_database_from_a_newer_assertly_or_none_at_all(
    project: Project, database: str, tmp_path: Path
) -> None:
    _suite(project, tmp_path / "calls.log")
    empty = project.run("report", "last", "--store", database)
    assert empty.exit_code == 2 and "nothing has run here yet" in empty.stderr
    project.run("run", ".", "--target", project.agent, "--store", database)
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("UPDATE assertly_store SET value = '99' WHERE key = 'schema_version'")
    newer = project.run("run", ".", "--target", project.agent, "--store", database)
    assert newer.exit_code == 2
    assert "written by a newer assertly (store schema 99" in newer.stderr
    down = project.run("report", "last", "--store", "postgresql://u:secretpw@127.0.0.1:1/x")
    assert down.exit_code == 2
    assert "cannot open the run store postgresql://u:****@127.0.0.1:1/x" in down.stderr


def test_the_store_url_in_the_config_reads_the_password_from_the_environment(
    project: Project, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(project, tmp_path / "calls.log")
    project.write(
        "assertly.yaml",
        {"store": database.replace(PASSWORD, "${ASSERTLY_DB_PASSWORD}"), "agents": {}},
    )
    missing = project.run("run", ".", "--target", project.agent)
    assert missing.exit_code == 2 and "${ASSERTLY_DB_PASSWORD} is not set" in missing.stderr
    monkeypatch.setenv("ASSERTLY_DB_PASSWORD", PASSWORD)
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 1
    assert _rows(database, "SELECT COUNT(*) FROM runs")[0][0] == 1


def test_a_percent_encoded_password_is_never_stored(
    project: Project, database: str, tmp_path: Path
) -> None:
    # issue 29, Secrets probe 2: --store postgresql://app:Pg%2F…@… was stored in clear
    _suite(project, tmp_path / "calls.log")
    written = "%61ssertly%2Dtest"  # "assertly-test", as no encoder would write it
    encoded = database.replace(PASSWORD, written)
    result = project.run("run", ".", "--target", project.agent, "--store", encoded)
    assert result.exit_code == 1, result.stdout + result.stderr
    [(stored,)] = _rows(database, "SELECT options FROM runs")
    assert written not in stored and PASSWORD not in stored and "assertly:****@" in stored
    assert written not in result.stdout + result.stderr + json.dumps(result.report)


def test_a_variable_in_the_store_url_is_never_shown(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 29, Secrets probe 2: a ${PGPW} inside store: was shown in an error. A password with
    # an unencoded '/', ':' and '@' is one urllib cannot find; and a host from ${VAR} too.
    _suite(project, tmp_path / "calls.log")
    project.write(
        "assertly.yaml",
        {"store": "postgresql://app:${PGPW_29}@${PGHOST_29}:1/db", "agents": {}},
    )
    monkeypatch.setenv("PGPW_29", "Pg/sec:ret@x-29")
    monkeypatch.setenv("PGHOST_29", "127.0.0.1")
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "cannot open the run store postgresql://app:****@" in result.stderr, result.stderr
    for part in ("Pg/sec", "sec:ret", "ret@x-29", "127.0.0.1"):
        assert part not in result.stdout + result.stderr, part
