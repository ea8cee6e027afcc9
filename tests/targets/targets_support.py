"""Helpers for the target tests: a scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer(ThreadingHTTPServer):
    """Answers each request with the next scripted ``(status, body, headers)``; the last one
    repeats. Records every request."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that timed out and hung up is expected here (and a traceback
        printed from this thread would land in another test's captured output)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[tuple[int, Any, dict[str, str]]] = [(200, {"ok": True}, {})]
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/agent"

    def respond(self, *steps: tuple[int, Any] | tuple[int, Any, dict[str, str]]) -> None:
        self.script = [(s[0], s[1], s[2] if len(s) > 2 else {}) for s in steps]  # type: ignore[misc]


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            index = len(self.server.requests)
            self.server.requests.append(
                {
                    "time": time.monotonic(),
                    "headers": dict(self.headers.items()),
                    "content_types": self.headers.get_all("Content-Type") or [],
                    "body": raw,
                }
            )
            status, body, headers = self.server.script[min(index, len(self.server.script) - 1)]
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def serve() -> Iterator[ScriptedServer]:
    """Run a scripted HTTP server on 127.0.0.1 until the generator is closed."""
    instance = ScriptedServer()
    thread = threading.Thread(
        target=instance.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield instance
    finally:
        instance.shutdown()
        instance.server_close()
