"""The fast JSON walk: the same data and the same key positions as composing the file as YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertly import ConfigError
from assertly.loading._json_source import UnusualJSON, depth_exceeds, parse_json_with_positions
from assertly.loading._source import parse_yaml, read_source

_KEYS = st.text(alphabet='abc_é"\\ \n', min_size=1, max_size=4)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet='xy"\\\n{}[],:\u00e9', max_size=6),
)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=4)
    ),
    max_leaves=40,
)


def _every_key(data: Any, key: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    keys = []
    children = (
        data.items()
        if isinstance(data, dict)
        else enumerate(data)
        if isinstance(data, list)
        else ()
    )
    for name, child in children:
        keys.append((*key, name))
        keys.extend(_every_key(child, (*key, name)))
    return keys


@given(_DOCUMENTS, st.sampled_from([None, 1, 2]))
def test_walk_agrees_with_the_yaml_composer(document: Any, indent: int | None) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    data, positions = parse_json_with_positions(text)
    assert data == document
    _, expected = parse_yaml(text, "f.json")
    for key in _every_key(document):
        assert positions.get(key) == expected.get(key), key


def test_deep_keys_are_located_on_demand() -> None:
    document = {"a": {"b": {"c": {"d": {"e": {"f": [1, {"g": 2}]}}}}}}
    text = json.dumps(document, indent=2)
    _, positions = parse_json_with_positions(text)
    _, expected = parse_yaml(text, "f.json")
    deep = ("a", "b", "c", "d", "e", "f", 1, "g")
    assert positions.get(deep) == expected.get(deep) == (10, 17)
    assert positions.get(("a", "b", "c", "d", "e", "nope")) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": {"b": {"c": {"d": {"e": {"f": 1, "f": 2}}}}}}',
        '{"a": NaN}',
        '{"a": 1e400}',  # infinity as a double: not a JSON number (one grammar, `_json`)
        '{"a": {"b": {"c": {"d": {"e": [-1e400]}}}}}',
        '{"a": [1, 2,]}',
        '{"a": 1} x',
        '{"a" 1}',
        "",
        '{"a": "unterminated}',
    ],
)
def test_anything_unusual_is_left_to_the_exact_path(text: str) -> None:
    with pytest.raises(UnusualJSON):
        parse_json_with_positions(text)


def test_a_number_out_of_range_is_refused_in_a_test_file(tmp_path: Path) -> None:
    # It used to be read as infinity: `equals: 1e400` then compared with inf, silently.
    path = tmp_path / "t.json"
    path.write_text('{\n  "a": 1,\n  "b": 1e400\n}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_source(path)
    assert "invalid JSON" in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_duplicate_key_is_refused_where_yaml_cannot_place_it(tmp_path: Path) -> None:
    # U+007F is JSON but not YAML: the composer that finds duplicates cannot read the file,
    # and the last "contains" silently replaced the first.
    path = tmp_path / "t.json"
    path.write_text('{"contains": "zzz", "contains": "\x7f"}', encoding="utf-8")
    with pytest.raises(ConfigError, match="duplicate key 'contains'"):
        read_source(path)


def _nested(depth: int) -> str:
    """A test file whose assertions hold lists ``depth`` deep below the walked levels."""
    deep = "[" * depth + "1" + "]" * depth
    return '{"test_suites": {"s": {"tests": [{"id": "t", "expect": {"a": ' + deep + "}}]}}}"


def test_the_nesting_limit_is_the_one_the_whole_document_check_applies() -> None:
    # The outermost list sits at depth 6 (test_suites.s.tests.0.expect.a): 194 lists reach
    # depth 199, the deepest allowed under a limit of 200; 195 lists go beyond it.
    fits, too_deep = _nested(194), _nested(195)
    assert not depth_exceeds(json.loads(fits), 200)
    assert depth_exceeds(json.loads(too_deep), 200)
    data, _ = parse_json_with_positions(fits, max_nesting=200)
    assert data == json.loads(fits)
    with pytest.raises(UnusualJSON, match="nested too deeply"):
        parse_json_with_positions(too_deep, max_nesting=200)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = (
        '{"test_suites": {"s": {"tests": [{"id": "t", "expect": {"a": ["' + "[" * 500 + '"]}}]}}}'
    )
    data, _ = parse_json_with_positions(text, max_nesting=200)
    assert data["test_suites"]["s"]["tests"][0]["expect"]["a"] == ["[" * 500]
