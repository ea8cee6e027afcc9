"""The hand-written floor of the conversation benchmark: the same conversations, no runner.

    python bench/conversation_floor.py --url URL --conversations N --turns T [-j J]

Each conversation sends its turns one after another to the agent over one aiohttp session,
each request the whole history so far (``{"messages": [...]}``, as assertly sends it), judges
each reply with the same compiled checks assertly's test file gives a turn (`assertly.compile`,
compiled once), and appends the reply to the history. ``-j`` conversations run at once. Prints
one JSON line: the seconds from the first request to the last verdict, and the turns sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import aiohttp

import assertly

# What every turn of the benchmark's test file checks (`sections.conversation.TURN_CHECKS`).
TURN_CHECKS: list[dict[str, Any]] = [
    {"type": "contains", "value": "success"},
    {"type": "is-json"},
    {"type": "not-contains", "value": "error"},
]


async def _conversation(
    session: aiohttp.ClientSession, url: str, number: int, turns: int, check: Any
) -> int:
    history: list[dict[str, Any]] = []
    failed = 0
    for turn in range(turns):
        messages = [*history, {"role": "user", "content": f"conversation {number}, turn {turn}"}]
        async with session.post(url, json={"messages": messages}) as response:
            reply = await response.text()
        if not check.check(reply).passed:
            failed += 1
        history = [*messages, {"role": "assistant", "content": reply}]
    return failed


async def _main(url: str, conversations: int, turns: int, jobs: int) -> dict[str, Any]:
    check = assertly.compile(TURN_CHECKS)
    limit = asyncio.Semaphore(jobs)
    async with aiohttp.ClientSession() as session:

        async def one(number: int) -> int:
            async with limit:
                return await _conversation(session, url, number, turns, check)

        started = time.perf_counter()
        failed = sum(await asyncio.gather(*(one(n) for n in range(conversations))))
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "turns": conversations * turns, "failed_turns": failed}


def main() -> None:
    """Parse the arguments, run, print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--conversations", type=int, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("-j", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_main(args.url, args.conversations, args.turns, args.j))))


if __name__ == "__main__":
    main()
