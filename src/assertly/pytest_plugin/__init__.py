"""assertly's pytest plugin: agent test files and workflow eval sections as pytest items.

Installed with assertly (entry point ``pytest11``, name ``assertly``); disable it with
``-p no:assertly``. Under the test paths it collects:

* agent test files (``*.tests.yaml``, ``*.tests.yml``, ``*.tests.json``): one item per test,
  node id ``FILE::SUITE::ID``;
* workflow YAML files whose top-level ``eval:`` section has ``cases``: one item per case,
  node id ``FILE::eval::CASE``. Other YAML files are left alone.

Items run through the runner (`Runner.run_trial`, `Runner.run_eval`) with the targets of the
project config (``assertly.yaml`` or ``[tool.assertly]``), on one event loop per session that
lives on a helper thread, so targets keep their connections between items and test code may
call them from sync or async tests alike (the ``assertly_target`` fixture).

Tags become markers (registered on the fly), priorities become ``priority(level=…)`` and
``priority_<level>`` markers, every item has the ``assertly`` marker, ``skip_if`` facts become
skips, and a test's trials run inside its item (verdict by the config's ``pass_threshold``).
``--assertly-store`` writes every trial to a run store so ``assertly report`` renders the
session; ``--assertly-report`` writes a JSON, JUnit XML, Markdown or HTML report at the end.
"""

# This module is what the ``pytest11`` entry point names: pytest looks for hooks and fixtures
# among its attributes, so every hook and fixture of the package is imported here.
from ._fixtures import TargetCaller, assertly_check, assertly_target
from ._items import (
    AssertlyDatasetItem,
    AssertlyEvalItem,
    AssertlyFile,
    AssertlyLoadErrorItem,
    AssertlySection,
    AssertlyTestItem,
    is_assertly_file,
    pytest_collect_file,
    pytest_collection_finish,
    pytest_runtest_teardown,
)
from ._options import pytest_addoption
from ._reporting import AssertlyFailure, AssertlyWarning
from ._session import (
    pytest_configure,
    pytest_configure_node,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_unconfigure,
)

__all__ = [
    "AssertlyDatasetItem",
    "AssertlyEvalItem",
    "AssertlyFailure",
    "AssertlyFile",
    "AssertlyLoadErrorItem",
    "AssertlySection",
    "AssertlyTestItem",
    "AssertlyWarning",
    "TargetCaller",
    "assertly_check",
    "assertly_target",
    "is_assertly_file",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_runtest_teardown",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_unconfigure",
]
