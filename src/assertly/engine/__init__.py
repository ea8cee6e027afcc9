"""The assertion engine: pure, no I/O, no knowledge of files, targets or runs.

The built-in assertions (``engine.expect``, ``engine.typed``, listed in ``_manifest``) are
imported by the global registry the first time it looks a name up.
"""

from ._compile import Expectation, check, compile
from ._context import CheckContext
from ._registry import REGISTRY, Registry, assertion
from ._response import Response
from ._result import AssertionResult, CheckResult, Outcome

__all__ = [
    "REGISTRY",
    "AssertionResult",
    "CheckContext",
    "CheckResult",
    "Expectation",
    "Outcome",
    "Registry",
    "Response",
    "assertion",
    "check",
    "compile",
]
