"""Red team of ``assertly view --export`` (issue 34): absolute paths that still left the machine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_viewer_runs_apart import _project, _run

from assertly.cli import main


def test_an_agent_named_by_an_absolute_path_does_not_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # red team, probe "export agent path": "cannot start '/…/bots/missing-agent'" was exported.
    root = _project(tmp_path / "project")
    bots = tmp_path / "bots"
    bots.mkdir()
    store = root / ".assertly" / "runs.sqlite"
    _run(root, str(store), "a.tests.yaml", "--target", f"cmd:{bots / 'missing-agent'} v1")
    _run(root, str(store), "a.tests.yaml", "--target", f"base=cmd:'{bots}/gone agent'",
         "--target", f"cand=py:{bots}/agent_module.py:answer")  # fmt: skip
    stored = store.read_bytes()
    assert str(bots).encode() in stored  # the run holds it: the export had it to take out
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the export's cwd: not the project
    out = tmp_path / "export"
    done = CliRunner().invoke(main, ["view", "--store", str(store), "--export", str(out)])
    assert done.exit_code == 0, done.output
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any("missing-agent" in path.read_text(encoding="utf-8") for path in files)
    for path in files:
        assert str(bots) not in path.read_text(encoding="utf-8", errors="surrogateescape"), path


def test_a_run_of_relative_paths_from_below_does_not_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # red team, probe "export relative file": `run ../c.tests.yaml` from a subfolder stored
    # the problem "'missing.jsonl' is not a file (/…/project/missing.jsonl)" and no root
    # covered the project (its files and store were named relatively).
    root = _project(tmp_path / "project")
    (root / "c.tests.yaml").write_text(
        "agent: echo\ntest_suites:\n  d:\n    dataset: missing.jsonl\n"
        "    expect: {contains: x}\n  s:\n    tests:\n      - {id: one, input: hi}\n",
        encoding="utf-8",
    )
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")
    ran = CliRunner().invoke(
        main,
        ["run", "../c.tests.yaml", "--store", "s.sqlite", "--plain",
         "--target", f"cmd:{sys.executable} ../agent.py v1"],
    )  # fmt: skip
    assert "missing.jsonl" in ran.output, ran.output
    assert str(root).encode() in (root / "sub" / "s.sqlite").read_bytes()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    out = tmp_path / "export"
    done = CliRunner().invoke(main, ["view", "--store", str(root / "sub" / "s.sqlite"),
                                     "--export", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    files = [path for path in out.rglob("*") if path.is_file()]
    assert any("missing.jsonl" in path.read_text(encoding="utf-8") for path in files)
    for path in files:
        assert str(root) not in path.read_text(encoding="utf-8", errors="surrogateescape"), path
