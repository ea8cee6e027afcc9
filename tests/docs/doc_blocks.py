"""The fenced code blocks of README.md and docs/*.md, read once for the tests of tests/docs/."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and its text (indentation removed)."""

    page: str  # relative to the repository: README.md, docs/running.md
    line: int  # the line of the opening fence, 1-based
    lang: str  # "" for a fence without a language
    text: str
    indent: int  # a block inside a list item is indented
    # ``page | start``: the start of its first line (a trailing comment dropped, spaces
    # collapsed, 50 characters), and `` (N)`` for the N-th block of the page that starts so:
    # how the tests' lists name a block (a line number would change with every edit above it).
    key: str

    @property
    def id(self) -> str:
        """The pytest id: ``page:line``."""
        return f"{self.page}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """Every fenced block of one Markdown page, in order; an unclosed fence is an error."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    starts: Counter[str] = Counter()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening["indent"])
        start = index
        index += 1
        body: list[str] = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        if index == len(lines):
            raise ValueError(f"{page}:{start + 1}: a code fence is never closed")
        key = f"{page} | {_start(body)}"
        starts[key] += 1
        if starts[key] > 1:
            key = f"{key} ({starts[key]})"
        found.append(Block(page, start + 1, opening["lang"], "\n".join(body) + "\n", indent, key))
        index += 1
    return found


def _start(body: list[str]) -> str:
    first = next((line.strip() for line in body if line.strip()), "")
    first = re.sub(r"\s+#\s.*$", "", first)
    return " ".join(first.split())[:50]


def all_blocks() -> list[Block]:
    """The blocks of every page, README first."""
    return [block for page in PAGES for block in blocks_of(page)]


def following(block: Block, blocks: list[Block]) -> Block | None:
    """The block right after ``block`` on its page (its shown output, when it is one)."""
    position = blocks.index(block)
    after = blocks[position + 1] if position + 1 < len(blocks) else None
    return after if after is not None and after.page == block.page else None
