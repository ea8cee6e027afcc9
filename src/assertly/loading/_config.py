"""The project config.

Found as pytest and ruff find theirs: the nearest ``assertly.yaml`` (or ``.yml``), or
``pyproject.toml`` with a ``[tool.assertly]`` table, from the working directory upward;
defaults when there is none.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._exceptions import ConfigError, Problem
from .._secrets import mask_urls
from ._cases import SuiteHooks
from ._datasets import Dataset
from ._models import ConfigModel
from ._source import read_source
from ._tests import TestCase

__all__ = [
    "check_against_config",
    "config_read",
    "find_config",
    "load_config",
    "load_config_plugins",
]


def find_config(directory: Path) -> Path | None:
    """The nearest config file from ``directory`` upward, if any.

    In each directory, ``assertly.yaml`` (or ``.yml``) wins over ``pyproject.toml``; a
    ``pyproject.toml`` counts when it has a ``[tool.assertly]`` table. A ``pyproject.toml``
    that cannot be read as TOML is returned too, so that loading it reports the problem
    instead of a config being silently skipped.
    """
    for folder in (directory.resolve(), *directory.resolve().parents):
        for name in ("assertly.yaml", "assertly.yml"):
            candidate = folder / name
            if candidate.is_file():
                return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                return pyproject
            if "assertly" in data.get("tool", {}):
                return pyproject
    return None


def config_read(config: ConfigModel) -> str:
    """Which config a run read, for messages: its file, or that none was found."""
    if config.path is None:
        return (
            "no config was found (assertly.yaml, or [tool.assertly] in pyproject.toml, "
            "looked for from the working directory upward)"
        )
    return f"config read: {config.path}"


def load_config(path: Path | None) -> ConfigModel:
    """Load and validate the config (every problem reported together).

    The config file's directory is kept as ``config.directory``: agent commands and hooks
    from the config run there, and ``config.store_path`` is ``store`` taken relative to it.

    Raises:
        ConfigError: The file is unreadable or invalid.
    """
    if path is None:
        return ConfigModel()
    if path.name == "pyproject.toml":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("assertly")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ConfigError([Problem(str(path), f"invalid TOML: {error}")]) from None
        except OSError as error:
            raise ConfigError([Problem(str(path), f"cannot read: {error}")]) from None

        def where(key: tuple[str | int, ...]) -> str:
            return f"{path}: [tool.assertly]"  # tomllib keeps no positions
    else:
        source = read_source(path)
        data = source.data
        where = source.where
    if data is None:
        data = {}
    try:
        config = ConfigModel.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False):
            dotted = ".".join(str(part) for part in item["loc"])
            if item["type"] == "extra_forbidden":
                message = f"unknown key '{item['loc'][-1]}'"
            else:
                # A URL's password is not repeated (the error reaches a Python caller as is).
                message = f"{item['msg'].lower()}, got {mask_urls(repr(item['input']))}"
            problems.append(Problem(f"{where(tuple(item['loc']))}: {dotted}", message))
        raise ConfigError(problems) from None
    matrix_problems = _matrix_problems(config, where)
    if matrix_problems:
        raise ConfigError(matrix_problems)
    # Relative paths in the config are relative to its file, not to the current directory.
    config._directory = path.parent.resolve()
    config._path = path.resolve()
    return config


def _matrix_problems(config: ConfigModel, where: Any) -> list[Problem]:
    """What ``matrix:`` may not say: unknown agent names, no labels, other labels per agent.

    A value that names no agent of ``agents:`` must be a target spec, which names its kind
    (``cmd:``, ``http://``, ``py:``, ``fixtures:``); a bare word is a misspelt agent. Every
    agent of the matrix has the same labels: a label is one version of the whole system, and
    the comparison of two labels pairs the same tests.
    """
    problems: list[Problem] = []
    first: tuple[str, list[str]] | None = None
    for agent, targets in config.matrix.items():
        at = where(("matrix", agent))
        if not targets:
            problems.append(Problem(at, f"matrix.{agent}: give at least one LABEL: target"))
            continue
        labels = list(targets)
        if first is None:
            first = (agent, labels)
        elif sorted(labels) != sorted(first[1]):
            problems.append(
                Problem(
                    at,
                    f"matrix.{agent}: labels {', '.join(labels)} differ from matrix.{first[0]}'s "
                    f"({', '.join(first[1])}): every agent of the matrix takes the same labels",
                )
            )
        for label, spec in targets.items():
            if isinstance(spec, str) and spec not in config.agents and ":" not in spec:
                known = ", ".join(config.agents) or "none"
                problems.append(
                    Problem(
                        where(("matrix", agent, label)),
                        f"matrix.{agent}.{label}: unknown agent '{spec}'"
                        f"{_did_you_mean(spec, config.agents)} (agents: {known}); a target "
                        "spec names its kind (cmd:, http://, py:, fixtures:)",
                    )
                )
    return problems


def load_config_plugins(config: ConfigModel) -> None:
    """Import the config's ``plugins:`` modules, registering their custom assertions.

    Raises:
        ConfigError: A plugin cannot be imported.
    """
    if not config.plugins:
        return
    import sys

    from ..engine import REGISTRY

    # A plugin module kept next to assertly.yaml is found wherever assertly runs from.
    directory = str(config.directory) if config.directory is not None else None
    if directory is not None and directory not in sys.path:
        sys.path.append(directory)
    for module in config.plugins:
        try:
            REGISTRY.load_module(module)
        except Exception as error:  # a plugin that fails to import is a config error
            reason = f"cannot import: {type(error).__name__}: {error}"
            raise ConfigError([Problem(f"plugins: {module}", reason)]) from None


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def check_against_config(
    tests: Sequence[TestCase],
    config: ConfigModel,
    suite_hooks: Sequence[SuiteHooks] = (),
    datasets: Sequence[Dataset] = (),
) -> tuple[list[Problem], list[str]]:
    """What ``assertly validate`` checks against the config: (problems, warnings).

    Problems: a ``setup``/``cleanup`` hook the config does not name (such a test would end
    ``error``), in a test or a suite (``suite_hooks``: those of dataset suites; a listed
    test's suite is checked through its tests). Warnings: an agent with no target in the
    config (``--target`` can still run it) and a ``skip_if`` fact declared neither in the
    config nor in the environment (treated as false). Each warning is given once. Also a
    problem: a model-graded assertion (``llm-rubric``) with no judge to ask (neither the
    config's ``judge:`` nor its own base_url and model).
    """
    problems: list[Problem] = []
    agents: dict[str, None] = {}  # in order of first use
    facts: dict[str, str] = {}  # undeclared fact -> the first test that uses it
    known = ", ".join(config.hooks) or "none"

    def check(names: Iterable[str], where: str) -> None:
        for name in names:
            if name not in config.hooks:
                hint = _did_you_mean(name, config.hooks)
                message = f"unknown hook '{name}'{hint} (hooks in config: {known})"
                problems.append(Problem(where, message))

    suites: dict[str, SuiteHooks] = {hooks.key: hooks for hooks in suite_hooks}
    for test in tests:
        if test.suite_hooks is not None:
            suites.setdefault(test.suite_hooks.key, test.suite_hooks)
        where = _test_where(test)
        for kind, names in (("setup", test.setup), ("cleanup", test.cleanup)):
            check(names, f"{where}: {kind}")
        if test.agent not in config.agents and test.agent not in config.matrix:
            agents.setdefault(test.agent)  # (a matrix names every target of its agents)
        fact = test.skip_if
        if fact and fact not in config.facts and fact not in os.environ:
            facts.setdefault(fact, where)
        if config.judge is None and _needs_judge([test.expectations()]):
            problems.append(Problem(where, _NO_JUDGE))
    problems += simulator_problems(tests, config, datasets)
    if config.judge is None:
        for dataset in datasets:
            if _needs_judge([dataset.checks]):
                problems.append(Problem(f"{dataset.file}: suite {dataset.suite}", _NO_JUDGE))
    for hooks in suites.values():
        where = hooks.where or hooks.key
        suite = hooks.key.rsplit("::", 1)[-1]
        check(hooks.setup, f"{where}: suite {suite}: setup")
        check(hooks.cleanup, f"{where}: suite {suite}: cleanup")
    warnings = [
        f"no target for agent '{agent}'{_did_you_mean(agent, config.agents)} "
        f"({config_read(config)}); map it under agents: in the config, or pass --target"
        for agent in agents
    ]
    warnings += [
        f"fact '{fact}' is not declared{_did_you_mean(fact, config.facts)}; treated as false "
        f"(skip_if of {where})"
        for fact, where in facts.items()
    ]
    return problems, warnings


_NO_JUDGE = (
    "llm-rubric needs a judge model: add judge: {base_url: …, model: …} to the config "
    "(or base_url and model to the assertion's config:)"
)


_NO_SIMULATOR = (
    "simulated_user needs a model to play the user: add simulator: {base_url: …, model: …} "
    "(or judge:, which it uses by default) to the config"
)


def simulator_problems(
    tests: Iterable[TestCase], config: ConfigModel, datasets: Sequence[Dataset] = ()
) -> list[Problem]:
    """A simulated user with no model to play it (no ``simulator:`` and no ``judge:``).

    ``validate`` and ``run`` refuse it up front (exit 2), each test and dataset line named
    where it is, rather than end every such trial ``error``. A dataset's lines are scanned
    only then (none is when the config has a model).
    """
    if config.simulator is not None or config.judge is not None:
        return []
    problems = []
    for test in tests:
        if test.conversation is not None and test.conversation.simulated_user is not None:
            problems.append(Problem(_test_where(test), _NO_SIMULATOR))
    for dataset in datasets:
        problems += [Problem(where, _NO_SIMULATOR) for where in dataset.simulated_lines()]
    return problems


def _test_where(test: TestCase) -> str:
    return f"{test.file}:{test.line}: {test.id}" if test.line else f"{test.file}: {test.id}"


def _needs_judge(checks: Iterable[Iterable[Any]]) -> bool:
    """Whether a model-graded assertion among ``checks`` relies on the config's ``judge:``."""
    return any(expectation.judged == "config" for group in checks for expectation in group)
