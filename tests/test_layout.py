"""The house rules a newcomer relies on: no module of the package grows past 600 lines.

A module that long does more than one job; split it by job, as
runner/_run.py, loading/_tests.py and the stores were.
"""

from __future__ import annotations

from pathlib import Path

import assertly

MAX_LINES = 600


def test_no_module_is_longer_than_600_lines() -> None:
    package = Path(assertly.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 100  # the whole package was found
    too_long = {
        str(path.relative_to(package)): lines
        for path in modules
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}, f"modules over {MAX_LINES} lines: {too_long}"


def test_the_benchmark_suite_is_a_harness_and_sections() -> None:
    # issue 30: bench/suite.py was 1,761 lines (harness, ten sections, installs, docs
    # rewriting); it now only reads the command line and runs the sections in order.
    bench = Path(__file__).resolve().parent.parent / "bench"
    # Not what `make bench` installs under bench/.peers and other hidden directories.
    modules = sorted(
        path
        for path in bench.rglob("*.py")
        if not any(part.startswith(".") for part in path.relative_to(bench).parts)
    )
    assert (bench / "harness.py") in modules
    assert len(list((bench / "sections").glob("*.py"))) >= 10
    lengths = {str(p.relative_to(bench)): len(p.read_text("utf-8").splitlines()) for p in modules}
    assert lengths["suite.py"] <= 250
    too_long = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert too_long == {}, f"bench modules over {MAX_LINES} lines: {too_long}"
