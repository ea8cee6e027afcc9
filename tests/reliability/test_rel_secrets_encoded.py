"""Secrets in no form: encoded spellings and URL passwords (issue 29, "Secrets").

A real command agent prints an ``env:`` secret of the config URL-encoded, base64-encoded (both
alphabets, padded or not, inside longer base64 values at each of the three alignments, as
HTTP Basic credentials), hex-encoded and JSON-escaped, on stdout (a failed test) and on stderr
(an error whose message holds the stderr tail). No spelling may remain in the console, the
four reports, the run store's records or the viewer's pages and JSON API.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import yaml
from reliability_support import ASSERTLY, write_tests

from store_support import stored_records_text

# Non-ASCII, '/', '+', '?', '&', ' ', '~': every encoding differs from the raw text.
KEY = "sk-live/Ab+c?d=é&x y~€Zq"
BASIC_USER = "deploy"


def _inner(encoded: str, start: int, length: int) -> str:
    """The base64 characters whose six bits all come from bytes ``start`` .. ``start+length``."""
    first = -(-8 * start // 6)  # ceil: the first character that starts inside the secret
    return encoded[first : 8 * (start + length) // 6]


def encoded_spellings(key: str) -> dict[str, str]:
    """Every encoded spelling the agent prints, by name (the test searches each)."""
    data = key.encode()
    found = {
        "quote": quote(key, safe=""),
        "quote /": quote(key),
        "quote_plus": quote_plus(key),
        "quote lower": re.sub("%..", lambda m: m.group().lower(), quote(key, safe="")),
        "base64": base64.b64encode(data).decode(),
        "base64 no padding": base64.b64encode(data).decode().rstrip("="),
        "base64 url": base64.urlsafe_b64encode(data).decode(),
        "base64 url no padding": base64.urlsafe_b64encode(data).decode().rstrip("="),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
        "basic": base64.b64encode(f"{BASIC_USER}:{key}".encode()).decode(),
        "json base64": json.dumps(base64.b64encode(data).decode())[1:-1].replace("/", "\\/"),
    }
    for offset in range(3):  # inside a longer base64 value, at each alignment
        wrapped = b"<" * (offset + 3) + data + b">>>>"
        for name, encode in (("std", base64.b64encode), ("url", base64.urlsafe_b64encode)):
            inner = _inner(encode(wrapped).decode(), offset + 3, len(data))
            found[f"embedded {name} +{offset}"] = inner
    return found


AGENT = r"""
import base64, json, os, re, sys
from urllib.parse import quote, quote_plus
key = os.environ["API_TOKEN"]
data = key.encode()
words = [
    quote(key, safe=""), quote(key), quote_plus(key),
    re.sub("%..", lambda m: m.group().lower(), quote(key, safe="")),
    base64.b64encode(data).decode(), base64.b64encode(data).decode().rstrip("="),
    base64.urlsafe_b64encode(data).decode(), base64.urlsafe_b64encode(data).decode().rstrip("="),
    data.hex(), data.hex().upper(),
    "Authorization: Basic " + base64.b64encode(("deploy:" + key).encode()).decode(),
    json.dumps(base64.b64encode(data).decode()).replace("/", "\\/"),
]
for offset in range(3):
    wrapped = b"<" * (offset + 3) + data + b">>>>"
    words += [base64.b64encode(wrapped).decode(), base64.urlsafe_b64encode(wrapped).decode()]
text = json.dumps({"status": "bad", "echo": words})
if json.load(sys.stdin) == "stderr":
    sys.stderr.write(text + "\n" + "\n".join(words) + "\n")
    sys.exit(1)
print(text)
"""


def test_an_encoded_secret_reaches_no_place(tmp_path: Path) -> None:
    # issue 29, Secrets probe 1: quote(key), base64, HTTP Basic and hex of an env: secret
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {
        "agents": {"cmd": {"command": [sys.executable, "agent.py"], "env": {"API_TOKEN": KEY}}}
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    checks = {"status": "ok"}
    write_tests(
        tmp_path / "cmd.tests.yaml",
        [
            {"id": "out", "input": "stdout", "expect": checks},
            {"id": "err", "input": "stderr", "expect": checks},
        ],
        "cmd",
    )
    reports = [arg for name in ("r.json", "r.xml", "r.md", "r.html") for arg in ("-o", name)]
    result = subprocess.run(
        [ASSERTLY, "run", ".", "--plain", *reports],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        timeout=120,
        check=False,
        env=os.environ.copy(),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {test["id"]: test["status"] for test in report["tests"]} == {
        "out": "failed",
        "err": "error",
    }
    exported = subprocess.run(
        [ASSERTLY, "view", "--export", "site"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert exported.returncode == 0, exported.stdout + exported.stderr
    places = {"console": (result.stdout + result.stderr).encode()}
    for path in [*(tmp_path / ".assertly").iterdir(), *tmp_path.glob("r.*")]:
        places[path.name] = path.read_bytes() + stored_records_text(path)
    for path in (tmp_path / "site").rglob("*"):
        if path.is_file():
            places[f"viewer {path.relative_to(tmp_path)}"] = path.read_bytes()
    assert any(name.endswith(".json") and "viewer" in name for name in places), places.keys()
    assert b"[REDACTED]" in places["r.md"] and b"[REDACTED]" in places["console"]
    spellings = encoded_spellings(KEY)
    assert all(len(spelling) >= 12 for spelling in spellings.values()), spellings
    for name, spelling in spellings.items():
        for place, data in places.items():
            assert spelling.encode() not in data, f"{name} spelling {spelling!r} in {place}"


def _everything(project: Path, console: str) -> dict[str, bytes]:
    places = {"console": console.encode()}
    for path in [*(project / ".assertly").iterdir(), *project.glob("r.*")]:
        places[path.name] = path.read_bytes() + stored_records_text(path)
    with sqlite3.connect(project / ".assertly" / "runs.sqlite") as db:
        places["stored options"] = "".join(
            row[0] for row in db.execute("SELECT options FROM runs")
        ).encode()
    return places


def test_url_passwords_are_never_shown_or_stored(tmp_path: Path) -> None:
    # issue 29, Secrets probe 2: the judge's base_url userinfo and --target http://user:pass@…
    (tmp_path / "agent.py").write_text(
        "import json, sys; json.load(sys.stdin); print(json.dumps({'answer': 'hi'}))",
        encoding="utf-8",
    )
    judge = "http://judgeuser:judge-pw-29%2F@127.0.0.1:9/v1"
    config = {
        "agents": {"cmd": {"command": [sys.executable, "agent.py"]}},
        "judge": {"base_url": judge, "model": "m", "timeout_s": 2},
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    rubric = [{"type": "llm-rubric", "value": "polite"}]
    write_tests(tmp_path / "j.tests.yaml", [{"id": "j", "input": 1, "assertions": rubric}], "cmd")
    reports = [arg for name in ("r.json", "r.xml", "r.md", "r.html") for arg in ("-o", name)]
    consoles = []
    for extra in ([], ["--target", "http://tuser:target-pw-29@127.0.0.1:9/x"]):
        result = subprocess.run(
            [ASSERTLY, "run", ".", "--plain", *extra, *reports],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 1, result.stdout + result.stderr
        assert "****@127.0.0.1:9" in result.stdout, result.stdout  # the URL, masked
        consoles.append(result.stdout + result.stderr)
        places = _everything(tmp_path, result.stdout + result.stderr)
        for secret in ("judge-pw-29", "target-pw-29"):
            for place, data in places.items():
                assert secret.encode() not in data, f"{secret} in {place}"
    assert "tuser:****@127.0.0.1:9/x" in _everything(tmp_path, "")["stored options"].decode()
    # Resuming that run needs the target again: its password was never stored.
    resumed = subprocess.run(
        [ASSERTLY, "run", "--resume", "last"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 2 and "give --target again" in resumed.stderr, resumed.stderr
