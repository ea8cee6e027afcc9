"""The engine benchmark's inputs: two 10-assertion expectations, seeded responses, and the
hand-written Python that gives each mix its floor.

A fixed, seeded mix of realistic agent outputs (pure JSON with a results array, prose around a
fenced ```json block, plain prose) for the typed list (a) and the expect dict (b), and a direct
coding of both lists' checks, which must agree with the engine on every verdict. Used by
bench/engine_bench.py (the engine alone) and by the suite's sections (bench/suite.py) through
bench/workload.py.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from rapidfuzz.distance import Levenshtein

SEED = 42

# --- the two expectations ---------------------------------------------------------------------

SUMMARY_REFERENCE = "Found 2 security incidents in January"

TYPED: list[dict[str, Any]] = [
    {"type": "contains", "value": "security"},
    {"type": "icontains", "value": "INCIDENT"},
    {"type": "regex", "value": r"\b20\d\d-\d\d-\d\d"},
    {"type": "is-json"},
    {"type": "contains-json", "value": {"type": "object", "required": ["status", "results"]}},
    {
        "type": "levenshtein",
        "value": SUMMARY_REFERENCE,
        "threshold": 3,
        "transform": "json_path:$.summary",
    },
    {"type": "word-count", "value": {"min": 5, "max": 150}},
    {"type": "starts-with", "value": "{"},
    {"type": "not-contains", "value": "Traceback"},
    {"type": "equals", "value": "success", "transform": "json_path:$.status"},
]

EXPECT: dict[str, Any] = {
    "status": "success",
    "results_min": 1,
    "has_fields": ["results", "summary", "pagination.total"],
    "field_equals": {"pagination.offset": 0},
    "all_match": {"path": "results[*].metadata.type", "value": "note"},
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    "all_have_tags": ["work", "security"],
    "all_dates_between": {
        "path": "results[*].metadata.created",
        "start": "2026-01-01T00:00:00Z",
        "end": "2026-01-31T23:59:59Z",
    },
    "all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0},
    "sorted_desc": {"path": "results[*].relevance"},
}

# --- the responses ----------------------------------------------------------------------------

TOPICS = ["security", "incident", "outage", "phishing", "access review", "backup"]
FILLER = [
    "I searched the journal for matching entries and ranked them by relevance.",
    "The most relevant entry describes the response and the follow-up actions.",
    "Two of the entries mention the same credential rotation.",
    "Nothing in the personal folders was included.",
    "Let me know if you want me to widen the date range or include drafts.",
    "The incident review notes list owners for every open action item.",
    "I left out entries that only mention the topic in passing.",
]


def _agent_response(rng: random.Random) -> dict[str, Any]:
    """A search agent's JSON answer, sometimes wrong in one of the ways tests catch."""
    count = 0 if rng.random() < 0.03 else rng.randint(1, 3)
    results: list[dict[str, Any]] = []
    for index in range(count):
        day = rng.randint(1, 31)
        tags = ["work", "security", *rng.sample(["incident", "q1", "review", "vpn"], k=2)]
        results.append(
            {
                "file": f"journal/2026/01/{rng.choice(TOPICS).replace(' ', '-')}-{index}.md",
                "type": "note",
                "relevance": round(rng.uniform(0.3, 1.0), 2),
                "metadata": {
                    "type": "note",
                    "tags": tags,
                    "created": f"2026-01-{day:02d}T{rng.randint(0, 23):02d}:00:00Z",
                },
            }
        )
    if rng.random() < 0.9:
        results.sort(key=lambda item: -item["relevance"])
    if results:
        victim = rng.choice(results)
        roll = rng.random()
        if roll < 0.05:
            victim["file"] = "work/security-doc.md"
        elif roll < 0.10:
            victim["metadata"]["tags"] = ["work"]
        elif roll < 0.14:
            victim["metadata"]["created"] = "2026-02-05T10:00:00Z"
        elif roll < 0.16:
            victim["relevance"] = 1.2
        elif roll < 0.20:
            victim["metadata"]["type"] = "incident-log"
    found = len(results)
    summary = rng.choice(
        [
            f"Found {found} security incidents in January",
            f"Found {found} security incidents in January",
            f"Found {found} security incidents in january",
            f"Found {found} incidents",
            f"Found {found} security incident entries in Jan",
        ]
    )
    response: dict[str, Any] = {
        "status": "error" if rng.random() < 0.05 else "success",
        "summary": summary,
        "results": results,
        "pagination": {"total": found, "offset": 5 if rng.random() < 0.04 else 0},
    }
    if rng.random() < 0.03:
        del response["pagination"]
    return response


def _prose(rng: random.Random, data: dict[str, Any] | None = None) -> str:
    data = data or _agent_response(rng)
    topic = rng.choice(TOPICS)
    lines = [f"Summary: {data['summary']} about {topic}."]
    for item in data["results"][:2]:
        lines.append(
            f"The entry {item['file']} was created on {str(item['metadata']['created'])[:10]} "
            f"and scores {item['relevance']}."
        )
    lines.extend(rng.sample(FILLER, k=rng.randint(1, 3)))
    if rng.random() < 0.02:
        lines.append("Traceback (most recent call last): the search tool crashed once.")
    return " ".join(lines)


def _pure_json(rng: random.Random) -> str:
    data = _agent_response(rng)
    if rng.random() < 0.7:
        return orjson.dumps(data).decode()
    return json.dumps(data, indent=2)


def _fenced(rng: random.Random) -> str:
    data = _agent_response(rng)
    intro = rng.choice(["Here is what I found:", "Search complete.", "Results below."])
    return f"{intro}\n\n```json\n{json.dumps(data, indent=2)}\n```\n\n{_prose(rng, data)}"


KINDS: dict[str, Callable[[random.Random], str]] = {
    "json": _pure_json,
    "fenced": _fenced,
    "prose": _prose,
}


def make_responses(rng: random.Random, n: int, weights: dict[str, float]) -> list[tuple[str, str]]:
    """``n`` (kind, text) pairs drawn with the given kind weights."""
    kinds = list(weights)
    chosen = rng.choices(kinds, weights=[weights[k] for k in kinds], k=n)
    return [(kind, KINDS[kind](rng)) for kind in chosen]


# --- the hand-written baseline for mix (a) ----------------------------------------------------

_DATE = re.compile(r"\b20\d\d-\d\d-\d\d")
# A word starts with a letter or digit (a fence or a dash alone is not one), as in the engine.
_WORD = re.compile(r"[A-Za-z0-9]\S*")
_DECODER = json.JSONDecoder()
_OPENER = re.compile(r"[\[{]")
_MISSING = object()


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _MISSING


def _schema_ok(value: Any) -> bool:
    return isinstance(value, dict) and "status" in value and "results" in value


def _contains_json(text: str, whole: Any) -> bool:
    if whole is not _MISSING:
        # The whole output is one JSON value: it is the only outermost value (if a container).
        return _schema_ok(whole)
    position = 0
    while (match := _OPENER.search(text, position)) is not None:
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except ValueError:
            position = match.start() + 1
            continue
        if _schema_ok(value):
            return True
        position = end
    return False


def _first(whole: Any, key: str) -> str | None:
    """``json_path:$.key`` as text, or None when the transform fails."""
    if type(whole) is not dict or key not in whole:
        return None
    value = whole[key]
    return value if type(value) is str else orjson.dumps(value).decode()


def baseline_typed(text: str) -> list[bool]:
    """Mix (a)'s ten checks, coded directly."""
    whole = _loads(text)
    summary = _first(whole, "summary")
    status = _first(whole, "status")
    words = len(_WORD.findall(text))
    return [
        "security" in text,
        "incident" in text.casefold(),
        _DATE.search(text) is not None,
        whole is not _MISSING,
        _contains_json(text, whole),
        summary is not None and Levenshtein.distance(summary, SUMMARY_REFERENCE) <= 3,
        5 <= words <= 150,
        text.startswith("{"),
        "Traceback" not in text,
        status == "success",
    ]


# --- the hand-written baseline for mix (b) ----------------------------------------------------

_JAN_START = datetime(2026, 1, 1, tzinfo=UTC)
_JAN_END = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
_EXPECT_FAIL = [False] * len(EXPECT)


def _expect_json(text: Any) -> Any:
    """The JSON of a mix (b) response: the whole text, else its fenced block."""
    if type(text) is not str:
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    start = text.find("```json\n")
    end = text.find("\n```", start + 8)
    try:
        return orjson.loads(text[start + 8 : end]) if start >= 0 and end >= 0 else _MISSING
    except orjson.JSONDecodeError:
        return _MISSING


def _in_january(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return _JAN_START <= moment <= _JAN_END


def baseline_expect(response: Any) -> list[bool]:
    """Mix (b)'s ten assertions, coded directly: one walk over the results.

    An empty array passes the wildcard assertions, as in the engine; an element without one of
    the fields read fails every wildcard assertion (the bench's responses never lack one).
    """
    data = _expect_json(response)
    if type(data) is not dict:
        return _EXPECT_FAIL
    results: Any = data.get("results")
    pagination: Any = data.get("pagination")
    paged = type(pagination) is dict
    offset = pagination.get("offset", _MISSING) if paged else _MISSING
    walk = type(results) is list
    kinds = files = tags_ok = dates = in_range = ordered = walk
    if walk:
        previous: Any = None
        for item in results:
            try:
                metadata = item["metadata"]
                kind, tags, created = metadata["type"], metadata["tags"], metadata["created"]
                file, relevance = item["file"], item["relevance"]
            except (KeyError, TypeError):
                kinds = files = tags_ok = dates = in_range = ordered = False
                break
            if type(kind) is not str or kind != "note":
                kinds = False
            if type(file) is not str or not file.startswith("journal/"):
                files = False
            if type(tags) is not list or "work" not in tags or "security" not in tags:
                tags_ok = False
            if not _in_january(created):
                dates = False
            number = type(relevance) is int or type(relevance) is float
            if not number or not 0.0 <= relevance <= 1.0:
                in_range = False
            if not number or (previous is not None and relevance > previous):
                ordered = False
            previous = relevance
    return [
        data.get("status") == "success",
        walk and len(results) >= 1,
        "results" in data and "summary" in data and paged and "total" in pagination,
        (type(offset) is int or type(offset) is float) and offset == 0,
        kinds,
        files,
        tags_ok,
        dates,
        in_range,
        ordered,
    ]
