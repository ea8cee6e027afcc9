"""`assertly run` and `assertly validate` import only what the run uses (issue 35).

Each test runs the real command line in a fresh interpreter (``python -m assertly`` as
`runpy` runs it) on a small suite answered by a real ``cmd:`` agent, and reads the modules
loaded when the process exits. A plain run on the default SQLite store, without reports, judge,
traces or Ray, must load no PostgreSQL store, no report writer, no judge client, no viewer and
none of the optional extras; each positive control shows the same probe seeing a module that
a run does use. Only module names are pinned, never times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Run the command line, then write `sys.modules` as it is at exit to the file given first.
_PROBE = """\
import atexit, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w", encoding="utf-8").write(json.dumps(sorted(sys.modules))))
sys.argv = ["assertly", *sys.argv[2:]]
runpy.run_module("assertly", run_name="__main__", alter_sys=True)
"""

SUITE = """\
agent: echo
version: 1
test_suites:
  basic:
    tests:
      - id: greets
        input: {q: hi}
        assertions:
          - {type: contains, value: hello}
          - {type: not-icontains, value: traceback}
"""

# What a plain run (SQLite store, no -o, no judge, traces, Ray or baseline) never needs.
NOT_FOR_A_PLAIN_RUN = (
    "psycopg",
    "assertly.store._postgres",
    "assertly.store._queries",
    "jinja2",
    "xml.etree",
    "assertly.reports._write",
    "assertly.reports._json",
    "assertly.reports._junit",
    "assertly.reports._html",
    "assertly.reports._markdown",
    "assertly.reports._csv",
    "assertly.reports._jsonl",
    "assertly.reports._streamed",
    "assertly.reports._analysis",
    "assertly.compare._diff",
    "assertly.compare._sides",
    "assertly.compare._stats",
    "assertly.judge",
    "assertly.runner._embedding_batch",
    "assertly.runner._ray",
    "assertly.traces",
    "assertly.viewer",
    "assertly.targets._http",
    "assertly.targets._python",
    "assertly.targets._fixtures",
    "aiohttp",
    "ray",
    "onnxruntime",
    "opentelemetry",
    "watchfiles",
    "rapidfuzz",
    "jsonschema_rs",
    "rouge_score",
    "rich",  # the console imports it only for a terminal
)


def _loaded(directory: Path, *args: str) -> set[str]:
    """The modules loaded by ``assertly ARGS`` run in ``directory``, at exit."""
    out = directory / "modules.json"
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert out.exists(), done.stderr
    return set(json.loads(out.read_text(encoding="utf-8")))


def _present(modules: set[str], name: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for module in modules)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "tests.yaml").write_text(SUITE, encoding="utf-8")
    agent = f'"cmd:{sys.executable} -c \\"print(\'hello world\')\\""'
    (tmp_path / "assertly.yaml").write_text(f"agents:\n  echo: {agent}\n", encoding="utf-8")
    return tmp_path


def test_a_plain_run_imports_no_store_backend_report_writer_judge_or_extra(suite: Path) -> None:
    modules = _loaded(suite, "run", "tests.yaml")
    assert (suite / ".assertly" / "runs.sqlite").exists()  # it did run, on SQLite
    assert "assertly.store._sqlite" in modules and "assertly.targets._command" in modules
    assert "assertly.reports._console" in modules
    unneeded = [name for name in NOT_FOR_A_PLAIN_RUN if _present(modules, name)]
    assert unneeded == []


def test_a_json_report_imports_its_writer_only(suite: Path) -> None:
    modules = _loaded(suite, "run", "tests.yaml", "-o", "report.json")
    assert json.loads((suite / "report.json").read_text(encoding="utf-8"))["summary"]
    assert "assertly.reports._json" in modules  # the positive control of the probe
    # The streamed writers (JSON, JSONL, CSV) share one small sink; the others are apart.
    others = ("_junit", "_html", "_markdown")
    assert [name for name in others if f"assertly.reports.{name}" in modules] == []
    assert not _present(modules, "jinja2") and not _present(modules, "xml.etree")


def test_a_junit_report_imports_the_junit_writer(suite: Path) -> None:
    modules = _loaded(suite, "run", "tests.yaml", "-o", "junit.xml")
    assert (suite / "junit.xml").exists()
    assert "assertly.reports._junit" in modules and "assertly.reports._html" not in modules


def test_an_http_target_imports_the_http_target(suite: Path) -> None:
    # Nothing listens on port 9: the test errors, but the run made (and imported) its target.
    modules = _loaded(suite, "run", "tests.yaml", "--target", "http://127.0.0.1:9/")
    assert "assertly.targets._http" in modules and "assertly.targets._python" not in modules


def test_validate_imports_neither_the_store_nor_the_runner(suite: Path) -> None:
    modules = _loaded(suite, "validate", "tests.yaml")
    assert "assertly.loading._tests" in modules  # it did load the file
    for name in ("assertly.store", "assertly.runner", "assertly.reports", "sqlite3", "zstandard"):
        assert not _present(modules, name), name
    assert [name for name in NOT_FOR_A_PLAIN_RUN if _present(modules, name)] == []


def test_a_postgresql_location_imports_the_postgresql_store() -> None:
    code = (
        "import sys; from assertly.store import RunStore\n"
        "before = 'assertly.store._postgres' in sys.modules\n"
        "RunStore.kind('/tmp/runs.sqlite')\n"
        "sqlite = 'assertly.store._postgres' in sys.modules\n"
        "kind = RunStore.kind('postgresql://ci@db/assertly').__name__\n"
        "print(before, sqlite, kind)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "False", "PostgresStore"]
