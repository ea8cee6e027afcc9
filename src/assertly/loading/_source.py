"""Read a JSON or YAML file into plain data plus a map from key paths to line and column.

Every error the loader reports names ``file:line:col``. YAML is read with the safe C loader
(never constructing arbitrary objects); positions come from the composed node tree. JSON is
walked for positions as it is parsed (`_json_source`); a JSON file that needs a problem worded
(invalid, duplicate keys, NaN, too deep) is parsed exactly and composed as YAML for positions
(JSON is valid YAML in practice), which are simply omitted when that fails.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from .._exceptions import ConfigError, Problem
from .._json import loads
from ._json_source import UnusualJSON, depth_exceeds, parse_json_with_positions
from ._yaml import yaml_loader
from ._yaml_plain import NotPlain, build_plain

__all__ = ["MAX_FILE_BYTES", "Positions", "Source", "parse_json", "parse_yaml", "read_source"]

Key = tuple[str | int, ...]


class Positions(Protocol):
    """Where each key path was written: ``get(key) -> (line, column)`` or None."""

    def get(self, key: Key, /) -> tuple[int, int] | None: ...


# Test files are read whole and parsed into Python objects: ~10 s and ~1 GB per 8 MB of YAML
# holding tiny tests. Anything bigger is refused at once (recorded responses belong in a
# fixtures JSONL file, which is indexed, not loaded).
MAX_FILE_BYTES = 8 * 1024 * 1024
# Deeper nesting is refused before any parser or walker recurses into it.
MAX_NESTING = 200
# Nodes that YAML aliases may add to a document once expanded (a "billion laughs" adds 10^9).
MAX_ALIAS_NODES = 1_000_000


class Source:
    """A parsed file: its data and where each key path was written.

    Attributes:
        path: The file.
        data: The parsed content.
    """

    __slots__ = ("_positions", "data", "path")

    def __init__(self, path: Path, data: Any, positions: Positions) -> None:
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


class _Frame:
    """A collection being composed.

    Its node, its key path, the key whose value comes next (a mapping's), its scalar keys
    seen so far, and its weight: nodes in its subtree with every alias expanded.
    """

    __slots__ = ("key", "mapping", "node", "pending", "seen", "weight")

    def __init__(self, node: Any, key: Key, mapping: bool) -> None:
        self.node = node
        self.key = key
        self.mapping = mapping
        self.pending: Any = None
        self.seen: dict[str, Any] = {}
        self.weight = 1


class _Composer:
    """Compose one YAML document from the parser's events, without recursion.

    libyaml's own composer recurses once per nesting level and overflows the C stack (a
    segfault) on deeply nested input, and an alias tree (a "billion laughs") expands
    exponentially in anything that walks it. This composer refuses nesting deeper than
    `MAX_NESTING` and aliases that add more than `MAX_ALIAS_NODES` nodes, and records key
    positions and duplicate keys on the way.
    """

    def __init__(self, loader: Any, where: str) -> None:
        import yaml

        self.scalar_node = yaml.ScalarNode
        self.sequence_node = yaml.SequenceNode
        self.mapping_node = yaml.MappingNode
        self.sequence_start = yaml.SequenceStartEvent
        self.loader = loader
        self.where = where
        self.positions: dict[Key, tuple[int, int]] = {}
        self.duplicates: list[Problem] = []
        self.anchors: dict[str, tuple[Any, _Frame | None]] = {}
        self.stack: list[_Frame] = []
        self.expanded = 0
        self.root: Any = None

    def _fail(self, mark: Any, message: str) -> ConfigError:
        return ConfigError([Problem(f"{self.where}:{mark.line + 1}:{mark.column + 1}", message)])

    def compose(self) -> Any:
        """The root node (None for an empty stream).

        Raises:
            ConfigError: Too deep, too many alias nodes, a recursive or undefined alias.
            yaml.YAMLError: The text is not valid YAML.
        """
        from yaml import events

        scalar_event = events.ScalarEvent
        documents = 0
        while True:
            event = self.loader.get_event()
            kind = type(event)
            if kind is scalar_event:
                self._scalar(event)
            elif kind is events.SequenceEndEvent or kind is events.MappingEndEvent:
                done = self.stack.pop()
                done.node.end_mark = event.end_mark
                self._attach(done.node, done.weight)
            elif kind is events.SequenceStartEvent or kind is events.MappingStartEvent:
                self._start(event)
            elif kind is events.AliasEvent:
                self._alias(event)
            elif kind is events.StreamEndEvent:
                return self.root
            elif kind is events.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self._fail(event.start_mark, "expected one YAML document, found two")

    def _alias(self, event: Any) -> None:
        found = self.anchors.get(event.anchor)
        if found is None:
            raise self._fail(event.start_mark, f"invalid YAML: undefined alias '{event.anchor}'")
        node, frame = found
        if frame is not None and frame in self.stack:
            raise self._fail(event.start_mark, f"invalid YAML: recursive alias '{event.anchor}'")
        weight = frame.weight if frame is not None else 1
        self.expanded += weight
        if self.expanded > MAX_ALIAS_NODES:
            message = f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes"
            raise self._fail(event.start_mark, message)
        self._attach(node, weight)

    def _scalar(self, event: Any) -> None:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(self.scalar_node, event.value, event.implicit)
        node = self.scalar_node(tag, event.value, event.start_mark, event.end_mark, event.style)
        if event.anchor is not None:
            self.anchors[event.anchor] = (node, None)
        self._attach(node, 1)

    def _start(self, event: Any) -> None:
        if len(self.stack) >= MAX_NESTING:
            raise self._fail(event.start_mark, f"nesting deeper than {MAX_NESTING} levels")
        sequence = type(event) is self.sequence_start
        node_class = self.sequence_node if sequence else self.mapping_node
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(node_class, None, event.implicit)
        node = node_class(tag, [], event.start_mark, None, flow_style=event.flow_style)
        frame = _Frame(node, self._child_key(), not sequence)
        if event.anchor is not None:
            self.anchors[event.anchor] = (node, frame)
        self.stack.append(frame)

    def _child_key(self) -> Key:
        """The key path of the next node attached to the open collection."""
        if not self.stack:
            return ()
        parent = self.stack[-1]
        if not parent.mapping:
            return (*parent.key, len(parent.node.value))
        if parent.pending is None or type(parent.pending) is not self.scalar_node:
            return parent.key  # a key, or the value of a complex key: no position of its own
        return (*parent.key, parent.pending.value)

    def _attach(self, node: Any, weight: int) -> None:
        """Add a finished node to the open collection (as a mapping key, value or item)."""
        if not self.stack:
            self.root = node
            return
        parent = self.stack[-1]
        parent.weight += weight
        if not parent.mapping:
            mark = node.start_mark
            where = (mark.line + 1, mark.column + 1)
            self.positions.setdefault((*parent.key, len(parent.node.value)), where)
            parent.node.value.append(node)
            return
        if parent.pending is None:
            parent.pending = node
            return
        key_node, parent.pending = parent.pending, None
        if type(key_node) is not self.scalar_node or key_node.tag != _STR_TAG:
            self._non_string_key(key_node)
        elif type(key_node) is self.scalar_node:
            mark = key_node.start_mark
            where = (mark.line + 1, mark.column + 1)
            self.positions.setdefault((*parent.key, key_node.value), where)
            first = parent.seen.setdefault(key_node.value, key_node)
            if first is not key_node:
                self.duplicates.append(
                    Problem(
                        f"{self.where}:{where[0]}:{where[1]}",
                        f"duplicate key '{key_node.value}' "
                        f"(first written on line {first.start_mark.line + 1})",
                    )
                )
        parent.node.value.append((key_node, node))

    def _non_string_key(self, key_node: Any) -> None:
        """Record a key that JSON cannot hold (a number, boolean, null, list or mapping)."""
        if key_node.tag == _MERGE_TAG:
            return  # `<<: *defaults` merges a mapping in; it is not a key of its own
        mark = key_node.start_mark
        written = key_node.value if type(key_node) is self.scalar_node else "a list or mapping"
        kind = key_node.tag.rsplit(":", 1)[-1] if type(key_node) is self.scalar_node else ""
        detail = f" (read as {kind})" if kind and kind != "str" else ""
        self.duplicates.append(
            Problem(
                f"{self.where}:{mark.line + 1}:{mark.column + 1}",
                f"mapping keys must be strings, got {written!r}{detail}; quote the key",
            )
        )


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def parse_yaml(text: str, where: str) -> tuple[Any, dict[Key, tuple[int, int]]]:
    """Parse YAML safely: plain data, one document, bounded nesting and aliases, unique keys.

    Safe loading only: a tag that would construct an object (``!!python/object``) is invalid.

    Args:
        text: The YAML text.
        where: The file (or other source) named in problems, as ``where:line:col``.

    Returns:
        The data and ``key path -> (line, column)``.

    Raises:
        ConfigError: Invalid or refused YAML, with line and column.
    """
    with _collector_paused():
        try:
            return build_plain(text, MAX_NESTING)
        except NotPlain:
            pass  # read again, exactly: the composer words every problem
        return _parse_exactly(text, where)


def _parse_exactly(text: str, where: str) -> tuple[Any, dict[Key, tuple[int, int]]]:
    import yaml

    try:
        return _parse_yaml(text, where, fast=True)
    except yaml.MarkedYAMLError as error:
        # libyaml refuses flow nesting past 1,000 levels while it scans ahead, before this
        # composer sees the 201st level; PyYAML's own parser gets there and says so clearly.
        if "maximum nesting depth" not in str(error.problem):
            raise _yaml_problem(error, where, text) from None
    except yaml.YAMLError as error:
        raise ConfigError([Problem(where, f"invalid YAML: {error}")]) from None
    try:
        return _parse_yaml(text, where, fast=False)
    except yaml.MarkedYAMLError as error:
        raise _yaml_problem(error, where, text) from None
    except yaml.YAMLError as error:
        raise ConfigError([Problem(where, f"invalid YAML: {error}")]) from None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a file is parsed.

    Parsing allocates a container for every mapping and list and keeps them all, and none is
    ever part of a cycle: each collection the collector ran meanwhile scanned the growing data
    for nothing (a 3 MB file took 4 times as long). It runs again as it did when parsing ends.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _yaml_problem(error: Any, where: str, text: str = "") -> ConfigError:
    mark = error.problem_mark or error.context_mark
    at = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark else where
    reason = error.problem or error.context or "invalid YAML"
    found = text[mark.index : mark.index + 1] if mark is not None and text else ""
    return ConfigError([Problem(at, f"invalid YAML: {_plain(reason, error, found)}")])


def _plain(reason: str, error: Any, found: str) -> str:
    """The parser's reason in plain words, with what to do; the parser's own words otherwise.

    libyaml reports what its state machine expected ("did not find expected key"); a person
    needs to know what is wrong in the file and where the construct began.
    """
    context = error.context_mark
    opened = f" (it starts on line {context.line + 1})" if context is not None else ""
    text = reason.strip()
    if text == "did not find expected ',' or '}'":
        return f"a {{...}} mapping is not closed, or an item in it lacks a comma{opened}"
    if text == "did not find expected ',' or ']'":
        return f"a [...] list is not closed, or an item in it lacks a comma{opened}"
    if text == "mapping values are not allowed in this context":
        return (
            "a ':' that cannot start a key here: is this line indented too far, or does a "
            "plain value contain ': '? (quote such a value)"
        )
    if text == "found unexpected end of stream" and "quoted" in str(error.context or ""):
        return f"a quoted string is not closed{opened}"
    if text == "found a tab character that violates indentation" or (
        text == "found character that cannot start any token" and found == "\t"
    ):
        return "a tab character: YAML indents with spaces, never tabs"
    if text in ("did not find expected key", "did not find expected '-' indicator") or (
        text.startswith("expected <block end>, but found")
    ):
        return f"this line does not line up with the lines above it (check its indentation){opened}"
    if text == "could not find expected ':'":
        return f"a key without ':' after it, or a quote that is not closed{opened}"
    return text


def _parse_yaml(text: str, where: str, *, fast: bool) -> tuple[Any, dict[Key, tuple[int, int]]]:
    loader = yaml_loader(fast=fast)(text)
    try:
        composer = _Composer(loader, where)
        node = composer.compose()
        if composer.duplicates:
            raise ConfigError(composer.duplicates)
        data = None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
    return data, composer.positions


def parse_json(text: str, where: str) -> tuple[Any, Positions]:
    """Parse JSON exactly, refusing duplicate keys, with the position of every key.

    Args:
        text: The JSON text.
        where: The file (or other source) named in problems, as ``where:line:col``.

    Returns:
        The data and where each key path was written.

    Raises:
        ConfigError: Invalid JSON (NaN, a number out of range, too deep …) or a duplicate key.
    """
    try:
        return parse_json_with_positions(text, MAX_NESTING)
    except UnusualJSON:
        pass
    # Something to word precisely (or refuse): parse exactly, and compose it for the positions.
    try:
        data = loads(text)
    except json.JSONDecodeError as error:
        at = f"{where}:{error.lineno}:{error.colno}"
        raise ConfigError([Problem(at, f"invalid JSON: {error.msg}")]) from None
    except ValueError as error:  # NaN/Infinity or too deep, found by the exact decoder
        raise ConfigError([Problem(where, f"invalid JSON: {error}")]) from None
    positions: Positions
    try:
        _, positions = parse_yaml(text, where)
    except ConfigError as error:
        # Duplicate keys and nesting limits apply to JSON too; only YAML's own syntax
        # quibbles (rare in JSON text) cost the positions and nothing else.
        if not all(problem.message.startswith("invalid YAML") for problem in error.problems):
            raise
        if depth_exceeds(data, MAX_NESTING):
            raise ConfigError(
                [Problem(where, f"nesting deeper than {MAX_NESTING} levels")]
            ) from None
        # Without the YAML composer (a character YAML refuses: U+007F, U+FFFE …), duplicate
        # keys are still refused, without a line.
        duplicate = _duplicate_key(text)
        if duplicate is not None:
            raise ConfigError([Problem(where, f"duplicate key {duplicate!r}")]) from None
        positions = {}
    return data, positions


def _duplicate_key(text: str) -> str | None:
    """The first key written twice in one object of JSON ``text``, if any."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.JSONDecoder(object_pairs_hook=pairs).decode(text.strip(" \t\r\n"))
    except (ValueError, RecursionError):  # (read exactly already: cannot happen in practice)
        return None
    return found[0] if found else None


def read_source(path: Path) -> Source:
    """Read and parse a JSON or YAML file.

    Raises:
        ConfigError: Unreadable, not UTF-8, empty, too large, or not valid JSON/YAML — with
            ``file:line:col`` where the parser knows it.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            limit = f"{MAX_FILE_BYTES // (1024 * 1024)} MiB"
            message = f"file is {size:,} bytes; test files are limited to {limit}"
            raise ConfigError([Problem(str(path), message)])
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError([Problem(str(path), f"cannot read file: {error.strerror}")]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - raw.rfind(b"\n", 0, error.start)  # in bytes, from 1
        raise ConfigError(
            [
                Problem(
                    f"{path}:{line}:{column}", f"file is not UTF-8 (byte 0x{raw[error.start]:02x})"
                )
            ]
        ) from None
    if not text.strip():
        raise ConfigError([Problem(str(path), "file is empty")])
    if path.suffix.lower() == ".json":
        data, positions = parse_json(text, str(path))
    else:
        data, positions = parse_yaml(text, str(path))
    return Source(path, data, positions)
