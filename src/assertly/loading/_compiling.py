"""Compiling a file's expectations, shared by every file of one load.

`LoadContext` holds what the files of one load share (the project directory, the config's
shape and judge rules, compiled expectations); `compile_checks` compiles a place's ``expect``
and ``assertions`` and names each problem at its line in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from .._exceptions import ConfigError, Problem
from ..engine import Expectation
from ..engine import compile as compile_expectation
from ..engine.graded._judging import FileJudgeRules
from ._problems import Label, key_parts
from ._problems import located as _located
from ._source import Key, Source

__all__ = ["LoadContext", "compile_checks"]


class LoadContext:
    """What every file of one load shares: the project directory and compiled expectations.

    Generated suites repeat one assertion list in thousands of tests; an `Expectation` is
    immutable, so equal specs share one (compiling a 10-assertion list costs ~0.3 ms).
    """

    def __init__(
        self,
        sensitive_prefixes: Sequence[str] | None,
        project_dir: Path,
        shape: dict[str, str] | None = None,
        judge_rules: FileJudgeRules | None = None,
    ) -> None:
        self.sensitive_prefixes = sensitive_prefixes
        self.project_dir = project_dir
        self.shape = shape or {}  # the config's: every file's default
        # Test files never choose their judge's endpoint or key themselves (the config does).
        self.judge_rules = judge_rules or FileJudgeRules()
        self._compiled: dict[bytes, Expectation] = {}

    def compile(
        self,
        spec: Any,
        *,
        threshold: float | None,
        location: str,
        shape: dict[str, str] | None = None,
    ) -> Expectation:
        """The compiled expectation of ``spec``.

        Raises:
            ConfigError: The spec is invalid (problems located relative to ``location``).
        """
        try:
            # 1, 1.0 and true stay distinct; sorted keys make equal dicts equal.
            key = orjson.dumps([location, threshold, spec, shape], option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits: no sharing
            key = None
        found = self._compiled.get(key) if key is not None else None
        if found is None:
            found = compile_expectation(
                spec,
                threshold=threshold,
                sensitive_prefixes=self.sensitive_prefixes,
                shape=shape or None,
                location=location,
                judge_rules=self.judge_rules,
            )
            if key is not None:
                self._compiled[key] = found
        return found


def compile_checks(
    expect: dict[str, Any] | None,
    assertions: list[Any] | None,
    threshold: float | None,
    source: Source,
    key: Key,
    context: LoadContext,
    *,
    label: Label | None = None,
    shape: dict[str, str] | None = None,
    typed_key: str = "assertions",
) -> tuple[list[Expectation], list[Problem]]:
    """The compiled ``expect`` and ``assertions`` (``typed_key`` names the latter in problems).

    Each problem is named at its own line under ``key`` (``label``: the test it belongs to).
    """
    checks: list[Expectation] = []
    problems: list[Problem] = []
    for name, spec in (("expect", expect), (typed_key, assertions)):
        if spec is None:
            continue
        try:
            checks.append(
                context.compile(
                    spec,
                    threshold=threshold if name != "expect" else None,
                    location=name,
                    shape=shape if name == "expect" else None,  # only the expect dict reads it
                )
            )
        except ConfigError as error:
            for problem in error.problems:
                parts = key_parts(problem.location)
                problems.append(Problem(_located(source, (*key, *parts), label), problem.message))
    return checks, problems
