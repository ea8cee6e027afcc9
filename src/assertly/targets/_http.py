"""``http(s)://`` targets: POST the input as JSON; the body is the response.

Headers come from config; ``${NAME}`` in a header value is read from the environment at start
and the value is registered as a secret, redacted from every report. Non-2xx statuses,
timeouts and connection errors are errors; 429 and 5xx are retried with exponential backoff
(honouring ``Retry-After``). The agent may report metadata in ``X-Assertly-Model``,
``X-Assertly-Cost-Usd`` and ``X-Assertly-Latency-Ms`` headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Mapping
from typing import Any

from .._exceptions import TargetError
from ._base import TargetResponse

__all__ = ["HttpTarget", "expand_secrets"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BODY_TAIL = 1000


def expand_secrets(headers: Mapping[str, str], secrets: set[str]) -> dict[str, str]:
    """Replace ``${NAME}`` with environment values, collecting them as secrets.

    Raises:
        TargetError: A referenced variable is not set.
    """
    expanded: dict[str, str] = {}
    for name, value in headers.items():
        missing = [v for v in _VARIABLE.findall(value) if v not in os.environ]
        if missing:
            raise TargetError(f"header {name}: environment variable {missing[0]} is not set")
        for variable in _VARIABLE.findall(value):
            if os.environ[variable]:
                secrets.add(os.environ[variable])
        expanded[name] = _VARIABLE.sub(lambda match: os.environ[match.group(1)], value)
    return expanded


class HttpTarget:
    """POST each input to a URL."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        retries: int = 2,
        backoff_s: float = 0.5,
        secrets: set[str] | None = None,
        concurrency: int = 64,
        timeout_s: float | None = None,
    ) -> None:
        import httpx

        self.name = url
        self.url = url
        self.timeout_s = timeout_s  # the configured per-call timeout; the runner applies it
        self.retries = retries
        self.backoff_s = backoff_s
        self.secrets = secrets if secrets is not None else set()
        self.headers = expand_secrets(headers or {}, self.secrets)
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self._client = httpx.AsyncClient(headers=self.headers, limits=limits, trust_env=False)

    async def call(self, payload: Any, timeout_s: float) -> TargetResponse:
        """POST ``payload``; retry 429/5xx with backoff."""
        import httpx

        attempt = 0
        while True:
            try:
                response = await self._client.post(self.url, json=payload, timeout=timeout_s)
            except httpx.TimeoutException:
                raise TargetError(f"timed out after {timeout_s:g} s") from None
            except httpx.HTTPError as error:
                if attempt < self.retries and isinstance(error, httpx.TransportError):
                    attempt += 1
                    await asyncio.sleep(self.backoff_s * 2 ** (attempt - 1))
                    continue
                raise TargetError(f"{type(error).__name__}: {error}") from None
            status = response.status_code
            if (status == 429 or status >= 500) and attempt < self.retries:
                attempt += 1
                await asyncio.sleep(_retry_after(response) or self.backoff_s * 2 ** (attempt - 1))
                continue
            if not 200 <= status < 300:
                body = response.text[:_BODY_TAIL]
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise TargetError(f"HTTP {status}{tries}: {body}")
            return TargetResponse(output=response.text, **_header_metadata(response.headers))

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(float(value), 30.0) if value is not None else None
    except ValueError:
        return None


def _header_metadata(headers: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    model = headers.get("x-assertly-model")
    if model:
        found["model"] = model
    for header, name in (
        ("x-assertly-cost-usd", "cost_usd"),
        ("x-assertly-latency-ms", "latency_ms"),
    ):
        value = headers.get(header)
        if value is not None:
            with contextlib.suppress(ValueError):
                found[name] = float(value)
    return found
