"""What produces the response: commands, HTTP endpoints, Python functions, recorded fixtures."""

from ._base import Target, TargetResponse
from ._command import CommandTarget
from ._fixtures import FixtureTarget
from ._http import HttpTarget
from ._python import PythonTarget
from ._spec import make_target

__all__ = [
    "CommandTarget",
    "FixtureTarget",
    "HttpTarget",
    "PythonTarget",
    "Target",
    "TargetResponse",
    "make_target",
]
