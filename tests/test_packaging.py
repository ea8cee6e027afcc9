"""The distributions install into a project of one's own (issue 29, item 4).

The sdist and the wheel are built once per module from this checkout (`python -m build
--no-isolation`: the build backend comes from the dev extra, so nothing is downloaded), checked
with `twine check --strict`, and the wheel is installed into a fresh virtual environment in a
temporary directory outside the repository. That venv gets the wheel with `pip install --no-deps
--no-index` and its dependencies from the running interpreter's site-packages through a `.pth`
file written *after* the install (so pip never sees, and never touches, the developer's editable
assertly): robust on a fresh CI machine, whatever its pip cache holds, and without the network.
Then `assertly --version`, `check` and `run` run from a copy of the examples, with PYTHONPATH
cleared, and the test asserts that the code that ran came from the venv, not from `src/`.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import assertly

pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Installed:
    """A wheel installed into a fresh venv outside the repository."""

    dist: Path
    venv: Path
    python: Path
    assertly: Path
    env: dict[str, str]


def _run(args: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [str(a) for a in args], check=False, capture_output=True, text=True, timeout=300, **kwargs
    )


def _clean_env() -> dict[str, str]:
    # PYTHONPATH (set by developers to point at src/) would make the venv import the checkout.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONNOUSERSITE"] = "1"
    env.pop("ASSERTLY_CONFIG", None)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("not running from a source checkout")
    root = tmp_path_factory.mktemp("packaging")
    dist = root / "dist"
    built = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO], cwd=root
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    target = root / "venv"
    venv.create(target, with_pip=True, clear=True)
    bindir = "Scripts" if os.name == "nt" else "bin"
    python = target / bindir / "python"
    env = _clean_env()
    wheel = next(dist.glob("assertly-*.whl"))
    pip = _run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel],
        env=env,
        cwd=root,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # The dependencies: this interpreter's site-packages, appended after the venv's own, so
    # the venv's assertly (from the wheel) comes first and the editable one is never loaded
    # (a directory named in a .pth file is added to sys.path without running its .pth files).
    purelib = Path(
        _run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env
        ).stdout.strip()
    )
    outer = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["platlib"]])
    (purelib / "zz_assertly_test_deps.pth").write_text(
        "".join(f"{p}\n" for p in outer if Path(p).is_dir()), encoding="utf-8"
    )
    return Installed(dist, target, python, target / bindir / "assertly", env)


def test_make_dist_artifacts_pass_twine_check(installed: Installed) -> None:
    # issue 29, first contact: "not installable into one's own project"
    sdists = list(installed.dist.glob("assertly-*.tar.gz"))
    wheels = list(installed.dist.glob("assertly-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1
    checked = _run([sys.executable, "-m", "twine", "check", "--strict", *sdists, *wheels])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_wheel_metadata_is_complete(installed: Installed) -> None:
    wheel = next(installed.dist.glob("assertly-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"assertly-{assertly.__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(
            f"assertly-{assertly.__version__}.dist-info/entry_points.txt"
        ).decode()
    assert f"Version: {assertly.__version__}" in metadata
    assert "License-Expression: MIT" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Requires-Python: >=3.11" in metadata
    for needed in ("Classifier: ", "Keywords: ", "Project-URL: Source", "Project-URL: Issues"):
        assert needed in metadata, needed
    for extra in ("postgres", "similar", "ray", "dev"):
        assert f"Provides-Extra: {extra}" in metadata, extra
    assert "assertly = assertly.cli:main" in entry_points
    assert "assertly = assertly.pytest_plugin" in entry_points
    # The package data the CLI, the reports and the viewer read at run time.
    for data in (
        "assertly/py.typed",
        "assertly/reports/templates/report.html.j2",
        "assertly/viewer/static/viewer.js",
        "assertly/engine/graded/data/minilm-vocab.txt",
    ):
        assert data in names, data
    assert not any(n.startswith(("tests/", "src/")) for n in names)


def test_sdist_carries_license_tests_and_no_local_state(installed: Installed) -> None:
    sdist = next(installed.dist.glob("assertly-*.tar.gz"))
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for needed in ("LICENSE", "README.md", "pyproject.toml", "src/assertly/cli/__init__.py"):
        assert needed in names, needed
    assert any(n.startswith("tests/") for n in names)
    assert not any(n.startswith((".venv/", "dist/", "examples/reports/")) for n in names)


def test_installed_wheel_runs_version_check_and_run(installed: Installed, tmp_path: Path) -> None:
    # issue 29, first contact: the wheel works in a project of one's own, away from src/.
    project = tmp_path / "myproject"
    shutil.copytree(REPO / "examples", project, ignore=shutil.ignore_patterns("reports"))
    env = installed.env

    where = _run([installed.python, "-c", "import assertly; print(assertly.__file__)"], env=env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().is_relative_to(installed.venv.resolve())

    version = _run([installed.assertly, "--version"], env=env, cwd=project)
    assert version.returncode == 0, version.stderr
    assert assertly.__version__ in version.stdout

    check = _run(
        [
            installed.assertly,
            "check",
            "--expect",
            "search_expect.yaml",
            "--response",
            "search_response.json",
        ],
        env=env,
        cwd=project,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    failing = _run(
        [
            installed.assertly,
            "check",
            "--expect",
            "search_expect_failing.yaml",
            "--response",
            "search_response_mixed.json",
        ],
        env=env,
        cwd=project,
    )
    assert failing.returncode == 1, failing.stdout + failing.stderr

    # `run` with the project config of the copied examples: a real command agent, a hook, the
    # SQLite run store and a JSON report, all under the copy.
    run = _run(
        [
            installed.assertly,
            "run",
            "notes.tests.yaml",
            "--suite",
            "errors",
            "--plain",
            "-o",
            "reports/run.json",
        ],
        env=env,
        cwd=project,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((project / "reports" / "run.json").read_text(encoding="utf-8"))
    assert report["summary"]["passed"] >= 1
    assert report["summary"]["failed"] == 0 and report["summary"]["errored"] == 0
    assert (project / "reports" / "runs.sqlite").is_file()
