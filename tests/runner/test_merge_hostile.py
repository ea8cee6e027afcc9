"""Red team of ``assertly merge`` (#28 item 4): shards that are incomplete, empty or malformed.

Each test names its probe; every one merged into a green run or crashed before the fix.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from runner_support import Project

from assertly._digests import records_digest
from assertly.runner._selection import in_shard

IDS = [f"t{number}" for number in range(10)]
KEY = "a.tests.yaml::s::{}"

# Answers "ok" to each test, except the victim's second call: it kills assertly (its parent)
# with SIGKILL before answering, as an OOM killer or a CI timeout would; later calls say "no".
# (Agents do not inherit the environment: the victim and the counter are written into the
# script.)
KILLER = r"""
import json, os, signal, sys
q = json.load(sys.stdin)
if q["id"] == VICTIM:
    count_file = COUNT_FILE
    count = int(open(count_file).read()) if os.path.exists(count_file) else 0
    with open(count_file, "w") as handle:
        handle.write(str(count + 1))
    if count == 1:
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(0)
    if count > 1:  # the victim's trials after the first fail, when they are run at all
        print(json.dumps({"output": "no"}))
        sys.exit(0)
print(json.dumps({"output": "ok"}))
"""


def _tests_file(project: Project, input_of: Callable[[str], Any]) -> None:
    tests = [
        {"id": i, "input": input_of(i), "assertions": [{"type": "contains", "value": "ok"}]}
        for i in IDS
    ]
    data = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
    project.write("a.tests.yaml", yaml.safe_dump(data, sort_keys=False))


def _fixtures(project: Project, failing: set[str]) -> str:
    answers = project.root / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"id": i, "output": "no" if i in failing else "ok"}) + "\n" for i in IDS)
    )
    _tests_file(project, lambda i: i)
    return f"fixtures:{answers}"


def _refused(result: Any, *says: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    for text in says:
        assert text in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def _killed_shards(project: Project, *store: str) -> tuple[str, str]:
    """Shards 1/2 (SIGKILLed during its last test's second trial) and 2/2: their run ids.

    ``store``: ``--store URL`` for another store than the project's SQLite file (the ids are
    then ``last~1`` and ``last``).
    """
    shard_one = [i for i in IDS if in_shard(KEY.format(i), (1, 2))]
    counter = str(project.root / "count")
    agent = project.write(
        "killer.py", f"VICTIM = {shard_one[-1]!r}\nCOUNT_FILE = {counter!r}" + KILLER
    )
    _tests_file(project, lambda i: {"id": i})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for index in (1, 2):
        subprocess.run(
            [
                *(sys.executable, "-c", "from assertly.cli import main; main()", "run", "."),
                *("--target", f"cmd:{sys.executable} {agent}", "--shard", f"{index}/2"),
                *("--trials", "3", "--concurrency", "1", *store),
            ],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
    if store:
        return "last~1", "last"
    killed = project.sql("SELECT run_id FROM runs WHERE finished_at IS NULL")
    assert len(killed) == 1, "shard 1 was killed, shard 2 finished"
    other = project.sql("SELECT run_id FROM runs WHERE finished_at IS NOT NULL")
    return str(killed[0][0]), str(other[0][0])


def test_a_shard_killed_mid_test_is_refused(project: Project) -> None:
    # red team, probe "killed shard": shard 1/2 run with --trials 3 is SIGKILLed during its
    # last test's second trial (which would have failed). The store keeps trial 1 (passed) and
    # the run is never finished; merge took it as a complete shard: 10 passed, exit 0.
    killed, other = _killed_shards(project)
    _refused(project.run("merge", killed, other), "never finished", f"--resume {killed}")


def test_a_shard_killed_mid_test_is_refused_from_postgres(
    project: Project, postgres_database: str
) -> None:
    # red team, probe "killed shard", with both shards in a PostgreSQL store (a real server).
    pytest.importorskip("psycopg")
    killed, other = _killed_shards(project, "--store", postgres_database)
    merged = project.run("merge", killed, other, "--store", postgres_database)
    _refused(merged, "(shard 1/2) never finished")


def test_a_recheck_of_a_killed_shard_stays_unfinished(project: Project) -> None:
    # red team, probe "recheck of a killed shard": recheck judged the killed shard's stored
    # trials into a finished run (5 passed, exit 0), which then merged green (10 passed).
    killed, other = _killed_shards(project)
    rechecked = project.run("recheck", killed)
    assert rechecked.exit_code != 0 and "never finished" in rechecked.stdout + rechecked.stderr
    _refused(project.run("merge", "last", other), "never finished")
    # Resumed, the rechecked shard runs its victim's trials 2 and 3: the real failure shows.
    assert project.run("run", ".", "--resume", "last").exit_code == 1
    merged = project.run("merge", "last", other)
    assert merged.exit_code == 1 and merged.counts() == (10, 9, 1, 0, 0)


def test_a_merge_of_shards_that_are_all_empty_is_refused(project: Project) -> None:
    # red team, probe "every shard empty": `run -k nomatch` is refused ("no tests found"), but
    # each shard of it may be empty, and their merge was a green run of 0 tests (exit 0).
    target = _fixtures(project, failing={"t3"})
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", "-k", "nomatch")
    _refused(project.run("merge", "last~1", "last"), "holds no test", '"keyword":"nomatch"')


def _report_with(path: Path, edit: Callable[[dict[str, Any]], None]) -> str:
    """The report at ``path`` edited, its records digest recomputed (as an editor could)."""
    data = json.loads(path.read_text())
    edit(data)
    if isinstance(data.get("tests"), list):
        data["records_digest"] = records_digest(data["tests"], data.get("evals") or [])
    edited = path.with_name("edited.json")
    edited.write_text(json.dumps(data))
    return str(edited)


def _failing(data: dict[str, Any]) -> dict[str, Any]:
    test: dict[str, Any] = next(t for t in data["tests"] if t["status"] != "passed")
    return test


def _passed_copy_of_trial_one(data: dict[str, Any]) -> None:
    trial = copy.deepcopy(_failing(data)["trials"][0])
    trial.update(status="passed", failures=[], output="ok")
    _failing(data)["trials"].append(trial)


def _set(where: Callable[[dict[str, Any]], dict[str, Any]], name: str, value: Any) -> Any:
    return lambda data: where(data).__setitem__(name, value)


def _trial(data: dict[str, Any]) -> dict[str, Any]:
    trial: dict[str, Any] = _failing(data)["trials"][0]
    return trial


# red team, probes "hostile JSON shard": each was an `internal error` (a traceback) or, for
# the duplicate trial, a lost failing trial (the merged test passed).
HOSTILE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "duplicate trial number": (_passed_copy_of_trial_one, "holds trials 1, 1"),
    "trial number beyond any integer": (_set(_trial, "trial", 10**30), "holds trials 1000"),
    "trial number as text": (_set(_trial, "trial", "x"), 'trial: "x" is not of type'),
    "trial number null": (_set(_trial, "trial", None), "trial: null is not of type"),
    "trial not an object": (
        lambda data: _failing(data)["trials"].__setitem__(0, "x"),
        'trials/0: "x" is not of type "object"',
    ),
    "trials not a list": (_set(_failing, "trials", "x"), 'trials: "x" is not of type "array"'),
    "failures not a list": (_set(_trial, "failures", "x"), "failures: "),
    "metrics not an object": (_set(_trial, "metrics", "x"), "metrics: "),
    "test not an object": (lambda data: data["tests"].append("x"), "is not of type"),
    "summary not an object": (_set(lambda data: data, "summary", "x"), "summary: "),
    "summary duration as text": (
        _set(lambda data: data["summary"], "duration_ms", "x"),
        "summary/duration_ms: ",
    ),
    "evals not a list": (_set(lambda data: data, "evals", {"a": 1}), "evals: "),
    "eval not an object": (_set(lambda data: data, "evals", ["x"]), "evals/0: "),
    "shard a number": (_set(lambda data: data, "shard", 5), "shard: 5 is not of type"),
    "shard 0/2": (_set(lambda data: data, "shard", "0/2"), "shard: --shard 0/2"),
    "shard not I/N": (_set(lambda data: data, "shard", "a/b"), "shard: --shard takes I/N"),
}


@pytest.mark.parametrize("probe", list(HOSTILE))
def test_a_malformed_json_shard_is_refused_with_where(project: Project, probe: str) -> None:
    target = _fixtures(project, failing={"t3"})
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", "-o", f"s{index}.json")
    home = 1 if in_shard(KEY.format("t3"), (1, 2)) else 2
    edit, says = HOSTILE[probe]
    edited = _report_with(project.root / f"s{home}.json", edit)
    _refused(project.run("merge", edited, f"s{3 - home}.json"), edited, says)


def test_an_eval_suite_that_says_passed_below_its_threshold_is_refused(project: Project) -> None:
    # red team, probe "eval passed edited": eval-only shards of a suite scoring 0.857 against
    # 0.9; the JSON shard holding it edited to `passed: true` (digest recomputed) merged into
    # "1 of 1 eval suite met the threshold", exit 0.
    from test_runner_files_and_evals import FLOW

    project.write("flow.yaml", FLOW.replace("threshold: 0.8", "threshold: 0.9"))
    for index in (1, 2):
        project.run("run", "flow.yaml", "--shard", f"{index}/2", "-o", f"s{index}.json")
    assert project.run("merge", "s1.json", "s2.json").exit_code == 1
    home = 1 if in_shard("flow.yaml", (1, 2)) else 2

    def passed(data: dict[str, Any]) -> None:
        data["evals"][0]["passed"] = True

    edited = _report_with(project.root / f"s{home}.json", passed)
    _refused(project.run("merge", edited, f"s{3 - home}.json"), "says passed, but its score")
