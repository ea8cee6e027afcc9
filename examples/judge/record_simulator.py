"""Record the demo's simulated user (simulator-cache.jsonl) for conversations.tests.yaml.

`make demo` runs the simulated conversation offline, with ``--judge-cache replay``: every
simulator reply comes from the run store's judge cache, which the demo fills from
simulator-cache.jsonl. This script records those replies the way a user records a real model's:
it serves a stand-in model (its replies written by hand below, no model is run) at the
config's ``simulator:`` address, 127.0.0.1:8000, runs the simulated suite once with
``--judge-cache rw`` into a scratch store, and writes out what the run kept in its judge cache
(each reply under the key assertly computed for its request: endpoint, model, messages,
parameters). A change to the agent's replies or to the simulator's prompt shows up in the demo
as a replay miss (an error) until this is run again:

    .venv/bin/python examples/judge/record_simulator.py
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ADDRESS = ("127.0.0.1", 8000)  # examples/assertly.yaml's simulator: base_url

# What the simulated user says after the agent's message containing each phrase.
REPLIES = {
    "order number": "It's A-1042. I already told you it's a refund, please hurry.",
    "shall i issue": "Yes, go ahead.",
}


def user_reply(messages: list[dict[str, Any]]) -> str:
    """The stand-in model's reply: the simulated user's answer to the agent's last message."""
    last = messages[-1]["content"].lower()
    for phrase, reply in REPLIES.items():
        if phrase in last:
            return reply
    return "Thanks. [END]"


class Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``/v1/chat/completions`` answering with `user_reply`."""

    def do_POST(self) -> None:
        """Answer a chat completion request (the name http.server calls)."""
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = user_reply(request["messages"])
        body = json.dumps(
            {
                "object": "chat.completion",
                "model": request["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Log nothing: the run's output is what matters."""


def main() -> None:
    """Serve the stand-in model, run the simulated suite, write simulator-cache.jsonl."""
    server = ThreadingHTTPServer(ADDRESS, Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as scratch:
        store = Path(scratch) / "runs.sqlite"
        command = [
            sys.executable, "-m", "assertly", "run", "conversations.tests.yaml",
            "--suite", "simulated", "--plain", "--judge-cache", "rw", "--store", str(store),
        ]  # fmt: skip
        env = {**os.environ, "ASSERTLY_DEMO_JUDGE_KEY": "recording"}
        subprocess.run(command, cwd=HERE.parent, env=env, check=True)
        server.shutdown()
        with sqlite3.connect(store) as db:
            rows = db.execute(
                "SELECT key, model, reply FROM judge_cache ORDER BY saved_at"
            ).fetchall()
    lines = [json.dumps({"key": k, "model": m, "reply": r}, ensure_ascii=False) for k, m, r in rows]
    (HERE / "simulator-cache.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} simulator replies to {HERE / 'simulator-cache.jsonl'}")


if __name__ == "__main__":
    main()
