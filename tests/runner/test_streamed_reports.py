"""Reports written as the run goes equal the reports written from the store afterwards.

`assertly run -o` streams each finished test to its reports (`runner._streaming`); `assertly
report RUN -o` reads the same run back from the store. For generated suites (any reply text,
trials, ``-j 8`` with replies finishing out of order, secrets in replies), resumed runs whose
files changed (tests added, removed, edited, reordered) and shards merged afterwards, every
report format must come out byte for byte the same (the JSON report apart from nothing: it
holds no time of writing), and the console summary must show the same failures.
"""

from __future__ import annotations

import contextlib
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_support import Project, py_agent_project, run_started

from assertly._secrets import remember_from_environment

FORMATS = ("json", "jsonl", "csv", "md", "html", "xml")

PY_AGENT = """
import asyncio

async def answer(payload):
    # Replies finish out of the suite's order under -j: each waits its own delay.
    await asyncio.sleep(payload["delay"])
    if payload.get("crash"):
        raise RuntimeError("the agent fell over: " + payload["reply"])
    return payload["reply"]
"""

SECRET = "sk-streamed-5ecret-value"

_replies = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["alpha beta", '{"status": "ok"}', f"key {SECRET} leaked", "\x1b[31mred"]),
)
_tests = st.lists(
    st.fixed_dictionaries(
        {
            "reply": _replies,
            "delay": st.sampled_from([0.0, 0.001, 0.004]),
            "crash": st.booleans(),
            "word": st.sampled_from(["alpha", "ok", "red", SECRET]),
            "trials": st.integers(1, 3),
        }
    ),
    min_size=1,
    max_size=8,
)


def _suite(tests: list[dict[str, Any]], ids: list[str] | None = None) -> dict[str, Any]:
    ids = ids or [f"t{index}" for index in range(len(tests))]
    return {
        "agent": "bot",
        "test_suites": {
            "s": {
                "tests": [
                    {
                        "id": test_id,
                        "input": {"reply": t["reply"], "delay": t["delay"], "crash": t["crash"]},
                        "trials": t["trials"],
                        "assertions": [{"type": "contains", "value": t["word"]}],
                    }
                    for test_id, t in zip(ids, tests, strict=True)
                ]
            }
        },
    }


@contextlib.contextmanager
def _project(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # As if a config had read it from ${VAR}: a secret the store redacts everywhere.
    remember_from_environment(SECRET)
    with py_agent_project(tmp_path_factory.mktemp("streamed"), PY_AGENT) as project:
        yield project


def _outputs(prefix: str) -> list[str]:
    return [arg for fmt in FORMATS for arg in ("-o", f"{prefix}.{fmt}")]


def _same_reports(project: Project, streamed: str, run_id: str, store: str) -> None:
    """The reports of ``streamed`` equal ``assertly report RUN -o`` of the same run."""
    result = project.run("report", run_id, "--store", store, *_outputs("again"), report=False)
    assert result.exit_code in (0, 1), result.stderr
    for fmt in FORMATS:
        written = (project.root / f"{streamed}.{fmt}").read_bytes()
        again = (project.root / f"again.{fmt}").read_bytes()
        assert written == again, fmt
        assert SECRET.encode() not in written, fmt
    leftovers = [p.name for p in project.root.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers  # no body or partial file is left beside a report


def _run(project: Project, store: str, *args: str) -> tuple[Any, str]:
    result = project.run("run", "s.tests.yaml", "--store", store, *args, report=False)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    report = json.loads((project.root / "streamed.json").read_text(encoding="utf-8"))
    return result, report["run_id"]


_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(tests=_tests, jobs=st.sampled_from(["1", "8"]))
def test_streamed_reports_equal_reports_from_the_store(
    tmp_path_factory: pytest.TempPathFactory,
    tests: list[dict[str, Any]],
    jobs: str,
) -> None:
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        result, run_id = _run(project, "s.sqlite", "-j", jobs, *_outputs("streamed"))
        _same_reports(project, "streamed", run_id, "s.sqlite")
        report = json.loads((project.root / "streamed.json").read_text(encoding="utf-8"))
        assert [t["id"] for t in report["tests"]] == [f"t{i}" for i in range(len(tests))]
        # The console shows the same failing tests, in order, as `report` shows them.
        shown = [
            line.split("::")[1].split()[0]
            for line in result.stdout.splitlines()
            if line.startswith(("FAILED s::", "ERROR s::"))
        ]
        failing = [t["id"] for t in report["tests"] if t["status"] in ("failed", "error")]
        assert shown == failing


def test_tests_finishing_in_reverse_order_are_reported_in_the_suite_order(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tests = [
        {"reply": f"alpha {index}", "delay": 0.4 * (5 - index), "crash": index == 2,
         "word": "alpha" if index % 2 else "beta", "trials": 1 + index % 2}
        for index in range(6)
    ]  # fmt: skip
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        result, run_id = _run(project, "s.sqlite", "-j", "8", *_outputs("streamed"))
        # The last test finished first: the live lines show the completion order...
        live = [line.split("::")[-1] for line in result.stdout.splitlines() if "::t" in line]
        assert live[0].startswith("t5"), live
        # ...and the reports the suite's.
        _same_reports(project, "streamed", run_id, "s.sqlite")
        report = json.loads((project.root / "streamed.json").read_text(encoding="utf-8"))
        assert [test["id"] for test in report["tests"]] == [f"t{i}" for i in range(6)]


@_SETTINGS
@given(
    first=_tests,
    second=_tests,
    order=st.randoms(use_true_random=False),
)
def test_a_resumed_run_streams_what_the_store_holds(
    tmp_path_factory: pytest.TempPathFactory,
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    order: Any,
) -> None:
    """Resumed after its files changed: tests kept, edited, added, removed and reordered."""
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(first))
        _run(project, "s.sqlite", *_outputs("streamed"))
        # The same ids where both lists reach (kept when unchanged, run again when edited);
        # new ones beyond; the first run's extra tests are gone; all shuffled.
        ids = [f"t{index}" for index in range(len(second))]
        pairs = list(zip(ids, second, strict=True))
        order.shuffle(pairs)
        project.write("s.tests.yaml", _suite([t for _, t in pairs], [i for i, _ in pairs]))
        _, run_id = _run(project, "s.sqlite", "--resume", "last", *_outputs("streamed"))
        _same_reports(project, "streamed", run_id, "s.sqlite")
        report = json.loads((project.root / "streamed.json").read_text(encoding="utf-8"))
        assert [test["id"] for test in report["tests"]] == [i for i, _ in pairs]


def test_shards_stream_their_reports_and_merge_as_from_the_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tests = [
        {"reply": f"alpha {index}", "delay": 0.0, "crash": index == 3,
         "word": "alpha" if index % 3 else "beta", "trials": 1 + index % 2}
        for index in range(9)
    ]  # fmt: skip
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        for shard in ("1/2", "2/2"):
            _, run_id = _run(project, "s.sqlite", "--shard", shard, *_outputs("streamed"))
            _same_reports(project, "streamed", run_id, "s.sqlite")
            part = shard[0]
            (project.root / "streamed.json").rename(project.root / f"shard{part}.json")
            (project.root / "again.json").rename(project.root / f"again{part}.json")
        merged = project.run("merge", "shard1.json", "shard2.json", "-o", "m1.json", report=False)
        again = project.run("merge", "again1.json", "again2.json", "-o", "m2.json", report=False)
        assert merged.exit_code == again.exit_code == 1, merged.stderr
        one = json.loads((project.root / "m1.json").read_text(encoding="utf-8"))
        two = json.loads((project.root / "m2.json").read_text(encoding="utf-8"))
        for report in (one, two):  # each merge is a run of its own
            report.pop("run_id"), report.pop("started_at")
        assert one == two
        assert one["summary"]["total"] == 9


def test_ctrl_c_leaves_no_partial_report_and_keeps_the_previous_one(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tests = [
        {"reply": "alpha", "delay": 0.05, "crash": False, "word": "alpha", "trials": 1}
        for _ in range(400)
    ]
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        for fmt in FORMATS:
            (project.root / f"streamed.{fmt}").write_text("the previous report", encoding="utf-8")
        args = ["s.tests.yaml", "--store", "s.sqlite", *_outputs("streamed")]
        with run_started(project, *args) as process:
            # JSON, JSON Lines and CSV are being written, into unnamed files (red team:
            # a run killed outright must leave nothing): none shows beside the targets.
            body = [p for p in project.root.iterdir() if p.name.startswith(".streamed.")]
            assert body == [], body
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=60) == 130
        left = [p.name for p in project.root.iterdir() if p.name.startswith(".")]
        assert left == []
        for fmt in FORMATS:
            assert (project.root / f"streamed.{fmt}").read_text() == "the previous report"


def test_a_sink_not_fed_the_whole_run_writes_the_run_it_is_given(tmp_path: Path) -> None:
    """The safety net: a report never comes out short of a test it was not fed."""
    from assertly._records import RunRecord, TestRecord, TrialRecord
    from assertly.reports import ReportSink, write_report

    tests = [
        TestRecord(f"f::s::t{i}", f"t{i}", f"t{i}", "s", "f", "passed", None,
                   [TrialRecord(f"f::s::t{i}", 1, "passed", 1.0)])
        for i in range(3)
    ]  # fmt: skip
    run = RunRecord("r", "2026-11-29T00:00:00Z", 3.0, tests=tests)
    for fmt in ("json", "jsonl", "csv"):
        sink = ReportSink(tmp_path / f"fed.{fmt}")
        sink.add(tests[0])  # one of three
        sink.finish(run)
        write_report(run, tmp_path / f"whole.{fmt}")
        assert (tmp_path / f"fed.{fmt}").read_bytes() == (tmp_path / f"whole.{fmt}").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_report_that_cannot_be_written_is_said_and_the_run_is_stored(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tests = [{"reply": "alpha", "delay": 0.0, "crash": False, "word": "alpha", "trials": 1}]
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        (project.root / "taken").write_text("a file, not a directory", encoding="utf-8")
        result = project.run(
            "run", "s.tests.yaml", "--store", "s.sqlite", "-o", "taken/r.json", report=False
        )
        assert result.exit_code == 2
        assert "cannot write taken/r.json" in result.stderr
        assert "assertly report" in result.stderr
        assert project.sql("SELECT COUNT(*) FROM trials", store="s.sqlite") == [(1,)]


def test_the_python_api_streams_its_outputs_as_the_cli_does(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import assertly

    tests = [
        {"reply": f"alpha {index}", "delay": 0.0, "crash": index == 1,
         "word": "alpha" if index % 2 else "beta", "trials": 1}
        for index in range(4)
    ]  # fmt: skip
    with _project(tmp_path_factory) as project:
        project.write("s.tests.yaml", _suite(tests))
        outputs = [str(project.root / f"streamed.{fmt}") for fmt in FORMATS]
        result = assertly.run("s.tests.yaml", store_path="s.sqlite", outputs=outputs)
        assert len(result.record.tests) == 4
        assert [test.id for test in result.record.tests] == ["t0", "t1", "t2", "t3"]
        _same_reports(project, "streamed", result.record.run_id, "s.sqlite")
