"""Turn a target spec into a target.

Specs: ``cmd:…``, ``http(s)://…``, ``py:module:function``, ``fixtures:FILE``, or a config
mapping. `parse_spec` is the one place that knows these forms: ``--target`` on the command
line and in the pytest plugin, the config's agents, and the runner's questions about a target
it has not built yet (does it call anything?) all go through it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._exceptions import TargetError
from .._secrets import environment_secrets
from ._base import Target
from ._command import CommandTarget

__all__ = ["TargetSpec", "make_target", "parse_spec", "secret_values"]

Kind = Literal["cmd", "http", "py", "fixtures"]

# Each spec prefix, the kind of target it names, and whether the prefix is part of the value
# (a URL keeps its scheme).
_PREFIXES: tuple[tuple[str, Kind, bool], ...] = (
    ("cmd:", "cmd", False),
    ("http://", "http", True),
    ("https://", "http", True),
    ("py:", "py", False),
    ("fixtures:", "fixtures", False),
)

UNKNOWN = "use cmd:<command>, http(s)://…, py:module:function or fixtures:<file.jsonl>"


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """What a target spec names, before anything is built.

    Attributes:
        kind: ``cmd``, ``http``, ``py`` or ``fixtures``.
        value: For a spec string, what follows its prefix (a URL whole); for a config entry,
            the entry.
    """

    kind: Kind
    value: Any

    @property
    def recorded(self) -> bool:
        """Its target answers from recorded responses, without a call (`Target.recorded`)."""
        return self.kind == "fixtures"


def parse_spec(spec: Any) -> TargetSpec:
    """Read a target spec: a string (``--target``, an agent in the config) or a config entry.

    Raises:
        TargetError: The spec is none of the known forms.
    """
    if isinstance(spec, str):
        for prefix, kind, whole in _PREFIXES:
            if spec.startswith(prefix):
                return TargetSpec(kind, spec if whole else spec[len(prefix) :])
        raise TargetError(f"unknown target {spec!r}: {UNKNOWN}")
    if getattr(spec, "url", None) is not None:
        return TargetSpec("http", spec)
    if getattr(spec, "command", None) is not None:
        return TargetSpec("cmd", spec)
    raise TargetError(f"cannot make a target from {spec!r}")


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
    parsed = parse_spec(spec)
    value = parsed.value
    # Each kind's module is imported when a spec names it: a run of commands loads neither
    # the HTTP client's code nor the Python worker's.
    if isinstance(value, str):
        if parsed.kind == "cmd":
            return CommandTarget(value, cwd=_within(base_dir, None))
        if parsed.kind == "http":
            from ._http import HttpTarget

            secrets.update(environment_secrets(["url"], {"url": value}) - {value})
            return HttpTarget(value, secrets=secrets, concurrency=concurrency)
        if parsed.kind == "py":
            from ._python import PythonTarget

            return PythonTarget(value)
        from ._fixtures import FixtureTarget

        return FixtureTarget(base_dir / value if base_dir else value)
    if parsed.kind == "http":
        from ._http import HttpTarget

        url = value.url
        secrets.update(environment_secrets(["url"], {"url": url}) - {url})
        return HttpTarget(
            url,
            headers=value.headers,
            retries=value.retries,
            secrets=secrets,
            concurrency=concurrency,
            timeout_s=value.timeout_s,
        )
    secrets.update(secret_values(value.pass_env))
    # The config's env: values: ${VAR} read from the environment (a secret, as in a
    # header), and values under secret names or holding a URL's password.
    from ._http import expand_secrets

    env = expand_secrets(value.env, secrets, what="env")
    secrets.update(environment_secrets(env, env))
    return CommandTarget(
        value.command,
        shell=value.shell,
        env=env,
        pass_env=value.pass_env,
        cwd=_within(base_dir, value.cwd),
    )


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
