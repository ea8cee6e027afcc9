"""The documentation site builds with --strict, and its pages load nothing from the network.

``make docs`` (and CI) build it too; building it here makes ``make test`` catch a broken link
or anchor as well, and checks that no page fetches a script, a style sheet or a font from
elsewhere (Material's Google fonts are off: ``theme.font: false``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT

_REMOTE = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)


def test_site_builds_strictly_and_offline(tmp_path: Path) -> None:
    pytest.importorskip("material", reason="mkdocs-material is a dev extra (make docs)")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 15
    remote = {
        page.relative_to(site).as_posix(): found
        for page in pages
        if (found := _REMOTE.findall(page.read_text(encoding="utf-8")))
    }
    assert remote == {}, f"pages that load something from the network: {remote}"
    sources = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").glob("*.md")}
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert sorted(name for name in sources if f": {name}" not in nav) == [], "pages not in nav"
