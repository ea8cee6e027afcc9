"""Test-suite settings shared by every directory."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

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


# The PostgreSQL server the store tests use: the machine's own (`.ci/run` / `make postgres`
# install and start it, with this role). Without one, those tests are skipped and say why.
POSTGRES_SERVER = os.environ.get(
    "ASSERTLY_TEST_POSTGRES_URL", "postgresql://assertly:assertly-test@127.0.0.1:5432/postgres"
)


def _postgres_admin() -> Any:
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (.[dev] has it)")
    try:
        return psycopg.connect(POSTGRES_SERVER, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        where = POSTGRES_SERVER.split("@")[-1]
        pytest.skip(f"no PostgreSQL server at {where} ({error}); `make postgres` starts one")


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """The URL of a fresh database on the test PostgreSQL server, dropped afterwards."""
    import psycopg

    name = f"assertly_{uuid.uuid4().hex[:12]}"
    with _postgres_admin() as admin:
        for attempt in range(20):
            try:
                admin.execute(f'CREATE DATABASE "{name}"')
                break
            except psycopg.errors.ObjectInUse:
                # Two CREATE DATABASE at once (pytest -n): template1 is busy for a moment.
                if attempt == 19:
                    raise
                time.sleep(0.1)
    head, _, _ = POSTGRES_SERVER.rpartition("/")
    yield f"{head}/{name}"
    with _postgres_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
