"""``run --backend ray`` on a real local Ray cluster: the same verdicts as a local run, workers
that die, Ctrl-C, and Ray kept out of everything else.

One cluster (2 CPUs) serves the in-process runs of this module: the backend joins a cluster
this process has already joined. One test starts `assertly run` as a process of its own, which
starts (and stops) its own local cluster, as a user's run does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_support import HttpAgent, Project, agent_calls, versioned_agent

from store_support import stored_records_text

ray = pytest.importorskip("ray", reason="the Ray backend's tests need `pip install assertly[ray]`")

# A command agent that kills the Ray worker running it (its parent): input "die" every time,
# "die-once" the first time only (a marker file says it happened).
KILLER_AGENT = r"""
import json, os, signal, sys, time

value = json.load(sys.stdin)
if value == "die":
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(1)
if value.startswith("die-once:"):
    marker = value.split(":", 1)[1]
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(1)
time.sleep(0.5)  # in flight beside the trial that kills the worker
print(json.dumps({"echo": value}))
"""

# A Python agent that ends its own process on input "die" (issue 28, probe 8).
PY_AGENT = r"""
import os

def answer(value):
    if value == "die":
        os._exit(1)
    return {"echo": value}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local cluster of 2 workers, its temporary and home directories in one directory of
    its own (short: pytest's are too deep for Ray's Unix sockets), removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="ray-test-", dir="/tmp"))
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(scratch / "home")
    (scratch / "home").mkdir()
    # ray.init sets its own SIGTERM handler: the tests after these expect the default one.
    sigterm = signal.getsignal(signal.SIGTERM)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        _node_ip_address="127.0.0.1",
        _temp_dir=str(scratch / "ray"),
    )
    signal.signal(signal.SIGTERM, sigterm)
    try:
        yield
    finally:
        ray.shutdown()
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
        shutil.rmtree(scratch, ignore_errors=True)


def _mixed_suite(project: Project) -> None:
    """Passing, failing, crashing, multi-step, multi-trial, skipped, recorded and broken tests."""
    state = project.root / "flaky.state"
    tests = [
        {"id": f"ok{n}", "input": {"files": [f"journal/{n}.md"]}, "expect": {"status": "success"}}
        for n in range(6)
    ]
    tests += [
        {"id": "fails", "input": {"status": "error"}, "expect": {"status": "success"}},
        {"id": "crashes", "input": {"mode": "crash"}, "expect": {"status": "success"}},
        {
            "id": "steps",
            "multi_step": [
                {"step": "first", "input": {"files": ["a.md"]}, "expect": {"status": "success"}},
                {"step": "second", "input": {"status": "error"}, "expect": {"status": "success"}},
            ],
        },
        {
            "id": "flaky",
            "trials": 2,
            "input": {"mode": "flaky", "state": str(state)},
            "expect": {"status": "success"},
        },
        {"id": "skipped", "skip_if": "OFFLINE", "input": {}, "expect": {"status": "success"}},
        {"id": "broken", "input": {}, "assertions": [{"type": "contans", "value": "x"}]},
    ]
    project.write("assertly.yaml", {"agents": {"bot": project.agent}, "facts": {"OFFLINE": True}})
    project.tests_file("a.tests.yaml", {"s": tests})
    (project.root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{n}", "output": "ok" if n % 3 else "no"}) + "\n" for n in range(6)
        )
    )
    # Lines with an input are called (on the workers), in a dataset of its own.
    (project.root / "asked.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{n}", "input": {"mode": "text", "text": f"answer {n}"}}) + "\n"
            for n in range(4)
        )
    )
    project.write(
        "b.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "recorded": {
                    "dataset": "cases.jsonl",
                    "assertions": [{"type": "contains", "value": "ok"}],
                },
                "asked": {
                    "dataset": "asked.jsonl",
                    "assertions": [{"type": "regex", "value": "answer [0-2]$"}],
                },
            },
        },
    )


def _verdicts(report: dict) -> dict[str, tuple]:
    """Each test's verdict and its trials' (in any order: a test's trials run at once)."""
    return {
        f"{t['suite']}::{t['id']}": (
            t["status"],
            sorted(
                (trial["status"], [f["assertion"] for f in trial["failures"]])
                for trial in t["trials"]
            ),
        )
        for t in report["tests"]
    }


def test_same_verdicts_reports_and_exit_code_as_a_local_run(
    project: Project, cluster: None
) -> None:
    _mixed_suite(project)
    local = project.run("run", ".", "-j", "2")
    (project.root / "flaky.state").unlink()  # the flaky agent starts over
    remote = project.run("run", ".", "-j", "2", "--backend", "ray")
    assert remote.exit_code == local.exit_code == 1
    assert _verdicts(remote.report) == _verdicts(local.report)
    assert remote.counts() == local.counts()
    statuses = {t["id"]: t["status"] for t in remote.report["tests"]}
    assert statuses["ok0"] == "passed" and statuses["fails"] == "failed"
    assert statuses["crashes"] == "error" and statuses["skipped"] == "skipped"
    assert statuses["broken"] == "error" and statuses["steps"] == "failed"
    asked = {t["id"]: t["status"] for t in remote.report["tests"] if t["suite"] == "asked"}
    assert asked == {"q0": "passed", "q1": "passed", "q2": "passed", "q3": "failed"}
    crashed = next(t for t in remote.report["tests"] if t["id"] == "crashes")
    assert "boom: the agent fell over" in crashed["trials"][0]["error"]
    ok = next(t for t in remote.report["tests"] if t["id"] == "ok0")
    assert ok["trials"][0]["metrics"]["latency_ms"] > 0  # measured on the worker
    # The comparison of the two stored runs sees nothing changed.
    diff = project.run("diff", "last~1", "last", "--fail-on", "changes")
    assert diff.exit_code == 0, diff.stdout + diff.stderr
    assert "0 regressed, 0 fixed" in diff.stdout


def test_a_matrix_run_spreads_its_cells_over_the_cluster(project: Project, cluster: None) -> None:
    tests = [
        {"id": f"t{n}", "input": f"order {n}", "expect": {"contains": f"{n}"}} for n in range(3)
    ]
    project.tests_file("t.yaml", {"s": tests})
    targets = ["--target", f"base={versioned_agent(project, 'v1')}"]
    targets += ["--target", f"cand={versioned_agent(project, 'v2')}"]
    remote = project.run("run", "t.yaml", "--trials", "2", "--backend", "ray", *targets)
    assert remote.exit_code == 1, remote.stdout + remote.stderr  # v2 forgets every order
    assert remote.report is not None and remote.report["targets"] == ["base", "cand"]
    cells = {(t["id"], t["target"]): t["status"] for t in remote.report["tests"]}
    assert cells == {
        (f"t{n}", label): status
        for n in range(3)
        for label, status in (("base", "passed"), ("cand", "failed"))
    }
    # Every cell's trials ran on the workers, each target called tests x trials times.
    calls = agent_calls(project)
    assert calls == Counter(
        {f"{version} order {n}": 2 for n in range(3) for version in ("v1", "v2")}
    )


def test_a_worker_that_dies_is_retried_once_then_the_trial_is_an_error(
    project: Project, cluster: None
) -> None:
    project.write("killer_agent.py", KILLER_AGENT)
    agent = f"cmd:{sys.executable} killer_agent.py"
    project.write("assertly.yaml", {"agents": {"bot": agent}})
    marker = project.root / "died-once"
    expect = [{"type": "contains", "value": "echo"}]
    tests = [{"id": f"ok{n}", "input": f"ok{n}", "assertions": expect} for n in range(6)]
    # Its worker dies (and takes any trial beside it along): each is sent once more and passes.
    once = {"id": "dies-once", "input": f"die-once:{marker}", "assertions": expect}
    project.tests_file("a.tests.yaml", {"s": [*tests, once]})
    result = project.run("run", ".", "-j", "2", "--backend", "ray")
    assert marker.exists(), "the worker did die"
    assert result.exit_code == 0, result.stdout
    assert result.counts() == (7, 7, 0, 0, 0)
    # Its worker dies every time: error after the second, and nothing is lost; the trials
    # beside it (-j 4 on 2 workers) are retried alone, so none of them is blamed.
    always = {"id": "dies", "input": "die", "assertions": expect}
    project.tests_file("a.tests.yaml", {"s": [*tests[:2], always, *tests[2:]]})
    result = project.run("run", ".", "-j", "4", "--backend", "ray")
    assert result.exit_code == 1
    assert result.status("dies") == "error"
    error = result.tests["dies"]["trials"][0]["error"]
    assert "the Ray worker running this trial died, and so did the one it was retried on" in error
    assert {f"ok{n}": result.status(f"ok{n}") for n in range(6)} == dict.fromkeys(
        (f"ok{n}" for n in range(6)), "passed"
    )
    run_id = result.report["run_id"]
    assert project.sql("SELECT COUNT(*) FROM trials WHERE run_id = ?", run_id) == [(7,)]


def test_a_py_agent_that_ends_its_process_errors_only_its_own_trial(
    project: Project, cluster: None
) -> None:
    # issue 28, probe 8: os._exit(1) in a py: agent killed the Ray worker, and the trials
    # beside it became errors ("the Ray worker ... died, and so did the one it was retried on").
    project.write("py_agent.py", PY_AGENT)
    project.write("assertly.yaml", {"agents": {"bot": "py:py_agent:answer"}})
    expect = [{"type": "contains", "value": "echo"}]
    tests = [{"id": f"ok{n}", "input": f"ok{n}", "assertions": expect} for n in range(6)]
    dying = [{"id": f"dies{n}", "input": "die", "assertions": expect} for n in range(2)]
    project.tests_file("a.tests.yaml", {"s": [*tests[:3], *dying, *tests[3:]]})
    result = project.run("run", ".", "-j", "4", "--backend", "ray")
    assert result.exit_code == 1
    assert all(result.status(f"ok{n}") == "passed" for n in range(6))
    for n in range(2):
        assert result.status(f"dies{n}") == "error"
        error = result.tests[f"dies{n}"]["trials"][0]["error"]
        assert "the agent's process exited with code 1" in error, error


def test_an_http_agent_with_a_secret_header_set_after_the_cluster_started(
    project: Project, cluster: None, http_server: HttpAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers call a real HTTP agent with the driver's ${TOKEN} (the cluster's processes
    started before it was set), and the driver's store and report never hold the token."""
    token = "tok-" + uuid.uuid4().hex
    monkeypatch.setenv("TOKEN", token)
    agent = {"url": http_server.url("/auth"), "headers": {"Authorization": "Bearer ${TOKEN}"}}
    project.write("assertly.yaml", {"agents": {"bot": agent}})
    sent = {"field_contains": {"path": "auth", "text": "Bearer"}}
    tests = [
        {"id": "sent", "input": {}, "expect": sent},
        # The agent echoes the header; the failure's `actual` would show it.
        {"id": "echoed", "input": {}, "expect": {"field_equals": {"auth": "something else"}}},
    ]
    project.tests_file("auth.tests.yaml", {"s": tests})
    result = project.run("run", ".", "--backend", "ray")
    assert result.status("sent") == "passed", result.stdout
    assert result.status("echoed") == "failed"
    assert http_server.hits("/auth")[0][2]["Authorization"] == f"Bearer {token}"
    failure = result.tests["echoed"]["trials"][0]["failures"][0]
    assert failure["actual"] == "Bearer [REDACTED]"
    assert token not in json.dumps(result.report) + result.stdout
    for path in (project.root / ".assertly").iterdir():
        data = path.read_bytes() + stored_records_text(path)
        assert token.encode() not in data, f"secret leaked into {path.name}"


def test_ray_address_needs_the_ray_backend(project: Project) -> None:
    project.tests_file("a.tests.yaml", {"s": [{"id": "t", "input": "x", "expect": {"a": 1}}]})
    result = project.run("run", ".", "--target", project.agent, "--ray-address", "auto")
    assert result.exit_code == 2
    assert "--ray-address" in result.stdout + result.stderr
    assert "--backend ray" in result.stdout + result.stderr
    assert not (project.root / ".assertly").exists(), "a usage error writes nothing"


def _assertly() -> str:
    return str(Path(sys.executable).with_name("assertly"))


def test_ray_is_not_imported_by_assertly_or_a_local_run(project: Project) -> None:
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
    )
    code = (
        "import sys, atexit, assertly\n"
        "assert 'ray' not in sys.modules, 'import assertly imported ray'\n"
        "atexit.register(lambda: print('RAY' if 'ray' in sys.modules else 'NO-RAY'))\n"
        "from assertly.cli import main\n"
        f"main(['run', '.', '--target', {project.agent!r}, '--plain'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("NO-RAY"), done.stdout


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_cancels_the_calls_on_the_workers_of_its_own_local_cluster(
    project: Project, stop: signal.Signals, code: int, said: str
) -> None:
    """A real `assertly run --backend ray` starts its own local cluster; a real SIGINT (or
    SIGTERM) stops the agents the workers were calling, stores what finished and exits 130
    (143)."""
    pidfiles = [project.root / f"grandchild-{n}.pid" for n in range(2)]
    tests = [{"id": "quick", "input": {}, "expect": {"status": "success"}}]
    tests += [
        {
            "id": f"hang{n}",
            "input": {"mode": "hang", "pidfile": str(pidfile)},
            "expect": {"status": "success"},
        }
        for n, pidfile in enumerate(pidfiles)
    ]
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file("a.tests.yaml", {"s": tests})
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    process = subprocess.Popen(
        [_assertly(), "run", ".", "-j", "3", "--plain", "--backend", "ray"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    try:
        deadline = time.monotonic() + 120  # a cold cluster on a busy 2-core machine
        while not (
            all(pidfile.exists() and pidfile.read_text() for pidfile in pidfiles)
            and _stored(project) == [("a.tests.yaml::s::quick", "passed")]
        ):
            assert process.poll() is None, "the run ended before Ctrl-C: " + str(
                process.communicate()
            )
            assert time.monotonic() < deadline, "the hanging agents never started"
            time.sleep(0.05)
        sent = time.monotonic()
        process.send_signal(stop)
        stdout, stderr = process.communicate(timeout=60)
        stopped_s = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code, stdout + stderr
    assert said in stderr
    assert "Traceback" not in stdout + stderr
    assert stopped_s < 30
    for pidfile in pidfiles:
        grandchild = int(pidfile.read_text())
        with pytest.raises(ProcessLookupError):
            _wait_gone(grandchild)
    assert _stored(project) == [("a.tests.yaml::s::quick", "passed")]


def _stored(project: Project) -> list[tuple[str, str]]:
    """The trials stored so far (none before the run has made its store)."""
    if not (project.root / ".assertly" / "runs.sqlite").exists():
        return []  # not created here: the run makes it
    try:
        return [(key, status) for key, status in project.sql("SELECT test_key, status FROM trials")]
    except sqlite3.OperationalError:  # no store (or no table) yet
        return []


def _wait_gone(pid: int) -> None:
    """Raise ProcessLookupError once ``pid`` is gone (a zombie of init counts as gone).

    Within 30 s: on a 2-core machine running the suite beside a Ray cluster, the workers'
    clean-up once took longer than 10 s (a flaky failure, not a survivor).
    """
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().split()[2] == "Z":
                    raise ProcessLookupError
        except FileNotFoundError:
            raise ProcessLookupError from None
        time.sleep(0.05)


def _fake_openai() -> Any:
    """tests/judge/fake_openai.py (the fake judge server), imported by path."""
    import importlib.util

    if "fake_openai" not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "judge" / "fake_openai.py"
        spec = importlib.util.spec_from_file_location("fake_openai", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["fake_openai"] = module
        spec.loader.exec_module(module)
    return sys.modules["fake_openai"]


def test_judge_accounting_of_the_workers_reaches_the_report_and_console(
    project: Project, cluster: None
) -> None:
    # issue 29, first contact: `--backend ray` dropped judge accounting (no judge_cost_usd,
    # judge_tokens, judge_calls, judge_cached, no `judge:` line): the judge is asked on the
    # workers, and their spend never reached the driver's store.
    fake_openai = _fake_openai()

    def by_text(body: dict[str, Any]) -> Any:
        passed = "answer 1" in body["messages"][-1]["content"]
        reply = fake_openai.verdict("pass" if passed else "fail", 1.0 if passed else 0.0)
        return fake_openai.Raw(200, fake_openai.completion(reply, cost=0.25))

    server = fake_openai.serve()
    fake = next(server)
    try:
        fake.answers(by_text)
        judge = {"base_url": fake.url, "model": "judge-1"}
        project.write("assertly.yaml", {"agents": {"bot": project.agent}, "judge": judge})
        rubric = [{"type": "llm-rubric", "value": "The answer names the number one."}]
        tests = [
            {"id": f"t{n}", "input": {"mode": "text", "text": f"answer {n}"}, "assertions": rubric}
            for n in range(3)
        ]
        project.tests_file("judged.tests.yaml", {"s": tests})
        local = project.run("run", ".", "-j", "2", "--judge-cache", "off")
        remote = project.run("run", ".", "-j", "2", "--backend", "ray", "--judge-cache", "off")
    finally:
        server.close()
    assert remote.exit_code == local.exit_code == 1
    statuses = {t["id"]: t["status"] for t in remote.report["tests"]}
    assert statuses == {"t0": "failed", "t1": "passed", "t2": "failed"}
    names = ("judge_calls", "judge_cached", "judge_tokens", "judge_cost_usd")
    spent = {name: remote.report["summary"].get(name) for name in names}
    assert spent == {name: local.report["summary"][name] for name in names}
    assert spent == {
        "judge_calls": 3,
        "judge_cached": 0,
        "judge_tokens": 360,
        "judge_cost_usd": pytest.approx(0.75),
    }
    assert "judge: 3 call(s), 0 from the cache" in remote.stdout
    assert len(fake.requests) == 6  # three per run: the workers really asked


# Conversation tests on the workers (issue 32), in this module so they share its one cluster
# (a cluster per module cost ~7 s each, and starting a third timed out on a busy machine).
from ray_conversation_cases import (  # noqa: E402
    test_conversation_trials_run_on_the_workers_as_they_run_locally,
)
from ray_simulator_cases import (  # noqa: E402
    servers,
    test_the_workers_simulator_spend_reaches_the_report_and_console,
)

__all__ = [
    "servers",
    "test_conversation_trials_run_on_the_workers_as_they_run_locally",
    "test_the_workers_simulator_spend_reaches_the_report_and_console",
]
