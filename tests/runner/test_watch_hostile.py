"""Red team of ``assertly run --watch`` (issue 34): a symbolic link loop in a watched folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_watch import TEST_FILE, Watch, root

__all__ = ["root"]  # the fixture, imported for pytest

pytest.importorskip("watchfiles")


def test_a_symlink_loop_saved_in_a_watched_folder_does_not_end_the_watch(root: Path) -> None:
    # red team, probe "watch symlink loop": resolving `loop.tests.yaml -> loop.tests.yaml`
    # raised RuntimeError in the watcher's filter, and the watch died with a traceback.
    watch = Watch(root, ".")
    try:
        watch.wait_for("^watching ")
        os.symlink("loop.tests.yaml", root / "loop.tests.yaml")
        os.symlink("other.tests.yaml", root / "b-loop.tests.yaml")
        os.symlink("b-loop.tests.yaml", root / "other.tests.yaml")
        _, lines = watch.save_and_wait(
            root / "a.tests.yaml",
            TEST_FILE.format(input="hello", expected="bye"),
            r"^since the previous run",
        )
        assert "changed: a.tests.yaml; running a.tests.yaml" in lines, lines
        assert watch.process.poll() is None
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1
    assert not any("Traceback" in line for line in watch.lines), watch.lines


def test_a_test_file_deleted_then_saved_again_runs_again(root: Path) -> None:
    # red team, probe "watch delete and recreate": `git stash` then `git stash pop` of the
    # one file the watch was started on.
    watch = Watch(root, "a.tests.yaml")
    try:
        watch.wait_for("^watching ")
        (root / "a.tests.yaml").unlink()
        watch.wait_for(r"removed: a\.tests\.yaml|no longer|not a file|does not exist")
        watch.save_and_wait(
            root / "a.tests.yaml",
            TEST_FILE.format(input="hello", expected="bye"),
            r"(?:FAILED|PASSED) +a\.tests\.yaml::s::one",
        )
        assert watch.process.poll() is None
        code = watch.interrupt()
    finally:
        watch.kill()
    assert code == 1, watch.lines
