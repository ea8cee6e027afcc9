"""Promise 5: untrusted files and output are never code, and secrets never leave.

YAML is loaded safely (object tags are invalid YAML); test files never execute code or name
modules to import; command agents run without a shell and with a minimal environment unless
the config says otherwise; secrets from the environment are redacted from the console, every
report and the run store; the HTML report escapes agent output under a CSP with no script;
test files hold no file references, so none can reach outside the project.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_support import assert_user_error, invoke, serve_http, write_tests

from store_support import stored_records_text

STORE = ".assertly/runs.sqlite"
TOKEN = "tok-9f8e7d6c5b4a39281706"
ARGV_AGENT = (
    "import json, os, sys\n"
    "json.load(sys.stdin)\n"
    "print(json.dumps({'argv': sys.argv[1:], 'env': sorted(os.environ),\n"
    "                  'secret': os.environ.get('MY_SECRET_TOKEN')}))\n"
)


def _first_record(project: Path) -> dict[str, Any]:
    """The first stored trial record, read back as the store reads it (it is compressed)."""
    from assertly.store import RunStore

    store = RunStore(project / STORE, must_exist=True, read_only=True)
    try:
        key, record = store._db.execute("SELECT test_key, record FROM trials").fetchone()
        return dict(store._record(record, key))
    finally:
        store.close()


def _report(project: Path, name: str = "r.json") -> dict[str, Any]:
    return {t["id"]: t for t in json.loads((project / name).read_text())["tests"]}


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system ['touch pwned']",
        "!!python/object/new:subprocess.Popen [['touch', 'pwned']]",
        "!!python/name:os.system",
        "!!python/module:os",
    ],
)
def test_yaml_object_tags_are_invalid_yaml_everywhere(project: Path, tag: str) -> None:
    (project / "t.tests.yaml").write_text(f"agent: {tag}\ntest_suites: {{}}\n", encoding="utf-8")
    assert_user_error(invoke("validate", "t.tests.yaml"), "invalid YAML")
    (project / "w.yaml").write_text(f"eval:\n  cases: [{{id: {tag}}}]\n", encoding="utf-8")
    assert_user_error(invoke("validate", "w.yaml"), "invalid YAML")
    (project / "e.yaml").write_text(f"status: {tag}\n", encoding="utf-8")
    assert_user_error(
        invoke("check", "--expect", "e.yaml", "--response", "-", stdin="{}"), "invalid YAML"
    )
    (project / "assertly.yaml").write_text(f"agents: {{bot: {tag}}}\n", encoding="utf-8")
    assert_user_error(invoke("run", "t.tests.yaml"), "invalid YAML")
    assert not (project / "pwned").exists()


def test_test_files_name_no_code_to_import(project: Path) -> None:
    """Custom assertions come only from config plugins or installed entry points."""
    (project / "evil.py").write_text(
        "open('pwned', 'w').write('imported')\ndef get_assert(output, context):\n    return True\n",
        encoding="utf-8",
    )
    write_tests(
        project / "t.tests.yaml",
        [
            {"id": "a", "input": 1, "assertions": [{"type": "evil"}]},
            {"id": "b", "input": 1, "assertions": [{"type": "evil:get_assert"}]},
            {"id": "c", "input": 1, "assertions": [{"type": "python", "value": "evil.py"}]},
            {"id": "d", "input": 1, "assertions": [{"type": "file://evil.py"}]},
            {"id": "e", "input": 1, "expect": {"evil": True, "__import__": "os"}},
        ],
    )
    result = invoke("validate", "t.tests.yaml")
    assert_user_error(result, "6 problems")
    assert result.stderr.count("unknown assertion") == 6
    assert not (project / "pwned").exists()
    # Named in the config, the same module is a plugin, loaded on purpose.
    (project / "assertly.yaml").write_text("plugins: [evil]\n", encoding="utf-8")
    write_tests(
        project / "ok.tests.yaml", [{"id": "a", "input": 1, "assertions": [{"type": "evil"}]}]
    )
    sys.path.insert(0, str(project))
    try:
        assert invoke("validate", "ok.tests.yaml").code == 0
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("evil", None)
    assert (project / "pwned").read_text() == "imported"


def test_keyword_expressions_are_not_evaluated_as_python(project: Path) -> None:
    write_tests(project / "t.tests.yaml", [{"id": "a", "input": 1, "expect": {"status": "x"}}])
    for expression in (
        "__import__('os').system('touch pwned')",
        "a or open('pwned','w')",
        "(lambda: 1)()",
    ):
        result = invoke("run", "t.tests.yaml", "--target", "cmd:cat", "-k", expression)
        # Words are matched as text, never evaluated: a usage error or an ordinary run.
        assert result.code in (1, 2) and "Traceback" not in result.output, result.output
    assert not (project / "pwned").exists()


def test_commands_run_without_a_shell(project: Path) -> None:
    (project / "agent.py").write_text(ARGV_AGENT, encoding="utf-8")
    write_tests(project / "t.tests.yaml", [{"id": "a", "input": 1, "expect": {"status": "x"}}])
    target = f"cmd:{sys.executable} agent.py ; touch pwned1 && $(touch pwned2) `touch pwned3` | x"
    result = invoke("run", "t.tests.yaml", "--target", target, "--plain", "-o", "r.json")
    assert result.code == 1, result.output
    response = _report(project)["a"]["trials"][0]["failures"][0]
    assert not any((project / f"pwned{n}").exists() for n in (1, 2, 3))
    argv = _first_record(project)["steps"][0]["response"]
    assert json.loads(argv)["argv"] == [
        ";",
        "touch",
        "pwned1",
        "&&",
        "$(touch",
        "pwned2)",
        "`touch",
        "pwned3`",
        "|",
        "x",
    ]
    assert response["assertion"] == "status"


def test_commands_get_a_minimal_environment_unless_configured(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SECRET_TOKEN", TOKEN)
    monkeypatch.setenv("UNRELATED_SETTING", "x")
    (project / "agent.py").write_text(ARGV_AGENT, encoding="utf-8")
    write_tests(
        project / "t.tests.yaml",
        [{"id": "a", "input": 1, "expect": {"field_equals": {"secret": None}}}],
    )
    plain = invoke("run", "t.tests.yaml", "--target", f"cmd:{sys.executable} agent.py", "--plain")
    assert plain.code == 0, plain.output  # the agent never saw the variable
    env = json.loads(_first_record(project)["steps"][0]["response"])["env"]
    assert "MY_SECRET_TOKEN" not in env and "UNRELATED_SETTING" not in env
    assert set(env) <= {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "ASSERTLY_METADATA_FILE",
        "LC_CTYPE",
    }
    # Listed in pass_env, it reaches the agent, and is redacted from everything written.
    (project / "assertly.yaml").write_text(
        yaml.safe_dump(
            {
                "agents": {
                    "bot": {
                        "command": [sys.executable, "agent.py"],
                        "pass_env": ["MY_SECRET_TOKEN"],
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    write_tests(
        project / "t.tests.yaml",
        [{"id": "a", "input": 1, "expect": {"field_equals": {"secret": "wrong"}}}],
    )
    passed = invoke(
        "run",
        "t.tests.yaml",
        "--plain",
        "-o",
        "r.json",
        "-o",
        "r.html",
        "-o",
        "r.md",
        "-o",
        "r.xml",
    )
    assert passed.code == 1, passed.output
    assert "[REDACTED]" in passed.stdout  # the console shows the failure, not the secret
    _assert_nowhere(project, TOKEN, passed.output)


def _assert_nowhere(project: Path, secret: str, console: str) -> None:
    assert secret not in console
    for name in ("r.json", "r.html", "r.md", "r.xml"):
        assert secret not in (project / name).read_text(encoding="utf-8"), name
    for path in (project / ".assertly").iterdir():  # the store, its WAL and shared memory
        assert secret.encode() not in path.read_bytes() + stored_records_text(path), path.name


class _EchoAuth(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        status = 500 if "fail" in self.path else 200
        body = json.dumps({"status": "success", "echo": auth, "note": f"I saw {auth}"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echo_server() -> Iterator[str]:
    yield from serve_http(_EchoAuth)


def test_header_secrets_are_redacted_from_the_console_too(
    project: Path, monkeypatch: pytest.MonkeyPatch, echo_server: str
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    (project / "assertly.yaml").write_text(
        yaml.safe_dump(
            {
                "agents": {
                    "bot": {
                        "url": f"{echo_server}/ok",
                        "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                    },
                    "broken": {
                        "url": f"{echo_server}/fail",
                        "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                        "retries": 0,
                    },
                }
            }
        ),
        encoding="utf-8",
    )
    write_tests(
        project / "t.tests.yaml",
        [{"id": "a", "input": 1, "expect": {"field_equals": {"echo": "nope"}}}],
    )
    write_tests(
        project / "u.tests.yaml",
        [{"id": "b", "input": 1, "expect": {"status": "success"}}],
        agent="broken",
    )
    result = invoke(
        "run",
        "t.tests.yaml",
        "u.tests.yaml",
        "--plain",
        "-o",
        "r.json",
        "-o",
        "r.html",
        "-o",
        "r.md",
        "-o",
        "r.xml",
    )
    assert result.code == 1, result.output
    tests = _report(project)
    assert tests["a"]["status"] == "failed" and tests["b"]["status"] == "error"
    assert "Bearer [REDACTED]" in result.stdout  # the failure is shown, the token is not
    _assert_nowhere(project, TOKEN, result.output)
    # Re-rendering and re-checking the stored run cannot bring it back either.
    again = invoke("report", "last", "-o", "r.json", "-o", "r.html", "-o", "r.md", "-o", "r.xml")
    _assert_nowhere(project, TOKEN, again.output)


def test_the_html_report_escapes_hostile_output_under_a_strict_csp(project: Path) -> None:
    hostile = (
        "<script>alert(1)</script><img src=x onerror=alert(2)>"
        "</pre><iframe srcdoc='<script>alert(3)</script>'></iframe>{{7*7}}"
    )
    (project / "agent.py").write_text(
        f"import json, sys\njson.load(sys.stdin)\nprint(json.dumps({{'status': {hostile!r}}}))\n",
        encoding="utf-8",
    )
    write_tests(
        project / "t.tests.yaml",
        [{"id": "<script>alert(4)</script>", "input": 1, "expect": {"status": "ok"}}],
    )
    result = invoke(
        "run", "t.tests.yaml", "--target", f"cmd:{sys.executable} agent.py", "-o", "r.html"
    )
    assert result.code == 1, result.output
    page = (project / "r.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page and "<iframe" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    head = page[: page.index("</head>")]
    assert 'http-equiv="Content-Security-Policy"' in head
    policy = head.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    assert "default-src 'none'" in policy and "script-src" not in policy.replace(
        "script-src 'none'", ""
    )


def test_test_files_hold_no_file_references(project: Path) -> None:
    """Values that look like paths or URLs are data: nothing is read from outside."""
    outside = project.parent / "outside-secret.txt"
    outside.write_text("ultra-classified", encoding="utf-8")
    (project / "w.yaml").write_text(
        yaml.safe_dump(
            {
                "blocks": {"answer": {"assertions": [{"type": "equals", "value": "x"}]}},
                "eval": {
                    "threshold": 1.0,
                    "cases": [
                        {"id": "file-url", "fixtures": {"answer": f"file://{outside}"}},
                        {"id": "relative", "fixtures": {"answer": "../outside-secret.txt"}},
                        {"id": "ref", "fixtures": {"answer": {"$ref": str(outside)}}},
                        {"id": "at", "fixtures": {"answer": f"@{outside}"}},
                    ],
                },
            }
        ),
        encoding="utf-8",
    )
    result = invoke("run", "w.yaml", "--plain", "-o", "r.json")
    assert result.code == 1, result.output
    cases = json.loads((project / "r.json").read_text())["evals"][0]["cases"]
    assert {case["status"] for case in cases} == {"failed"}  # judged as the literal text
    assert "outside-secret.txt" in json.dumps(cases)
    assert "ultra-classified" not in (project / "r.json").read_text()


def test_hostile_test_names_reach_the_console_as_text(project: Path) -> None:
    """Rich markup in ids and suites is text: ``[/]`` used to crash the console."""
    (project / "t.tests.yaml").write_text(
        json.dumps(
            {
                "agent": "bot",
                "test_suites": {
                    "s[/]": {"tests": [{"id": "a[/]b[red]", "input": 1, "expect": {"status": 1}}]}
                },
            }
        ),
        encoding="utf-8",
    )
    result = invoke("run", "t.tests.yaml", "--target", "cmd:cat", "--plain")
    assert result.exception is None and result.code == 1, result.output
    assert "FAILED  t.tests.yaml::s[/]::a[/]b[red]" in result.stdout
    assert "FAILED s[/]::a[/]b[red]" in result.stdout
