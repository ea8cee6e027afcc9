"""Every code example of README.md and docs/*.md is executed, or listed here with why it is not.

Each fenced block is one test, by language:

- ``python``: run in a fresh interpreter, in a copy of examples/ (so ``examples/...`` paths
  resolve); when the next block is a ``text`` block, what the example prints must be that text.
- ``yaml``: read with assertly's YAML reader; a test or workflow file is validated (``assertly
  validate``), a config is validated beside a one-test file, and anything else (a typed list, an
  expect dict, a test case with ``expect``/``assertions``/``threshold``/``shape``) is what
  ``assertly check --expect`` reads; an example of a mistake must be refused with its message
  (``REFUSED``); a CI system's file (``FOREIGN``) is only parsed.
- ``json`` (a document or JSON Lines) and ``toml``: parsed; a JSON Lines file that a YAML example
  names (``BESIDE``) is written beside it, so the dataset is read too.
- ``sh``, ``console``: every ``assertly …`` command runs in that copy of examples/ and must not
  be a usage error (exit 2) or a crash (``PREPARE``: commands run first, unshown); a
  ``console`` block's shown output lines must all be printed (timings and run ids aside) and a
  shown ``echo $?`` must match.
- ``text``, ``xml`` and fences without a language are output samples and grammars, not code:
  they are checked where they follow the example that prints them.

A block that is neither run nor listed in ``NOT_RUN`` fails, and so does a ``NOT_RUN`` entry
that names no block (an example that changed must be looked at again).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from doc_blocks import ROOT, Block, all_blocks, following

import assertly
from assertly.cli import main
from assertly.loading._yaml import yaml_loader

BLOCKS = all_blocks()
SAMPLES = {"text", "xml", ""}

# Blocks that are code but cannot run here, each with its reason. Key: "page | first line".
_NEEDS_NETWORK = "installs from a package index or a git host: needs the network"
_MAKE = "a make target: CI runs make test, make docs and make demo themselves"
_PROJECT = "commands over a user's own project (tests/agents, shards, a CI store): illustrative"
_BENCH = "the benchmark's generated files (make bench writes them)"
_UNSHOWN = "a pytest session over a file the page describes but does not show"
_SERVER = "starts a server until Ctrl-C; tests/viewer runs view and --export"
NOT_RUN: dict[str, str] = {
    # Shell: installs, make targets, a user's project, servers.
    'README.md | pip install "assertly @ git+https://github.com/ass': _NEEDS_NETWORK,
    'docs/index.md | pip install "assertly @ git+https://github.com/ass': _NEEDS_NETWORK,
    "docs/scale.md | pip install 'assertly[postgres]'": _NEEDS_NETWORK,
    "docs/scale.md | pip install 'assertly[ray]'": _NEEDS_NETWORK,
    "README.md | make demo": _MAKE,
    "docs/index.md | make demo": _MAKE,
    "docs/architecture.md | make check": _MAKE,
    "docs/performance.md | make bench": _MAKE,
    "docs/performance.md | assertly run e2e.tests.json --target fixtures:e2e.": _BENCH,
    "docs/performance.md | assertly run scale.tests.json --plain --store scal": _BENCH,
    "README.md | assertly run tests/agents --baseline blessed --min": _PROJECT,
    "README.md | assertly run tests/agents --shard 2/4 -o shard-2.j": _PROJECT,
    "docs/scale.md | assertly run tests/agents --shard 2/4 -o shard-2.j": _PROJECT,
    "docs/scale.md | assertly merge shard-1.json shard-2.json shard-3.j": _PROJECT,
    "docs/ci.md | set +e": "a shell script over a user's own project (tests/agents): illustrative",
    # issue 31: `diff RUN:LABEL` and `--gate-target` are built beside the matrix core; run
    # this block once they are merged (drop the entry).
    "docs/viewer.md | assertly view": _SERVER,
    "docs/conversations.md | assertly run conversations.tests.yaml --suite simu": (
        "records a simulated user from its model (needs one listening), then replays it"
    ),
    "docs/traces.md | import json, os, sys": (
        "an agent: it continues the TRACEPARENT a run gives each call (examples/agent/"
        "traced_agent.py runs in make demo, tests/runner/traced_agent.py in the tests)"
    ),
    # Python that is not a program.
    "docs/pytest.md | assertly.assert_response(response, expectation, *,": "a signature",
    "docs/pytest.md | $ pytest -q --assertly-config bad.yaml tests/agent": _UNSHOWN,
    "docs/pytest.md | $ pytest -q tests/agents/broken.tests.yaml": _UNSHOWN,
    "docs/targets.md | # cmd: agent — write them to the metadata file": (
        "two fragments side by side: a cmd: agent's line and a py: agent's return"
    ),
}

# Examples of mistakes: assertly must refuse them, saying this.
REFUSED: dict[str, str] = {
    "docs/assertions.md | results_mn: 1": "unknown assertion 'results_mn' (did you mean",
    "docs/assertions.md | a: !!binary aGVsbG8=": "only JSON values are allowed",
    'docs/assertions.md | - {type: equals, value: "a: 1", config: {mode: yam': "4 problems",
    "docs/assertions.md | - type: regex (2)": "POSIX classes such as [[:alpha:]] are not Python",
}

# YAML of another tool (a CI system's pipeline): parsed, not assertly's to run.
FOREIGN: dict[str, str] = {
    "docs/regressions.md | - name: Agent tests, gated on the baseline": "GitHub Actions steps",
    "docs/scale.md | jobs:": "a GitHub Actions workflow",
    "docs/scale.md | agents:": "a GitLab CI job (named agents)",
    "docs/ci.md | name: Agent tests": "a GitHub Actions workflow (tests/test_action.py lints it)",
    "docs/ci.md | agent-tests:": "a GitLab CI job",
}

# Python fragments that use a name the page leaves to the reader: what it is, run first.
PRELUDE: dict[str, str] = {
    "docs/assertions.md | import assertly": 'response = {"status": "success", "results": [{}]}\n',
    "docs/pytest.md | def test_search(assertly_target, assertly_check):": "import pytest\n",
}

# Standard input of a Python example that is an agent (it reads its request there).
STDIN: dict[str, str] = {
    'docs/pytest.md | """A toy search agent: {"q": "..."} on stdin, JSON': ('{"q": "security"}'),
}

# YAML examples that name a file the next block shows: where that block is written first.
BESIDE: dict[str, str] = {
    "docs/running.md | agent: notes (2)": "data/answers.jsonl",
    "docs/conversations.md | agent: support (3)": "data/dialogues.jsonl",
}

# docs/pytest.md's example project: its files, each the block that shows it. Its ``$ pytest``
# sessions run there, and what they show must be printed (pytest's header lines aside).
PYTEST_PROJECT: dict[str, str] = {
    "assertly.yaml": "docs/pytest.md | agents:",
    "agent.py": 'docs/pytest.md | """A toy search agent: {"q": "..."} on stdin, JSON',
    "tests/agents/search.tests.yaml": "docs/pytest.md | agent: search",
    "tests/flows/summarize.yaml": "docs/pytest.md | blocks:",
    "tests/test_search_agent.py": "docs/pytest.md | import assertly",
}
_PYTEST_HEADER = re.compile(r"^(platform |rootdir: |plugins: |cachedir: )")

# Test files that need a config beside them (a judge for llm-rubric, a model for a simulated
# user): validated with this config as assertly.yaml.
_WITH_JUDGE = "judge: {base_url: 'http://127.0.0.1:8000/v1', model: doc-judge}\n"
WITH_CONFIG: dict[str, str] = {
    "docs/conversations.md | agent: support": _WITH_JUDGE,
    "docs/conversations.md | agent: support (2)": _WITH_JUDGE,
    "docs/conversations.md | agent: support (3)": _WITH_JUDGE,
}

# Shell blocks that continue a session: commands run first, in the sandbox, not checked.
PREPARE: dict[str, list[str]] = {
    "docs/running.md | assertly report last -o report.html": [
        "cd examples",
        "assertly run notes.tests.yaml --now 2026-01-20T00:00:00Z",
    ],
    "docs/matrix.md | assertly diff last:v1 last:v2": [
        "cd examples",
        "assertly run notes.tests.yaml --now 2026-01-20T00:00:00Z --target v1=notes "
        "--target v2=notes_v2",
    ],
}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's examples/ under a fresh directory, without stored runs."""
    root = tmp_path_factory.mktemp("doc-examples")
    shutil.copytree(
        ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("reports", "*.sqlite*")
    )
    return root


@pytest.fixture
def inside(sandbox: Path) -> Iterator[Path]:
    """The working directory is the sandbox for the test, and is restored after it."""
    before = Path.cwd()
    os.chdir(sandbox)
    try:
        yield sandbox
    finally:
        os.chdir(before)


def test_every_listed_block_exists() -> None:
    keys = {block.key for block in BLOCKS}
    listed = [*NOT_RUN, *REFUSED, *FOREIGN, *PRELUDE, *STDIN, *BESIDE, *PREPARE, *WITH_CONFIG]
    listed += PYTEST_PROJECT.values()
    stale = sorted(key for key in listed if key not in keys)
    assert stale == [], f"NOT_RUN names blocks that no page has any more: {stale}"


def test_pages_were_found() -> None:
    pages = {block.page for block in BLOCKS}
    assert {"README.md", "docs/assertions.md", "docs/running.md"} <= pages
    assert len(BLOCKS) > 150


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_example(block: Block, inside: Path) -> None:
    if block.key in NOT_RUN:
        pytest.skip(f"not run: {NOT_RUN[block.key]}")
    if block.lang in SAMPLES:
        return  # a sample: checked by the example before it, if any
    runner = _RUNNERS.get(block.lang)
    assert runner is not None, f"{block.id}: no way to run a ```{block.lang} block; list it"
    runner(block, inside)


# Python ------------------------------------------------------------------------------------------


def _run_python(block: Block, sandbox: Path) -> None:
    code = PRELUDE.get(block.key, "") + block.text
    # docs/python-api.md's examples are written from inside the example project.
    cwd = sandbox / "examples" if block.page == "docs/python-api.md" else sandbox
    result = _python(["-c", code], cwd, stdin=STDIN.get(block.key, ""))
    assert result.returncode == 0, f"{block.id} failed:\n{result.stderr[-3000:]}"
    shown = following(block, BLOCKS)
    if "print(" in block.text and shown is not None and shown.lang == "text":
        assert result.stdout == shown.text, f"{block.id} printed otherwise than its sample"


def _python(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """A fresh interpreter that imports the assertly under test (this process's path)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTEST_ADDOPTS": ""}
    # The pages show what a user sees in an 80-column terminal. Under CI (CI or BUILD_NUMBER
    # set) pytest does not shorten its summary lines, so the sessions run as outside CI.
    for name in ("CI", "BUILD_NUMBER"):
        env.pop(name, None)
    env["COLUMNS"] = "80"
    command = [sys.executable, *args]
    return subprocess.run(
        command, cwd=cwd, input=stdin, env=env, timeout=300, check=False, **_CAPTURE
    )


_CAPTURE: dict[str, Any] = {"capture_output": True, "text": True}


# YAML, JSON, TOML --------------------------------------------------------------------------------

_TEST_FILE_KEYS = {"test_suites", "tests", "agent", "blocks", "eval"}
_CONFIG_KEYS = {
    "agents", "judge", "store", "hooks", "facts", "secrets_from_tests", "sensitive_prefixes",
    "plugins", "concurrency", "timeout_s", "trials", "rate_limit", "defaults", "shape",
    "matrix", "simulator", "traces",
}  # fmt: skip


def _run_yaml(block: Block, sandbox: Path) -> None:
    try:
        value = yaml.load(block.text, Loader=yaml_loader())
    except yaml.YAMLError as refused:
        _expect_outcome(block, 2, str(refused), ok=())
        return
    if block.key in FOREIGN:
        assert isinstance(value, dict | list)
        return
    folder = sandbox / "blocks" / block.id.replace("/", "_").replace(":", "_")
    folder.mkdir(parents=True)
    if block.key in BESIDE:
        shown = following(block, BLOCKS)
        assert shown is not None, f"{block.id}: no block follows to write as {BESIDE[block.key]}"
        (folder / BESIDE[block.key]).parent.mkdir(parents=True)
        (folder / BESIDE[block.key]).write_text(shown.text, encoding="utf-8")
    keys = set(value) if isinstance(value, dict) else set()
    if keys & _TEST_FILE_KEYS:
        name = "example.workflow.yaml" if "blocks" in keys else "example.tests.yaml"
        (folder / name).write_text(block.text, encoding="utf-8")
        if block.key in WITH_CONFIG:
            (folder / "assertly.yaml").write_text(WITH_CONFIG[block.key], encoding="utf-8")
        _expect_outcome(block, *_cli(folder, "validate", name), ok=(0,))
    elif keys and keys <= _CONFIG_KEYS:
        (folder / "assertly.yaml").write_text(block.text, encoding="utf-8")
        (folder / "one.tests.yaml").write_text(_ONE_TEST, encoding="utf-8")
        with _variables(block.text):
            _expect_outcome(block, *_cli(folder, "validate", "one.tests.yaml"), ok=(0,))
    elif keys & {"expect", "assertions", "threshold", "shape"}:
        (folder / "expect.yaml").write_text(block.text, encoding="utf-8")
        result = _cli(folder, "check", "--expect", "expect.yaml", "--response", "-", stdin="{}")
        _expect_outcome(block, *result, ok=(0, 1))
    else:  # an expect dict or a typed list, with the prefixes the pages' examples use
        try:
            assertly.compile(value, sensitive_prefixes=["people/", "documents/"])
        except assertly.ConfigError as refused:
            _expect_outcome(block, 2, str(refused), ok=())
        else:
            _expect_outcome(block, 0, "", ok=(0,))


def _cli(folder: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    """``assertly ARGS`` in-process, in ``folder``: the exit code and everything printed."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)
    finally:
        os.chdir(before)
    return result.exit_code, result.stdout + result.stderr


def _expect_outcome(block: Block, code: int, output: str, *, ok: tuple[int, ...]) -> None:
    """Accepted (an exit code in ``ok``), or refused as ``REFUSED`` says it must be."""
    assert "Traceback" not in output
    if block.key in REFUSED:
        assert code == 2, f"{block.id}: a mistake assertly accepted:\n{output}"
        assert REFUSED[block.key] in output, f"{block.id}: refused otherwise:\n{output}"
    else:
        assert code in ok, f"{block.id}: exit {code}:\n{output}"


@contextlib.contextmanager
def _variables(text: str) -> Iterator[None]:
    """The ``${NAME}`` variables a config example reads, set to a stand-in while it is read."""
    names = set(re.findall(r"\$\{(\w+)\}", text)) - set(os.environ)
    os.environ.update(dict.fromkeys(names, "doc-example-value"))
    try:
        yield
    finally:
        for name in names:
            del os.environ[name]


_ONE_TEST = textwrap.dedent("""\
    agent: a
    test_suites:
      s:
        tests:
          - {id: t, input: {q: x}, expect: {status: success}}
    """)


def _run_json(block: Block, sandbox: Path) -> None:
    try:
        json.loads(block.text)
    except json.JSONDecodeError:  # JSON Lines: one document a line
        for line in block.text.splitlines():
            if line.strip():
                json.loads(line)


def _run_toml(block: Block, sandbox: Path) -> None:
    tomllib.loads(block.text)


# Shell -------------------------------------------------------------------------------------------

_MASKS = (
    (re.compile(r"\d+(\.\d+)?s\b"), "<s>"),
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]+"), "<run>"),
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z"), "<time>"),
    # pytest pads its summary line with '=' to the terminal's width around a time whose digits
    # vary ("in 2.39s" on a quiet machine, "in 11.65s" on a busy one): the padding is not text.
    (re.compile(r"^=+ (.*?) =+$"), r"== \1 =="),
)


def _masked(line: str) -> str:
    for pattern, replacement in _MASKS:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def _commands(block: Block) -> list[tuple[str, list[str]]]:
    """``(command, shown output lines)``: a console block's ``$`` lines, or every sh line."""
    joined = block.text.replace("\\\n", " ")
    commands: list[tuple[str, list[str]]] = []
    for line in joined.splitlines():
        if block.lang == "console":
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            commands.append((line, []))
    return commands


def _run_shell(block: Block, sandbox: Path) -> None:
    status: int | None = None
    prepared: list[tuple[str, list[str], bool]] = [
        (command, [], False) for command in PREPARE.get(block.key, [])
    ]
    shown_commands = [(command, shown, True) for command, shown in _commands(block)]
    for command, shown, checked in prepared + shown_commands:
        words = shlex.split(command, comments=True)
        if not words:
            continue
        if words[0] == "cd":
            os.chdir(Path.cwd() / words[1])
            continue
        if words[0] == "pytest":
            status = _run_pytest(block, words[1:], shown, sandbox)
            continue
        if words[0] == "head":  # head -N FILE: the start of a file an example wrote
            lines = Path(words[2]).read_text(encoding="utf-8").splitlines()[: -int(words[1])]
            assert [_masked(line) for line in lines] == [_masked(line) for line in shown]
            continue
        if words[:2] == ["echo", "$?"]:
            assert shown == [str(status)], f"{block.id}: exit code {status}, shown {shown}"
            continue
        assert words[0] == "assertly", f"{block.id}: `{command}` is not assertly's; list the block"
        result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
        status = result.exit_code
        output = result.stdout + result.stderr
        if not checked:
            continue
        assert status in (0, 1), f"{block.id}: `{command}` exited {status}:\n{output}"
        assert "Traceback" not in output
        printed = {_masked(line) for line in output.splitlines()}
        missing = [line for line in shown if line.strip() and _masked(line) not in printed]
        assert missing == [], f"{block.id}: `{command}` did not print {missing}\n{output}"


def _run_pytest(block: Block, args: list[str], shown: list[str], sandbox: Path) -> int:
    """A ``$ pytest`` session of docs/pytest.md, in a fresh copy of its example project (the
    working directory from then on); its exit code."""
    assert block.page == "docs/pytest.md", f"{block.id}: a pytest session outside its project"
    project = sandbox / "pytest-project" / str(block.line)
    by_key = {candidate.key: candidate for candidate in BLOCKS}
    for name, key in PYTEST_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(by_key[key].text, encoding="utf-8")
    result = _python(["-m", "pytest", "-p", "no:cacheprovider", *args], project)
    os.chdir(project)
    output = result.stdout + result.stderr
    printed = {_masked(line) for line in output.splitlines()}
    expected = [
        line for line in shown if line.strip() not in ("", "...") and not _PYTEST_HEADER.match(line)
    ]
    missing = [line for line in expected if _masked(line) not in printed]
    assert missing == [], (
        f"{block.id}: `pytest {shlex.join(args)}` did not print {missing}\n{output}"
    )
    return result.returncode


_RUNNERS: dict[str, Any] = {
    "python": _run_python,
    "yaml": _run_yaml,
    "json": _run_json,
    "toml": _run_toml,
    "sh": _run_shell,
    "bash": _run_shell,
    "console": _run_shell,
}
