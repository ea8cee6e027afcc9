"""The hand-written floor of a dataset run: what `assertly run` does to recorded responses, by hand.

The least a run over a dataset of recorded outputs must do, written plainly, as the floor the
scale section compares `assertly run -o report.json` with (#20: assertly within 2x of it):

* read the JSONL dataset line by line and parse each line;
* judge its output with the same compiled expectation (`assertly.compile` of the suite's
  assertions, once);
* insert one row per case into a SQLite file (the case's id, status, score, and its output and
  failing assertions as JSON), in batched transactions of 256, as the runner batches recorded
  verdicts;
* stream a JSON report: a summary, then one object per case with its id, status, score, output
  (a JSON output as JSON, as assertly's report gives it) and failing assertions.

No console output, resume, metadata, secrets or multi-trial verdicts: those are assertly's own
costs, which the ratio shows.

Usage: ``python pipeline_floor.py TESTS.json STORE.sqlite REPORT.json``; prints
``passed failed`` counts.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson

import assertly

BATCH = 256


def _report_output(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return text
    return text


def main(tests_file: Path, store: Path, report: Path) -> int:
    suite = next(iter(json.loads(tests_file.read_text())["test_suites"].values()))
    expectation = assertly.compile(suite["assertions"])
    dataset = tests_file.parent / suite["dataset"]
    db = sqlite3.connect(store, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE cases (id TEXT PRIMARY KEY, status TEXT NOT NULL, score REAL, "
        "record TEXT NOT NULL)"
    )
    insert = "INSERT INTO cases (id, status, score, record) VALUES (?, ?, ?, ?)"
    counts = {"passed": 0, "failed": 0, "error": 0}
    body = report.with_suffix(".cases.tmp")
    pending = 0
    with dataset.open("rb") as lines, body.open("wb") as out:
        db.execute("BEGIN")
        first = True
        for line in lines:
            case = orjson.loads(line)
            output = case["output"]
            result = expectation.check(output)
            status = result.outcome.value
            counts[status] += 1
            failures = [item.to_dict() for item in result.failures]
            row = {"id": case["id"], "status": status, "score": result.score}
            db.execute(
                insert,
                (
                    case["id"],
                    status,
                    result.score,
                    orjson.dumps({**row, "output": output, "failures": failures}).decode(),
                ),
            )
            pending += 1
            if pending >= BATCH:
                db.execute("COMMIT")
                db.execute("BEGIN")
                pending = 0
            out.write(b"" if first else b",\n")
            first = False
            out.write(orjson.dumps({**row, "output": _report_output(output), "failures": failures}))
        db.execute("COMMIT")
    db.close()
    # The summary first, as assertly's report has it, then the cases streamed above.
    with report.open("wb") as handle, body.open("rb") as cases:
        handle.write(orjson.dumps({"summary": counts})[:-1] + b', "tests": [\n')
        while chunk := cases.read(1 << 20):
            handle.write(chunk)
        handle.write(b"\n]}\n")
    body.unlink()
    print(counts["passed"], counts["failed"])
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
