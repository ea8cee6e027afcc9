"""The project config.

``assertly.yaml`` (or ``.yml``) in the working directory, else ``[tool.assertly]`` in
``pyproject.toml``; defaults when there is neither.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from .._exceptions import ConfigError, Problem
from ._models import ConfigModel
from ._source import read_source

__all__ = ["find_config", "load_config"]


def find_config(directory: Path) -> Path | None:
    """The config file in ``directory``, if any."""
    for name in ("assertly.yaml", "assertly.yml"):
        candidate = directory / name
        if candidate.is_file():
            return candidate
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None
        if "assertly" in data.get("tool", {}):
            return pyproject
    return None


def load_config(path: Path | None) -> ConfigModel:
    """Load and validate the config (every problem reported together).

    Raises:
        ConfigError: The file is unreadable or invalid.
    """
    if path is None:
        return ConfigModel()
    if path.name == "pyproject.toml":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("assertly")
        except tomllib.TOMLDecodeError as error:
            raise ConfigError([Problem(str(path), f"invalid TOML: {error}")]) from None

        def where(key: tuple[str | int, ...]) -> str:
            return f"{path}: [tool.assertly]"  # tomllib keeps no positions
    else:
        source = read_source(path)
        data = source.data
        where = source.where
    if data is None:
        data = {}
    try:
        return ConfigModel.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False):
            dotted = ".".join(str(part) for part in item["loc"])
            if item["type"] == "extra_forbidden":
                message = f"unknown key '{item['loc'][-1]}'"
            else:
                message = f"{item['msg'].lower()}, got {item['input']!r}"
            problems.append(Problem(f"{where(tuple(item['loc']))}: {dotted}", message))
        raise ConfigError(problems) from None
