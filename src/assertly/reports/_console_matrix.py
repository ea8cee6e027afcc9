"""The console's view of a matrix run: the matrix of tests by targets, or what disagrees.

The matrix (rows: tests; columns: target labels; cells ✓ ✗ ! and an en dash for passed,
failed, error, skipped) is printed when it fits the terminal's width and has at most
`MATRIX_ROWS` rows; otherwise the tests where the targets disagree are listed (at most
`LISTED_DISAGREEMENTS`). Then always one line per target and one per comparison with the first
target. Test names come from test files: every line goes through `terminal_safe` (the
console's printer).
"""

from __future__ import annotations

import shutil
import unicodedata
from collections.abc import Iterator

from ..compare._matrix import MatrixRow, MatrixView
from ._matrix_text import ASCII_MARKS, MARKS, comparison_line, row_name, target_line

__all__ = ["LISTED_DISAGREEMENTS", "MATRIX_ROWS", "NAME_CELLS", "matrix_lines", "terminal_width"]

# More rows than this and a matrix no longer reads at a glance in a terminal: the
# disagreements say what matters (the reports have the whole matrix).
MATRIX_ROWS = 40
LISTED_DISAGREEMENTS = 40
NAME_CELLS = 60  # a longer test name is cut (with …) in the matrix


def terminal_width(console: object | None) -> int:
    """The width to fit: rich's console's, else the terminal's (``COLUMNS``; 80 unknown)."""
    width = getattr(console, "width", None)
    if isinstance(width, int) and width > 0:
        return width
    return shutil.get_terminal_size((80, 24)).columns


def _cells(text: str) -> int:
    """Terminal cells ``text`` takes: wide East Asian characters two, combining marks none."""
    return sum(
        0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
        for char in text
    )


def _fit(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells (the last one an ellipsis), padded to them."""
    if _cells(text) > cells:
        kept = ""
        for char in text:
            if _cells(kept + char) > cells - 1:
                break
            kept += char
        text = kept + "…"
    return text + " " * (cells - _cells(text))


def _marks(encoding: str | None) -> dict[str, str]:
    """The matrix's marks when the stream can write them, else v x ! -."""
    try:
        "".join(MARKS.values()).encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return ASCII_MARKS
    return MARKS


def _matrix(view: MatrixView, names: list[str], marks: dict[str, str]) -> Iterator[str]:
    disagree = "≠" if marks is MARKS else "*"
    name_cells = max(_cells(name) for name in [*names, "test"])
    header = "    " + _fit("test", name_cells)
    header += "".join("  " + label for label in view.targets)
    yield f"matrix ({', '.join(f'{marks[s]} {s}' for s in MARKS)}; {disagree} targets disagree)"
    yield header
    for row, name in zip(view.rows, names, strict=True):
        cells = []
        for label in view.targets:
            mark = marks.get(row.statuses.get(label, ""), " ")
            cells.append("  " + mark.center(len(label)))
        line = f"  {disagree if row.disagree else ' '} {_fit(name, name_cells)}{''.join(cells)}"
        yield line.rstrip()


def _disagreements(view: MatrixView, marks: dict[str, str]) -> Iterator[str]:
    rows: list[MatrixRow] = view.disagreements
    if not rows:
        yield f"the targets agree on every test ({len(view.rows)})"
        return
    yield f"targets disagree on {len(rows)} of {len(view.rows)} tests:"
    for row in rows[:LISTED_DISAGREEMENTS]:
        cells = "  ".join(f"{label} {marks[status]}" for label, status in row.statuses.items())
        yield f"  {row_name(row)}  {cells}"
    if len(rows) > LISTED_DISAGREEMENTS:
        yield (
            f"  … and {len(rows) - LISTED_DISAGREEMENTS} more "
            "(every test in the JSON, Markdown and HTML reports)"
        )


def matrix_lines(view: MatrixView, width: int, encoding: str | None = None) -> Iterator[str]:
    """The lines to print for a matrix run.

    The matrix if it fits ``width``, else the disagreements; then the targets' summaries and
    comparisons.
    """
    marks = _marks(encoding)
    names = [_fit(row_name(row), NAME_CELLS).rstrip() for row in view.rows]
    name_cells = max((_cells(name) for name in [*names, "test"]), default=4)
    needed = 4 + name_cells + sum(2 + len(label) for label in view.targets)
    if view.rows and len(view.rows) <= MATRIX_ROWS and needed <= width:
        yield from _matrix(view, names, marks)
        count = len(view.disagreements)
        if count:
            yield f"targets disagree on {count} of {len(view.rows)} tests"
    else:
        yield from _disagreements(view, marks)
    for label in view.targets:
        yield target_line(view.summaries[label])
    for item in view.comparisons:
        yield comparison_line(item)
