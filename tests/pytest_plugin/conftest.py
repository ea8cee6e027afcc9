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
# (PyYAML's ``_yaml``) is not initialised twice, so a second import of ``yaml`` would pair new
# Python classes with the old extension ("could not determine a constructor for the tag
# None"). Importing what the plugin uses here keeps one copy for the whole session.
import yaml  # noqa: E402, F401

import assertly.loading  # noqa: E402, F401
import assertly.reports  # noqa: E402, F401
import assertly.runner  # noqa: E402, F401
import assertly.store  # noqa: E402, F401
import assertly.targets  # noqa: E402, F401
