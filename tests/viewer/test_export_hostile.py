"""Red team of ``assertly view --export`` (issue 34): absolute paths that still left the machine."""

from __future__ import annotations

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
