"""Under the pytest plugin, a ``py:`` agent that ends its process fails its own item only."""

from __future__ import annotations

import pytest
from plugin_support import write

AGENT = """\
import ctypes, os

def answer(q):
    if q["how"] == "os_exit":
        os._exit(0)
    if q["how"] == "segfault":
        ctypes.string_at(0)
    return {"status": "success"}
"""


def test_an_agent_that_ends_its_process_fails_its_item_and_the_session_goes_on(
    pytester: pytest.Pytester,
) -> None:
    # issue 28, probe 2 under the plugin: os._exit(0) in the agent ended pytest itself.
    root = pytester.path
    (root / "dying_agent.py").write_text(AGENT, encoding="utf-8")
    (root / "assertly.yaml").write_text("agents:\n  bot: py:dying_agent:answer\n", "utf-8")
    write(
        root,
        "d.tests.yaml",
        """\
        agent: bot
        test_suites:
          s:
            tests:
              - {id: ok1, input: {how: ok}, expect: {status: success}}
              - {id: quits, input: {how: os_exit}, expect: {status: success}}
              - {id: ok2, input: {how: ok}, expect: {status: success}}
              - {id: crashes, input: {how: segfault}, expect: {status: success}}
              - {id: ok3, input: {how: ok}, expect: {status: success}}
        """,
    )
    # In a subprocess: before the fix, the agent's os._exit ended the process running pytest.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3, failed=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*quits error: step quits: the agent's process exited with code 0*",
            "*crashes error: step crashes: the agent's process was killed by SIGSEGV*",
        ],
        consecutive=False,
    )
