#!/usr/bin/env python3
"""Setup/cleanup hook for the example tests: the bundled vault must be intact.

A hook is a command named in assertly.yaml under hooks:; a test lists hook names under setup:
and cleanup:. A non-zero exit fails the hook, and the test ends as an error with the tail of
stderr. This one checks that the vault still holds its 12 notes in the expected folders, so a
test never runs against a vault someone has been editing.
"""

from __future__ import annotations

import sys
from pathlib import Path

VAULT = Path(__file__).resolve().parent / "vault"
EXPECTED = {"journal": 6, "work": 3, "people": 2, "documents": 1}


def main() -> int:
    """Exit 0 when every folder holds the expected number of notes."""
    found = {name: len(list((VAULT / name).rglob("*.md"))) for name in EXPECTED}
    if found != EXPECTED:
        print(f"vault changed: expected {EXPECTED}, found {found}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
