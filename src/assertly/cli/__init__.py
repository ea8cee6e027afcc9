"""The ``assertly`` command line: one module per command group, `main` the entry point."""

from ._main import main

__all__ = ["main"]
