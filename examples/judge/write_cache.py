"""Write the demo's judge cache (judge-cache.jsonl) for support.tests.yaml.

`make demo` judges support.tests.yaml offline, with ``--judge-cache replay``: every judge
reply comes from the run store's judge cache, which the demo fills from judge-cache.jsonl.
The replies below were written by hand for the demo (no model was run); this script files
each under the key assertly computes for its request (endpoint, model, messages, parameters),
so a change to the judge's prompt shows up as a replay miss until it is run again:

    .venv/bin/python examples/judge/write_cache.py
"""

from __future__ import annotations

import json
from pathlib import Path

from assertly.engine import CheckContext
from assertly.engine.graded._judging import BOARD_KEY, JudgeBoard
from assertly.judge import JudgeClient
from assertly.loading import load_config, load_paths

HERE = Path(__file__).parent

REPLIES = {
    "refund": {
        "reason": "It thanks the customer, says where the refund goes and that it takes up to "
        "5 business days, as required.",
        "verdict": "pass",
        "score": 0.93,
    },
    "password": {
        "reason": "A polite, step-by-step answer; it says the reset link is emailed.",
        "verdict": "pass",
        "score": 0.88,
    },
    "shipping": {
        "reason": 'The reply is curt and dismissive ("Read the FAQ") and says 10 days where '
        "7 to 10 days is expected.",
        "verdict": "fail",
        "score": 0.15,
    },
}


def entries() -> list[dict[str, object]]:
    """One cache entry per judge request the demo's tests make."""
    config = load_config(HERE.parent / "assertly.yaml")
    loaded = load_paths([HERE / "support.tests.yaml"], project_dir=HERE.parent)
    client = JudgeClient(config.judge, None)
    found = []
    for dataset in loaded.datasets:
        for case in dataset.cases():
            step = case.steps[0]
            assert step.recorded is not None and not case.problems, case.problems
            board = JudgeBoard()
            context = CheckContext(extra={BOARD_KEY: board})
            for expectation in step.checks:
                expectation.check(step.recorded[0], context=context)
            for request in board.wanted.values():
                settings = client.settings(request.options)
                assert isinstance(settings, dict), settings
                found.append(
                    {
                        "test": case.id,
                        "key": client.cache_key(settings, request.messages, 0),
                        "model": settings["model"],
                        "reply": json.dumps(REPLIES[case.id]),
                    }
                )
    return found


def main() -> None:
    """Write judge-cache.jsonl next to this script."""
    lines = [json.dumps(entry, ensure_ascii=False) for entry in entries()]
    (HERE / "judge-cache.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} judge replies to {HERE / 'judge-cache.jsonl'}")


if __name__ == "__main__":
    main()
