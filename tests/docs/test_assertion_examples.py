"""The worked examples of docs/assertions.md give the verdicts and messages assertly gives.

Under an assertion's YAML example the page lists responses and what assertly says about them:

    - `{"status": "error"}` → failed: `Expected status 'success', got 'error'`
    - `{"results": []}` with context `{"model": "m"}` at now `2026-01-20` → passed

Each such line is checked: the example is compiled (as ``assertly check`` reads it: an expect
dict, a typed list, or a test case with ``expect``/``assertions``, ``threshold`` and ``shape``),
the response judged, and the outcome must be the one shown; a message shown must be the message
of one of the results (nested ones too). ``skipped`` is the outcome of the assertion, not of
the check (a check of skipped assertions passes). Lines of another form (a judge's reply, a
tool-call trace) are read by the tests of their own subsystems.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import yaml
from doc_blocks import ROOT, Block, blocks_of

import assertly
from assertly.loading._yaml import yaml_loader

PAGE = ROOT / "docs" / "assertions.md"
_LINE = re.compile(
    r"^- `(?P<response>[^`]+)`(?: with context `(?P<context>[^`]+)`)?"
    r"(?: at now `(?P<now>[^`]+)`)? → (?P<outcome>passed|failed|error|skipped)"
    r"(?:: `(?P<message>[^`]+)`)?\s*$"
)
_PREFIXES = ["people/", "documents/"]  # the page's examples use the notes agent's


def _examples() -> list[tuple[Block, list[re.Match[str]]]]:
    """Each YAML example with the lines of responses that follow it (JSON ones only)."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    found = []
    for block in blocks_of(PAGE):
        if block.lang != "yaml":
            continue
        index = block.line + block.text.count("\n") + 1  # the line after the closing fence
        while index < len(lines) and not lines[index].strip():
            index += 1
        cases = []
        while index < len(lines) and lines[index].startswith("- "):
            if (case := _LINE.match(lines[index])) and _is_json(case["response"]):
                cases.append(case)
            index += 1
        if cases:
            found.append((block, cases))
    return found


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


EXAMPLES = _examples()


def test_the_examples_are_found() -> None:
    assert sum(len(cases) for _, cases in EXAMPLES) >= 150


def _compiled(block: Block) -> assertly.Expectation:
    value = yaml.load(block.text, Loader=yaml_loader())
    if isinstance(value, dict) and value.keys() & {"expect", "assertions"}:
        return assertly.compile(
            value.get("expect", value.get("assertions")),
            threshold=value.get("threshold"),
            shape=value.get("shape"),
            sensitive_prefixes=_PREFIXES,
        )
    return assertly.compile(value, sensitive_prefixes=_PREFIXES)


def _all(results: Sequence[Any]) -> Iterator[Any]:
    for result in results:
        yield result
        yield from _all(getattr(result, "children", None) or ())


@pytest.mark.parametrize("block, cases", EXAMPLES, ids=[block.id for block, _ in EXAMPLES])
def test_verdicts_are_as_shown(block: Block, cases: list[re.Match[str]]) -> None:
    expectation = _compiled(block)
    wrong = []
    for case in cases:
        context = json.loads(case["context"]) if case["context"] else None
        result = expectation.check(json.loads(case["response"]), context=context, now=case["now"])
        results = list(_all(result.results))
        if case["outcome"] == "skipped":
            outcome_ok = any(each.outcome.value == "skipped" for each in results)
        else:
            outcome_ok = result.outcome.value == case["outcome"]
        message_ok = case["message"] is None or case["message"] in {r.message for r in results}
        if not (outcome_ok and message_ok):
            said = [f"{r.outcome.value}: {r.message}" for r in results]
            wrong.append(f"{case[0]}\n    assertly: {result.outcome.value} {said}")
    assert wrong == [], f"{block.id}: examples that assertly judges otherwise:\n" + "\n".join(wrong)
