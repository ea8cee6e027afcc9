"""The workloads the benchmark suite gives assertly and its peers, and their translations.

Everything here is derived from `engine_workload` (the seeded responses and the 10-assertion
typed list), so every tool in one run judges the same texts against the same assertions:

* assertly and runsight-core take the typed list as it is (same vocabulary, including
  ``transform: json_path:$.key``);
* promptfoo has all ten types under the same names, but its ``transform`` is JavaScript, so the
  two ``json_path:`` transforms become an equivalent inline function (see `promptfoo_assert`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from engine_workload import SEED, TYPED, make_responses

# The kind weights of engine mix (a): pure JSON, prose with a fenced JSON block, prose.
TYPED_WEIGHTS = {"json": 0.5, "fenced": 0.3, "prose": 0.2}

# End to end: 8 of the 10 typed assertions per test (is-json and starts-with left out: both
# are implied by the others on pure JSON and add nothing new to the run).
E2E_TYPES = [entry for entry in TYPED if entry["type"] not in ("is-json", "starts-with")]
assert len(E2E_TYPES) == 8


def typed_outputs(n: int, seed: int = SEED) -> list[tuple[str, str]]:
    """``n`` (kind, text) outputs of mix (a), the same for every tool in a run."""
    return make_responses(random.Random(seed), n, TYPED_WEIGHTS)


# --- promptfoo ---------------------------------------------------------------------------------

# assertly's `json_path:$.key` (parse the whole output as JSON, take the key, hand a string on
# as it is and anything else as compact JSON, fail when the output is not JSON or the key is
# missing) as a promptfoo inline transform. A failing transform returns a marker that no
# assertion of this workload accepts, instead of throwing: a throwing transform makes
# promptfoo log a stack trace per test and turn the whole test into an ERROR, where assertly
# fails only that assertion.
_TRANSFORM = """\
let value;
try { value = typeof output === 'string' ? JSON.parse(output) : output; }
catch (error) { return '\\u0000json_path: the output is not JSON'; }
const found = value !== null && typeof value === 'object' && !Array.isArray(value)
  && Object.prototype.hasOwnProperty.call(value, KEY) ? value[KEY] : undefined;
if (found === undefined) return '\\u0000json_path: path not found';
return typeof found === 'string' ? found : JSON.stringify(found);"""


def promptfoo_assert(entry: dict[str, Any]) -> dict[str, Any]:
    """One typed assertion in promptfoo's vocabulary."""
    out = {key: value for key, value in entry.items() if key != "transform"}
    transform = entry.get("transform")
    if transform is not None:
        prefix = "json_path:$."
        assert transform.startswith(prefix), transform
        out["transform"] = _TRANSFORM.replace("KEY", json.dumps(transform[len(prefix) :]))
    return out


PROMPTFOO_SUBSTITUTIONS = [
    "json_path:$.summary and json_path:$.status transforms -> an inline JavaScript transform "
    "that JSON.parses the output and takes the key (promptfoo transforms are JavaScript; "
    "a failed transform returns a marker string so only that assertion fails, as in assertly)",
    "the other 8 types are promptfoo built-ins under the same names and parameters",
]
RUNSIGHT_SUBSTITUTIONS = ["none: all 10 types and json_path: transforms are runsight built-ins"]


def promptfoo_config(
    outputs: list[str], assertions: list[dict[str, Any]], description: str
) -> dict[str, Any]:
    """An offline promptfoo config: the echo provider returns each output given as a variable."""
    asserts = [promptfoo_assert(entry) for entry in assertions]
    return {
        "description": description,
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "defaultTest": {"assert": asserts},
        "tests": [{"vars": {"output": text}} for text in outputs],
    }


def write_promptfoo_config(path: Path, config: dict[str, Any]) -> None:
    """promptfoo reads YAML; JSON is YAML, and far faster for this tool to write."""
    path.write_text(json.dumps(config), encoding="utf-8")


def promptfoo_verdicts(out_json: Path) -> tuple[list[str | None], list[list[bool] | None]]:
    """(echoed outputs, per-assertion passes) by test index from ``promptfoo eval -o``."""
    data = json.loads(out_json.read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    count = 1 + max((row.get("testIdx", 0) for row in rows), default=-1)
    echoed: list[str | None] = [None] * count
    passes: list[list[bool] | None] = [None] * count
    for row in rows:
        index = row["testIdx"]
        echoed[index] = (row.get("response") or {}).get("output")
        grading = row.get("gradingResult") or {}
        components = grading.get("componentResults")
        if components:
            passes[index] = [bool(component.get("pass")) for component in components]
    return echoed, passes


# --- assertly agent test files -----------------------------------------------------------------


def write_test_suite(
    directory: Path, outputs: list[str], assertions: list[dict[str, Any]], name: str
) -> tuple[Path, Path]:
    """An agent test file of one test per output, and the fixtures JSONL answering it."""
    tests = [
        {"id": f"case_{index:05d}", "input": {"case": index}, "assertions": assertions}
        for index in range(len(outputs))
    ]
    test_file = directory / f"{name}.tests.json"
    test_file.write_text(
        json.dumps({"agent": "bench", "test_suites": {name: {"tests": tests}}}), encoding="utf-8"
    )
    fixtures = directory / f"{name}.jsonl"
    with fixtures.open("w", encoding="utf-8") as handle:
        for index, text in enumerate(outputs):
            handle.write(json.dumps({"id": f"case_{index:05d}", "output": text}) + "\n")
    return test_file, fixtures


def assertly_report_passes(report: Path, assertions: list[dict[str, Any]]) -> dict[int, str]:
    """Per-assertion verdicts ('1'/'0' in the order of ``assertions``) by case index.

    Read from the report's failures of the first trial, which name the failing assertion's
    type: each type appears once in ``assertions``.
    """
    types = [entry["type"] for entry in assertions]
    assert len(set(types)) == len(types), types
    data = json.loads(report.read_text(encoding="utf-8"))
    passes: dict[int, str] = {}
    for test in data.get("tests", []):
        test_id = str(test.get("id", ""))
        if test_id.startswith("case_") and test.get("trials"):
            failing = {f["assertion"] for f in test["trials"][0].get("failures", [])}
            passes[int(test_id[5:])] = "".join("0" if t in failing else "1" for t in types)
    return passes


def assertly_report_verdicts(report: Path) -> dict[int, tuple[bool, float]]:
    """(passed, score) by case index from an assertly JSON report."""
    data = json.loads(report.read_text(encoding="utf-8"))
    verdicts: dict[int, tuple[bool, float]] = {}
    for test in data.get("tests", []):
        test_id = str(test.get("id", ""))
        if test_id.startswith("case_"):
            verdicts[int(test_id[5:])] = (test.get("status") == "passed", float(test["score"]))
    return verdicts
