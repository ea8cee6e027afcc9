"""Read a JSON or YAML file into plain data plus a map from key paths to line and column.

Every error the loader reports names ``file:line:col``. YAML is read with the safe C loader
(never constructing arbitrary objects); positions come from the composed node tree. JSON is
parsed by orjson; positions are taken from the same document composed as YAML (JSON is valid
YAML in practice), and simply omitted when that fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, Problem
from ..engine._values import loads

__all__ = ["Source", "read_source"]

Key = tuple[str | int, ...]

MAX_FILE_BYTES = 64 * 1024 * 1024


class Source:
    """A parsed file: its data and where each key path was written.

    Attributes:
        path: The file.
        data: The parsed content.
    """

    __slots__ = ("_positions", "data", "path")

    def __init__(self, path: Path, data: Any, positions: dict[Key, tuple[int, int]]) -> None:
        self.path = path
        self.data = data
        self._positions = positions

    def where(self, key: Key) -> str:
        """``file:line:col`` of the deepest written part of ``key`` (``file`` if unknown)."""
        probe = tuple(key)
        while probe:
            position = self._positions.get(probe)
            if position is not None:
                return f"{self.path}:{position[0]}:{position[1]}"
            probe = probe[:-1]
        return str(self.path)

    def line(self, key: Key) -> int | None:
        """The line where ``key`` was written, if known."""
        probe = tuple(key)
        while probe:
            position = self._positions.get(probe)
            if position is not None:
                return position[0]
            probe = probe[:-1]
        return None


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _positions(node: Any) -> dict[Key, tuple[int, int]]:
    """Walk a composed YAML node tree, recording where each mapping key and item starts."""
    import yaml

    found: dict[Key, tuple[int, int]] = {}
    stack: list[tuple[Any, Key]] = [(node, ())]
    while stack:
        current, key = stack.pop()
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                name = key_node.value
                child = (*key, name)
                mark = key_node.start_mark
                found.setdefault(child, (mark.line + 1, mark.column + 1))
                stack.append((value_node, child))
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                child = (*key, index)
                mark = item.start_mark
                found.setdefault(child, (mark.line + 1, mark.column + 1))
                stack.append((item, child))
    return found


def _load_yaml(text: str, path: Path) -> tuple[Any, dict[Key, tuple[int, int]]]:
    import yaml

    loader = _yaml_loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        _check_duplicate_keys(node, path)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        reason = error.problem or error.context or "invalid YAML"
        raise ConfigError([Problem(where, f"invalid YAML: {reason}")]) from None
    except yaml.YAMLError as error:
        raise ConfigError([Problem(str(path), f"invalid YAML: {error}")]) from None
    finally:
        loader.dispose()
    return data, _positions(node)


def _check_duplicate_keys(node: Any, path: Path) -> None:
    """A key written twice silently loses the first value in YAML and JSON; refuse it."""
    import yaml

    problems = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, value_node in current.value:
                name = key_node.value
                if isinstance(key_node, yaml.ScalarNode) and name in seen:
                    mark = key_node.start_mark
                    first = seen[name].start_mark
                    problems.append(
                        Problem(
                            f"{path}:{mark.line + 1}:{mark.column + 1}",
                            f"duplicate key '{name}' (first written on line {first.line + 1})",
                        )
                    )
                seen.setdefault(name, key_node)
                stack.append(value_node)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
    if problems:
        raise ConfigError(problems)


def _load_json(text: str, path: Path) -> tuple[Any, dict[Key, tuple[int, int]]]:
    try:
        data = loads(text)
    except json.JSONDecodeError as error:
        where = f"{path}:{error.lineno}:{error.colno}"
        raise ConfigError([Problem(where, f"invalid JSON: {error.msg}")]) from None
    try:
        _, positions = _load_yaml(text, path)
    except ConfigError as error:
        if any("duplicate key" in problem.message for problem in error.problems):
            raise
        positions = {}
    return data, positions


def read_source(path: Path) -> Source:
    """Read and parse a JSON or YAML file.

    Raises:
        ConfigError: Unreadable, not UTF-8, empty, too large, or not valid JSON/YAML — with
            ``file:line:col`` where the parser knows it.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(
                [
                    Problem(
                        str(path),
                        f"file is {size} bytes; test files are limited to {MAX_FILE_BYTES} bytes",
                    )
                ]
            )
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError([Problem(str(path), f"cannot read file: {error.strerror}")]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(
            [Problem(f"{path}:{line}", f"file is not UTF-8 (byte 0x{raw[error.start]:02x})")]
        ) from None
    if not text.strip():
        raise ConfigError([Problem(str(path), "file is empty")])
    if path.suffix.lower() == ".json":
        data, positions = _load_json(text, path)
    else:
        data, positions = _load_yaml(text, path)
    return Source(path, data, positions)
