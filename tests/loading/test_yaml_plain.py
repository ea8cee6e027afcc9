"""The fast path of YAML reading builds exactly what the exact composer builds, or steps aside.

`build_plain` builds a plain document straight from libyaml's events; for anything else it
raises `NotPlain` and `parse_yaml` reads the text again with the composer. Every test here
holds the fast path to the composer's data, key positions and problems.
"""

from __future__ import annotations

import gc
import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assertly import ConfigError
from assertly.loading._source import MAX_NESTING, _parse_exactly, parse_yaml
from assertly.loading._yaml_plain import NotPlain, build_plain

_KEYS = st.text(alphabet="ab_é -:#\"'\n01tn", min_size=1, max_size=5)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet="xy01.-+e~:#'\"\n {}[],&*!|>é", max_size=8),
    st.sampled_from(["true", "False", "null", "~", "0o17", "0x1F", "017", "1e3", ".5", "yes"]),
)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=4)
    ),
    max_leaves=30,
)


def _same_as_the_composer(text: str) -> bool:
    """Whether the fast path agrees with the composer; False when it stepped aside."""
    try:
        fast = build_plain(text, MAX_NESTING)
    except NotPlain:
        return False
    exact = _parse_exactly(text, "f.yaml")
    assert fast[0] == exact[0] and repr(fast[0]) == repr(exact[0])  # 1 and 1.0, True and 1
    assert fast[1] == exact[1]
    return True


@settings(max_examples=300)
@given(_DOCUMENTS, st.sampled_from([None, False, True]), st.sampled_from([None, "'", '"']))
def test_dumped_documents_read_the_same_and_fast(
    document: Any, flow: bool | None, style: str | None
) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, default_style=style, width=30)
    # PyYAML writes YAML 1.1: its plain `yes` or `0o17` may be quoted or not; whatever the
    # text says, both readers must read it alike. Untagged data takes the fast path (forced
    # quotes tag every number, boolean and null: `!!int '1'`, left to the composer).
    fast = _same_as_the_composer(text)
    assert fast or style is not None


HAND_WRITTEN = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: ~, e: null, f: }\n",
    "# comment\nagent: notes  # trailing\nlist:\n- - 1\n  - 2\n- {}\n- []\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
    "n: [017, 0o17, 0x1f, -0x1F, +5, 1.5e3, .5, -.5e-2, 1_000]\n",
    "b: [true, True, TRUE, false, yes, no, on, off, y]\n",
    "d: 2026-01-01\nt: 12:30\nempty: ''\nspace: ' '\n",
    "- 1\n- two\n- {three: 3}\n",
    "just a scalar\n",
    "'quoted root'\n",
    "é: ünïcödé\n\"a b\": 'c: d'\n",
    "? simple key\n: value\n",
    "a:\n  b:\n    c:\n      - d: 1\n        e: [f, {g: h}]\n",
    "---\na: 1\n...\n",
]


@pytest.mark.parametrize("text", HAND_WRITTEN)
def test_hand_written_plain_documents_read_the_same_and_fast(text: str) -> None:
    assert _same_as_the_composer(text)


# Everything the fast path leaves to the composer, and why.
NOT_PLAIN = [
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",  # a merge key
    "a: !!str 1\n",  # an explicit tag
    "a: !local x\n",
    "a: 1\na: 2\n",  # a duplicate key
    "1: one\n",  # a key that is not a string
    "null: x\n",
    "? [a, b]\n: c\n",  # a list as a key
    "'<<': quoted\n",
    "a: .inf\n",  # not JSON numbers
    "a: .nan\n",
    "a: 1e400\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "a: [1, 2\n",  # invalid YAML
    "a:\n\t- b\n",
    "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1),  # too deep
]


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_the_fast_path_steps_aside_and_parse_yaml_answers_as_the_composer(text: str) -> None:
    with pytest.raises(NotPlain):
        build_plain(text, MAX_NESTING)
    try:
        expected: Any = _parse_exactly(text, "f.yaml")
    except ConfigError as error:
        expected = [str(problem) for problem in error.problems]
    try:
        found: Any = parse_yaml(text, "f.yaml")
    except ConfigError as error:
        found = [str(problem) for problem in error.problems]
    assert found == expected


def test_a_valid_document_that_steps_aside_still_reads_right() -> None:
    data, positions = parse_yaml("base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n", "f.yaml")
    assert data == {"base": {"x": 1}, "derived": {"x": 1, "y": 2}}
    assert positions[("derived", "y")] == (4, 3)


def test_numbers_keep_their_type_and_value() -> None:
    data, _ = build_plain("[017, 0o17, 0x1F, -3, 2.5, 1e3, true, ~]", MAX_NESTING)
    assert data == [17, 15, 31, -3, 2.5, 1000.0, True, None]
    assert [type(value) for value in data] == [int, int, int, int, float, float, bool, type(None)]
    assert not any(isinstance(value, float) and math.isnan(value) for value in data)


def test_the_collector_runs_again_after_parsing() -> None:
    assert gc.isenabled()
    parse_yaml("a: [1, 2, 3]\n", "f.yaml")
    assert gc.isenabled()
    with pytest.raises(ConfigError):
        parse_yaml("a: [1, 2\n", "f.yaml")
    assert gc.isenabled()
    gc.disable()  # a host that turned it off keeps it off
    try:
        parse_yaml("a: 1\n", "f.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()
