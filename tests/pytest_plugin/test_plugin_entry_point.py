"""The ``pytest11`` entry point names a module on which pytest finds every hook and fixture.

The plugin is a package; pytest looks only at the attributes of the module the entry point
names, so a hook or fixture defined in a submodule and not imported there would silently
never run.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points
from types import ModuleType

import pytest

import assertly.pytest_plugin


def _entry_point_module() -> ModuleType:
    (point,) = [point for point in entry_points(group="pytest11") if point.name == "assertly"]
    module = point.load()
    assert isinstance(module, ModuleType)
    return module


def _submodules() -> list[ModuleType]:
    package = assertly.pytest_plugin
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]


def test_the_entry_point_names_the_plugin_package() -> None:
    assert _entry_point_module() is assertly.pytest_plugin


def test_every_hook_of_the_package_is_on_the_entry_point_module() -> None:
    module = _entry_point_module()
    defined = {
        name: value
        for submodule in _submodules()
        for name, value in vars(submodule).items()
        if name.startswith("pytest_") and callable(value) and value.__module__ == submodule.__name__
    }
    assert {
        "pytest_addoption",
        "pytest_configure",
        "pytest_collect_file",
        "pytest_sessionfinish",
    } <= set(defined)
    for name, hook in defined.items():
        assert getattr(module, name, None) is hook, f"{name} is not exported by {module.__name__}"


def test_every_fixture_of_the_package_is_on_the_entry_point_module() -> None:
    module = _entry_point_module()
    fixtures = {
        name: value
        for submodule in _submodules()
        for name, value in vars(submodule).items()
        if type(value).__name__ == "FixtureFunctionDefinition"
    }
    assert set(fixtures) == {"assertly_target", "assertly_check"}
    for name, fixture in fixtures.items():
        assert getattr(module, name, None) is fixture


def test_pytest_registers_the_hooks(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("assertly")
    assert plugin is assertly.pytest_plugin
    callers = pytestconfig.pluginmanager.get_hookcallers(plugin) or []
    names = {caller.name for caller in callers}
    assert {"pytest_addoption", "pytest_collect_file", "pytest_terminal_summary"} <= names
