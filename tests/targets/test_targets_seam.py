"""The target seam: one reader of specs, one request type, capabilities declared, not guessed.

The runner and the front ends learn about a target only from what it declares (`recorded`,
`timeout_s`, `start`) and from `parse_spec`; nothing outside ``targets/`` names a target
class.
"""

from __future__ import annotations

import ast
import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import assertly
from assertly import TargetError
from assertly.targets import (
    CommandTarget,
    FixtureTarget,
    HttpTarget,
    PythonTarget,
    Target,
    TargetRequest,
    make_target,
    parse_spec,
)


@pytest.mark.parametrize(
    ("spec", "kind", "value", "recorded"),
    [
        ("cmd:python agent.py", "cmd", "python agent.py", False),
        ("http://127.0.0.1:8000/run", "http", "http://127.0.0.1:8000/run", False),
        ("https://agent.example/run", "http", "https://agent.example/run", False),
        ("py:agents.search:answer", "py", "agents.search:answer", False),
        ("fixtures:recorded.jsonl", "fixtures", "recorded.jsonl", True),
    ],
)
def test_parse_spec_reads_each_form(spec: str, kind: str, value: str, recorded: bool) -> None:
    parsed = parse_spec(spec)
    assert (parsed.kind, parsed.value, parsed.recorded) == (kind, value, recorded)


def test_parse_spec_reads_config_entries_and_names_what_it_cannot_read() -> None:
    http = SimpleNamespace(url="http://127.0.0.1:1/", command=None)
    command = SimpleNamespace(url=None, command="python agent.py")
    assert (parse_spec(http).kind, parse_spec(http).value) == ("http", http)
    assert (parse_spec(command).kind, parse_spec(command).value) == ("cmd", command)
    with pytest.raises(TargetError, match=r"unknown target 'ftp://x': use cmd:<command>, http"):
        parse_spec("ftp://x")
    with pytest.raises(TargetError, match="cannot make a target from 42"):
        parse_spec(42)


def _declared(target: Target) -> tuple[bool, float | None]:
    return target.recorded, target.timeout_s


def test_every_target_declares_its_capabilities(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"id": "t", "output": "x"}\n', encoding="utf-8")
    (tmp_path / "seam_agent.py").write_text("def answer(q):\n    return q\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        targets: list[Target] = [
            CommandTarget("python agent.py"),
            HttpTarget("http://127.0.0.1:1/", timeout_s=2.5),
            PythonTarget("seam_agent:answer"),
            FixtureTarget(tmp_path / "r.jsonl"),
        ]
    finally:
        sys.path.remove(str(tmp_path))

    async def start_all() -> None:
        for target in targets:
            await target.start()  # every target has it; only HTTP sets anything up
        assert targets[1]._session is not None  # type: ignore[attr-defined]
        for target in targets:
            await target.aclose()

    assert [_declared(target) for target in targets] == [
        (False, None),
        (False, 2.5),
        (False, None),
        (True, None),
    ]
    asyncio.run(start_all())


def test_a_recorded_target_answers_a_request_by_its_key_then_its_input(tmp_path: Path) -> None:
    lines = [{"id": "t1/s2", "output": "by key"}, {"input": {"q": 1}, "output": "by input"}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    target = make_target(f"fixtures:{path}", secrets=set())

    async def answers() -> list[Any]:
        try:
            return [
                (await target.call(TargetRequest({"q": 1}, 1.0, key="t1/s2"))).output,
                (await target.call(TargetRequest({"q": 1}, 1.0, key="other"))).output,
                (await target.call(TargetRequest({"q": 1}, 1.0))).output,
            ]
        finally:
            await target.aclose()

    assert asyncio.run(answers()) == ["by key", "by input", "by input"]


_CLASSES = {"CommandTarget", "FixtureTarget", "HttpTarget", "PythonTarget"}


def test_nothing_outside_targets_names_a_target_class_or_probes_one() -> None:
    package = Path(assertly.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent.name == "targets":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = getattr(node, "id", None) or getattr(node, "attr", None)
            if name in _CLASSES:
                found.append(f"{path.name}:{node.lineno}: {name}")  # type: ignore[attr-defined]
            if isinstance(node, ast.alias) and node.name in _CLASSES:
                found.append(f"{path.name}:{node.lineno}: imports {node.name}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == "target"
            ):
                found.append(f"{path.name}:{node.lineno}: {node.func.id}(target, …)")
    assert found == []
