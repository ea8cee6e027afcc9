"""What produces the response: commands, HTTP endpoints, Python functions, recorded fixtures.

Every target answers ``await target.call(TargetRequest(input, timeout_s))`` with a
`TargetResponse`, and declares what the runner needs to know (``recorded``, ``timeout_s``,
``start``); `parse_spec` is the one reader of target specs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attributes
from ._base import BaseTarget, Target, TargetRequest, TargetResponse
from ._command import CommandTarget
from ._spec import TargetSpec, make_target, parse_spec

if TYPE_CHECKING:
    from ._fixtures import FixtureTarget
    from ._http import HttpTarget
    from ._python import PythonTarget

__all__ = [
    "BaseTarget",
    "CommandTarget",
    "FixtureTarget",
    "HttpTarget",
    "PythonTarget",
    "Target",
    "TargetRequest",
    "TargetResponse",
    "TargetSpec",
    "make_target",
    "parse_spec",
]

# The other kinds are imported when first named (`make_target` imports the one a spec needs).
_HOMES = {"FixtureTarget": "._fixtures", "HttpTarget": "._http", "PythonTarget": "._python"}

__getattr__ = attributes(__name__, _HOMES)
