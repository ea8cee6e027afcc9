"""Helpers for the conversation loading tests: the command line run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import assertly

_SRC = str(Path(assertly.__file__).resolve().parents[1])


def assertly_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m assertly ARGS`` in ``cwd``, as a user runs it (this checkout's sources)."""
    env = {**os.environ, "PYTHONPATH": _SRC, "NO_COLOR": "1"}
    env.pop("ASSERTLY_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "assertly", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
