"""pytester drives the plugin in sample projects.

``pytest_plugins = ["pytester"]`` is refused in a conftest below the rootdir ("Defining
'pytest_plugins' in a non-top-level conftest is no longer supported") when the whole suite
runs, so the plugin is imported here instead: the same thing, for every test that asks for
the ``pytester`` fixture.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


# pytester's in-process runs drop every module first imported during the run. A C extension
# (PyYAML's ``_yaml``) is not initialised twice, and the built-in assertions register
# themselves once, so a second import would break ("could not determine a constructor for the
# tag None", "assertion 'levenshtein' is already registered"). Importing what the plugin uses
# here keeps one copy of each for the whole session (and saves re-importing hypothesis, whose
# pytest plugin imports it at the end of every run, two seconds a time).
import hypothesis  # noqa: E402, F401
import yaml  # noqa: E402, F401

import assertly.loading  # noqa: E402
import assertly.reports  # noqa: E402
import assertly.runner  # noqa: E402
import assertly.store  # noqa: E402
import assertly.targets  # noqa: E402, F401
from assertly.engine import REGISTRY  # noqa: E402

REGISTRY.names("expect")
REGISTRY.names("typed")
