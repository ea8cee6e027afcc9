"""Turn a target spec into a target.

Specs: ``cmd:…``, ``http(s)://…``, ``py:module:function``, ``fixtures:FILE``, or a config
mapping.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._exceptions import TargetError
from .._secrets import environment_secrets
from ._base import Target
from ._command import CommandTarget
from ._fixtures import FixtureTarget
from ._http import HttpTarget, expand_secrets
from ._python import PythonTarget

__all__ = ["make_target", "secret_values"]


def make_target(
    spec: Any, *, secrets: set[str], concurrency: int = 64, base_dir: Path | None = None
) -> Target:
    """Build a target from a CLI spec string or a config entry.

    Args:
        spec: The spec string, or a config target model.
        secrets: Collects secret values (for redaction).
        concurrency: Connections an HTTP target may keep open.
        base_dir: What relative paths are relative to (the config file's directory for a
            target from the config): a command runs there (or in its ``cwd`` taken relative
            to it) and a fixtures file is found there. None: the current directory.

    Raises:
        TargetError: The spec is not one of the known forms or cannot be set up.
    """
    if isinstance(spec, str):
        if spec.startswith("cmd:"):
            return CommandTarget(spec[4:], cwd=_within(base_dir, None))
        if spec.startswith(("http://", "https://")):
            secrets.update(environment_secrets(["url"], {"url": spec}) - {spec})
            return HttpTarget(spec, secrets=secrets, concurrency=concurrency)
        if spec.startswith("py:"):
            return PythonTarget(spec[3:])
        if spec.startswith("fixtures:"):
            return FixtureTarget(base_dir / spec[9:] if base_dir else spec[9:])
        raise TargetError(
            f"unknown target {spec!r}: use cmd:<command>, http(s)://…, py:module:function "
            "or fixtures:<file.jsonl>"
        )
    url = getattr(spec, "url", None)
    if url is not None:
        secrets.update(environment_secrets(["url"], {"url": url}) - {url})
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
        secrets.update(secret_values(spec.pass_env))
        # The config's env: values: ${VAR} read from the environment (a secret, as in a
        # header), and values under secret names or holding a URL's password.
        env = expand_secrets(spec.env, secrets, what="env")
        secrets.update(environment_secrets(env, env))
        return CommandTarget(
            command,
            shell=spec.shell,
            env=env,
            pass_env=spec.pass_env,
            cwd=_within(base_dir, spec.cwd),
        )
    raise TargetError(f"cannot make a target from {spec!r}")


def secret_values(names: Iterable[str]) -> set[str]:
    """The secrets among the named variables of assertly's environment (for ``pass_env``).

    ``OPENAI_API_KEY``, ``GITHUB_TOKEN`` or ``DB_PASS`` passed to a command agent is redacted
    from every report, and so is the password in ``DATABASE_URL``; ``MODEL_NAME`` is not (its
    value may rightly appear in expectations).
    """
    return environment_secrets(names, os.environ)


def _within(base_dir: Path | None, cwd: str | None) -> str | None:
    """The working directory of a command: ``cwd`` taken relative to ``base_dir``."""
    if base_dir is None:
        return cwd
    return str(base_dir / cwd) if cwd else str(base_dir)
