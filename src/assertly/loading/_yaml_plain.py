"""The fast path of YAML reading: plain documents built straight from libyaml's events.

A test file is almost always plain: one document of mappings, lists and scalars, string keys
written once, no anchors, aliases, merge keys or tags. `build_plain` builds such a document's
data and key positions in one pass over the parser's events, with no node tree and no second
construction pass (a 3 MB file: about a third of the time of composing then constructing).
Anything else — and any error — raises `NotPlain`, and the caller reads the text again with
the exact composer (`_source.parse_yaml`), whose data, positions and messages are the
reference: this path only ever gives the same result sooner.
"""

from __future__ import annotations

from typing import Any

from ._yaml import int_of, yaml_loader

__all__ = ["NotPlain", "build_plain"]

Key = tuple[str | int, ...]

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"


class NotPlain(Exception):
    """The document needs the exact composer: something this path does not build, or an error."""


def build_plain(text: str, max_nesting: int) -> tuple[Any, dict[Key, tuple[int, int]]]:
    """The data and ``key path -> (line, column)`` of a plain YAML document.

    Raises:
        NotPlain: Not plain (anchors, aliases, tags, merge or non-string or duplicate keys,
            several documents, nesting past ``max_nesting``), or not valid YAML.
    """
    import yaml
    from yaml import events

    loader = yaml_loader(fast=True)(text)
    try:
        return _build(loader, events, max_nesting)
    except yaml.YAMLError:
        raise NotPlain from None
    finally:
        loader.dispose()


class _Builder:
    """The open collections of the document being built, and the key positions found."""

    def __init__(self, max_nesting: int) -> None:
        self.max_nesting = max_nesting
        self.positions: dict[Key, tuple[int, int]] = {}
        # Open collections: (the container, its key path, whether a mapping), and for each the
        # mapping key waiting for its value (None: the next scalar is a key).
        self.stack: list[tuple[Any, Key, bool]] = []
        self.pending: list[str | None] = []
        self.root: Any = None

    def open(self, event: Any, mapping: bool) -> None:
        """A mapping or list starts: attach it where it stands and make it the open one."""
        _refuse_properties(event)
        stack, pending = self.stack, self.pending
        if len(stack) >= self.max_nesting:
            raise NotPlain
        container: Any = {} if mapping else []
        path: Key = ()
        if not stack:
            self.root = container
        else:
            parent, key, in_mapping = stack[-1]
            mark = event.start_mark
            if not in_mapping:
                path = (*key, len(parent))
                self.positions.setdefault(path, (mark.line + 1, mark.column + 1))
                parent.append(container)
            elif pending[-1] is None:
                raise NotPlain  # a list or mapping as a key
            else:
                path = (*key, pending[-1])
                parent[pending[-1]] = container
                pending[-1] = None
        stack.append((container, path, mapping))
        pending.append(None)

    def close(self) -> None:
        """The open mapping or list ends."""
        self.stack.pop()
        self.pending.pop()


def _refuse_properties(event: Any) -> None:
    """An anchor or an explicit tag: the exact composer's to read."""
    if event.anchor is not None or (event.tag is not None and event.tag != "!"):
        raise NotPlain


def _build(loader: Any, events: Any, max_nesting: int) -> tuple[Any, dict[Key, tuple[int, int]]]:
    resolvers = loader.yaml_implicit_resolvers
    scalar_event, mapping_start = events.ScalarEvent, events.MappingStartEvent
    sequence_start = events.SequenceStartEvent
    ends = (events.MappingEndEvent, events.SequenceEndEvent)
    other = (events.StreamStartEvent, events.DocumentEndEvent)
    builder = _Builder(max_nesting)
    stack, pending, positions = builder.stack, builder.pending, builder.positions
    documents = 0
    get_event = loader.get_event
    while True:
        event = get_event()
        kind = type(event)
        if kind is not scalar_event:
            if kind is mapping_start or kind is sequence_start:
                builder.open(event, kind is mapping_start)
            elif kind in ends:
                builder.close()
            elif kind is events.DocumentStartEvent and documents == 0:
                documents = 1
            elif kind is events.StreamEndEvent:
                return builder.root, positions
            elif kind not in other:
                raise NotPlain  # an alias, or a second document
            continue
        if event.anchor is not None or event.tag is not None:  # `_refuse_properties`, inline
            _refuse_properties(event)
        value: Any = event.value
        if event.implicit[0]:  # plain: resolved by the YAML 1.2 core schema
            for tag, pattern in resolvers.get(value[:1], ()):
                if pattern.match(value):
                    value = _scalar(tag, value)
                    break
        if not stack:
            builder.root = value
            continue
        # The commonest event, inline: a scalar in the open collection.
        parent, key, mapping = stack[-1]
        mark = event.start_mark
        if not mapping:
            positions.setdefault((*key, len(parent)), (mark.line + 1, mark.column + 1))
            parent.append(value)
        elif pending[-1] is not None:
            parent[pending[-1]] = value
            pending[-1] = None
        elif type(value) is not str or value == "<<" or value in parent:
            raise NotPlain  # not a string, a merge, or written twice: the composer words it
        else:
            positions[(*key, value)] = (mark.line + 1, mark.column + 1)
            parent[value] = None  # holds the key's place (and order) until its value comes
            pending[-1] = value


def _scalar(tag: str, text: str) -> Any:
    """A plain scalar of a resolved non-string tag, as the exact constructors build it."""
    if tag == _INT:
        return int_of(text)
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return text in ("true", "True", "TRUE")
    if tag == _FLOAT:
        lowered = text.lower()
        if "inf" in lowered or "nan" in lowered:
            raise NotPlain  # refused, with the composer's message
        number = float(text)
        if number in (float("inf"), float("-inf")):
            raise NotPlain
        return number
    raise NotPlain  # the merge key `<<` as a value, or a tag of a later schema
