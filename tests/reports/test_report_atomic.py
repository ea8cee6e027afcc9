"""Reports are replaced atomically: a crash or a full disk leaves the previous report whole."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assertly.cli import main


@pytest.fixture
def stored_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    tests = "".join(
        f"      - {{id: t{i}, input: {{}}, expect: {{status: success}}}}\n" for i in range(60)
    )
    (tmp_path / "t.tests.yaml").write_text("agent: bot\ntest_suites:\n  s:\n    tests:\n" + tests)
    lines = [json.dumps({"id": f"t{i}", "output": {"status": "error"}}) for i in range(60)]
    (tmp_path / "f.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(
        main, ["run", ".", "--target", "fixtures:f.jsonl", "--plain", "-o", "r.json", "-o", "r.md"]
    )
    assert result.exit_code == 1, result.output
    return tmp_path


def _limit_file_size(limit: int) -> None:
    # Past the limit a write fails with EFBIG instead of the process being killed.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("name", ["r.json", "r.md"])
def test_a_failed_write_leaves_the_previous_report_whole(stored_run: Path, name: str) -> None:
    before = (stored_run / name).read_bytes()
    assert len(before) > 4096
    process = subprocess.run(
        [
            sys.executable,
            "-c",
            "from assertly.cli import main; main()",
            "report",
            "last",
            "-o",
            name,
        ],
        cwd=stored_run,
        capture_output=True,
        text=True,
        preexec_fn=lambda: _limit_file_size(2048),
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert process.returncode != 0
    assert "Traceback" not in process.stderr, process.stderr
    assert (stored_run / name).read_bytes() == before  # whole, not truncated
    assert not [p.name for p in stored_run.iterdir() if p.name.endswith(".partial")]


def test_a_successful_write_replaces_the_report(stored_run: Path) -> None:
    (stored_run / "r.json").write_text("stale")
    result = CliRunner().invoke(main, ["report", "last", "-o", "r.json"])
    assert result.exit_code == 1
    assert json.loads((stored_run / "r.json").read_text())["summary"]["total"] == 60
    mode = (stored_run / "r.json").stat().st_mode & 0o777
    assert mode & 0o044, "a report is readable like any file the user writes"
