"""``assertly.run`` and ``assertly.arun``: suites run from Python as ``assertly run`` runs them."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import assertly
from assertly import ConfigError, RunResult, _records
from assertly.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = ["notes.tests.yaml", "summarizer.workflow.yaml"]
NOW = "2026-01-20T00:00:00Z"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example project (its own run store), as the working directory."""
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("reports"))
    monkeypatch.chdir(root)
    return root


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def _comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in summary.items() if key != "duration_ms"}


def _verdicts(report: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(test["key"], test["status"], len(test["trials"])) for test in report["tests"]]


def test_run_returns_the_summary_and_records_of_assertly_run(project: Path) -> None:
    cli = _cli("run", *FILES, "--now", NOW, "--plain", "-o", "cli.json")
    assert cli.exit_code == 1, cli.output  # two tests fail on purpose
    by_cli = json.loads((project / "cli.json").read_text())

    result = assertly.run(FILES, now=NOW, outputs=["api.json"])

    assert isinstance(result, RunResult)
    assert _comparable(result.summary) == _comparable(by_cli["summary"])
    assert result.summary["failed"] == 2 and result.exit_code == 1 and not result.passed
    by_api = json.loads((project / "api.json").read_text())
    assert _comparable(by_api["summary"]) == _comparable(by_cli["summary"])
    assert _verdicts(by_api) == _verdicts(by_cli)
    # Typed records, the ones the reports are written from.
    assert isinstance(result.record, _records.RunRecord)
    assert all(isinstance(test, _records.TestRecord) for test in result.tests)
    assert all(
        isinstance(trial, _records.TrialRecord) for test in result.tests for trial in test.trials
    )
    assert [(t.key, t.status, len(t.trials)) for t in result.tests] == _verdicts(by_cli)
    assert [suite.passed for suite in result.evals] == [e["passed"] for e in by_cli["evals"]]
    # Stored as the command stores it: `assertly report` renders it, `diff` compares it.
    again = _cli("report", result.run_id, "-o", "again.json")
    assert again.exit_code == 1, again.output
    stored = json.loads((project / "again.json").read_text())
    assert stored["summary"] == by_api["summary"]
    diff = _cli("diff", by_cli["run_id"], "last", "--format", "json")
    assert diff.exit_code == 0, diff.output


def test_run_takes_one_path_and_the_gates_of_assertly_run(project: Path) -> None:
    result = assertly.run("notes.tests.yaml", now=NOW, min_pass_rate=0.5)
    assert result.gate is not None and result.gate.exit_code == 0 and result.passed
    assert result.summary["failed"] == 2
    compared = assertly.run(
        Path("notes.tests.yaml"), now=NOW, baseline="last", suites=["errors"], allow_removed=True
    )
    assert compared.gate is not None and compared.gate.diff is not None
    assert compared.record.comparison is compared.gate.diff  # shown by the HTML report


def test_arun_runs_inside_a_running_event_loop(project: Path) -> None:
    async def main_task() -> RunResult:
        return await assertly.arun("notes.tests.yaml", suites=["errors"], now=NOW)

    result = asyncio.run(main_task())
    assert result.passed and result.summary["passed"] == result.summary["total"] > 0
    cli = _cli("run", "notes.tests.yaml", "--suite", "errors", "--now", NOW, "--plain")
    assert cli.exit_code == 0, cli.output
    assert _comparable(result.summary) == _comparable(_last_summary())

    async def unknown() -> RunResult:
        return await assertly.arun("notes.tests.yaml", suite="errors")

    with pytest.raises(ConfigError, match="suite: unknown option: did you mean 'suites'"):
        asyncio.run(unknown())


def _last_summary() -> dict[str, Any]:
    _cli("report", "last", "-o", "last.json")
    summary: dict[str, Any] = json.loads(Path("last.json").read_text())["summary"]
    return summary


def test_arun_lets_the_loop_run_while_agents_answer(project: Path) -> None:
    async def main_task() -> tuple[RunResult, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        task = asyncio.create_task(ticker())
        try:
            result = await assertly.arun(FILES, now=NOW, store_path="other.sqlite")
        finally:
            task.cancel()
        return result, ticks

    result, ticks = asyncio.run(main_task())
    assert result.summary["failed"] == 2
    assert ticks > 0
    assert (project / "other.sqlite").exists()


def test_run_inside_a_running_loop_points_to_arun(project: Path) -> None:
    async def main_task() -> None:
        assertly.run("notes.tests.yaml")

    with pytest.raises(RuntimeError, match=r"await assertly\.arun"):
        asyncio.run(main_task())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurency": 2}, "concurency: unknown option: did you mean 'concurrency'?"),
        ({"timeout": 5}, "timeout: unknown option: did you mean 'timeout_s'?"),
        ({"tag": ["smoke"]}, "tag: unknown option: did you mean 'tags'?"),
        ({"plain": True}, "plain: unknown option"),
        ({"config_path": "x.yaml"}, "config_path: unknown option: the config file is `config=`"),
        ({"concurrency": 0}, "concurrency: 0 is not in the range 1<=x<=1024"),
        ({"pass_threshold": "most"}, "pass_threshold: 'most' is not one of"),
        ({"fail_fast": "yes"}, "fail_fast: expected True or False, got 'yes'"),
        ({"trials": True}, "trials: expected integer range, got True"),
        ({"shard": "3/2"}, "shard: --shard 3/2: I must be between 1 and N"),
        ({"facts": ["prod"]}, "--fact: "),
        ({"outputs": ["report.pdf"]}, "-o: "),
        # rt30b: a nan gate was taken (it failed every run, saying "< nan%").
        ({"min_pass_rate": float("nan")}, "min_pass_rate: 'nan' is not a finite number"),
    ],
)
def test_a_bad_option_raises_the_message_of_the_command_line(
    project: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        assertly.run("notes.tests.yaml", **options)
    assert message in str(raised.value)
    assert not (project / ".assertly").exists() or not list((project / ".assertly").iterdir())


def test_unknown_options_are_all_named_and_nothing_runs(project: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        assertly.run("notes.tests.yaml", concurrency=2, verbose=True, retries=3)
    assert [problem.location for problem in raised.value.problems] == ["verbose", "retries"]


def test_a_bad_test_file_raises_with_its_file_and_line(project: Path) -> None:
    (project / "bad.tests.yaml").write_text(
        "agent: notes\nversion: 1\ntest_suites:\n  s:\n    tests:\n"
        "      - id: t\n        input: {search_text: x\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as raised:
        assertly.run("bad.tests.yaml")
    assert "bad.tests.yaml:8:1: invalid YAML" in str(raised.value)
    cli = _cli("run", "bad.tests.yaml", "--plain")
    assert cli.exit_code == 2
    assert f"error: {raised.value}" in cli.output  # the very message the command prints


def test_a_test_that_cannot_compile_is_an_errored_test_at_its_line(project: Path) -> None:
    # As `assertly run`: the other tests run; this one errs with where and why.
    (project / "bad.tests.yaml").write_text(
        "agent: notes\nversion: 1\ntest_suites:\n  s:\n    tests:\n"
        "      - id: t\n        input: {search_text: x}\n        expect:\n"
        "          no_such_key: 1\n",
        encoding="utf-8",
    )
    result = assertly.run("bad.tests.yaml")
    [test] = result.tests
    assert test.status == "error" and result.exit_code == 1
    [trial] = test.trials
    assert trial.error is not None
    assert "bad.tests.yaml:9:11: t: expect.no_such_key: unknown assertion" in trial.error


def test_no_path_is_the_command_line_error(project: Path) -> None:
    with pytest.raises(ConfigError, match="paths: give at least one test file or directory"):
        assertly.run()


@pytest.mark.parametrize(
    "paths",
    [b"notes.tests.yaml", {"notes.tests.yaml": True}, [b"notes.tests.yaml"], 3, [None]],
    ids=["bytes", "mapping", "bytes-in-list", "number", "none-in-list"],
)
def test_what_is_not_paths_is_a_config_error(project: Path, paths: Any) -> None:
    # red team of issue 30: bytes raised a TypeError and a dict ran its keys as paths.
    with pytest.raises(ConfigError, match="paths take a path or a list of paths"):
        assertly.run(paths)
    assert not (project / ".assertly").exists() or not list((project / ".assertly").iterdir())


def test_paths_as_path_objects_run(project: Path) -> None:
    result = assertly.run([Path("notes.tests.yaml")], now=NOW)
    assert result.summary["total"] > 0


DOCS = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"


def _code_blocks() -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize("number", range(len(_code_blocks())))
def test_every_example_of_the_docs_runs(project: Path, number: int) -> None:
    exec(compile(_code_blocks()[number], f"python-api.md block {number + 1}", "exec"), {})


def test_the_docs_list_every_option_of_assertly_run() -> None:
    from assertly.cli._run import run_command

    listed = re.findall(r"^\| `(\w+)` \| `-", DOCS.read_text(encoding="utf-8"), flags=re.M)
    options = [p.name for p in run_command.params if p.param_type_name == "option"]
    assert listed == [
        name for name in options if name not in ("target", "config_path", "plain", "watch")
    ]


@pytest.mark.parametrize("module", ["assertly", "assertly.cli"])
def test_python_dash_m_runs_the_command_line(module: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"assertly, version {assertly.__version__}\n"


def test_baseline_is_read_from_the_store_of_the_config_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--config elsewhere/assertly.yaml --baseline last`: the store the runs are written to.
    shutil.copytree(EXAMPLES, tmp_path / "project", ignore=shutil.ignore_patterns("reports"))
    config = str(tmp_path / "project" / "assertly.yaml")
    monkeypatch.chdir(tmp_path)
    args = ["run", "project/notes.tests.yaml", "--config", config, "--now", NOW, "--plain"]
    assert _cli(*args).exit_code == 1  # two tests fail on purpose
    gated = _cli(*args, "--baseline", "last")
    assert gated.exit_code == 0, gated.output  # the same two: no regression
    assert "regression" in gated.output
    result = assertly.run("project/notes.tests.yaml", config=config, now=NOW, baseline="last")
    assert result.gate is not None and result.exit_code == 0
