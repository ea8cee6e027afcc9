"""A local HTTP agent for the runner benchmark: answers every POST after a fixed delay.

    python bench/http_agent.py --outputs OUTPUTS.json [--delay-ms 50] [--max-seconds 300]

Listens on 127.0.0.1 only, on a free port it prints as ``PORT <n>`` on the first line of stdout.
The request body is the test's input, ``{"case": i}``; the answer is ``outputs[i % len]`` (the
seeded outputs of the engine benchmark), or a fixed JSON answer without ``--outputs``.
Plain asyncio streams, HTTP/1.1 keep-alive, no dependencies: the server should cost as little
CPU as possible, since it shares the machine with the runner being measured. It stops on
SIGTERM/SIGINT, or by itself after ``--max-seconds``, and then prints how many requests it
answered.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys

DEFAULT_ANSWER = b'{"status": "success", "results": []}'


class Agent:
    """Counts requests; answers each after ``delay_s``."""

    def __init__(self, outputs: list[bytes], delay_s: float) -> None:
        self.outputs = outputs
        self.delay_s = delay_s
        self.requests = 0

    def answer(self, body: bytes) -> bytes:
        if not self.outputs:
            return DEFAULT_ANSWER
        try:
            case = int(json.loads(body)["case"])
        except (ValueError, KeyError, TypeError):
            case = self.requests
        return self.outputs[case % len(self.outputs)]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                keep_alive = True
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value.strip())
                    elif name == b"connection" and value.strip().lower() == b"close":
                        keep_alive = False
                body = await reader.readexactly(length) if length else b""
                await asyncio.sleep(self.delay_s)
                self.requests += 1
                payload = self.answer(body)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n%s\r\n"
                    % (
                        len(payload),
                        b"" if keep_alive else b"Connection: close\r\n",
                    )
                    + payload
                )
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


async def serve(agent: Agent, max_seconds: float) -> None:
    server = await asyncio.start_server(agent.handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with server:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=max_seconds)
    print(f"REQUESTS {agent.requests}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", help="JSON list of output texts to answer with")
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()
    outputs: list[bytes] = []
    if args.outputs:
        with open(args.outputs, encoding="utf-8") as handle:
            outputs = [text.encode() for text in json.load(handle)]
    asyncio.run(serve(Agent(outputs, args.delay_ms / 1000), args.max_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
