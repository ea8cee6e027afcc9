"""runsight-core's assertion engine, timed on the same outputs and assertions as assertly.

Runs inside runsight-core's own virtual environment (bench/.peers/runsight), never assertly's:

    bench/.peers/runsight/bin/python bench/peer_runsight.py INPUT.json VERDICTS.json

INPUT: {"assertions": [...typed list...], "outputs": [str, ...], "chunks": int}

It judges every output once, untimed (verdicts and warm-up), writes VERDICTS.json
({"version", "python", "passes": ["1011...", ...], "errors"}), prints ``READY``, then serves
the suite on stdin/stdout so that its timed passes interleave with assertly's and promptfoo's:
``PASS k`` judges chunk k (``outputs[k::chunks]``) and prints ``<seconds> <responses>``;
``QUIT`` ends it.

It calls `runsight_core.assertions.run_assertions_sync`, the synchronous entry point runsight
gives for a list of assertion configs (the one its eval runner uses for deterministic types),
after importing `runsight_core.assertions.deterministic`, which registers the 15 built-ins.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import time
from importlib.metadata import version
from typing import Any

import runsight_core.assertions.deterministic  # noqa: F401  (registers the built-in types)
from runsight_core.assertions import AssertionContext, run_assertion, run_assertions_sync


def _context(output: str) -> AssertionContext:
    return AssertionContext(
        output=output,
        prompt="",
        prompt_hash="",
        soul_id="bench",
        soul_version="1",
        block_id="bench",
        block_type="linear",
        cost_usd=0.0,
        total_tokens=0,
        latency_ms=0.0,
        variables={},
        run_id="bench",
        workflow_id="bench",
    )


def _passes(assertions: list[dict[str, Any]], output: str) -> str:
    """Per-assertion verdicts; an assertion that raises counts as 'E'."""
    context = _context(output)
    try:
        result = run_assertions_sync(assertions, output=output, context=context)
        return "".join("1" if r.passed else "0" for r in result.results)
    except Exception:  # find which assertion raised
        marks = []
        for cfg in assertions:
            try:
                r = run_assertion(
                    type=cfg["type"],
                    output=output,
                    context=context,
                    value=cfg.get("value", ""),
                    threshold=cfg.get("threshold"),
                    config=cfg.get("config"),
                    transform=cfg.get("transform"),
                )
                marks.append("1" if r.passed else "0")
            except Exception:
                marks.append("E")
        return "".join(marks)


def _timed(assertions: list[dict[str, Any]], outputs: list[str]) -> float:
    gc.collect()
    start = time.perf_counter()
    for output in outputs:  # the context is built per response, as assertly's Response is
        try:
            run_assertions_sync(assertions, output=output, context=_context(output))
        except Exception:  # counted in the untimed pass
            continue
    return time.perf_counter() - start


def main() -> int:
    input_path, verdicts_path = sys.argv[1:3]
    with open(input_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    assertions, outputs, chunks = spec["assertions"], spec["outputs"], spec.get("chunks", 1)
    if hasattr(os, "sched_setaffinity"):  # one core, as assertly's engine benchmark
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    passes = [_passes(assertions, output) for output in outputs]  # untimed; warm-up
    with open(verdicts_path, "w", encoding="utf-8") as handle:
        json.dump(
            {
                "version": version("runsight-core"),
                "python": sys.version.split()[0],
                "passes": passes,
                "errors": sum("E" in mark for mark in passes),
            },
            handle,
        )
    print("READY", flush=True)
    for line in sys.stdin:
        command = line.split()
        if not command or command[0] == "QUIT":
            break
        part = outputs[int(command[1]) :: chunks]
        print(f"{_timed(assertions, part)!r} {len(part)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
