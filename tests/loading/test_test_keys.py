"""A test's key (file::suite::id) is unambiguous: '::' in a suite name or test id is refused
at load, so no two tests can share a key and overwrite each other."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from assertly.cli import main
from assertly.loading import load_paths


def test_separator_in_names_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k.tests.yaml").write_text(
        "agent: bot\n"
        "test_suites:\n"
        "  a:\n"
        "    tests:\n"
        "      - {id: 'b::c', input: {}, expect: {status: ok}}\n"
        "  'a::b':\n"
        "    tests:\n"
        "      - {id: c, input: {}, expect: {status: ok}}\n"
    )
    loaded = load_paths([tmp_path / "k.tests.yaml"])
    assert [str(problem) for problem in loaded.file_problems] == [
        f"{tmp_path / 'k.tests.yaml'}:6:3: suite name 'a::b' contains '::', which separates "
        "file, suite and test id in a test's key; rename the suite"
    ]
    [test] = loaded.tests
    assert [str(problem) for problem in test.problems] == [
        f"{tmp_path / 'k.tests.yaml'}:5:10: b::c: test id 'b::c' contains '::', which "
        "separates file, suite and test id in a test's key; rename the test"
    ]
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "k.tests.yaml")])
    assert result.exit_code == 2
    assert "rename the suite" in result.output and "rename the test" in result.output


def test_keys_of_loaded_tests_are_unique(tmp_path: Path) -> None:
    (tmp_path / "u.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n"
        "  a: {tests: [{id: x, input: {}, expect: {status: ok}}]}\n"
        "  b: {tests: [{id: y, input: {}, expect: {status: ok}}]}\n"
    )
    loaded = load_paths([tmp_path / "u.tests.yaml"])
    keys = [test.key for test in loaded.tests]
    assert len(keys) == len(set(keys)) == 2
