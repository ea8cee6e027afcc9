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
