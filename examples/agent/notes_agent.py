#!/usr/bin/env python3
"""A small, deterministic note-search agent: the example target of `assertly run`.

It reads one request as JSON on stdin, searches the markdown notes in ./vault (next to this
file) and writes one JSON response on stdout, in the shape of the note-search agent the expect
dict was designed for:

    {"status": "success", "summary": "...",
     "results": [{"file", "title", "relevance", "sensitive",
                  "metadata": {"type", "tags", "created"}}],
     "pagination": {"total", "offset", "limit", "has_more"},
     "history_results": [...],            # only when include_history is true
     "sensitive_dirs_skipped": ["people/", "documents/"],
     "performance": {"notes_scanned": 12}}

or, for a request it cannot serve, {"status": "error", "error_code": "...", "message": "..."}.

Request fields (at least one filter is required):
    search_text       words that must all occur in a note (title, tags or body), any case
    tags              tags a note must all have
    folder            a folder prefix such as "journal/" or "work/projects/"
    type              the note type from the front matter (note, incident-log, project, ...)
    date_from, date_to   created between these ISO dates (inclusive; a date-only date_to
                         means the end of that day)
    days              created within this many days before "today"
    today             "today" for `days` (default 2026-01-20: no clock, so answers never change)
    limit, offset     pagination (limit 1..20, default 5; offset default 0)
    include_sensitive include notes from people/ and documents/ (marked "sensitive": true)
    include_history   also report deleted notes that match, from history.json

It reports what a real LLM agent would - the model and the cost of the call - by writing a JSON
object to the file named in $ASSERTLY_METADATA_FILE when that variable is set (assertly sets
it for cmd: targets). Standard library only; no randomness and no clock.

Try it:  echo '{"search_text": "security", "limit": 3}' | python3 examples/agent/notes_agent.py

With ``--without-history`` it plays a new version of the agent that lost a feature (deleted
notes are no longer reported): the demo's regression for ``assertly diff`` and ``--baseline``.

With ``--model NAME`` it plays the same agent on another model (``--model gpt-4o``: version 2
of the demo's matrix run, ``--target v1=notes --target v2=notes_v2``): the answers are the
same, the model and the price it reports are not, so a test pinned to the default model fails
and one expecting gpt-4o passes.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
VAULT = HERE / "vault"
HISTORY = HERE / "history.json"
SENSITIVE = ("people/", "documents/")
DEFAULT_TODAY = "2026-01-20"
MODEL = "notes-mini-1"
# Dollars per input and per output token of each model the agent can report (made up, fixed).
PRICES = {MODEL: (0.15e-6, 0.6e-6), "gpt-4o": (2.5e-6, 10e-6)}
FILTERS = ("search_text", "tags", "folder", "type", "date_from", "date_to", "days")


class RequestError(Exception):
    """A request the agent refuses, with a machine-readable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- the vault ---------------------------------------------------------------------------------
def parse_note(path: Path) -> dict:
    """Front matter (type, tags, created) and text of one markdown note."""
    text = path.read_text(encoding="utf-8")
    meta: dict = {}
    body = text
    if text.startswith("---\n"):
        head, _, body = text[4:].partition("\n---\n")
        for line in head.splitlines():
            key, _, value = line.partition(":")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                meta[key.strip()] = [
                    item.strip() for item in value[1:-1].split(",") if item.strip()
                ]
            else:
                meta[key.strip()] = value
    title = next(
        (line[2:].strip() for line in body.splitlines() if line.startswith("# ")), path.stem
    )
    return {
        "file": path.relative_to(VAULT).as_posix(),
        "title": title,
        "body": body,
        "type": meta.get("type", "note"),
        "tags": meta.get("tags", []),
        "created": meta.get("created", ""),
    }


def load_vault() -> list[dict]:
    """Every note of the vault, in a fixed order."""
    return [parse_note(path) for path in sorted(VAULT.rglob("*.md"))]


# -- request handling --------------------------------------------------------------------------
def parse_time(value: object, field: str, *, end_of_day: bool = False) -> datetime:
    """An ISO date or time as an aware UTC datetime (a date-only value is midnight UTC)."""
    if not isinstance(value, str):
        raise RequestError("INVALID_DATE", f"{field} must be an ISO date string, got {value!r}")
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return moment + timedelta(days=1, microseconds=-1) if end_of_day else moment
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise RequestError("INVALID_DATE", f"{field} is not an ISO date: {value!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def words(text: str) -> list[str]:
    """The lower-cased search terms of a text."""
    return [word for word in text.lower().split() if word]


def relevance(note: dict, terms: list[str]) -> float:
    """In [0, 1]: title hits count 3, tag hits 2, body hits 1; more hits, higher relevance."""
    if not terms:
        return 1.0
    title, body = note["title"].lower(), note["body"].lower()
    tags = [tag.lower() for tag in note["tags"]]
    score = 0
    for term in terms:
        score += (
            3 * title.count(term) + 2 * sum(term in tag for tag in tags) + min(body.count(term), 4)
        )
    return round(score / (score + 4), 2)


def matches(note: dict, request: dict, terms: list[str], window: tuple) -> bool:
    """Whether a note passes every filter of the request."""
    haystack = " ".join([note["title"], note["body"], *note["tags"]]).lower()
    if any(term not in haystack for term in terms):
        return False
    if not set(request.get("tags") or []) <= set(note["tags"]):
        return False
    if request.get("folder") and not note["file"].startswith(request["folder"]):
        return False
    if request.get("type") and note["type"] != request["type"]:
        return False
    start, end = window
    created = parse_time(note["created"], note["file"])
    return (start is None or created >= start) and (end is None or created <= end)


def search(request: dict) -> dict:
    """The response to a request; RequestError for a request the agent refuses."""
    if not isinstance(request, dict):
        raise RequestError("INVALID_REQUEST", "the request must be a JSON object")
    given = [name for name in FILTERS if request.get(name) not in (None, "", [])]
    if isinstance(request.get("search_text"), str) and not request["search_text"].strip():
        given.remove("search_text")
    if not given:
        raise RequestError(
            "NO_FILTERS",
            "No filters given: provide search_text, tags, folder, type, days or a date range",
        )
    limit, offset = request.get("limit", 5), request.get("offset", 0)
    if not isinstance(limit, int) or not 1 <= limit <= 20:
        raise RequestError("INVALID_LIMIT", f"limit must be an integer from 1 to 20, got {limit!r}")
    if not isinstance(offset, int) or offset < 0:
        raise RequestError(
            "INVALID_OFFSET", f"offset must be a non-negative integer, got {offset!r}"
        )
    folder = request.get("folder")
    if folder and not (VAULT / folder).is_dir():
        raise RequestError("UNKNOWN_FOLDER", f"no folder {folder!r} in the vault")

    start = parse_time(request["date_from"], "date_from") if request.get("date_from") else None
    end = (
        parse_time(request["date_to"], "date_to", end_of_day=True)
        if request.get("date_to")
        else None
    )
    if request.get("days") is not None:
        today = parse_time(request.get("today", DEFAULT_TODAY), "today", end_of_day=True)
        since = today - timedelta(days=request["days"])
        start = since if start is None else max(start, since)
        end = today if end is None else min(end, today)

    include_sensitive = request.get("include_sensitive") is True
    terms = words(request.get("search_text") or "")
    found = []
    notes = load_vault()
    for note in notes:
        if not include_sensitive and note["file"].startswith(SENSITIVE):
            continue
        if matches(note, request, terms, (start, end)):
            found.append((relevance(note, terms), note))
    # Most relevant first; ties newest first, then by file name, so the order never changes.
    found.sort(key=lambda pair: (pair[1]["file"],))
    found.sort(key=lambda pair: pair[1]["created"], reverse=True)
    found.sort(key=lambda pair: pair[0], reverse=True)
    page = found[offset : offset + limit]

    described = ", ".join(f"{name}={request[name]!r}" for name in given)
    skipped = [] if include_sensitive else list(SENSITIVE)
    if found:
        shown = f"{offset + 1}-{offset + len(page)}" if page else "none on this page"
        summary = f"Found {len(found)} notes matching {described}; showing {shown}."
    else:
        summary = f"No notes match {described}."
    if skipped:
        summary += " Skipped sensitive folders people/ and documents/."
    response = {
        "status": "success",
        "summary": summary,
        "results": [
            {
                "file": note["file"],
                "title": note["title"],
                "relevance": score,
                "sensitive": note["file"].startswith(SENSITIVE),
                "metadata": {
                    "type": note["type"],
                    "tags": note["tags"],
                    "created": note["created"],
                },
            }
            for score, note in page
        ],
        "pagination": {
            "total": len(found),
            "offset": offset,
            "limit": limit,
            "has_more": offset + len(page) < len(found),
        },
        "sensitive_dirs_skipped": skipped,
        "performance": {"notes_scanned": len(notes)},
    }
    # `--without-history` is the demo's "new version" with a regression: it forgot history.
    if request.get("include_history") is True and "--without-history" not in sys.argv[1:]:
        history = json.loads(HISTORY.read_text(encoding="utf-8"))
        response["history_results"] = [
            entry
            for entry in history
            if all(
                term in (entry["title"] + " " + " ".join(entry["tags"])).lower() for term in terms
            )
            and set(request.get("tags") or []) <= set(entry["tags"])
        ]
    return response


def model() -> str:
    """The model this run plays: ``--model NAME`` (one of PRICES), else the default."""
    args = sys.argv[1:]
    if "--model" not in args:
        return MODEL
    index = args.index("--model") + 1
    if index >= len(args) or args[index] not in PRICES:
        sys.exit(f"notes_agent: --model needs one of {', '.join(PRICES)}")
    return args[index]


def report_metadata(request_text: str, response_text: str, results: int) -> None:
    """Tell assertly which model answered and what the call cost (a made-up, fixed price list)."""
    path = os.environ.get("ASSERTLY_METADATA_FILE")
    if not path:
        return
    name = model()
    tokens = {"input": len(request_text) // 4 + 350, "output": len(response_text) // 4}
    per_input, per_output = PRICES[name]
    cost = round(tokens["input"] * per_input + tokens["output"] * per_output, 6)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"model": name, "cost_usd": cost, "tokens": tokens, "results": results}, handle)


def main() -> int:
    """Answer one request: stdin to stdout, never a non-zero exit for a bad request."""
    model()  # an unknown --model stops here, before reading the request
    request_text = sys.stdin.read()
    try:
        request = json.loads(request_text) if request_text.strip() else {}
        response = search(request)
    except json.JSONDecodeError as error:
        response = {
            "status": "error",
            "error_code": "INVALID_JSON",
            "message": f"request is not JSON: {error}",
        }
    except RequestError as error:
        response = {"status": "error", "error_code": error.code, "message": error.message}
    response_text = json.dumps(response, indent=2, ensure_ascii=False)
    print(response_text)
    report_metadata(request_text, response_text, len(response.get("results", [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
