"""Sample projects for the pytest plugin tests: a tiny agent script, ``assertly.yaml`` mapping
the agent ``bot`` to it, and test files written by each test.

The agent is a real subprocess (``cmd:{python} agent.py``): the input arrives as JSON on stdin
and ``input.mode`` picks what it does.
"""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

AGENT = r"""
import json, os, sys

q = json.load(sys.stdin)
q = q if isinstance(q, dict) else {"value": q}
mode = q.get("mode", "ok")
if q.get("log"):
    with open(q["log"], "a") as handle:
        handle.write(mode + "\n")
if mode == "crash":
    sys.stderr.write("starting\nboom: the agent fell over\n")
    sys.exit(3)
if mode == "text":
    print(q.get("text", "plain words"))
    sys.exit(0)
if mode == "meta":
    with open(os.environ["ASSERTLY_METADATA_FILE"], "w") as handle:
        json.dump({"model": "gpt-test", "cost_usd": 0.25}, handle)
status = q.get("status", "success")
if mode == "flaky":
    count = int(open(q["state"]).read()) if os.path.exists(q["state"]) else 0
    with open(q["state"], "w") as handle:
        handle.write(str(count + 1))
    status = "success" if count % 2 == 0 else "error"
files = q.get("files", ["journal/a.md"])
created = q.get("created", "2026-01-28")
results = [{"file": name, "metadata": {"created": created}} for name in files]
print(json.dumps({"status": status, "results": results}))
"""

# An agent test file: two suites, tags, a priority; one test fails on purpose.
SEARCH_TESTS = """\
agent: bot
test_suites:
  core:
    priority: high
    tags: [smoke]
    tests:
      - id: finds_notes
        name: Finds journal notes
        input: {q: incident}
        expect:
          status: success
          results_min: 1

      - id: only_journal
        input: {q: incident, files: [journal/a.md, work/b.md]}
        expect:
          status: success
          all_match_pattern: {path: "results[*].file", regex: "^journal/"}
  prose:
    tags: [slow, "area:text"]
    tests:
      - id: summary_text
        input: {mode: text, text: "Summary: two incidents"}
        assertions:
          - {type: starts-with, value: "Summary:"}
          - {type: icontains, value: INCIDENTS}
"""

# A workflow with an eval section: one clean case, one failing case.
FLOW = """\
blocks:
  summarize:
    assertions:
      - {type: contains, value: incident}
eval:
  threshold: 1.0
  cases:
    - id: clean
      fixtures:
        summarize: "Two incidents found"
    - id: wrong
      description: the summary forgets the incident
      fixtures:
        summarize: "nothing here"
"""


def agent_spec(root: Path) -> str:
    """The ``cmd:`` target of the agent script in ``root``."""
    return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(root / 'agent.py'))}"


def make_project(
    pytester: pytest.Pytester, files: dict[str, str] | None = None, config: str = ""
) -> Path:
    """Write the agent, ``assertly.yaml`` (agent ``bot`` plus ``config``) and ``files``."""
    root = pytester.path
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    base = f"agents:\n  bot: {json.dumps(agent_spec(root))}\n"
    (root / "assertly.yaml").write_text(base + textwrap.dedent(config), encoding="utf-8")
    for name, content in (files or {}).items():
        write(root, name, content)
    return root


def write(root: Path, name: str, content: str) -> Path:
    """Write one file (dedented) under ``root``."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(content), encoding="utf-8")
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in-process in the sample project (no cache directory left behind)."""
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` where ``needle`` first appears."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


def read_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))
