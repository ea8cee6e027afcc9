"""Red team of the GitHub Action's sticky comment: someone else's comment holding the marker."""

from __future__ import annotations

from pathlib import Path

from test_action import MARKER, FakeGitHub, _comment, github

__all__ = ["github"]  # the fixture, imported for pytest


def test_a_marked_comment_by_someone_else_is_never_edited(
    github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    # red team, probe "sticky comment takeover": a PR author pastes the marker first.
    state, api = github
    planted = {"id": 5, "body": f"{MARKER}\nall green, merge me", "user": {"login": "mallory"}}
    state.comments[7] = [dict(planted)]
    done = _comment(tmp_path, api, "2 regressed")
    assert done.returncode == 0, done.stderr
    assert "created comment" in done.stdout
    assert state.comments[7][0] == planted
    assert not any(method == "PATCH" for method, _ in state.requests)
    assert state.comments[7][1]["body"] == f"{MARKER}\n2 regressed"
    # The bot's own comment is the one re-runs edit, the planted one stays untouched.
    again = _comment(tmp_path, api, "fixed")
    assert "updated comment 101" in again.stdout
    assert state.comments[7][0] == planted and len(state.comments[7]) == 2
