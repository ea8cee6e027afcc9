"""The config's agents checked before anything runs: specs that can never work, unset variables.

`assertly validate` reports each as a problem at the config's file:line (exit 2): an agent
whose spec names no known target (``ftp://x``), an empty command (``cmd:``,
``{command: []}``), and a ``${NAME}`` that assertly would read from the environment (an HTTP
agent's ``headers``, a command's ``env``) but that is not set. `assertly run`
warns about them for the agents it uses, before any call, and goes on (a test whose agent
cannot be made ends ``error``). The judge's ``api_key: ${NAME}`` unset is a warning of
`validate` only: a run from the judge cache (``--judge-cache replay``) or against a server
that wants no key needs none, and one that needs it says so as each judgement's error.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._exceptions import Problem, TargetError
from ._spec import parse_spec

__all__ = ["agent_warnings", "check_agents"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_agents(config: Any, only: Iterable[str] | None = None) -> tuple[list[Problem], list[str]]:
    """``(problems, warnings)`` of the config's agents and judge key (see the module docstring).

    ``only``: the agents a run uses (the others, and the judge's key, left out); None: all.
    """
    wanted = None if only is None else set(only)
    agents = [(n, s) for n, s in config.agents.items() if wanted is None or n in wanted]
    if not agents and wanted is not None:
        return [], []
    where = _locator(config.path)
    problems: list[Problem] = []
    warnings: list[str] = []
    for name, spec in agents:
        at = where(("agents", name))
        reason = _spec_problem(spec)
        if reason is not None:
            problems.append(Problem(at, f"agents.{name}: {reason}"))
            continue
        for variable in _unset(_expanded_values(spec)):
            problems.append(
                Problem(at, f"agents.{name}: ${{{variable}}} is not set in the environment")
            )
    for agent, targets in getattr(config, "matrix", {}).items():
        if wanted is not None and agent not in wanted:
            continue
        for label, spec in targets.items():
            if isinstance(spec, str) and spec in config.agents:
                continue  # an agent of agents:, checked above
            reason = _spec_problem(spec)
            if reason is not None:
                at = where(("matrix", agent, label))
                problems.append(Problem(at, f"matrix.{agent}.{label}: {reason}"))
    if wanted is not None:
        return problems, warnings
    judge = getattr(config, "judge", None)
    key = getattr(judge, "api_key", None)
    for variable in _unset([key] if isinstance(key, str) else []):
        warnings.append(
            f"{where(('judge', 'api_key'))}: judge.api_key: ${{{variable}}} is not set in the "
            "environment (the judge is asked without a key)"
        )
    return problems, warnings


def _spec_problem(spec: Any) -> str | None:
    """Why ``spec`` can never make a target, or None."""
    try:
        parsed = parse_spec(spec)
    except TargetError as error:
        return str(error)
    value = parsed.value
    if isinstance(value, str):
        if parsed.kind == "cmd" and not _words(value):
            return "the command is empty (cmd:<command>, e.g. cmd:python agent.py)"
        if parsed.kind in ("py", "fixtures") and not value.strip():
            hint = "py:module:function" if parsed.kind == "py" else "fixtures:<file.jsonl>"
            return f"nothing after {parsed.kind}: (use {hint})"
        return None
    if parsed.kind == "cmd":
        command = value.command
        empty = not _words(command) if isinstance(command, str) else not command
        if empty or (isinstance(command, list) and not str(command[0]).strip()):
            return "the command is empty (command: a command line, or a list of its words)"
    return None


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: the command target says so when it runs
        return [command]


def _expanded_values(spec: Any) -> list[str]:
    """Where assertly reads ``${NAME}`` from the environment in an agent's spec."""
    values: list[str] = []
    if isinstance(spec, str):
        return values
    for mapping in (getattr(spec, "headers", None), getattr(spec, "env", None)):
        values.extend(str(text) for text in (mapping or {}).values())
    return values


def _unset(values: list[str]) -> list[str]:
    names: dict[str, None] = {}
    for text in values:
        for name in _VARIABLE.findall(text):
            if name not in os.environ:
                names.setdefault(name)
    return list(names)


def _locator(path: Path | None) -> Any:
    """``key -> "file:line:col"`` in the config file (the file alone when positions are unknown)."""
    if path is None:
        return lambda key: "config"
    if path.name == "pyproject.toml":
        return lambda key: f"{path}: [tool.assertly]"
    from ..loading._source import read_source

    try:
        source = read_source(path)
    except Exception:  # read once already by load_config: positions are a nicety
        return lambda key: str(path)
    return source.where


def agent_warnings(config: Any, agents: Iterable[str], target: Any) -> list[str]:
    """What `assertly run` warns about before its first call, as text.

    `check_agents` of the ``agents`` it uses; nothing when ``--target`` replaces them.
    """
    if target is not None:
        return []
    problems, warnings = check_agents(config, only=agents)
    return [*(str(problem) for problem in problems), *warnings]
