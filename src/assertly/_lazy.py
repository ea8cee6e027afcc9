"""A package's names imported on first use (PEP 562), so that importing the package stays light.

``assertly run`` of a plain suite should load only the code it runs (tests/test_startup_imports.py):
a package whose ``__init__`` re-exports names from heavy or seldom-used modules lists them in
a table and lets `attributes` import each module when one of its names is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["attributes"]


def attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``homes`` from its module.

    Args:
        package: The package's ``__name__``.
        homes: Name -> the relative module that defines it (``"._postgres"``).
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home, package), name)

    return __getattr__
