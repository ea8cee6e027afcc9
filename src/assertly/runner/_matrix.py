"""Several targets in one run: which labels a test runs under, and what answers each.

A matrix comes from the command line (``--target LABEL=SPEC``, repeated: every agent of the
run is answered by each labelled target in turn) or from the config (``matrix:``, per agent:
a project with two agents varies one of them). The command line wins over the config, as a
bare ``--target`` wins over ``agents:``. The first label is the base every other one is
compared with (docs/decisions.md, "Matrix runs").

A SPEC names an agent of ``agents:`` or is a target spec. A named agent runs in the config
file's directory (where its relative paths are); a spec given on the command line runs in the
current directory, one written in the config in the config's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, Problem, TargetError
from ..loading import ConfigModel, TestCase
from ..targets import parse_spec
from ._options import RunOptions

__all__ = ["Matrix", "TargetSpec", "build_matrix"]

# A target's spec and the directory it runs in (None: the current one).
TargetSpec = tuple[Any, Path | None]


@dataclass(slots=True)
class Matrix:
    """The labels of a matrix run and the target each label gives each agent.

    Attributes:
        labels: Every label, in order; the first is the base of comparisons.
        specs: Agent -> label -> what answers it. The agent ``None`` is every agent (the
            command line's ``--target LABEL=SPEC``).
    """

    labels: tuple[str, ...]
    specs: dict[str | None, dict[str, TargetSpec]] = field(default_factory=dict)

    def labels_of(self, agent: str) -> tuple[str, ...]:
        """The labels a test of ``agent`` runs under; none: it runs once, unlabelled."""
        return self.labels if None in self.specs or agent in self.specs else ()

    def spec_of(self, agent: str, label: str) -> TargetSpec | None:
        """What answers ``agent`` under ``label``; None when the matrix does not vary it."""
        chosen = self.specs.get(None) or self.specs.get(agent)
        return None if chosen is None else chosen.get(label)

    def cells(self, test: TestCase) -> Iterator[TestCase]:
        """``test`` once per label of its agent, or itself when the matrix leaves it alone."""
        labels = self.labels_of(test.agent)
        if not labels:
            yield test
            return
        for label in labels:
            yield test.with_target(label)


def _resolved(spec: Any, config: ConfigModel, here: Path | None) -> TargetSpec:
    """A named agent's spec (run in the config's directory), else ``spec`` run in ``here``."""
    if isinstance(spec, str) and spec in config.agents:
        return config.agents[spec], config.directory
    return spec, here


def _command_line(targets: Mapping[str, str], config: ConfigModel) -> Matrix:
    """``--target LABEL=SPEC``: each label answers every agent.

    Raises:
        ConfigError: A SPEC that names neither an agent of the config nor a kind of target.
    """
    problems: list[Problem] = []
    specs: dict[str, TargetSpec] = {}
    for label, spec in targets.items():
        resolved = _resolved(spec, config, None)
        if resolved[1] is None:  # not an agent's name: a spec, which must name its kind
            try:
                parse_spec(spec)
            except TargetError as error:
                known = ", ".join(config.agents) or "none"
                problems.append(
                    Problem(
                        f"--target {label}={spec}",
                        f"{error}; nor is it an agent of the config (agents: {known})",
                    )
                )
        specs[label] = resolved
    if problems:
        raise ConfigError(problems)
    return Matrix(tuple(targets), {None: specs})


def build_matrix(options: RunOptions, config: ConfigModel) -> Matrix | None:
    """The run's matrix, or None for a run of one target per agent.

    Raises:
        ConfigError: A ``--target LABEL=SPEC`` that names nothing runnable.
    """
    if options.targets:
        return _command_line(options.targets, config)
    if options.target is not None or not config.matrix:
        # A bare --target answers every agent, the matrix of the config included.
        return None
    specs: dict[str | None, dict[str, TargetSpec]] = {}
    labels: tuple[str, ...] = ()
    for agent, targets in config.matrix.items():
        labels = labels or tuple(targets)  # `load_config` checked every agent has the same
        specs[agent] = {
            label: _resolved(spec, config, config.directory) for label, spec in targets.items()
        }
    return Matrix(labels, specs)
