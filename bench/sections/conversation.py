"""The conversation section: the runner's cost per turn against a hand-written loop (issue 32).

The same local HTTP agent (bench/http_agent.py, answering at once, or after a few ms as an
agent that does some work) answers 10-turn scripted conversations run two ways: by `assertly
run` (a conversation test per conversation, the same three checks on every turn, every turn
stored) and by bench/conversation_floor.py (an aiohttp loop sending the same growing message
lists and judging each reply with the same compiled checks). Both send the whole history each
turn. The figure compared is the run's own duration (assertly's summary: first call to last
verdict) over the loop's (first request to last verdict); start-up and loading are apart.
Issue 32's bound: at most 1.5x.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conversation_floor import TURN_CHECKS
from harness import ROOT, Run, assertly_run, log

BOUND = 1.5
TURNS = 10
CONVERSATIONS = 100
# Each agent: (label, ms it takes per reply). 0: the runner's own cost shows at its largest.
AGENTS = (("an instant agent", 0), ("a 5 ms agent", 5))


def _test_file(directory: Path) -> Path:
    tests = [
        {
            "id": f"c{number:03d}",
            "conversation": {
                "turns": [
                    {"user": f"conversation {number}, turn {turn}", "assertions": TURN_CHECKS}
                    for turn in range(TURNS)
                ]
            },
            "assertions": [{"type": "contains", "value": "success"}],
        }
        for number in range(CONVERSATIONS)
    ]
    path = directory / "conversation.tests.json"
    path.write_text(json.dumps({"agent": "bench", "test_suites": {"chat": {"tests": tests}}}))
    return path


def _agent(delay_ms: int) -> tuple[subprocess.Popen[str], str]:
    agent = subprocess.Popen(
        [sys.executable, str(ROOT / "http_agent.py"), "--delay-ms", str(delay_ms),
         "--max-seconds", "600"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert agent.stdout is not None
    port = int(agent.stdout.readline().split()[1])
    return agent, f"http://127.0.0.1:{port}/"


def _floor(url: str, jobs: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "conversation_floor.py"), "--url", url,
         "--conversations", str(CONVERSATIONS), "--turns", str(TURNS), "-j", str(jobs)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def section_conversation(run: Run) -> None:
    """assertly and the hand-written loop, interleaved, on each agent, at -j 1 and -j 8."""
    directory = run.work / "conversation"
    directory.mkdir()
    test_file = _test_file(directory)
    rounds = max(3, run.sizes.e2e_runs + 1)
    found: dict[str, Any] = {}
    for label, delay_ms in AGENTS:
        for jobs in (1, 8):
            log(f"conversation: {CONVERSATIONS} x {TURNS} turns, {label}, -j {jobs}")
            agent, url = _agent(delay_ms)
            ours: list[float] = []
            floors: list[float] = []
            try:
                for number in range(rounds):
                    report = directory / f"r-{delay_ms}-{jobs}-{number}.json"
                    figures = assertly_run(
                        directory, f"c-{delay_ms}-{jobs}-{number}", test_file, url,
                        "-j", str(jobs), "-o", str(report),
                    )  # fmt: skip
                    summary = json.loads(report.read_text())["summary"]
                    assert summary["passed"] == CONVERSATIONS, (summary, figures)
                    ours.append(summary["duration_ms"] / 1000)
                    floor = _floor(url, jobs)
                    assert floor["failed_turns"] == 0, floor
                    floors.append(floor["seconds"])
            finally:
                agent.terminate()
                agent.communicate(timeout=30)
            best, floor_best = min(ours), min(floors)
            turns = CONVERSATIONS * TURNS
            ratio = best / floor_best
            found[f"{delay_ms}ms_j{jobs}"] = {
                "assertly_s": ours,
                "floor_s": floors,
                "ratio": ratio,
                "overhead_us_per_turn": (best - floor_best) / turns * 1e6,
            }
            run.table.add(
                "conversation",
                f"{CONVERSATIONS} x {TURNS}-turn conversations, {label}, -j {jobs}",
                "assertly run: the run",
                f"{best / turns * 1e6:,.0f} µs/turn",
                None,
                f"{ratio:.2f}x the hand-written loop ({floor_best / turns * 1e6:,.0f} µs/turn)"
                f" (bound {BOUND}x); {(best - floor_best) / turns * 1e6:+,.0f} µs a turn",
            )
    run.results["conversation"] = found
