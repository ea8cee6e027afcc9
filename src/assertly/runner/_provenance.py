"""Where a run was made: the git commit, branch and dirty flag of the work tree, and the host.

Kept with the run, so runs can be told apart in ``assertly view`` and a comparison can say
which commits it compares. Read with one ``git status`` call (porcelain v2 gives the commit
and branch with the changes); no git, or not a work tree: no ``git`` entry, never an error.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["provenance", "run_name"]

# A run's name is shown in lists and titles: short, one line.
MAX_NAME = 200
_GIT_TIMEOUT_S = 2.0


def run_name(given: str | None) -> str | None:
    """``--name``, else ``ASSERTLY_RUN_NAME``; one line, at most `MAX_NAME` characters.

    Raises:
        ValueError: The name holds a line break or control character, or is too long.
    """
    name = given if given is not None else os.environ.get("ASSERTLY_RUN_NAME")
    if name is None or not name.strip():
        return None
    name = name.strip()
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise ValueError("a run name is one line of text, with no control characters")
    if len(name) > MAX_NAME:
        raise ValueError(f"a run name is at most {MAX_NAME} characters (got {len(name):,})")
    return name


def provenance(directory: Path | None = None) -> dict[str, Any]:
    """``{"host": …, "git": {"commit", "branch", "dirty"}}`` (``git`` only in a work tree)."""
    found: dict[str, Any] = {"host": socket.gethostname()}
    git = _git_state(directory or Path.cwd())
    if git is not None:
        found["git"] = git
    return found


def _git_state(directory: Path) -> dict[str, Any] | None:
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    commit: str | None = None
    branch: str | None = None
    dirty = False
    for line in done.stdout.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.removeprefix("# branch.oid ").strip()
            commit = None if oid == "(initial)" else oid
        elif line.startswith("# branch.head "):
            head = line.removeprefix("# branch.head ").strip()
            branch = None if head == "(detached)" else head
        elif line and not line.startswith("#"):
            dirty = True
    return {"commit": commit, "branch": branch, "dirty": dirty}
