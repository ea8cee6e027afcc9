"""Turn a target spec into a target.

Specs: ``cmd:…``, ``http(s)://…``, ``py:module:function``, ``fixtures:FILE``, or a config
mapping.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import TargetError
from ._base import Target
from ._command import CommandTarget
from ._fixtures import FixtureTarget
from ._http import HttpTarget
from ._python import PythonTarget

__all__ = ["make_target"]


def make_target(spec: Any, *, secrets: set[str], concurrency: int = 64) -> Target:
    """Build a target from a CLI spec string or a config entry.

    Raises:
        TargetError: The spec is not one of the known forms or cannot be set up.
    """
    if isinstance(spec, str):
        if spec.startswith("cmd:"):
            return CommandTarget(spec[4:])
        if spec.startswith(("http://", "https://")):
            return HttpTarget(spec, secrets=secrets, concurrency=concurrency)
        if spec.startswith("py:"):
            return PythonTarget(spec[3:])
        if spec.startswith("fixtures:"):
            return FixtureTarget(spec[9:])
        raise TargetError(
            f"unknown target {spec!r}: use cmd:<command>, http(s)://…, py:module:function "
            "or fixtures:<file.jsonl>"
        )
    url = getattr(spec, "url", None)
    if url is not None:
        return HttpTarget(
            url,
            headers=spec.headers,
            retries=spec.retries,
            secrets=secrets,
            concurrency=concurrency,
            timeout_s=spec.timeout_s,
        )
    command = getattr(spec, "command", None)
    if command is not None:
        return CommandTarget(
            command, shell=spec.shell, env=spec.env, pass_env=spec.pass_env, cwd=spec.cwd
        )
    raise TargetError(f"cannot make a target from {spec!r}")
