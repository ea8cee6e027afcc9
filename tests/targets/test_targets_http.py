"""`HttpTarget` against a real server: JSON POST, retries with backoff on 429/5xx (honouring
Retry-After), no retry on other 4xx, connection errors, timeouts, secrets from the environment,
metadata headers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
from targets_support import ScriptedServer

from assertly import TargetError
from assertly.targets import HttpTarget, TargetRequest, TargetResponse, make_target
from assertly.targets._http import expand_secrets


def _call(target: HttpTarget, payload: Any = None, timeout_s: float = 5.0) -> TargetResponse:
    async def go() -> TargetResponse:
        try:
            return await target.call(TargetRequest(payload, timeout_s))
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_posts_the_input_as_json_and_returns_the_body(server: ScriptedServer) -> None:
    server.respond(
        (
            200,
            {"status": "success"},
            {
                "X-Assertly-Model": "m-1",
                "X-Assertly-Cost-Usd": "0.5",
                "X-Assertly-Latency-Ms": "bad",
            },
        )
    )
    response = _call(HttpTarget(server.url), {"q": "héllo", "n": [1, 2]})
    assert json.loads(response.output) == {"status": "success"}
    assert response.model == "m-1"
    assert response.cost_usd == 0.5
    assert response.latency_ms is None  # unparseable header ignored
    [request] = server.requests
    assert json.loads(request["body"]) == {"q": "héllo", "n": [1, 2]}
    assert request["headers"]["Content-Type"] == "application/json"


def test_5xx_is_retried_with_exponential_backoff(server: ScriptedServer) -> None:
    server.respond((500, "a"), (502, "b"), (200, {"ok": 1}))
    response = _call(HttpTarget(server.url, retries=2, backoff_s=0.1))
    assert json.loads(response.output) == {"ok": 1}
    times = [r["time"] for r in server.requests]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.09
    assert times[2] - times[1] >= 0.19  # doubled


def test_retries_exhausted_is_an_error_with_the_body(server: ScriptedServer) -> None:
    server.respond((503, {"error": "overloaded"}))
    with pytest.raises(TargetError, match=r"HTTP 503 after 3 attempts: .*overloaded"):
        _call(HttpTarget(server.url, retries=2, backoff_s=0.01))
    assert len(server.requests) == 3


def test_429_waits_for_retry_after(server: ScriptedServer) -> None:
    server.respond((429, "slow down", {"Retry-After": "0.4"}), (200, "fine"))
    response = _call(HttpTarget(server.url, retries=1, backoff_s=0.01))
    assert response.output == '"fine"'
    first, second = (r["time"] for r in server.requests)
    assert second - first >= 0.38


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_are_errors_without_retry(server: ScriptedServer, status: int) -> None:
    server.respond((status, {"error": "nope"}))
    with pytest.raises(TargetError, match=rf"^HTTP {status}: "):
        _call(HttpTarget(server.url, retries=3, backoff_s=0.01))
    assert len(server.requests) == 1


def test_connection_refused_is_an_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(TargetError, match="cannot connect to"):
        _call(HttpTarget(f"http://127.0.0.1:{port}/", retries=1, backoff_s=0.05))
    assert time.monotonic() - started < 3


def test_timeout_is_an_error(server: ScriptedServer) -> None:
    # A listening socket that never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        started = time.monotonic()
        with pytest.raises(TargetError, match=r"timed out after 0.2 s"):
            _call(HttpTarget(url, retries=0), timeout_s=0.2)
        assert time.monotonic() - started < 2


def test_header_secrets_are_expanded_and_registered(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "very-secret-value")
    secrets: set[str] = set()
    target = HttpTarget(
        server.url,
        headers={"Authorization": "Bearer ${AGENT_TOKEN}", "X-Plain": "p"},
        secrets=secrets,
    )
    _call(target)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer very-secret-value"
    assert server.requests[0]["headers"]["X-Plain"] == "p"
    assert secrets == {"very-secret-value"}


def test_the_body_is_always_sent_as_json_whatever_content_type_config_sets(
    server: ScriptedServer,
) -> None:
    _call(HttpTarget(server.url, headers={"content-type": "text/plain", "X-Plain": "p"}))
    _call(HttpTarget(server.url))
    for request in server.requests:
        assert request["content_types"] == ["application/json"]
    assert server.requests[0]["headers"]["X-Plain"] == "p"


def test_missing_secret_variable_is_a_target_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(TargetError, match="NOT_SET_ANYWHERE is not set"):
        expand_secrets({"Authorization": "${NOT_SET_ANYWHERE}"}, set())


def test_make_target_from_config_entry_keeps_retries_headers_and_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assertly.loading._models import HttpTargetModel

    monkeypatch.setenv("T", "abc")
    spec = HttpTargetModel(
        url="http://127.0.0.1:1/", headers={"A": "${T}"}, timeout_s=1.5, retries=0
    )
    secrets: set[str] = set()
    target = make_target(spec, secrets=secrets)
    assert isinstance(target, HttpTarget)
    assert (target.retries, target.timeout_s, target.headers) == (0, 1.5, {"A": "abc"})
    assert secrets == {"abc"}
    asyncio.run(target.aclose())
