"""The GitHub Action: action.yml's structure, docs/ci.md's workflow linted with actionlint, the
sticky-comment script against a fake GitHub API on loopback, and the run step end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
SCRIPTS = ROOT / "scripts" / "action"
MARKER = "<!-- assertly-report -->"


def _action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


# action.yml ------------------------------------------------------------------------------------


def test_action_metadata_is_a_composite_action_with_the_issues_inputs() -> None:
    action = _action()
    assert {"name", "description", "inputs", "outputs", "runs"} <= set(action)
    assert set(action) <= {"name", "description", "author", "branding", "inputs", "outputs", "runs"}
    assert {"paths", "args", "baseline", "min-pass-rate", "comment"} <= set(action["inputs"])
    assert action["inputs"]["comment"]["default"] == "true"
    assert action["inputs"]["paths"]["required"] is True
    for name, spec in action["inputs"].items():
        assert spec.get("description"), f"input {name} has no description"
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
    for name, spec in action["outputs"].items():
        assert set(spec) == {"description", "value"}, name  # composite outputs need a value
    assert action["runs"]["using"] == "composite"


SCHEMA = ROOT / "tests" / "vendor" / "github-action.schema.json"  # tests/vendor/README.md


def _schema_errors(action: dict[str, Any]) -> list[str]:
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(json.loads(SCHEMA.read_text(encoding="utf-8")))
    return [error.message for error in validator.iter_errors(action)]


def test_action_yml_is_valid_against_schemastores_action_schema() -> None:
    assert _schema_errors(_action()) == []


@pytest.mark.parametrize(
    "mistake",
    ["a run step without shell", "an unknown key of an input", "an unknown runner"],
)
def test_the_schema_check_catches_mistakes(mistake: str) -> None:
    action = _action()
    if mistake == "a run step without shell":
        del action["runs"]["steps"][0]["shell"]
    elif mistake == "an unknown key of an input":
        action["inputs"]["paths"]["defualt"] = "tests"
    else:
        action["runs"]["using"] = "composit"
    assert _schema_errors(action) != []


def test_every_step_is_well_formed_and_every_name_it_uses_exists() -> None:
    action = _action()
    steps = action["runs"]["steps"]
    ids = {step["id"] for step in steps if "id" in step}
    text = ACTION.read_text(encoding="utf-8")
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:  # a composite action's run step must name its shell
            assert step.get("shell") == "bash", step
        else:
            assert re.fullmatch(r"[\w-]+/[\w-]+@v\d+", step["uses"]), step["uses"]
        assert set(step) <= {"name", "id", "if", "run", "shell", "env", "uses", "with"}, step
    used_inputs = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used_inputs == set(action["inputs"]), "every input declared is used, and only those"
    assert set(re.findall(r"steps\.([\w-]+)\.outputs", text)) <= ids
    for script in re.findall(r"\$GITHUB_ACTION_PATH/([\w/.-]+\.py)", text):
        assert (ROOT / script).is_file(), script
    # The run step's outputs that the action reads are the ones run.py writes.
    run_py = (SCRIPTS / "run.py").read_text(encoding="utf-8")
    for output in re.findall(r"steps\.run\.outputs\.([\w-]+)", text):
        assert f'"{output}"' in run_py, output


def _actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(found).is_file():
        pytest.skip("actionlint is not installed (opt-in: docs/decisions.md, 'GitHub Action')")
    return found


def _workflow_of_docs() -> str:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    match = re.search(r"```yaml\n(name: Agent tests\n.*?)```", text, re.S)
    assert match, "docs/ci.md shows no GitHub workflow"
    return match.group(1)


def _lint(tmp_path: Path, workflow: str) -> subprocess.CompletedProcess[str]:
    """actionlint over ``workflow`` in a repository whose root is this action (``uses: ./``),
    so it also reads action.yml and checks the inputs the workflow gives against it."""
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copy(ACTION, repo / "action.yml")
    local = re.sub(r"uses: assertly/assertly@\S+", "uses: ./", workflow)
    assert local != workflow
    (repo / ".github" / "workflows" / "agent-tests.yml").write_text(local, encoding="utf-8")
    return subprocess.run(
        [_actionlint(), "-no-color", "-shellcheck=", "-pyflakes="],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_workflow_of_docs_ci_passes_actionlint(tmp_path: Path) -> None:
    linted = _lint(tmp_path, _workflow_of_docs())
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_actionlint_reads_the_actions_inputs(tmp_path: Path) -> None:
    # It would catch a workflow that gives an input action.yml does not declare, or leaves
    # out a required one: the check above reads this action, not a guess.
    broken = _workflow_of_docs().replace("paths: tests/agents", "path: tests/agents")
    linted = _lint(tmp_path, broken)
    assert linted.returncode == 1
    assert 'input "path" is not defined' in linted.stdout, linted.stdout
    assert 'missing input "paths"' in linted.stdout, linted.stdout


# The sticky comment, against a fake GitHub API ---------------------------------------------------


@dataclass
class FakeGitHub:
    """Issue comments of one repository, served as GitHub's REST API serves them."""

    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    refuse: bool = False  # answer 403, as for a read-only token
    next_id: int = 100
    tokens: list[str] = field(default_factory=list)


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    state = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            state.requests.append((self.command, self.path))
            state.tokens.append(self.headers.get("Authorization", ""))
            if state.refuse:
                self._reply(403, {"message": "Resource not accessible by integration"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            sent = json.loads(self.rfile.read(length)) if length else None
            listed = re.fullmatch(
                r"/repos/o/r/issues/(\d+)/comments\?per_page=(\d+)&page=(\d+)", self.path
            )
            created = re.fullmatch(r"/repos/o/r/issues/(\d+)/comments", self.path)
            edited = re.fullmatch(r"/repos/o/r/issues/comments/(\d+)", self.path)
            if self.command == "GET" and listed:
                number, size, page = map(int, listed.groups())
                items = state.comments.get(number, [])
                self._reply(200, items[(page - 1) * size : page * size])
            elif self.command == "POST" and created and sent:
                state.next_id += 1
                comment = {
                    "id": state.next_id,
                    "body": sent["body"],
                    "user": {"login": "github-actions[bot]"},
                }
                state.comments.setdefault(int(created.group(1)), []).append(comment)
                self._reply(201, comment)
            elif self.command == "PATCH" and edited and sent:
                for comment in (c for cs in state.comments.values() for c in cs):
                    if comment["id"] == int(edited.group(1)):
                        comment["body"] = sent["body"]
                        self._reply(200, comment)
                        return
                self._reply(404, {"message": "Not Found"})
            else:
                self._reply(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _comment(
    tmp_path: Path, api: str, body: str, number: int = 7
) -> subprocess.CompletedProcess[str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": number}}), encoding="utf-8")
    (tmp_path / "comment.md").write_text(body, encoding="utf-8")
    env = {
        **os.environ,
        "GITHUB_API_URL": api,
        "GITHUB_TOKEN": "t0ken",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_PATH": str(event),
    }
    env.pop("PR_NUMBER", None)
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "sticky_comment.py"), str(tmp_path / "comment.md")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_creates_on_the_first_run_and_updates_on_the_second(
    github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    state, api = github
    others = [
        {"id": 1, "body": "LGTM", "user": {"login": "alice"}},
        {"id": 2, "body": f"quoting {MARKER} in passing", "user": {"login": "bob"}},
    ]
    state.comments[7] = [dict(comment) for comment in others]
    first = _comment(tmp_path, api, "2 regressed")
    assert first.returncode == 0, first.stderr
    assert "created comment 101 on pull request #7" in first.stdout
    assert state.comments[7][2]["body"] == f"{MARKER}\n2 regressed"
    second = _comment(tmp_path, api, "all fixed")
    assert second.returncode == 0, second.stderr
    assert "updated comment 101" in second.stdout
    assert len(state.comments[7]) == 3
    assert state.comments[7][2]["body"] == f"{MARKER}\nall fixed"
    assert state.comments[7][:2] == others  # never touched
    assert ("PATCH", "/repos/o/r/issues/comments/101") in state.requests
    assert not any(path.endswith(("/comments/1", "/comments/2")) for _, path in state.requests)
    assert set(state.tokens) == {"Bearer t0ken"}
    # The same body again: nothing to write.
    third = _comment(tmp_path, api, "all fixed")
    assert "is up to date" in third.stdout
    assert [method for method, _ in state.requests].count("PATCH") == 1


def test_finds_its_comment_on_a_later_page(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    state.comments[7] = [{"id": n, "body": f"comment {n}"} for n in range(1, 151)]
    bot = {"login": "github-actions[bot]"}
    state.comments[7].append({"id": 151, "body": f"{MARKER}\nold", "user": bot})
    done = _comment(tmp_path, api, "new")
    assert done.returncode == 0, done.stderr
    assert "updated comment 151" in done.stdout
    assert state.comments[7][-1]["body"] == f"{MARKER}\nnew"
    assert len(state.comments[7]) == 151


def test_fails_clearly_on_403(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    state.refuse = True
    refused = _comment(tmp_path, api, "x")
    assert refused.returncode == 1
    assert "HTTP 403: Resource not accessible by integration" in refused.stderr
    assert "pull-requests: write" in refused.stderr and "fork" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_an_unreachable_api_fails_clearly(tmp_path: Path) -> None:
    refused = _comment(tmp_path, "http://127.0.0.1:9", "x")
    assert refused.returncode == 1
    assert "sticky comment: GET http://127.0.0.1:9/repos/o/r/issues/7/comments" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_no_pull_request_no_comment(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    (tmp_path / "push.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    (tmp_path / "c.md").write_text("x")
    env = {**os.environ, "GITHUB_API_URL": api, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r"}
    env["GITHUB_EVENT_PATH"] = str(tmp_path / "push.json")
    env.pop("PR_NUMBER", None)
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "sticky_comment.py"), str(tmp_path / "c.md")],
        env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and "not a pull request" in done.stdout
    assert state.requests == []


def test_a_long_body_is_cut_to_githubs_limit(
    github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    state, api = github
    assert _comment(tmp_path, api, "x" * 100_000).returncode == 0
    body = state.comments[7][0]["body"]
    assert len(body) <= 65_536 and body.startswith(MARKER)
    assert body.endswith("artifacts)\n")


# The run step, end to end -----------------------------------------------------------------------

AGENT = """
import json, sys
q = json.load(sys.stdin)
print(q["say"])
"""


def _project(tmp_path: Path, good: bool) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "agent.py").write_text(AGENT)
    (project / "assertly.yaml").write_text(f"agents:\n  bot: 'cmd:{sys.executable} agent.py'\n")
    tests = [
        {"id": "one", "input": {"say": "yes"}, "expect": {"contains": "yes"}},
        {"id": "two", "input": {"say": "yes" if good else "no"}, "expect": {"contains": "yes"}},
    ]
    (project / "t.tests.json").write_text(
        json.dumps({"agent": "bot", "test_suites": {"s": {"tests": tests}}}, indent=2)
    )
    return project


def _run_step(
    project: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    outputs = project / "outputs.txt"
    outputs.write_text("")
    env = {
        **os.environ,
        "ASSERTLY": f"{sys.executable} -m assertly",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "REPORT_DIR": str(project / "reports"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(project / "summary.md"),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        "GITHUB_WORKSPACE": str(project),
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "run.py")],
        cwd=project, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return done, values


def test_the_run_step_runs_annotates_and_writes_the_comment(tmp_path: Path) -> None:
    project = _project(tmp_path, good=True)
    done, outputs = _run_step(project, paths="t.tests.json")
    assert done.returncode == 0, done.stderr
    assert outputs["exit-code"] == "0"
    reports = Path(outputs["report-dir"])
    assert {p.name for p in reports.iterdir()} == {
        "report.json", "report.html", "junit.xml", "comment.md",
    }  # fmt: skip
    baseline = project / "baseline.json"
    shutil.copy(reports / "report.json", baseline)
    # The agent regresses: the run fails, the failing test is annotated, the comment is the diff.
    _project(tmp_path, good=False)
    args = f'--target "cmd:{sys.executable} agent.py" --trials 2'  # quoted, as in docs/ci.md
    done, outputs = _run_step(project, paths="t.tests.json", baseline="baseline.json", args=args)
    assert done.returncode == 0, done.stderr  # the action's last step exits with the code
    assert outputs["exit-code"] == "1"
    report = json.loads((reports / "report.json").read_text())
    assert outputs["run-id"] == report["run_id"]
    assert [len(test["trials"]) for test in report["tests"]] == [2, 2]
    assert re.search(
        r"^::error file=t\.tests\.json,line=\d+,title=failed%3A s%3A%3Atwo::", done.stdout, re.M
    )
    comment = Path(outputs["comment-file"]).read_text(encoding="utf-8")
    assert comment.startswith("### assertly: job failed (exit code 1)\n")
    assert "regressed" in comment.lower() and "two" in comment
    assert comment in (project / "summary.md").read_text(encoding="utf-8")
    # A gate on the pass rate lets a run with failures pass.
    done, outputs = _run_step(project, paths="t.tests.json", min_pass_rate="0.5")
    assert outputs["exit-code"] == "0", done.stdout + done.stderr


def test_the_run_step_reports_a_run_that_could_not_start(tmp_path: Path) -> None:
    project = _project(tmp_path, good=True)
    done, outputs = _run_step(project, paths="missing.tests.yaml")
    assert done.returncode == 0
    assert outputs["exit-code"] == "2"
    assert outputs["run-id"] == ""
    comment = Path(outputs["comment-file"]).read_text(encoding="utf-8")
    assert "could not run" in comment
