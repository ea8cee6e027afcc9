"""Red team of ``diff RUN:A RUN:B`` and the per-target gates (issue 31): green by mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_matrix_diff import Project

__all__ = ["project"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


def _edited(path: Path, out: Path, *drop: str) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    for test in data["tests"]:
        for name in drop:
            test.pop(name, None)
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_a_report_stripped_of_its_target_fields_is_refused(project: Project) -> None:
    # red team, probe "report without target fields": each cell then counted as a test no
    # target varies, both sides were the whole report, and the regression passed (exit 0).
    assert project.matrix("-o", "r.json").exit_code == 1
    whole = project.cli("diff", "r.json:base", "r.json:cand")
    assert whole.exit_code == 1 and "1 regressed" in whole.stdout
    _edited(project.root / "r.json", project.root / "e.json", "target")
    edited = project.cli("diff", "e.json:base", "e.json:cand")
    assert edited.exit_code == 2, edited.output
    assert "is a cell of target 'base' by its key, but its target is None" in edited.output


def test_a_report_stripped_of_its_targets_too_still_fails_clearly(project: Project) -> None:
    assert project.matrix("-o", "r.json").exit_code == 1
    data = json.loads((project.root / "r.json").read_text(encoding="utf-8"))
    data.pop("targets")
    for test in data["tests"]:
        test.pop("target")
    (project.root / "e.json").write_text(json.dumps(data), encoding="utf-8")
    edited = project.cli("diff", "e.json:base", "e.json:cand")
    assert edited.exit_code == 2, edited.output


def test_a_cell_relabelled_by_hand_is_refused(project: Project) -> None:
    assert project.matrix("-o", "r.json").exit_code == 1
    data = json.loads((project.root / "r.json").read_text(encoding="utf-8"))
    for test in data["tests"]:
        test["target"] = "base"  # every cell claims the base target
    (project.root / "e.json").write_text(json.dumps(data), encoding="utf-8")
    edited = project.cli("diff", "e.json:base", "e.json:cand")
    assert edited.exit_code == 2, edited.output
