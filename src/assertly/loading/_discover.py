"""Which files under the paths given are test files.

Agent test files by their suffix, and workflow files with an ``eval:`` section.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .._exceptions import Problem

__all__ = ["TEST_FILE_SUFFIXES", "WORKFLOW_SUFFIXES", "discover"]

TEST_FILE_SUFFIXES = (".tests.json", ".tests.yaml", ".tests.yml")
WORKFLOW_SUFFIXES = (".yaml", ".yml")


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[Problem]]:
    """Expand directories into test and workflow files, in a stable order, each once."""
    files: list[Path] = []
    problems: list[Problem] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if any(part.startswith(".") for part in candidate.relative_to(path).parts):
                    continue
                if candidate.is_file() and _is_candidate(candidate):
                    files.append(candidate)
        elif path.is_file():
            files.append(path)
        else:
            problems.append(Problem(str(path), "no such file or directory"))
    # red team, probe "a file given twice" (issue 35): `run s.tests.yaml .` ran each of its
    # tests twice under one key, which the store keeps once: the streamed reports had them
    # twice. A file is read once, where it is first named.
    seen: set[Path] = set()
    unique: list[Path] = []
    for file in files:
        resolved = file.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        try:
            str(file).encode("utf-8")
        except UnicodeEncodeError:
            # Bytes no encoding decoded (surrogate-escaped): its tests' keys cannot be stored,
            # reported or shown (the run stopped at the store's first write).
            shown = str(file).encode("utf-8", "backslashreplace").decode()
            problems.append(Problem(shown, "the file's name is not UTF-8 text: rename it"))
            continue
        unique.append(file)
    return unique, problems


def _is_candidate(path: Path) -> bool:
    name = path.name.lower()
    if name.endswith(TEST_FILE_SUFFIXES):
        return True
    if name.endswith(WORKFLOW_SUFFIXES) and name not in ("assertly.yaml", "assertly.yml"):
        try:
            head = path.read_text(encoding="utf-8", errors="replace")[:65536]
        except OSError:
            return False
        return "\neval:" in "\n" + head
    return False
