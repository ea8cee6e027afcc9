"""HTTP bodies decode as the server says: charset= in Content-Type, a byte order mark, and a
clear error for bytes that do not decode (hostile world, round 2, item 9)."""

from __future__ import annotations

import json

import pytest
from runner_support import HttpAgent, Project

ANSWER = {"status": "success", "summary": "café, naïve, 東京"}


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (json.dumps(ANSWER, ensure_ascii=False).encode("utf-8"), "application/json"),
        (json.dumps(ANSWER, ensure_ascii=False).encode("utf-16"), "application/json"),  # BOM
        (
            json.dumps({"status": "success", "summary": "café, naïve"}, ensure_ascii=False).encode(
                "latin-1"
            ),
            "application/json; charset=ISO-8859-1",
        ),
        (
            json.dumps(ANSWER, ensure_ascii=False).encode("utf-16-le"),
            "application/json; charset=utf-16le",
        ),
        (b"\xef\xbb\xbf" + json.dumps(ANSWER).encode(), "application/json"),  # UTF-8 BOM
    ],
)
def test_bodies_decode_as_the_server_says(
    project: Project, http_server: HttpAgent, data: bytes, content_type: str
) -> None:
    project.write("assertly.yaml", {"agents": {"api": http_server.url("/bytes")}})
    expect = {"status": "success", "summary_contains": "café, naïve"}
    test = {"id": "t", "input": {"hex": data.hex(), "type": content_type}, "expect": expect}
    project.write("c.tests.yaml", {"agent": "api", "test_suites": {"s": {"tests": [test]}}})
    result = project.run("run", ".")
    assert result.status("t") == "passed", result.tests["t"]["trials"][0]


@pytest.mark.parametrize(
    ("data", "content_type", "message"),
    [
        (
            b'{"status": "caf\xe9"}',
            "application/json",
            "not valid utf-8: bytes e9 22 7d at offset 15",
        ),
        (b'{"status": "x"}', "application/json; charset=x-unknown", "unknown charset 'x-unknown'"),
    ],
)
def test_undecodable_bodies_are_a_clear_error(
    project: Project, http_server: HttpAgent, data: bytes, content_type: str, message: str
) -> None:
    project.write("assertly.yaml", {"agents": {"api": http_server.url("/bytes")}})
    test = {
        "id": "t",
        "input": {"hex": data.hex(), "type": content_type},
        "expect": {"status": "success"},
    }
    project.write("c.tests.yaml", {"agent": "api", "test_suites": {"s": {"tests": [test]}}})
    result = project.run("run", ".")
    assert result.status("t") == "error"
    assert message in result.tests["t"]["trials"][0]["error"]
