"""assertly: exact, fast verdicts on AI agent and LLM responses.

Write what a good response looks like once (an expect dict or a list of typed assertions),
compile it, and check every response against it::

    import assertly

    expectation = assertly.compile({"status": "success", "results_min": 1})
    result = expectation.check({"status": "success", "results": [{"file": "a.md"}]})
    assert result.passed
"""

from ._api import RunResult, arun, run
from ._assert import assert_response
from ._exceptions import AssertlyError, ConfigError, Problem, StoreError, TargetError
from .engine import (
    AssertionResult,
    CheckContext,
    CheckResult,
    Expectation,
    Outcome,
    Registry,
    Response,
    assertion,
    check,
    compile,
)
from .engine._registry import REGISTRY as _REGISTRY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .targets._base import TargetResponse

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `TargetResponse` lives with the targets, whose package imports the HTTP client; it is
    # loaded when first asked for, so `import assertly` stays light.
    if name == "TargetResponse":
        from .targets._base import TargetResponse

        return TargetResponse
    raise AttributeError(f"module 'assertly' has no attribute {name!r}")


def load_plugins(modules: list[str]) -> None:
    """Import user modules of custom assertions (decorated functions or ``get_assert``)."""
    for module in modules:
        _REGISTRY.load_module(module)


__all__ = [
    "AssertionResult",
    "AssertlyError",
    "CheckContext",
    "CheckResult",
    "ConfigError",
    "Expectation",
    "Outcome",
    "Problem",
    "Registry",
    "Response",
    "RunResult",
    "StoreError",
    "TargetError",
    "TargetResponse",
    "__version__",
    "arun",
    "assert_response",
    "assertion",
    "check",
    "compile",
    "load_plugins",
    "run",
]
