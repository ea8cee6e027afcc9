"""Which files a run depends on, for ``assertly run --watch``.

The test files under the run's paths, the datasets they name, the config, and what answers
the agents: a ``py:`` agent's module file, a ``fixtures:`` file, and the files a ``cmd:``
agent's or a hook's command names (``python3 agent.py``: ``agent.py``). A change to a test
file or to a dataset re-runs the tests of that file; a change to anything else re-runs all.
"""

from __future__ import annotations

import importlib.machinery
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, TargetError
from ..loading import find_config, load_config, load_paths
from ..loading._discover import TEST_FILE_SUFFIXES, WORKFLOW_SUFFIXES, discover
from ..targets import parse_spec
from ._options import RunOptions

__all__ = ["WatchPlan", "resolved", "watch_plan"]

# Directories never watched under a directory of tests (as `discover` skips hidden ones).
_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules"})


@dataclass(slots=True)
class WatchPlan:
    """What a watched run depends on, as resolved paths.

    Attributes:
        test_files: Each test file, resolved -> as it is passed to the runner.
        named: Each file a test file names (a dataset) -> the test files naming it.
        everything: Files whose change re-runs every test: the config and the agents' files.
        test_dirs: The directories among the run's paths (a new test file there is run).
        given_dirs: The same directories as the run's paths give them.
    """

    test_files: dict[Path, str] = field(default_factory=dict)
    named: dict[Path, set[Path]] = field(default_factory=dict)
    everything: set[Path] = field(default_factory=set)
    test_dirs: list[Path] = field(default_factory=list)
    given_dirs: list[str] = field(default_factory=list)

    def directories(self) -> set[Path]:
        """The directories to watch (each on its own, not recursively).

        Directories rather than files: an editor that saves by writing a new file and
        renaming it over the old one replaces the file a watch would have followed.
        """
        found = {path.parent for path in [*self.test_files, *self.named, *self.everything]}
        for top in self.test_dirs:
            found.add(top)
            for folder, subfolders, _ in os.walk(top):
                subfolders[:] = [
                    name
                    for name in subfolders
                    if not name.startswith(".") and name not in _SKIPPED_DIRECTORIES
                ]
                found.update(Path(folder) / name for name in subfolders)
        return {folder for folder in found if folder.is_dir()}

    def relevant(self, path: Path) -> bool:
        """Whether a change to ``path`` (resolved) matters to the run."""
        if path in self.test_files or path in self.named or path in self.everything:
            return True
        return self._new_test_file(path) is not None

    def _new_test_file(self, path: Path) -> str | None:
        """A test file added under the run's directories, named as the runner names it."""
        if not path.name.lower().endswith((*TEST_FILE_SUFFIXES, *WORKFLOW_SUFFIXES)):
            return None  # (cheap first: an agent's log written in the project is no test)
        if not path.is_file() or not any(path.is_relative_to(top) for top in self.test_dirs):
            return None
        for item in discover(self.given_dirs)[0]:
            if item.resolve() == path:
                return str(item)
        return None

    def affected(self, changed: Iterable[Path]) -> list[str] | None:
        """The test files to run again for ``changed`` files; None: every test.

        A test file that no longer exists is left out (its tests are gone); a new test file
        under the run's directories is included.
        """
        files: dict[Path, str] = {}
        for path in changed:
            if path in self.everything:
                return None
            for test_file in self.named.get(path, {path}):
                shown = self.test_files.get(test_file) or self._new_test_file(test_file)
                if shown is not None and test_file.is_file():
                    files[test_file] = shown
        return sorted(files.values())


def resolved(path: str | Path) -> Path:
    """``path`` resolved; a symbolic link loop (which `Path.resolve` raises for) made absolute.

    Red team, probe "watch symlink loop": ``loop.tests.yaml -> loop.tests.yaml`` saved in a
    watched folder raised RuntimeError in the watcher's filter and ended the watch.
    """
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def watch_plan(options: RunOptions, previous: WatchPlan | None = None) -> WatchPlan:
    """The files ``options``' run depends on, read now.

    A file that does not load keeps what ``previous`` knew it named (its dataset is still
    what it depends on until it loads again); a config that does not load is watched alone
    with what ``previous`` had.
    """
    plan = WatchPlan()
    plan.given_dirs = [item for item in options.paths if Path(item).is_dir()]
    plan.test_dirs = [Path(item).resolve() for item in plan.given_dirs]
    for path in discover(options.paths)[0]:
        plan.test_files[path.resolve()] = str(path)
    for item in options.paths:
        # red team, probe "watch delete and recreate": a test file named on the command line
        # and deleted (`git stash`) left the plan, so saving it again (`git stash pop`) was
        # not a change of the run's: it stays watched while it is missing.
        if not Path(item).is_dir():
            plan.test_files.setdefault(resolved(item), item)
    config_file = Path(options.config_path) if options.config_path else find_config(Path.cwd())
    if config_file is not None:
        plan.everything.add(config_file.resolve())
    try:
        config = load_config(config_file)
    except ConfigError:
        if previous is not None:
            plan.everything |= previous.everything
            plan.named = dict(previous.named)
        return plan
    project = config.directory or Path.cwd()
    loaded = load_paths(options.paths, shape=config.shape, project_dir=project)
    loaded_files = {Path(test.file).resolve() for test in loaded.tests}
    for dataset in loaded.datasets:
        loaded_files.add(Path(dataset.file).resolve())
        plan.named.setdefault(dataset.path.resolve(), set()).add(Path(dataset.file).resolve())
    if previous is not None:  # what a file that no longer loads named before
        for named, files in previous.named.items():
            kept = {path for path in files if path not in loaded_files}
            if kept:
                plan.named.setdefault(named, set()).update(kept)
    directory = config.directory
    specs: list[tuple[Any, Path | None]] = [(spec, directory) for spec in config.agents.values()]
    specs += [(spec, directory) for per in config.matrix.values() for spec in per.values()]
    specs += [(spec, None) for spec in [options.target, *options.targets.values()] if spec]
    for spec, base in specs:
        plan.everything.update(_agent_files(spec, base or Path.cwd(), project))
    for hook in config.hooks.values():
        plan.everything.update(_command_files(hook, directory or Path.cwd(), project))
    return plan


def _agent_files(spec: Any, base: Path, project: Path) -> set[Path]:
    """The files that answer an agent: a module, a fixtures file, a command's scripts."""
    try:
        parsed = parse_spec(spec)
    except TargetError:
        return set()
    value = parsed.value
    if parsed.kind == "py" and isinstance(value, str):
        module = _module_file(value.partition(":")[0], [Path.cwd(), base])
        return {module} if module is not None else set()
    if parsed.kind == "fixtures" and isinstance(value, str):
        return {(base / value).resolve()}
    if parsed.kind == "cmd":
        if isinstance(value, str):
            return _command_files(value, base, project)
        cwd = base / value.cwd if value.cwd else base
        return _command_files(value.command, cwd, project)
    return set()


def _command_files(command: str | list[str], cwd: Path, project: Path) -> set[Path]:
    """The files of the project a command names (``python3 agent.py`` -> ``agent.py``).

    Only files inside the project: an interpreter (``/usr/bin/python3``) is not the agent.
    """
    try:
        words = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:  # unbalanced quotes: the run says so; nothing to watch
        return set()
    root = project.resolve()
    found: set[Path] = set()
    for word in words:
        path = (cwd / word).resolve()
        if path.is_relative_to(root) and path.is_file():
            found.add(path)
    return found


def _module_file(name: str, directories: list[Path]) -> Path | None:
    """A module's source file, found without importing it (where the agent's worker looks).

    The worker imports with the working directory on its path; the config's directory is
    searched too. Installed modules (``sys.path``) are left out: they are not edited.
    """
    parts = name.split(".")
    search = [str(folder) for folder in directories]
    spec = None
    for index, part in enumerate(parts):
        spec = importlib.machinery.PathFinder.find_spec(part, search)
        if spec is None:
            return None
        if index < len(parts) - 1:
            if not spec.submodule_search_locations:
                return None
            search = list(spec.submodule_search_locations)
    if spec is None or spec.origin is None or not os.path.isfile(spec.origin):
        return None
    return Path(spec.origin).resolve()
