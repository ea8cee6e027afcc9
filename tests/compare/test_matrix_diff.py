"""``diff RUN:A RUN:B`` and the gates of a matrix run, over real runs of two ``cmd:`` agents.

Every run is a real ``assertly run`` whose targets are a small Python script: a version of
it answers "ok …" to every test but those it is told to fail, and logs each call, so the
calls, verdicts, store, reports, diffs and exit codes are the real ones (issue 31, items 4
and 5).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main

AGENT = """\
import json, sys
request = json.load(sys.stdin)
text = request["input"] if isinstance(request, dict) else str(request)
name, failing = sys.argv[1], sys.argv[2].split(",")
with open(f"calls-{name}.log", "a") as log:
    log.write(text + "\\n")
print("no" if text in failing else f"ok {text}")
"""
IDS = ("same", "regress", "fixed")
ONLY_BASE = ("--gate-target", "base")


class Project:
    """Two versions of an agent: v1 fails ``fixed``, v2 fails ``regress``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "agent.py").write_text(AGENT, encoding="utf-8")
        tests = [{"id": test_id, "input": test_id, "expect": {"contains": "ok"}} for test_id in IDS]
        data = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
        (root / "a.tests.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")

    def spec(self, name: str, failing: str) -> str:
        return f"cmd:{shlex.quote(sys.executable)} agent.py {name} {failing or '-'}"

    def run(self, *args: str, **targets: tuple[str, str]) -> Any:
        """``assertly run`` with ``label=(log name, failing ids)`` targets (none: one bare)."""
        argv = ["run", "a.tests.yaml", "--plain", "-j", "1"]
        for label, (name, failing) in targets.items():
            argv += ["--target", f"{label}={self.spec(name, failing)}"]
        return self.cli(*argv, *args)

    def matrix(self, *args: str) -> Any:
        """base = v1 (fails ``fixed``), cand = v2 (fails ``regress``)."""
        return self.run(*args, base=("v1", "fixed"), cand=("v2", "regress"))

    def cli(self, *args: str) -> Any:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    def calls(self, name: str) -> list[str]:
        log = self.root / f"calls-{name}.log"
        return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


def _json(result: Any) -> Any:
    return json.loads(result.stdout)


def test_diff_of_two_targets_names_regressions_and_fixes(project: Project) -> None:
    run = project.matrix("-o", "r.json")
    assert run.exit_code == 1  # a test fails on a target: as any run
    assert sorted(project.calls("v1")) == sorted(project.calls("v2")) == sorted(IDS)

    result = project.cli("diff", "last:base", "last:cand")
    assert result.exit_code == 1, result.output
    assert "REGRESSED a.tests.yaml::s::regress  passed → failed" in result.stdout
    assert "✗ contains" in result.stdout  # the candidate target's failing assertion
    assert "FIXED     a.tests.yaml::s::fixed  failed → passed" in result.stdout
    assert "1 regressed, 1 fixed, 1 unchanged, 0 added, 0 removed" in result.stdout
    assert ":base  " in result.stdout.splitlines()[0]  # the side names its target
    assert "1 regression against run" in result.stderr

    # Reversed, the other test regressed; a target against itself changed nothing.
    reverse = project.cli("diff", "last:cand", "last:base")
    assert reverse.exit_code == 1
    assert "REGRESSED a.tests.yaml::s::fixed" in reverse.stdout
    same = project.cli("diff", "last:base", "last:base")
    assert same.exit_code == 0, same.output

    # The run id, last~N and the JSON report (its path holding no ':') name it too.
    run_id = _json(project.cli("diff", "last:base", "last:cand", "--format", "json"))
    by_id = project.cli("diff", f"{_run_id(project)}:base", "last~0:cand", "--format", "json")
    by_report = project.cli("diff", "./r.json:base", "r.json:cand", "--format", "json")
    assert by_id.exit_code == by_report.exit_code == 1
    assert _json(by_id)["summary"] == _json(by_report)["summary"] == run_id["summary"]
    assert _json(by_report)["candidate"]["target"] == "cand"
    assert [test["key"] for test in run_id["tests"]] == [
        "a.tests.yaml::s::fixed",
        "a.tests.yaml::s::regress",
        "a.tests.yaml::s::same",
    ]


def _run_id(project: Project) -> str:
    result = project.cli("diff", "last:base", "last:base", "--format", "json")
    return str(_json(result)["base"]["run_id"])


def test_a_diff_inside_a_run_is_the_diff_of_two_runs(project: Project) -> None:
    """The same tests, statistics and exit code as the two targets run one at a time."""
    project.matrix()
    project.cli("run", "a.tests.yaml", "--plain", "--target", project.spec("v1", "fixed"))
    project.cli("run", "a.tests.yaml", "--plain", "--target", project.spec("v2", "regress"))
    two_runs = project.cli("diff", "last~1", "last", "--format", "json")
    inside = project.cli("diff", "last~2:base", "last~2:cand", "--format", "json")
    assert two_runs.exit_code == inside.exit_code == 1
    ignored = ("duration_ms",)
    assert _json(inside)["summary"] == _json(two_runs)["summary"]
    assert [
        {k: v for k, v in test.items() if k not in ignored} for test in _json(inside)["tests"]
    ] == [{k: v for k, v in test.items() if k not in ignored} for test in _json(two_runs)["tests"]]
    # One target of the matrix against a run of one target pairs test by test.
    mixed = project.cli("diff", "last~2:cand", "last", "--format", "json")
    assert mixed.exit_code == 0, mixed.output
    assert _json(mixed)["summary"]["unchanged"] == 3


def test_labels_a_run_does_not_have_are_usage_errors(project: Project) -> None:
    project.matrix()
    unknown = project.cli("diff", "last:base", "last:nope")
    assert unknown.exit_code == 2
    assert "has no target 'nope'; its targets: base, cand" in unknown.stderr
    project.cli("run", "a.tests.yaml", "--plain", "--target", project.spec("v1", ""))
    plain = project.cli("diff", "last~1:base", "last:base")
    assert plain.exit_code == 2
    assert "ran one target (not a matrix run)" in plain.stderr
    # A whole matrix run against a run of one target pairs nothing: name a target.
    mixed = project.cli("diff", "last~1", "last")
    assert mixed.exit_code == 2
    assert "is a matrix run (targets base, cand)" in mixed.stderr
    assert "name the target to compare, e.g. " in mixed.stderr
    assert project.cli("diff", "last~1:base", "last").exit_code == 0
    # Two whole matrix runs pair cell by cell.
    project.matrix()
    assert project.cli("diff", "last~2", "last").exit_code == 0


def test_min_pass_rate_gates_each_target(project: Project) -> None:
    result = project.matrix("--min-pass-rate", "0.6")
    assert result.exit_code == 0, result.output  # a failing test per target, each at 2/3
    line = result.stdout.strip().splitlines()[-1]
    assert "gate: [base] pass rate 66.7% ≥ 60.0%" in line
    assert "; [cand] pass rate 66.7% ≥ 60.0% (--min-pass-rate) → exit 0" in line
    both_fail = project.run(
        "--min-pass-rate", "0.6", base=("v1", "fixed"), cand=("v2", "regress,same")
    )
    assert both_fail.exit_code == 1
    assert "[cand] pass rate 33.3% < 60.0% (--min-pass-rate)" in both_fail.stdout
    assert "[base] pass rate 66.7% ≥ 60.0%" in both_fail.stdout
    # Gating base only: cand's failures are named but do not decide.
    only_base = project.run(
        "--min-pass-rate", "0.6", *ONLY_BASE, base=("v1", "fixed"), cand=("v2", "regress,same")
    )
    assert only_base.exit_code == 0, only_base.output
    assert "gate: [cand] 2 tests failing, not gated" in only_base.stdout
    assert "[cand] pass rate" not in only_base.stdout


def test_gate_target_decides_the_exit_code(project: Project) -> None:
    base_only = project.run("--gate-target", "base", base=("v1", ""), cand=("v2", "regress"))
    assert base_only.exit_code == 0, base_only.output
    assert "gate: [base] 0 tests failing → exit 0" in base_only.stdout
    cand = project.run("--gate-target", "cand", base=("v1", ""), cand=("v2", "regress"))
    assert cand.exit_code == 1
    assert "gate: [cand] 1 test failing → exit 1" in cand.stdout
    everyone = project.run(base=("v1", ""), cand=("v2", "regress"))
    assert everyone.exit_code == 1  # without --gate-target: any failing test on any target


def test_an_unknown_gate_target_is_refused_before_the_run(project: Project) -> None:
    result = project.matrix("--gate-target", "nope")
    assert result.exit_code == 2
    assert "--gate-target: 'nope' is not a target of this run (its targets: base, cand)" in (
        result.stderr
    )
    assert project.calls("v1") == project.calls("v2") == []  # no agent was called
    plain = project.cli(
        "run",
        "a.tests.yaml",
        "--plain",
        "--gate-target",
        "base",
        "--target",
        project.spec("v1", ""),
    )
    assert plain.exit_code == 2
    assert "this run has one target" in plain.stderr
    assert project.calls("v1") == []


def test_an_unknown_gate_target_of_a_config_matrix_is_refused(project: Project) -> None:
    config = {
        "agents": {"bot": project.spec("v1", "fixed")},
        "matrix": {"bot": {"one": project.spec("v1", "fixed"), "two": project.spec("v2", "")}},
    }
    (project.root / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    refused = project.cli("run", "a.tests.yaml", "--plain", "--gate-target", "three")
    assert refused.exit_code == 2
    assert "its targets: one, two" in refused.stderr
    assert project.calls("v1") == []
    gated = project.cli("run", "a.tests.yaml", "--plain", "--gate-target", "two")
    assert gated.exit_code == 0, gated.output
    assert "gate: [one] 1 test failing, not gated" in gated.stdout


def test_the_baseline_gates_each_target_against_its_own_cells(project: Project) -> None:
    assert project.run(base=("v1", "fixed"), cand=("v2", "fixed")).exit_code == 1
    # cand now fails regress too: a regression on cand only, against the baseline's cand.
    result = project.run("--baseline", "last", base=("v1", "fixed"), cand=("v2", "fixed,regress"))
    assert result.exit_code == 1
    assert "REGRESSED a.tests.yaml::s::regress" in result.stdout
    line = result.stdout.strip().splitlines()[-1]
    assert "[base] 0 regressions against run " in line and ":base (--baseline" in line
    assert "[cand] 1 regression against run " in line and ":cand (--baseline" in line
    gated = project.run(
        "--baseline",
        "last~1",
        "--gate-target",
        "base",
        base=("v1", "fixed"),
        cand=("v2", "fixed,regress"),
    )
    assert gated.exit_code == 0, gated.output


def test_the_baseline_of_a_matrix_run_can_be_a_run_of_one_target(project: Project) -> None:
    project.cli("run", "a.tests.yaml", "--plain", "--target", project.spec("v1", "fixed"))
    result = project.matrix("--baseline", "last")
    assert result.exit_code == 1
    line = result.stdout.strip().splitlines()[-1]
    assert "[base] 0 regressions" in line and "[cand] 1 regression" in line
    # ... or one target of a matrix run (RUN:LABEL): both targets against it.
    against_cand = project.matrix("--baseline", "last:cand", "--gate-target", "cand")
    assert against_cand.exit_code == 0, against_cand.output
    # A run of one target against a whole matrix baseline: name its target (exit 2).
    refused = project.cli(
        "run", "a.tests.yaml", "--plain", "--baseline", "last", "--target", project.spec("v3", "")
    )
    assert refused.exit_code == 2
    assert "--baseline: run " in refused.stderr and ":base" in refused.stderr
    assert project.calls("v3") == []


def test_a_matrix_baseline_without_a_target_of_the_run_is_refused(project: Project) -> None:
    project.matrix()
    result = project.run("--baseline", "last", base=("v1", "fixed"), other=("v3", ""))
    assert result.exit_code == 2
    assert "has no target 'other' to compare this run's 'other' with" in result.stderr
    assert project.calls("v3") == []
    gated = project.run(
        "--baseline", "last", "--gate-target", "base", base=("v1", "fixed"), other=("v3", "")
    )
    assert gated.exit_code == 0, gated.output


def test_fail_fast_stops_every_target_gate(project: Project) -> None:
    """cand's first failure stops the run: base's unreached tests must not pass its gate."""
    stop = {"base": ("v1", ""), "cand": ("v2", "same")}
    result = project.run("--fail-fast", "--min-pass-rate", "0.5", *ONLY_BASE, **stop)
    assert result.exit_code == 1, result.output
    assert "gate: [base] --fail-fast stopped the run at a failure" in result.stdout
    assert len(project.calls("v1")) < len(IDS)  # it did stop
    baseline = project.run(base=("v1", ""), cand=("v2", ""))
    assert baseline.exit_code == 0
    stopped = project.run(
        "--fail-fast", "--baseline", "last", "--allow-skipped", *ONLY_BASE, **stop
    )
    assert stopped.exit_code == 1, stopped.output
    assert "[base] run stopped by --fail-fast" in stopped.stdout
    plain_gate = project.run("--fail-fast", *ONLY_BASE, **stop)
    assert plain_gate.exit_code == 1
    assert "[base] 0 tests failing, run stopped by --fail-fast" in plain_gate.stdout
