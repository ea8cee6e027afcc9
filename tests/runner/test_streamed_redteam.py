"""Red team of the streamed reports (issue 35): ``assertly run -o`` against ``assertly report``.

Each test drives a real run (in-process CLI, real ``py:`` agents) into a corner where the
records streamed to the reports could differ from what the store holds, and checks every
report format against ``assertly report RUN -o`` of the same run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from runner_support import Project, py_agent_project, run_started

FORMATS = ("json", "jsonl", "csv", "md", "html", "xml")

# a's call waits for b's first, which lingers: a fails (and --fail-fast stops the run) while
# b's first trial is in flight, so b's later trials are stored as "not run".
AGENT = """
import os, time

def answer(payload):
    # py: agents answer in processes of their own: they meet through files.
    name = payload.get("name", "")
    if name:
        open(name + ".started", "w").close()
    after = payload.get("after")
    deadline = time.monotonic() + 10
    while after and not os.path.exists(after + ".started") and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(payload.get("linger", 0.0))
    return payload["reply"]
"""


def _project(tmp_path: Path) -> contextlib.AbstractContextManager[Project]:
    return py_agent_project(tmp_path, AGENT)


def _outputs(prefix: str) -> list[str]:
    return [arg for fmt in FORMATS for arg in ("-o", f"{prefix}.{fmt}")]


def _run(project: Project, *args: str, same: tuple[str, ...] = FORMATS) -> dict[str, Any]:
    """``assertly run ARGS -o streamed.*``; then ``report`` of the same run: the same bytes
    (in the formats ``same``: with --baseline, HTML and Markdown add the comparison)."""
    result = project.run("run", "--store", "s.sqlite", *args, *_outputs("streamed"), report=False)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    report = json.loads((project.root / "streamed.json").read_text(encoding="utf-8"))
    again = project.run(
        "report", report["run_id"], "--store", "s.sqlite", *_outputs("again"), report=False
    )
    assert again.exit_code in (0, 1), again.stderr
    for fmt in same:
        written = (project.root / f"streamed.{fmt}").read_bytes()
        assert written == (project.root / f"again.{fmt}").read_bytes(), fmt
    leftovers = [p.name for p in project.root.iterdir() if p.name.startswith(".s")]
    assert leftovers == [], leftovers
    return report


def _trials(report: dict[str, Any]) -> dict[str, list[str]]:
    return {t["id"]: [trial["status"] for trial in t["trials"]] for t in report["tests"]}


def _test(test_id: str, reply: str, trials: int = 1, **payload: Any) -> dict[str, Any]:
    return {
        "id": test_id,
        "input": {"name": test_id, "reply": reply, **payload},
        "trials": trials,
        "assertions": [{"type": "contains", "value": "alpha"}],
    }


def test_fail_fast_resume_streams_the_not_run_trials_the_store_keeps(tmp_path: Path) -> None:
    """A resumed test --fail-fast does not reach keeps its stored "not run" trials.

    Found: the stream got only the trials that count (`kept_trials`), the store (and
    ``assertly report``) all of them: b had 1 trial in the streamed reports, 3 in the stored.
    """
    with _project(tmp_path) as project:
        tests = [_test("a", "beta", after="b"), _test("b", "alpha", 3, linger=0.3)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        first = _run(project, "s.tests.yaml", "-j", "2", "--fail-fast")
        assert _trials(first) == {"a": ["failed"], "b": ["passed", "skipped", "skipped"]}
        # Resumed: a (judged) fails again at once and stops the run before b is reached.
        resumed = _run(project, "--resume", "last", "-j", "1", "--fail-fast")
        assert _trials(resumed) == {"a": ["failed"], "b": ["passed", "skipped", "skipped"]}


def test_a_run_killed_mid_way_leaves_no_partial_report_behind(tmp_path: Path) -> None:
    """SIGKILL (the OOM killer, a CI timeout) runs no clean-up: nothing may be left to clean.

    Found: the JSON body, JSON Lines and CSV files being written were named files beside the
    target (``.r.json.*.body``, ``.r.jsonl.*.partial``): a killed run left them for ever,
    as large as the run so far. Now they are anonymous until the report is renamed in place.
    """
    with _project(tmp_path) as project:
        tests = [_test(f"t{index}", "alpha", linger=0.02) for index in range(300)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        for fmt in ("json", "jsonl", "csv"):
            (project.root / f"r.{fmt}").write_text("the previous report", encoding="utf-8")
        outputs = ["-o", "r.json", "-o", "r.jsonl", "-o", "r.csv"]
        with run_started(project, "s.tests.yaml", "--store", "s.sqlite", *outputs) as process:
            process.kill()
            process.wait(timeout=60)
        left = [p.name for p in project.root.iterdir() if p.name.startswith(".r.")]
        assert left == []
        for fmt in ("json", "jsonl", "csv"):
            assert (project.root / f"r.{fmt}").read_text() == "the previous report"


def test_tests_released_from_the_reorder_buffer_count_towards_the_memory_bound() -> None:
    """A run bigger than ``keep_bytes`` is not kept, whatever order its tests finished in.

    Found: a test held until those before it finished was released with a size of 0: under
    ``-j N`` most of a run's stored text went uncounted and the 16 MiB bound did not hold.
    """
    from typing import cast

    from assertly._records import TrialRecord
    from assertly.runner import RunStream
    from assertly.store import StoredTests
    from assertly.store._codec import encode_meta, encode_record

    stream = RunStream(keep=True, keep_bytes=1_000)
    for position in (2, 1, 0):  # finished last to first: two wait in the buffer
        key = f"f::s::t{position}"
        meta = json.dumps(
            encode_meta({"key": key, "id": f"t{position}", "suite": "s", "file": "f"})
        )
        trial = TrialRecord(key, 1, "error", 1.0, error="x" * 400)
        stored = json.dumps(encode_record(trial.to_dict())).encode()  # as the store wrote it
        stream.finished(position, key, meta, {1: stored}, "all")
    stream.planned = 3
    assert stream.released == 3
    from_store = cast(StoredTests, ["read from the store"])
    assert list(stream.tests(from_store)) == ["read from the store"]  # 3 x 400 B > 1,000 B


def test_a_file_given_twice_runs_and_reports_its_tests_once(tmp_path: Path) -> None:
    """``assertly run s.tests.yaml . ./s.tests.yaml``: the same tests, the same keys.

    Found: each test ran three times and the streamed reports held it three times (9 tests),
    while the store, which keeps a test once by its key, and ``assertly report`` had 3.
    """
    with _project(tmp_path) as project:
        tests = [_test("a", "alpha"), _test("b", "beta"), _test("c", "alpha", 2)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        report = _run(project, "s.tests.yaml", ".", "./s.tests.yaml", "-j", "2")
        assert [test["id"] for test in report["tests"]] == ["a", "b", "c"]
        assert report["summary"]["total"] == 3


def test_a_duplicate_test_id_is_an_error_the_store_keeps(tmp_path: Path) -> None:
    """Two tests of a suite with one id: the second is an error, stored as a test of its own.

    Found: both had the key ``file::suite::id``, which the store keeps once: the run said
    "1 error" (exit 1), its streamed reports had both tests, and ``assertly report`` of the
    same run had one test, passed (exit 0): the error was lost from the stored run.
    """
    with _project(tmp_path) as project:
        tests = [_test("a", "alpha"), _test("a", "beta"), _test("b", "alpha")]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        report = _run(project, "s.tests.yaml")
        assert [(t["id"], t["status"]) for t in report["tests"]] == [
            ("a", "passed"),
            ("a", "error"),
            ("b", "passed"),
        ]
        assert "duplicate test id 'a'" in report["tests"][1]["trials"][0]["error"]
        again = project.run("report", "last", "--store", "s.sqlite", report=False)
        assert again.exit_code == 1


def test_a_slow_first_test_does_not_make_the_reorder_buffer_hold_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One slow test while the other workers finish the rest: the buffer stays bounded.

    Found: every test finished after a slow one waited in memory for it (a hung call under
    ``-j 8`` over a million recorded cases held them all). Past `WAITING_TESTS` the stream
    gives up: the reports are written from the store at the end, the same bytes.
    """
    from assertly.runner import _streaming

    monkeypatch.setattr(_streaming, "WAITING_TESTS", 8)
    held: list[int] = []
    arrived = _streaming.RunStream._arrived

    def spy(self: Any, position: int, record: Any, size: int) -> None:
        arrived(self, position, record, size)
        held.append(len(self._waiting))

    monkeypatch.setattr(_streaming.RunStream, "_arrived", spy)
    with _project(tmp_path) as project:
        tests = [_test("slow", "beta", linger=1.0)]
        tests += [_test(f"t{index}", "alpha", 1 + index % 2) for index in range(40)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        result = project.run("run", "s.tests.yaml", "--store", "s.sqlite", "-j", "3", report=False)
        assert "FAILED s::slow" in result.stdout  # the summary, read from the store
        report = _run(project, "s.tests.yaml", "-j", "3")
        assert [t["id"] for t in report["tests"]] == ["slow", *(f"t{i}" for i in range(40))]
    assert max(held) <= 8


def test_a_resumed_shard_streams_its_records_digest(tmp_path: Path) -> None:
    """``--resume`` of a shard (its --shard restored from the store): still a mergeable part.

    Found: the report sinks were told the run is a shard by the command line's --shard,
    which a resume does not repeat: the resumed shard's JSON report had no records_digest
    (``assertly merge``: "the report carries no records_digest"), unlike ``assertly report``.
    """
    with _project(tmp_path) as project:
        tests = [_test(f"t{index}", "alpha" if index % 3 else "beta") for index in range(6)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        _run(project, "s.tests.yaml", "--shard", "1/2")
        resumed = _run(project, "--resume", "last")
        assert resumed["shard"] == "1/2" and resumed["records_digest"]
        (project.root / "streamed.json").rename(project.root / "part1.json")
        _run(project, "s.tests.yaml", "--shard", "2/2")
        merged = project.run("merge", "part1.json", "streamed.json", "-o", "m.json", report=False)
        assert merged.exit_code == 1, merged.stderr  # a merged run with failures, not refused
        whole = json.loads((project.root / "m.json").read_text(encoding="utf-8"))
        assert whole["summary"]["total"] == 6


@pytest.mark.parametrize("where", ["id", "suite"])
def test_a_lone_surrogate_in_an_id_is_a_problem_not_a_failed_run(
    tmp_path: Path, where: str
) -> None:
    """A JSON test file may spell a lone surrogate (``"\\ud800"``) in a test id or suite name.

    Found (before streaming too): the test's key could not be written to the store, and the
    run stopped with "cannot write to the run store: cannot start a transaction within a
    transaction", no test judged. Now it is refused like a control character in an id.
    """
    with _project(tmp_path) as project:
        test = _test("x\ud800" if where == "id" else "x", "alpha")
        suite = "s\udcff" if where == "suite" else "s"
        text = json.dumps({"agent": "bot", "test_suites": {suite: {"tests": [test]}}})
        (project.root / "s.tests.json").write_text(text, encoding="utf-8")
        result = project.run("run", "s.tests.json", "--store", "s.sqlite", report=False)
        assert "run store" not in result.stderr, result.stderr
        shown = result.stdout + result.stderr
        assert "unicode string" in shown or "lone surrogates (U+DCFF" in shown, shown


def test_a_test_file_named_in_bytes_that_are_not_utf8_is_a_problem(tmp_path: Path) -> None:
    """``caf\\xe9.tests.yaml`` (Latin-1 bytes): its tests' keys could not be stored.

    Found (before streaming too): the run stopped with "cannot write to the run store:
    cannot start a transaction within a transaction". Now the file is named as a problem.
    """
    with _project(tmp_path) as project:
        tests = {"agent": "bot", "test_suites": {"s": {"tests": [_test("a", "alpha")]}}}
        name = os.fsdecode(b"caf\xe9.tests.yaml")
        (project.root / name).write_text(yaml.safe_dump(tests), encoding="utf-8")
        result = project.run("run", ".", "--store", "s.sqlite", report=False)
        assert result.exit_code == 2, result.stdout + result.stderr
        assert "run store" not in result.stderr, result.stderr
        assert "not UTF-8" in result.stderr, result.stderr


def test_a_write_the_store_cannot_encode_is_said_and_the_store_stays_usable(
    tmp_path: Path,
) -> None:
    """A value SQLite cannot bind (a lone surrogate) failed inside the write's transaction.

    Found: the transaction was left open, so the error shown was the next write's "cannot
    start a transaction within a transaction", and every later write failed with it.
    """
    from assertly.store import open_store

    with open_store(tmp_path / "s.sqlite") as store:
        store.start_run("r", "2026-11-29T00:00:00Z", {})
        meta = {"key": "f::s::x\ud800", "id": "x\ud800", "suite": "s", "file": "f"}
        with pytest.raises(UnicodeEncodeError):
            store.save_tests("r", [meta])
        store.save_tests("r", [{"key": "f::s::y", "id": "y", "suite": "s", "file": "f"}])
    with contextlib.closing(sqlite3.connect(tmp_path / "s.sqlite")) as db:
        assert db.execute("SELECT test_key FROM tests").fetchall() == [("f::s::y",)]


# --- what holds ----------------------------------------------------------------------------


def test_matrix_multi_step_and_eval_sections_stream_what_the_store_holds(tmp_path: Path) -> None:
    from test_runner_files_and_evals import FLOW

    with _project(tmp_path) as project:
        steps = [
            {"step": "p1", "input": {"reply": "alpha"}, "expect": {"contains": "alpha"}},
            {"step": "p2", "input": {"reply": "beta"}, "expect": {"contains": "alpha"}},
        ]
        tests = [_test("a", "alpha", 2), {"id": "m", "multi_step": steps}, _test("b", "beta")]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        project.write("flow.yaml", FLOW)
        targets = ["--target", "x=bot", "--target", "y=bot"]
        report = _run(project, "s.tests.yaml", "flow.yaml", *targets, "-j", "3")
        assert len(report["tests"]) == 6 and report["evals"]
        # Gated against it: the whole-run readers (HTML, Markdown, JUnit, the gate) too.
        gated = ("json", "jsonl", "csv", "xml")
        _run(project, "s.tests.yaml", "flow.yaml", *targets, "--baseline", "last", same=gated)


def test_the_python_api_returns_the_streamed_tests_as_the_store_reads_them(
    tmp_path: Path,
) -> None:
    import assertly
    from assertly.store import build_run, open_store

    with _project(tmp_path) as project:
        tests = [_test(f"t{index}", "alpha" if index % 3 else "beta", 2) for index in range(7)]
        project.write("s.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
        record = assertly.run("s.tests.yaml", store_path="s.sqlite", concurrency=4).record
        with open_store("s.sqlite") as store:
            stored = build_run(store, record.run_id).tests
            streamed = record.tests
            assert type(streamed).__name__ == "StreamedTests"
            assert len(streamed) == len(stored) == 7
            whole = [test.to_dict() for test in stored]
            assert [test.to_dict() for test in streamed] == whole
            assert [test.to_dict() for test in streamed] == whole  # iterated twice
            assert streamed[-1].to_dict() == whole[-1]
            assert [t.to_dict() for t in streamed[1:6:2]] == whole[1:6:2]
            assert [t.key for t in streamed.not_passed()] == [t.key for t in stored.not_passed()]
            assert streamed.status_counts() == stored.status_counts() == record.status_counts()
