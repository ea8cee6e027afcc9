"""Secrets never reach disk or screen in any spelling (issue #14, item 5).

Secrets of every kind — a ``${VAR}`` header value, a secret-named ``env:`` value in the config,
``pass_env`` variables holding a token and a database password, and the password inside
``DATABASE_URL`` — are echoed back by real agents (an HTTP server on 127.0.0.1, a command) in
every spelling: raw, JSON-escaped with and without ``ensure_ascii`` (``\\"``, ``\\\\``,
``\\u00e4``, surrogate pairs), every character as ``\\uXXXX``, and on stderr (the error's tail).
The run store (database and WAL), the four reports and the console of a real ``assertly`` process
are then searched for every spelling of every secret.

An HTTP redirect to another origin drops the credentials (Authorization and the configured
secret headers), as browsers and curl do; a redirect within the origin keeps them.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest
import yaml
from reliability_support import ASSERTLY, write_tests

from store_support import stored_records_text

# Quote, backslash, slash, non-ASCII in and beyond the BMP: every escape JSON has.
HEADER_SECRET = 'sk-"hdr\\/x-1'  # a header value travels as Latin-1: ASCII
ENV_SECRET = 'tok-env-ü\\"😀-2'
PASS_ENV_TOKEN = "ghp_passenv-3€"
DB_PASS = "db-pa55-ö4"
DB_URL_PASSWORD = "hunter2-ä5"
DATABASE_URL = f"postgres://app:{DB_URL_PASSWORD}@db.example:5432/app"
ENV_REFERENCE = "upstream-\u00e9-6"  # env: {UPSTREAM: ${MY_UPSTREAM}}: a secret, whatever the name
SECRETS = [HEADER_SECRET, ENV_SECRET, PASS_ENV_TOKEN, DB_PASS, DB_URL_PASSWORD, ENV_REFERENCE]


def _all_escaped(text: str) -> str:
    """Every character as a \\uXXXX escape (UTF-16 code units, as JSON spells them)."""
    units = text.encode("utf-16-be")
    return "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )


def spellings(secret: str) -> list[str]:
    found = [
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        _all_escaped(secret),
        _all_escaped(secret).upper().replace("\\U", "\\u"),
        html.escape(secret),
        html.escape(secret, quote=False),
        secret.replace('"', "&#34;"),
        json.dumps(_all_escaped(secret))[1:-1],  # the \\u spelling in a JSON string
    ]
    return list(dict.fromkeys(found))


def echo(values: list[str]) -> str:
    """JSON text holding each value in every spelling (as an agent echoing it might write)."""
    parts = []
    for value in values:
        parts += [
            json.dumps(value),
            json.dumps(value, ensure_ascii=False),
            '"' + _all_escaped(value) + '"',
        ]
    return '{"status": "bad", "echo": [' + ", ".join(parts) + "]}"


def assert_nowhere(project: Path, console: str) -> None:
    places: dict[str, bytes] = {"console": console.encode("utf-8", "backslashreplace")}
    for path in [*(project / ".assertly").iterdir(), *project.glob("r.*")]:
        places[path.name] = path.read_bytes() + stored_records_text(path)
    assert "runs.sqlite" in places and "r.html" in places
    for secret in SECRETS:
        for spelling in spellings(secret):
            for place, data in places.items():
                for encoded in {spelling.encode(), spelling.encode("unicode_escape")}:
                    if len(encoded) >= 4:
                        assert encoded not in data, f"{spelling!r} of {secret!r} in {place}"


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = echo([self.headers.get("X-Api-Key", "")]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


COMMAND_AGENT = r"""
import json, os, sys
q = json.load(sys.stdin)
values = [os.environ[name] for name in ("API_TOKEN", "GITHUB_TOKEN", "DB_PASS", "UPSTREAM")]
values.append(os.environ["DATABASE_URL"])
def spelled(v):
    units = v.encode("utf-16-be")
    codes = [int.from_bytes(units[i:i+2], "big") for i in range(0, len(units), 2)]
    escaped = "".join(f"\\u{code:04x}" for code in codes)
    return [json.dumps(v), json.dumps(v, ensure_ascii=False), '"' + escaped + '"']
text = '{"status": "bad", "echo": [' + ", ".join(p for v in values for p in spelled(v)) + "]}"
if q == "stderr":
    sys.stderr.write(text + "\n" + " ".join(values) + "\n")
    sys.exit(1)
print(text)
"""


def _run(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            ASSERTLY,
            "run",
            ".",
            "--plain",
            "-o",
            "r.json",
            "-o",
            "r.xml",
            "-o",
            "r.md",
            "-o",
            "r.html",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )


def test_no_secret_reaches_disk_or_screen_in_any_spelling(tmp_path: Path, echo_url: str) -> None:
    (tmp_path / "agent.py").write_text(COMMAND_AGENT, encoding="utf-8")
    config: dict[str, Any] = {
        "agents": {
            "web": {"url": echo_url, "headers": {"X-Api-Key": "${MY_HEADER_SECRET}"}},
            "cmd": {
                "command": [sys.executable, "agent.py"],
                "env": {"API_TOKEN": ENV_SECRET, "UPSTREAM": "${MY_UPSTREAM}"},
                "pass_env": ["GITHUB_TOKEN", "DB_PASS", "DATABASE_URL"],
            },
        }
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    checks = {"status": "ok", "field_equals": {"echo": []}}
    write_tests(tmp_path / "web.tests.yaml", [{"id": "w", "input": 1, "expect": checks}], "web")
    write_tests(
        tmp_path / "cmd.tests.yaml",
        [
            {"id": "out", "input": "stdout", "expect": checks},
            {"id": "err", "input": "stderr", "expect": checks},
        ],
        "cmd",
    )
    result = _run(
        tmp_path,
        {
            "MY_HEADER_SECRET": HEADER_SECRET,
            "GITHUB_TOKEN": PASS_ENV_TOKEN,
            "DB_PASS": DB_PASS,
            "DATABASE_URL": DATABASE_URL,
            "MY_UPSTREAM": ENV_REFERENCE,
        },
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    statuses = {test["id"]: test["status"] for test in report["tests"]}
    assert statuses == {"w": "failed", "out": "failed", "err": "error"}, result.stdout
    assert "[REDACTED]" in result.stdout and "[REDACTED]" in (tmp_path / "r.md").read_text()
    assert_nowhere(tmp_path, result.stdout + result.stderr)


class _Redirector(BaseHTTPRequestHandler):
    to = ""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(307)
        self.send_header("Location", self.to)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append({"headers": dict(self.headers), "body": body.decode()})
        answer = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self) -> None:
        self.do_POST()

    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("where", ["other origin", "same origin"])
def test_a_redirect_to_another_origin_drops_the_credentials(tmp_path: Path, where: str) -> None:
    seen: list[dict[str, Any]] = []
    recorder = _serve(type("Recorder", (_Recorder,), {"seen": seen}))
    final = f"http://127.0.0.1:{recorder.server_address[1]}/final"
    redirector = _serve(type("Redirector", (_Redirector,), {"to": final}))
    start = f"http://127.0.0.1:{redirector.server_address[1]}/start"
    if where == "same origin":
        start = final.replace("/final", "/start")
        recorder.shutdown()
        recorder.server_close()
        both = _serve(
            type(
                "Both",
                (_Recorder,),
                {
                    "seen": seen,
                    "do_POST": lambda self: (
                        _Redirector.do_POST(self)
                        if self.path == "/start"
                        else _Recorder.do_POST(self)
                    ),
                    "to": "/final",
                },
            )
        )
        start = f"http://127.0.0.1:{both.server_address[1]}/start"
    headers = {
        "Authorization": "Bearer ${MY_AUTH}",
        "X-Api-Key": "${MY_KEY}",
        "X-Trace": "plain-value",
    }
    config = {"agents": {"web": {"url": start, "headers": headers}}}
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    write_tests(
        tmp_path / "w.tests.yaml",
        [{"id": "w", "input": {"q": 1}, "expect": {"status": "ok"}}],
        "web",
    )
    try:
        result = _run(tmp_path, {"MY_AUTH": "auth-secret-1", "MY_KEY": "key-secret-2"})
    finally:
        for server in (redirector, recorder) if where == "other origin" else (redirector, both):
            server.shutdown()
            server.server_close()
    assert result.returncode == 0, result.stdout + result.stderr
    [request] = seen
    got = {name.lower(): value for name, value in request["headers"].items()}
    assert request["body"] == '{"q":1}'  # 307 keeps the method and the body
    assert got["x-trace"] == "plain-value"
    if where == "other origin":
        assert "authorization" not in got and "x-api-key" not in got, got
    else:
        assert got["authorization"] == "Bearer auth-secret-1" and got["x-api-key"] == "key-secret-2"
