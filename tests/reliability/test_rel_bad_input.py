"""Bad input, clear errors (issue #14, item 8): the run store, ``-k`` and ``-j``.

A damaged or foreign store file, a read-only store and a store written by a newer assertly are
one clear line each and exit code 2, never an internal error — and a foreign SQLite file is
never written to. ``-k`` with a pathological expression is a usage error. ``-j 1000`` beyond
the open-file limit is capped up front with a message, not blamed on the agent.
"""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_support import ASSERTLY, assert_user_error, invoke, write_tests

STORE = ".assertly/runs.sqlite"


@pytest.fixture
def stored(project: Path) -> Path:
    """A project with one finished run in its store."""
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": "x", "expect": {"status": "x"}}])
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--plain")
    assert result.code == 1, result.output
    return project / STORE


def _one_line(result: object, *fragments: str) -> None:
    assert_user_error(result, *fragments)  # type: ignore[arg-type]
    assert result.stderr.strip().count("\n") == 0, result.stderr  # type: ignore[attr-defined]
    assert "internal error" not in result.output  # type: ignore[attr-defined]


def test_a_store_from_a_newer_assertly_is_refused(project: Path, stored: Path) -> None:
    with sqlite3.connect(stored) as db:
        db.execute("PRAGMA user_version = 999")
    for args in (
        ["run", "a.tests.yaml", "--target", "cmd:cat", "--plain"],
        ["report", "last", "-o", "r.json"],
        ["recheck", "last"],
    ):
        result = invoke(*args)
        _one_line(result, f"{STORE} was written by a newer assertly")


@pytest.mark.parametrize("kind", ["other_app", "same_table_name"])
def test_a_foreign_sqlite_file_is_refused_and_left_untouched(project: Path, kind: str) -> None:
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": "x", "expect": {"status": "x"}}])
    foreign = project / "app.sqlite"
    with sqlite3.connect(foreign) as db:
        if kind == "other_app":
            db.execute("CREATE TABLE users (id INTEGER, name TEXT)")
        else:
            db.execute("CREATE TABLE runs (id INTEGER, name TEXT)")
            db.execute("INSERT INTO runs VALUES (1, 'x')")
    before = foreign.read_bytes()
    for args in (
        ["run", "a.tests.yaml", "--target", "cmd:cat", "--plain", "--store", "app.sqlite"],
        ["report", "last", "-o", "r.json", "--store", "app.sqlite"],
    ):
        result = invoke(*args)
        _one_line(result, "app.sqlite is not an assertly run store")
    assert foreign.read_bytes() == before
    assert (
        not (project / "app.sqlite-wal").exists() or not (project / "app.sqlite-wal").stat().st_size
    )


def test_a_damaged_store_is_one_clear_line(project: Path, stored: Path) -> None:
    shutil.copy(stored, project / "copy.sqlite")
    with sqlite3.connect(stored) as db:  # fold the WAL in, so the damage is in the file itself
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(stored.read_bytes())
    assert len(data) >= 4096 * 3
    data[4096 + 100 :] = os.urandom(len(data) - 4096 - 100)  # pages after the first
    stored.write_bytes(bytes(data))
    for args in (
        ["report", "last", "-o", "r.json"],
        ["run", "a.tests.yaml", "--target", "cmd:cat"],
    ):
        result = invoke(*args)
        _one_line(result, STORE)
    stored.write_bytes(os.urandom(8192))
    _one_line(invoke("report", "last", "-o", "r.json"), STORE)


@pytest.fixture
def read_only(stored: Path) -> Iterator[Path]:
    """The store made read-only: immutable for root (chattr +i), mode 0444 otherwise."""
    with sqlite3.connect(stored) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(stored)], capture_output=True, check=False)
        if done.returncode != 0:
            pytest.skip("cannot make a file read-only for root here (chattr +i)")
        yield stored
        subprocess.run(["chattr", "-i", str(stored)], check=True)
    else:
        stored.chmod(0o444)
        yield stored
        stored.chmod(0o644)


def test_a_read_only_store_is_one_clear_line_and_still_readable(
    project: Path, read_only: Path
) -> None:
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--plain")
    _one_line(result, f"the run store {STORE} is read-only")
    report = invoke("report", "last", "-o", "r.json")  # reading needs no write
    assert report.code == 1 and (project / "r.json").is_file(), report.output


@pytest.mark.parametrize(
    "expression",
    [
        "not " * 200_000 + "a",
        "(" * 100_000 + "a" + ")" * 100_000,
        " and ".join(["a"] * 300_000),
        "a " + "or (" * 50_000 + "b",
        "not " * 150 + "a",
        "(" * 150 + "a" + ")" * 150,
        "(a or b",
    ],
    ids=["not-chain", "parentheses", "long-and", "unclosed", "deep-not", "deep", "open"],
)
def test_a_pathological_keyword_expression_is_a_usage_error(project: Path, expression: str) -> None:
    write_tests(project / "a.tests.yaml", [{"id": "a", "input": "x", "expect": {"status": "x"}}])
    result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "-k", expression)
    assert_user_error(result, "-k")
    assert len(result.output) < 2000, result.output[:2000]


def test_keyword_expressions_still_select(project: Path) -> None:
    tests = [
        {"id": name, "input": "x", "expect": {"status": "x"}, "tags": tags}
        for name, tags in (("login-ok", ["fast"]), ("login-bad", []), ("search", ["fast"]))
    ]
    write_tests(project / "a.tests.yaml", tests)
    for expression, expected in (
        ("login and not bad", {"login-ok"}),
        ("fast or bad", {"login-ok", "login-bad", "search"}),
        ("not (login or search)", set()),
        ("(login) and (not (fast))", {"login-bad"}),
        ("LOGIN and fast", {"login-ok"}),
    ):
        result = invoke("run", "a.tests.yaml", "--target", "cmd:cat", "--plain", "-k", expression)
        ran = {line.split("::")[-1] for line in result.stdout.splitlines() if "::" in line}
        ran = {name.split()[0] for name in ran}
        if expected:
            assert expected <= ran and not (ran - expected - {""}), (expression, result.output)
        else:
            assert result.code == 2, (expression, result.output)


def _low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


def test_concurrency_beyond_the_open_file_limit_is_capped_up_front(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import sys, time\ndata = sys.stdin.read()\ntime.sleep(0.2)\nprint(data)\n",
        encoding="utf-8",
    )
    write_tests(
        tmp_path / "many.tests.yaml",
        [
            {"id": f"t{n}", "input": {"n": n}, "expect": {"field_equals": {"n": n}}}
            for n in range(80)
        ],
    )
    completed = subprocess.run(
        [
            ASSERTLY,
            "run",
            "many.tests.yaml",
            "--target",
            f"cmd:{sys.executable} {agent}",
            "-j",
            "1000",
            "--plain",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_low_file_limit,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-3000:]
    assert "80 passed" in output
    assert "Too many open files" not in output
    assert "-j 1000 is capped to" in output and "open files" in output
    first = completed.stdout.splitlines()[0]
    assert first.startswith("warning: -j 1000 is capped to"), first  # up front, before any call
