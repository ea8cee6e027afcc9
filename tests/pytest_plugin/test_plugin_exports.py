"""``--assertly-report out.csv`` and ``out.jsonl`` from a pytest session: the plugin's secrets
are redacted from the exports as from its other reports."""

from __future__ import annotations

import csv
import json
import sys

import pytest
from plugin_support import make_project, run


def test_the_plugin_writes_both_exports_without_the_secret(pytester: pytest.Pytester) -> None:
    secret = 'tok-"plugin-,\u00e4'
    echo = {"command": [sys.executable, "echo.py"], "env": {"API_TOKEN": secret}}
    files = {
        "s.tests.yaml": "agent: echo\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, input: {}, expect: {status: success}}\n",
        # The agent echoes its secret, after a formula's '=' (both must not reach the exports).
        "echo.py": "import json, os\nv = os.environ['API_TOKEN']\n"
        "print(json.dumps({'status': '=' + v, 'c': [v]}))\n",
    }
    root = make_project(pytester, files)
    (root / "assertly.yaml").write_text(json.dumps({"agents": {"echo": echo}}), encoding="utf-8")
    result = run(
        pytester, "s.tests.yaml", "--assertly-report=out/s.csv", "--assertly-report=out/s.jsonl"
    )
    output = result.stdout.str()
    assert "1 failed" in output
    assert "assertly: wrote out/s.csv" in output and "assertly: wrote out/s.jsonl" in output
    for name in ("s.csv", "s.jsonl"):
        text = (root / "out" / name).read_text(encoding="utf-8-sig")
        assert "plugin" not in text, name
        assert "[REDACTED]" in text, name
    with (root / "out" / "s.csv").open(encoding="utf-8-sig", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (row["id"], row["outcome"]) == ("t", "failed")
    assert json.loads(row["output"]) == {"status": "=[REDACTED]", "c": ["[REDACTED]"]}
    (line,) = (root / "out" / "s.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["trials"][0]["output"]["c"] == ["[REDACTED]"]
