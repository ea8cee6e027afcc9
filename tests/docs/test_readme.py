"""The README stays short, and its architecture map matches the package's layout.

The map (the ``text`` block under "## Architecture") names the top-level modules at two spaces
of indentation (``  _records.py``), the packages at two (``  engine/``) and their subpackages at
four (``    expect/``). Every name must exist under src/assertly, and every package and top-level
module of src/assertly must be named: a new package, or a module moved, updates the map.
"""

from __future__ import annotations

import re
from pathlib import Path

from doc_blocks import ROOT, blocks_of

README = ROOT / "README.md"
PACKAGE = ROOT / "src" / "assertly"
MAX_LINES = 250


def test_readme_is_at_most_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move reference to docs/"


def _map_names() -> tuple[set[str], set[str]]:
    """The packages (``engine``, ``engine/expect``) and top-level modules the map names."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    page = [block for block in blocks_of(README) if block.text in section]
    assert len(page) == 1 and page[0].text.startswith("src/assertly/"), "the map is missing"
    packages: set[str] = set()
    modules: set[str] = set()
    parent = ""
    for line in page[0].text.splitlines()[1:]:
        match = re.match(r"^( +)([\w.]+/|[\w]+\.py)(?:\s|$)", line)
        if match is None:
            continue  # a continuation line of a description
        depth, name = len(match[1]), match[2]
        if depth == 2 and name.endswith("/"):
            parent = name.rstrip("/")
            packages.add(parent)
        elif depth == 4 and name.endswith("/"):
            packages.add(f"{parent}/{name.rstrip('/')}")
        elif depth == 2:
            modules.add(name)
    return packages, modules


def _layout() -> tuple[set[str], set[str]]:
    """The packages (directories with an ``__init__.py``) and top-level modules of the source."""
    packages = {
        init.parent.relative_to(PACKAGE).as_posix()
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE and "__pycache__" not in init.parts
    }
    modules = {path.name for path in PACKAGE.glob("*.py")}
    return packages, modules


def test_architecture_map_matches_the_layout() -> None:
    named_packages, named_modules = _map_names()
    packages, modules = _layout()
    assert sorted(named_packages - packages) == [], "the map names packages that do not exist"
    assert sorted(packages - named_packages) == [], "packages missing from the README's map"
    assert sorted(named_modules - modules) == [], "the map names modules that do not exist"
    assert sorted(modules - named_modules) == [], "top-level modules missing from the map"


def test_the_map_is_read() -> None:
    packages, modules = _map_names()
    assert {"engine", "engine/expect", "store", "viewer"} <= packages
    assert {"__init__.py", "_records.py", "_json.py"} <= modules


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as -."""
    anchors = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^#{1,6} (.+)$", line):
            slug = re.sub(r"[^\w\- ]", "", match[1].strip().lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


def test_readme_links_resolve() -> None:
    """The README is no page of the site (mkdocs checks those): its links are checked here."""
    text = README.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else README
        missing_anchor = anchor and file.suffix == ".md" and anchor not in _anchors(file)
        if not file.exists() or missing_anchor:
            broken.append(target)
    assert broken == [], f"README.md links to what does not exist: {broken}"
