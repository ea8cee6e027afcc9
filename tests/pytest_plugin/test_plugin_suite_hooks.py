"""Suite setup/cleanup hooks and per-test pass_threshold in the pytest plugin: a suite is set
up before its first item that runs and cleaned up at the teardown of its last item in a row,
like a module-scoped fixture; a failing cleanup is an error at that teardown.
"""

from __future__ import annotations

import sys

import pytest
from plugin_support import make_project, run

HOOK = """\
import sys
from pathlib import Path
with Path(__file__).with_name("events.log").open("a") as handle:
    handle.write(sys.argv[1] + "\\n")
sys.exit(5 if sys.argv[1].startswith("fail") else 0)
"""


def _project(pytester: pytest.Pytester, cleanup: str = "down") -> None:
    log = pytester.path / "events.log"
    tests = f"""\
        agent: bot
        test_suites:
          hooked:
            setup: up
            cleanup: {cleanup}
            tests:
              - {{id: one, input: {{log: "{log}", mode: one}}, expect: {{status: success}}}}
              - {{id: two, input: {{log: "{log}", mode: two}}, expect: {{status: success}}}}
          plain:
            tests:
              - {{id: three, input: {{log: "{log}", mode: three}}, expect: {{status: success}}}}
              - id: lenient
                trials: 2
                pass_threshold: any
                input: {{mode: flaky, state: "{pytester.path / "flaky.state"}"}}
                expect: {{status: success}}
        """
    hook = pytester.path / "hook.py"
    hook.write_text(HOOK, encoding="utf-8")
    python = sys.executable
    config = f"""\
        hooks:
          up: "{python} {hook} up"
          down: "{python} {hook} down"
          fail-down: "{python} {hook} fail-down"
        """
    make_project(pytester, {"s.tests.yaml": tests}, config)


def _events(pytester: pytest.Pytester) -> list[str]:
    return (pytester.path / "events.log").read_text().split()


def test_suite_hooks_wrap_the_suites_items_once(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = run(pytester, "-v")
    # The flaky test passes by its own pass_threshold: any (1 of 2 trials passed).
    result.assert_outcomes(passed=4)
    assert _events(pytester) == ["up", "one", "two", "down", "three"]


def test_a_failing_suite_cleanup_is_a_teardown_error(pytester: pytest.Pytester) -> None:
    _project(pytester, cleanup="fail-down")
    result = run(pytester)
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of hooked::two*", "*hook 'fail-down' exited with code 5*"]
    )


def test_k_selecting_part_of_a_suite_still_sets_it_up_and_cleans_up(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = run(pytester, "-k", "two")
    result.assert_outcomes(passed=1)
    assert _events(pytester) == ["up", "two", "down"]
