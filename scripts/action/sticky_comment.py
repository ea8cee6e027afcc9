"""Create or update the one assertly comment on a pull request (the GitHub Action's last step).

Usage: ``python sticky_comment.py BODY_FILE [--marker NAME]``. Reads ``GITHUB_TOKEN``,
``GITHUB_API_URL`` (default ``https://api.github.com``), ``GITHUB_REPOSITORY`` and the event
payload at ``GITHUB_EVENT_PATH`` (the pull request's number); ``PR_NUMBER`` overrides the
number. Lists the pull request's issue comments, edits the one whose body starts with the hidden
marker ``<!-- NAME -->`` and that the token's user wrote (``GET /user``; else
``github-actions[bot]``; ``ASSERTLY_COMMENT_AUTHOR`` overrides), or creates it: re-runs edit
one comment instead of adding more, and no other comment is touched. Standard library only (it
runs before anything is installed).

Exit codes: 0 the comment is up to date (or there is no pull request to comment on); 1 the API
refused or failed (the reason on stderr: a 403 is a token without ``pull-requests: write``, as a
pull request from a fork gets); 2 a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

# GitHub refuses a comment body over 65,536 characters.
BODY_LIMIT = 65_536
_CUT_NOTE = "\n\n… (cut: the whole report is in the workflow run's artifacts)\n"
_PAGE = 100
# Who posts with the workflow's GITHUB_TOKEN (GET /user refuses that token).
_ACTIONS_BOT = "github-actions[bot]"


class ApiError(Exception):
    """The GitHub API refused a request or could not be reached."""


def _request(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    request.add_header("User-Agent", "assertly-action")
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        with contextlib.suppress(ValueError, AttributeError):  # not JSON: the text as is
            detail = json.loads(detail).get("message", detail)
        hint = ""
        if error.code in (401, 403, 404):
            hint = (
                " (the token needs `permissions: pull-requests: write`; a pull request from a "
                "fork gets a read-only token: set `comment: false` for those)"
            )
        raise ApiError(f"{method} {url} → HTTP {error.code}: {detail}{hint}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ApiError(f"{method} {url} failed: {reason}") from None


def marker_line(name: str) -> str:
    """The hidden HTML comment that marks the sticky comment."""
    return f"<!-- {name} -->"


def sticky_body(text: str, marker: str) -> str:
    """The comment's body: the marker line, then ``text`` (cut to GitHub's limit)."""
    body = marker_line(marker) + "\n" + text
    if len(body) > BODY_LIMIT:
        body = body[: BODY_LIMIT - len(_CUT_NOTE)] + _CUT_NOTE
    return body


def token_author(api: str, token: str) -> str:
    """The login the token posts as: ``GET /user`` (a personal token), else the Actions bot."""
    try:
        user = _request("GET", f"{api.rstrip('/')}/user", token)
    except ApiError:
        return _ACTIONS_BOT  # the workflow's GITHUB_TOKEN may not read /user
    login = user.get("login") if isinstance(user, dict) else None
    return str(login) if login else _ACTIONS_BOT


def upsert(
    api: str, repo: str, number: int, token: str, text: str, marker: str, author: str
) -> str:
    """Edit the marked comment of pull request ``number`` or create it; what was done.

    Only a comment ``author`` wrote is edited: anyone may paste the marker into a comment.
    """
    base = f"{api.rstrip('/')}/repos/{repo}"
    body = sticky_body(text, marker)
    mark = marker_line(marker)
    page = 1
    while True:
        url = f"{base}/issues/{number}/comments?per_page={_PAGE}&page={page}"
        comments = _request("GET", url, token)
        if not isinstance(comments, list):
            raise ApiError(f"GET {url}: expected a list of comments, got {type(comments).__name__}")
        for comment in comments:
            # red team, probe "sticky comment takeover": a comment by someone else that starts
            # with the marker was edited (a maintainer's token may edit anyone's comment).
            user = comment.get("user")
            login = user.get("login") if isinstance(user, dict) else None
            if login == author and str(comment.get("body") or "").startswith(mark):
                if comment.get("body") == body:
                    return f"comment {comment['id']} is up to date"
                _request("PATCH", f"{base}/issues/comments/{comment['id']}", token, {"body": body})
                return f"updated comment {comment['id']}"
        if len(comments) < _PAGE:
            break
        page += 1
    created = _request("POST", f"{base}/issues/{number}/comments", token, {"body": body})
    return f"created comment {created.get('id') if isinstance(created, dict) else '?'}"


def pull_request_number(event_path: str | None) -> int | None:
    """The pull request of the event payload (``pull_request``, or an issue that is one)."""
    override = os.environ.get("PR_NUMBER")
    if override:
        return int(override)
    if not event_path or not Path(event_path).is_file():
        return None
    event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    pull = event.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return int(pull["number"])
    issue = event.get("issue")
    if (
        isinstance(issue, dict)
        and issue.get("pull_request")
        and isinstance(issue.get("number"), int)
    ):
        return int(issue["number"])
    return None


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("body_file", help="The comment's Markdown (the marker is added).")
    parser.add_argument("--marker", default="assertly-report", help="The hidden marker's name.")
    args = parser.parse_args(argv)
    token = os.environ.get("GITHUB_TOKEN", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if not token or not repo:
        print("sticky comment: GITHUB_TOKEN and GITHUB_REPOSITORY must be set", file=sys.stderr)
        return 2
    try:
        number = pull_request_number(os.environ.get("GITHUB_EVENT_PATH"))
    except (ValueError, OSError) as error:
        # red team, probe "sticky comment bad input": PR_NUMBER=abc or an unreadable event
        # payload ended in a traceback instead of a usage error.
        print(f"sticky comment: no pull request number: {error}", file=sys.stderr)
        return 2
    if number is None:
        print("sticky comment: not a pull request: no comment to write")
        return 0
    text = Path(args.body_file).read_text(encoding="utf-8")
    api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    try:
        author = os.environ.get("ASSERTLY_COMMENT_AUTHOR") or token_author(api, token)
        done = upsert(api, repo, number, token, text, args.marker, author)
    except ApiError as error:
        print(f"sticky comment: {error}", file=sys.stderr)
        return 1
    print(f"sticky comment: {done} on pull request #{number}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
