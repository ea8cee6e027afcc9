"""Exceptions raised by assertly.

The hierarchy::

    AssertlyError                 base of everything assertly raises on purpose
    ├── ConfigError               an expectation, test file or config is invalid (exit code 2)
    ├── TargetError               the agent under test could not be called or answered badly
    └── StoreError                the run store could not be read or written

A `ConfigError` carries every problem found, not only the first, so a user fixes a file in
one pass. Failures *inside* a check (a custom assertion raising, a missing metric) are never
raised: they become results with the outcome ``error``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["AssertlyError", "ConfigError", "Problem", "StoreError", "TargetError"]


class AssertlyError(Exception):
    """Base class of every exception assertly raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an expectation or file.

    Attributes:
        location: Where the problem is: a key path such as ``expect.one_of[1].status`` and,
            once the loader knows it, the file, line and test id in front of it.
        message: What is wrong and, where possible, what would be right.
    """

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ConfigError(AssertlyError):
    """An expectation, test file or configuration is invalid.

    Attributes:
        problems: Every problem found, in the order found.
        title: What was invalid (``invalid expectation``, ``invalid test file`` …).
    """

    def __init__(
        self, problems: Iterable[Problem], *, title: str = "invalid configuration"
    ) -> None:
        self.problems: list[Problem] = list(problems)
        self.title = title
        super().__init__(self._render())

    def _render(self) -> str:
        if len(self.problems) == 1:
            return f"{self.title}: {self.problems[0]}"
        lines = [f"{self.title}: {len(self.problems)} problems"]
        lines.extend(f"  - {problem}" for problem in self.problems)
        return "\n".join(lines)


class TargetError(AssertlyError):
    """The agent under test could not be called, crashed, timed out or answered badly."""


class StoreError(AssertlyError):
    """The run store could not be opened, read or written."""
