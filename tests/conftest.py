"""Test-suite settings shared by every directory."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

# CI judges a submission once: there the property tests draw the same examples every run, so
# a verdict never depends on luck. Locally they explore new examples each time (and `make fuzz`
# explores many more).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def _scratch_inside_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Give processes the tests start a temporary directory pytest cleans up.

    Crash tests SIGKILL `assertly run` on purpose; the scratch directories of the commands it
    had started cannot be removed by the killed process, and must not pile up in /tmp.
    """
    scratch = tmp_path_factory.mktemp("scratch")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(scratch)
    yield
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
