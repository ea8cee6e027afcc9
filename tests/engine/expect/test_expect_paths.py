"""Dot paths (engine/_paths.py ``DotPath``): parsing, locations, and never-silent resolving."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertly.engine._paths import INDEX, KEY, WILD, DotPath, PathMiss, PathSyntaxError

DATA: dict[str, Any] = {
    "results": [
        {"file": "a.md", "metadata": {"type": "note", "tags": ["work"]}},
        {"file": "b.md", "metadata": {"type": "log", "tags": []}},
        {"file": "c.md", "metadata": {"tags": ["x", "y"]}},
    ],
    "pagination": {"total": 3, "next": None},
    "title": "report",
    "meta": {"key.with.dots": 5, "x y": 6, 'q"uote': 7},
}


# --- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("results", ((KEY, "results"),)),
        ("pagination.total", ((KEY, "pagination"), (KEY, "total"))),
        ("$.pagination.total", ((KEY, "pagination"), (KEY, "total"))),
        ("$pagination", ((KEY, "pagination"),)),
        ("  pagination . total  ", ((KEY, "pagination"), (KEY, "total"))),
        ("results[0]", ((KEY, "results"), (INDEX, 0))),
        ("results[-1].file", ((KEY, "results"), (INDEX, -1), (KEY, "file"))),
        (
            "results[*].metadata.tags",
            ((KEY, "results"), (WILD, None), (KEY, "metadata"), (KEY, "tags")),
        ),
        ("a[*][*]", ((KEY, "a"), (WILD, None), (WILD, None))),
        ("[0].status", ((INDEX, 0), (KEY, "status"))),
        ('meta["key.with.dots"]', ((KEY, "meta"), (KEY, "key.with.dots"))),
        ("meta['x y']", ((KEY, "meta"), (KEY, "x y"))),
        ('meta["q\\"uote"]', ((KEY, "meta"), (KEY, 'q"uote'))),
        ("a.*", ((KEY, "a"), (KEY, "*"))),
    ],
)
def test_parse(text: str, segments: tuple[Any, ...]) -> None:
    path = DotPath(text)
    assert path.segments == segments
    assert path.text == text
    assert path.has_wildcard is any(kind == WILD for kind, _ in segments)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty path"),
        ("$", "empty path"),
        ("   ", "empty path"),
        ("a.", "path ends with '.'"),
        (".a", "empty segment at column 1"),
        ("a..b", "empty segment at column 3"),
        ("a[", "unexpected '[' at column 2"),
        ("a[x]", "unexpected '[' at column 2"),
        ("a[1.5]", "unexpected '[' at column 2"),
        ("a]b", "unexpected ']' at column 2"),
        ("a[0]b", "missing '.' before 'b'"),
        ("results[*", "unexpected '[' at column 8"),
    ],
)
def test_syntax_errors(text: str, reason: str) -> None:
    with pytest.raises(PathSyntaxError) as caught:
        DotPath(text)
    assert str(caught.value) == reason
    assert isinstance(caught.value, ValueError)


def test_last_key() -> None:
    assert DotPath("results[*].file").last_key == "file"
    assert DotPath("results[*]").last_key is None
    assert DotPath("results[0]").last_key is None


# --- locations ------------------------------------------------------------------------------


def test_location_fills_wildcards_in_order() -> None:
    path = DotPath("results[*].links[*].kind")
    assert path.location() == "results[*].links[*].kind"
    assert path.location((1, 0)) == "results[1].links[0].kind"
    assert path.location((2,)) == "results[2].links[*].kind"
    assert path.location((1, 0), upto=3) == "results[1].links"
    assert path.location((1, 0), upto=4) == "results[1].links[0]"


def test_location_quotes_keys_that_need_it() -> None:
    assert DotPath('meta["key.with.dots"]').location() == 'meta["key.with.dots"]'
    assert DotPath('meta["q\\"uote"]').location() == 'meta["q\\"uote"]'
    assert DotPath("$.a").location() == "a"


@given(st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_location_reads_back_as_the_same_path(keys: list[str]) -> None:
    text = "root" + "".join(
        '["' + key.replace("\\", "\\\\").replace('"', '\\"') + '"]' for key in keys
    )
    path = DotPath(text)
    assert [arg for _, arg in path.segments] == ["root", *keys]
    assert DotPath(path.location()).segments == path.segments


# --- get (no wildcard) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("title", "report"),
        ("pagination.total", 3),
        ("pagination.next", None),  # a null field exists
        ("results[0].file", "a.md"),
        ("results[-1].file", "c.md"),
        ("results[1].metadata.tags", []),
        ('meta["key.with.dots"]', 5),
        ("meta['x y']", 6),
    ],
)
def test_get(text: str, value: Any) -> None:
    assert DotPath(text).get(DATA) == value


@pytest.mark.parametrize(
    ("text", "at", "reason"),
    [
        ("missing", "missing", "missing"),
        ("pagination.missing", "pagination.missing", "missing"),
        ("pagination.missing.deeper", "pagination.missing", "missing"),
        ("results[5].file", "results[5]", "missing (the array has 3 items)"),
        ("results[-4]", "results[-4]", "missing (the array has 3 items)"),
        ("results[2].metadata.type", "results[2].metadata.type", "missing"),
        ("title.x", "title", "a string, not an object"),
        ("title[0]", "title", "a string, not an array"),
        ("pagination.next.x", "pagination.next", "a null, not an object"),
        ("pagination[0]", "pagination", "an object, not an array"),
        ("results.file", "results", "an array, not an object"),
        ("pagination.total.x", "pagination.total", "an integer, not an object"),
    ],
)
def test_get_reports_the_first_segment_that_cannot_be_followed(
    text: str, at: str, reason: str
) -> None:
    miss = DotPath(text).get(DATA)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == (at, reason)
    assert miss.describe() == f"{at} is {reason}"


# --- resolve (wildcards) --------------------------------------------------------------------


def test_resolve_a_wildcard_with_indexes() -> None:
    values, indexes = DotPath("results[*].file").resolve(DATA)  # type: ignore[misc]
    assert list(values) == ["a.md", "b.md", "c.md"]
    assert [tuple(i) for i in indexes] == [(0,), (1,), (2,)]


def test_resolve_without_wildcard_is_one_value() -> None:
    assert DotPath("pagination.total").resolve(DATA) == ([3], [()])
    assert DotPath("pagination.next").resolve(DATA) == ([None], [()])


def test_resolve_nested_wildcards() -> None:
    values, indexes = DotPath("results[*].metadata.tags[*]").resolve(DATA)  # type: ignore[misc]
    assert list(values) == ["work", "x", "y"]
    assert [tuple(i) for i in indexes] == [(0, 0), (2, 0), (2, 1)]


def test_resolve_a_wildcard_over_an_empty_array() -> None:
    values, indexes = DotPath("results[*].file").resolve({"results": []})  # type: ignore[misc]
    assert (list(values), list(indexes)) == ([], [])
    values, _ = DotPath("a[*].b").resolve({"a": []})  # type: ignore[misc]
    assert list(values) == []


def test_resolve_never_drops_an_item_lacking_the_field() -> None:
    miss = DotPath("results[*].metadata.type").resolve(DATA)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == ("results[2].metadata.type", "missing")


def test_resolve_names_the_item_that_blocks_the_path() -> None:
    data = {"results": [{"metadata": {"type": "a"}}, {"metadata": "oops"}]}
    miss = DotPath("results[*].metadata.type").resolve(data)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == ("results[1].metadata", "a string, not an object")
    data = {"results": [{"tags": ["a"]}, {"tags": "b"}]}
    miss = DotPath("results[*].tags[*]").resolve(data)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == ("results[1].tags", "a string, not an array")


@pytest.mark.parametrize(
    ("data", "at", "reason"),
    [
        ({}, "results", "missing"),
        ({"results": None}, "results", "a null, not an array"),
        ({"results": {"file": "a"}}, "results", "an object, not an array"),
        ({"results": "a"}, "results", "a string, not an array"),
        ([1, 2], "", "an array, not an object"),  # the root itself
    ],
)
def test_resolve_missing_or_non_array(data: Any, at: str, reason: str) -> None:
    miss = DotPath("results[*].file").resolve(data)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == (at, reason)


def test_a_miss_at_the_root_reads_as_the_response() -> None:
    miss = DotPath("status").get(["ok"])
    assert isinstance(miss, PathMiss)
    assert miss.describe() == "the response is an array, not an object"


def test_resolve_with_an_index_after_a_wildcard() -> None:
    data = {"results": [{"tags": ["a", "b"]}, {"tags": ["c"]}]}
    miss = DotPath("results[*].tags[1]").resolve(data)
    assert isinstance(miss, PathMiss)
    assert (miss.at, miss.reason) == ("results[1].tags[1]", "missing (the array has 1 item)")
    values, _ = DotPath("results[*].tags[0]").resolve(data)  # type: ignore[misc]
    assert list(values) == ["a", "c"]


@given(
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"v": st.integers()}),
            st.fixed_dictionaries({"w": st.integers()}),
        ),
        max_size=6,
    )
)
def test_resolve_fails_exactly_when_some_item_lacks_the_field(items: list[dict[str, int]]) -> None:
    resolved = DotPath("items[*].v").resolve({"items": items})
    lacking = [i for i, item in enumerate(items) if "v" not in item]
    if lacking:
        assert isinstance(resolved, PathMiss)
        assert resolved.at == f"items[{lacking[0]}].v"
    else:
        assert not isinstance(resolved, PathMiss)
        values, indexes = resolved
        assert list(values) == [item["v"] for item in items]
        assert [tuple(i) for i in indexes] == [(i,) for i in range(len(items))]
