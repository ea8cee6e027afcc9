"""A built-in name imports its own family only: the manifest's `HOMES` is exact (issue 35)."""

from __future__ import annotations

import json
import subprocess
import sys

from assertly.engine._entries import BUILTINS
from assertly.engine._manifest import FAMILIES, HOMES
from assertly.engine._registry import load_families


def test_homes_name_exactly_the_module_that_registers_each_builtin() -> None:
    load_families()
    for dialect in ("expect", "typed"):
        registered = {name: entry.build.__module__ for name, entry in BUILTINS[dialect].items()}
        assert registered == HOMES[dialect], dialect
    assert {module for homes in HOMES.values() for module in homes.values()} == set(FAMILIES)


def _families_after(code: str) -> list[str]:
    """The family modules loaded by ``code`` in a fresh interpreter."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return [module for module in loaded if module in FAMILIES]


def test_compiling_a_string_check_imports_the_string_family_only() -> None:
    code = "import assertly\nassertly.compile([{'type': 'contains', 'value': 'x'}])"
    assert _families_after(code) == ["assertly.engine.typed.strings"]


def test_each_dialect_imports_the_family_of_what_it_names() -> None:
    code = (
        "import assertly\n"
        "assertly.compile({'status': 'success', 'results_min': 1})\n"
        "assertly.compile([{'type': 'not-tool-called', 'value': 'x'}])"
    )
    assert _families_after(code) == [
        "assertly.engine.expect.counts",
        "assertly.engine.expect.fields",
        "assertly.engine.trajectory.typed",
    ]


def test_an_unknown_name_imports_every_family_for_its_suggestion() -> None:
    code = (
        "import assertly\n"
        "try:\n"
        "    assertly.compile([{'type': 'contian', 'value': 'x'}])\n"
        "except assertly.ConfigError as error:\n"
        "    print(error)"
    )
    assert _families_after(code) == sorted(FAMILIES)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "did you mean 'contains'" in done.stdout
