"""The public surface of ``assertly``: exactly these names, all documented, and a light import.

When this test fails because a name was added, removed or renamed, update the public API
section of the docs and ``PUBLIC_API`` below in the same change.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from typing import Any

import pytest

import assertly

# The documented public API of `import assertly` (keep in step with the docs).
PUBLIC_API: frozenset[str] = frozenset(
    {
        "AssertionResult",
        "AssertlyError",
        "CheckContext",
        "CheckResult",
        "ConfigError",
        "Expectation",
        "Outcome",
        "Problem",
        "Registry",
        "Response",
        "RunResult",
        "StoreError",
        "TargetError",
        "TargetResponse",
        "__version__",
        "arun",
        "assert_response",
        "assertion",
        "check",
        "compile",
        "load_plugins",
        "run",
    }
)

# Imported lazily, by the code paths that need them; never by `import assertly` itself.
HEAVY_MODULES: tuple[str, ...] = (
    "rouge_score",
    "nltk",
    "jsonpath",
    "pydantic",
    "rich",
    # What a command or a run loads when it needs it (tests/test_startup_imports.py).
    "yaml",
    "click",
    "asyncio",
    "sqlite3",
    "zstandard",
    "aiohttp",
    "psycopg",
    "jinja2",
    "rapidfuzz",
    "jsonschema_rs",
    "onnxruntime",
    "ray",
    "opentelemetry",
)


def test_all_is_sorted() -> None:
    assert list(assertly.__all__) == sorted(assertly.__all__)


def test_all_has_no_duplicates() -> None:
    assert len(assertly.__all__) == len(set(assertly.__all__))


def test_all_is_exactly_the_documented_api() -> None:
    surface = set(assertly.__all__)
    added = sorted(surface - PUBLIC_API)
    removed = sorted(PUBLIC_API - surface)
    assert not added and not removed, (
        f"public API changed without updating the docs: added {added}, removed {removed}"
    )


@pytest.mark.parametrize("name", sorted(PUBLIC_API))
def test_every_public_name_exists(name: str) -> None:
    assert hasattr(assertly, name), f"assertly.{name} is listed but missing"


def test_star_import_gives_exactly_the_public_api() -> None:
    namespace: dict[str, Any] = {}
    exec("from assertly import *", namespace)
    namespace.pop("__builtins__", None)
    assert set(namespace) == set(PUBLIC_API)


def _own_doc(obj: Any) -> str:
    """The docstring written on ``obj`` itself (a class does not inherit its base's here)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return (doc or "").strip()


@pytest.mark.parametrize("name", sorted(PUBLIC_API - {"__version__"}))
def test_every_public_name_has_a_docstring(name: str) -> None:
    assert _own_doc(getattr(assertly, name)), f"assertly.{name} has no docstring"


def _public_members(cls: type) -> list[tuple[str, Any]]:
    members = []
    for member_name, raw in vars(cls).items():
        if member_name.startswith("_"):
            continue
        member = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
        if inspect.isfunction(member) or isinstance(member, property):
            members.append((member_name, member))
    return members


@pytest.mark.parametrize(
    "name",
    sorted(name for name in PUBLIC_API if inspect.isclass(getattr(assertly, name, None))),
)
def test_public_methods_of_public_classes_have_docstrings(name: str) -> None:
    cls = getattr(assertly, name)
    undocumented = [member for member, obj in _public_members(cls) if not _own_doc(obj)]
    assert not undocumented, f"{name} members without a docstring: {undocumented}"


def test_version_is_a_version_string() -> None:
    assert isinstance(assertly.__version__, str)
    parts = assertly.__version__.split(".")
    assert len(parts) >= 2 and all(part.isdigit() for part in parts[:2])


def test_the_package_docstring_example_works() -> None:
    expectation = assertly.compile({"status": "success", "results_min": 1})
    result = expectation.check({"status": "success", "results": [{"file": "a.md"}]})
    assert result.passed


def test_exception_tree() -> None:
    for name in ("ConfigError", "TargetError", "StoreError"):
        assert issubclass(getattr(assertly, name), assertly.AssertlyError)
    assert issubclass(assertly.AssertlyError, Exception)


def _modules_after_import() -> set[str]:
    """Module names loaded by ``import assertly`` in a fresh interpreter."""
    code = "import json, sys; import assertly; print(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return set(json.loads(completed.stdout))


@pytest.fixture(scope="module")
def modules_after_import() -> set[str]:
    return _modules_after_import()


@pytest.mark.parametrize("module", HEAVY_MODULES)
def test_import_does_not_load_heavy_modules(module: str, modules_after_import: set[str]) -> None:
    loaded = sorted(name for name in modules_after_import if name.split(".")[0] == module)
    assert not loaded, f"`import assertly` imported {module}: {loaded[:5]}"
