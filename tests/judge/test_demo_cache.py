"""The demo's recorded judge cache answers every request the demo's model-graded tests make."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "judge"


def test_the_committed_cache_matches_the_demo_requests() -> None:
    spec = importlib.util.spec_from_file_location("write_cache", EXAMPLES / "write_cache.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = (EXAMPLES / "judge-cache.jsonl").read_text(encoding="utf-8").splitlines()
    committed = [json.loads(line) for line in lines]
    # A change to the judge's prompt changes the keys: run examples/judge/write_cache.py.
    assert committed == module.entries()
    assert {entry["test"] for entry in committed} == {"refund", "password", "shipping"}
