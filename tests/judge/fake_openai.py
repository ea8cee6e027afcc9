"""A scripted fake OpenAI-compatible server on 127.0.0.1 for the judge's tests.

It answers ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` (`FakeOpenAI.embed`).
Each chat request takes the next scripted answer (the last one repeats); an answer is a reply
text (a normal completion), or a `Raw` HTTP response (a status, a body, headers, a body cut
short). Every request's JSON and headers are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Raw:
    """A literal HTTP answer."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    truncate: bool = False  # announce the full length, send half, close


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cost: float | None = None,
    refusal: str | None = None,
) -> bytes:
    """A chat completion body."""
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    if cost is not None:
        usage["cost"] = cost
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message}],
            "usage": usage,
        }
    ).encode()


def verdict(verdict: str, score: float, reason: str = "because") -> str:
    """A JSON verdict reply."""
    return json.dumps({"reason": reason, "verdict": verdict, "score": score})


def embeddings(texts: list[str]) -> bytes:
    """An ``/embeddings`` body: each text's words hashed into 32 dimensions.

    Texts with the same words get the same vector; texts with no word in common are far apart.
    """
    data = []
    for index, text in enumerate(texts):
        vector = [0.0] * 32
        for word in text.lower().replace(".", " ").replace(",", " ").split():
            vector[sum(map(ord, word)) % 32] += 1.0
        data.append({"object": "embedding", "index": index, "embedding": vector})
    usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
    return json.dumps({"object": "list", "data": data, "usage": usage}).encode()


Answer = str | Raw | Callable[[dict[str, Any]], "str | Raw"]


class FakeOpenAI:
    """The server's script and what it received."""

    def __init__(self) -> None:
        self.script: list[Answer] = [verdict("pass", 1.0)]
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.reject_json_schema = False  # answer 400 to response_format json_schema
        self.embedding_requests: list[dict[str, Any]] = []
        # The /embeddings body for a request's inputs (tests replace it with bad vectors).
        self.embed: Callable[[list[str]], bytes] = embeddings
        self._lock = threading.Lock()
        self.url = ""

    def answers(self, *script: Answer) -> None:
        """Set the script: one answer per request, the last one repeating."""
        self.script = list(script)

    def next(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(body)
            answer = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return answer(body) if callable(answer) else answer


def serve() -> Iterator[FakeOpenAI]:
    """Run a fake server until the generator is closed."""
    fake = FakeOpenAI()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.headers.append(dict(self.headers.items()))
            if self.path == "/v1/embeddings":
                with fake._lock:
                    fake.embedding_requests.append(body)
                self._send(Raw(200, fake.embed(body["input"])))
                return
            if self.path != "/v1/chat/completions":
                self._send(Raw(404, b'{"error": "not found"}'))
                return
            form = (body.get("response_format") or {}).get("type")
            if fake.reject_json_schema and form == "json_schema":
                with fake._lock:
                    fake.requests.append(body)
                self._send(
                    Raw(
                        400,
                        b'{"error": {"message": "response_format json_schema is not supported"}}',
                    )
                )
                return
            answer = fake.next(body)
            if isinstance(answer, str):
                answer = Raw(200, completion(answer))
            self._send(answer)

        def _send(self, raw: Raw) -> None:
            self.send_response(raw.status)
            for name, value in raw.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw.body)))
            if raw.truncate:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(raw.body[: len(raw.body) // 2] if raw.truncate else raw.body)
            if raw.truncate:
                self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
