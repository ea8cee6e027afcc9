"""``NAME:LABEL``: how a side names one target of a matrix run, and what such a side holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assertly
from assertly import StoreError
from assertly.compare import compare_runs, open_side, pairing_problem, split_target


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("last:cand", ("last", "cand")),
        ("last~2:v1.5", ("last~2", "v1.5")),
        ("20261128T164116Z-f3d209:base", ("20261128T164116Z-f3d209", "base")),
        ("./r.json:gpt-4o_mini", ("./r.json", "gpt-4o_mini")),
        ("a:b:c", ("a:b", "c")),  # the last ':'
        ("last", ("last", None)),
        (":cand", (":cand", None)),  # nothing before it
        ("r.json:", ("r.json:", None)),
        ("C:\\runs\\r.json", ("C:\\runs\\r.json", None)),  # not a label after it
        ("last:has space", ("last:has space", None)),
        ("last:[x]", ("last:[x]", None)),
    ],
)
def test_split_target(name: str, expected: tuple[str, str | None]) -> None:
    assert split_target(name) == expected


def test_a_label_after_the_colon_is_what_a_run_accepts_as_a_label() -> None:
    """The split reads labels as loading and ``--target LABEL=SPEC`` check them, no wider."""
    from assertly import _frontend
    from assertly.compare import _sides
    from assertly.loading._models import TARGET_LABEL_PATTERN

    assert _sides._LABEL.pattern == TARGET_LABEL_PATTERN == _frontend._LABEL.pattern
    assert split_target("last:" + "a" * 64) == ("last", "a" * 64)
    assert split_target("last:" + "a" * 65) == ("last:" + "a" * 65, None)


def _report(path: Path, tests: list[dict[str, Any]], **top: Any) -> Path:
    data = {"run_id": "r1", "started_at": "2026-01-01T00:00:00Z", **top, "tests": tests}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _test(test_id: str, status: str, target: str | None = None, **extra: Any) -> dict[str, Any]:
    key = f"f::s::{test_id}" + (f"[{target}]" if target else "")
    test = {"key": key, "id": test_id, "suite": "s", "file": "f", "status": status, **extra}
    return test if target is None else {**test, "target": target}


MATRIX = [
    _test("a", "passed", "x"),
    _test("a", "failed", "y"),
    _test("a-b", "failed", "x"),
    _test("a-b", "passed", "y"),
    _test("shared", "passed"),  # an agent the matrix does not vary: in every target's side
]


def test_a_target_side_holds_its_cells_without_the_suffix_and_the_shared_tests(
    tmp_path: Path,
) -> None:
    report = _report(tmp_path / "r.json", MATRIX, targets=["x", "y"])
    side = open_side(f"{report}:y", None)
    assert (side.name, side.labels, side.target) == ("r1:y", ["x", "y"], "y")
    assert [(test.key, test.status) for test in side.tests()] == [
        ("f::s::a", "failed"),  # sorted without the suffix: "a" before "a-b"
        ("f::s::a-b", "passed"),
        ("f::s::shared", "passed"),
    ]
    diff = compare_runs(open_side(f"{report}:x", None), side)
    assert (diff.counts["regressed"], diff.counts["fixed"], diff.counts["unchanged"]) == (1, 1, 1)
    assert pairing_problem(open_side(str(report), None), side) is not None
    assert pairing_problem(open_side(str(report), None), open_side(str(report), None)) is None


def test_a_report_whose_name_has_a_colon_is_read_whole(tmp_path: Path) -> None:
    odd = _report(tmp_path / "run:y", MATRIX, targets=["x", "y"])
    side = open_side(str(odd), None)
    assert side.target is None and side.is_matrix
    assert open_side(f"{odd}:x", None).target == "x"


def test_labels_the_report_does_not_have(tmp_path: Path) -> None:
    report = _report(tmp_path / "r.json", MATRIX, targets=["x", "y"])
    with pytest.raises(StoreError, match=r"has no target 'z'; its targets: x, y"):
        open_side(f"{report}:z", None)
    plain = _report(tmp_path / "p.json", [_test("a", "passed")])
    with pytest.raises(StoreError, match=r"ran one target \(not a matrix run\)"):
        open_side(f"{plain}:x", None)


def test_a_report_without_targets_has_its_tests_labels_in_run_order(tmp_path: Path) -> None:
    report = _report(tmp_path / "r.json", [_test("b", "passed", "zeta"), *MATRIX])
    assert open_side(str(report), None).labels == ["zeta", "x", "y"]


@pytest.mark.parametrize(
    ("top", "tests", "message"),
    [
        ({"targets": "x"}, MATRIX, "targets: 'x' is not a list of target labels"),
        ({"targets": ["x", "a b"]}, MATRIX, "is not a list of target labels"),
        ({"targets": ["x"]}, MATRIX, "tests of target 'y', which is not among its targets"),
        (
            {},
            [_test("a", "passed", target=None, target_x=1), {**_test("b", "passed"), "target": 3}],
            r"tests\[1\].target: 3 is not a string",
        ),
    ],
)
def test_a_report_with_bad_targets_is_refused(
    tmp_path: Path, top: dict[str, Any], tests: list[dict[str, Any]], message: str
) -> None:
    report = _report(tmp_path / "r.json", tests, **top)
    with pytest.raises(StoreError, match=message):
        open_side(str(report), None)


def test_the_python_api_takes_gate_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``assertly.run(..., gate_targets=[...])``: the exit code of ``--gate-target``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: one, input: hello, expect: {contains: hello}}\n",
        encoding="utf-8",
    )
    (tmp_path / "good.jsonl").write_text('{"id": "one", "output": "hello"}\n')
    (tmp_path / "bad.jsonl").write_text('{"id": "one", "output": "no"}\n')
    (tmp_path / "assertly.yaml").write_text(
        "store: runs.sqlite\nagents: {bot: 'fixtures:good.jsonl'}\n"
        "matrix: {bot: {good: 'fixtures:good.jsonl', bad: 'fixtures:bad.jsonl'}}\n",
        encoding="utf-8",
    )
    gated = assertly.run("t.yaml", gate_targets="good")
    assert gated.record.targets == ["good", "bad"]
    assert gated.exit_code == 0 and gated.gate is not None
    assert gated.gate.reasons == [
        "gate: [bad] 1 test failing, not gated (--gate-target names "
        "the targets that decide the exit code)"
    ]
    assert assertly.run("t.yaml", gate_targets=["bad"]).exit_code == 1
    assert assertly.run("t.yaml").exit_code == 1
    with pytest.raises(assertly.ConfigError, match="'ugly' is not a target of this run"):
        assertly.run("t.yaml", gate_targets=["ugly"])
