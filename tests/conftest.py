"""Test-suite settings shared by every directory."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
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


# The PostgreSQL server the store tests use: ASSERTLY_TEST_POSTGRES_URL when set (a server of
# your own), else one the tests start in a temporary directory with the distribution's
# initdb and pg_ctl (as the `postgres` user when run as root, as PostgreSQL requires); without
# PostgreSQL's binaries (`apt-get install postgresql`), those tests are skipped and say why.
_POSTGRES_PASSWORD = "assertly-test"


def _initdb() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1] if found else None


def _as_postgres(command: list[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when this is root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of the test PostgreSQL server's ``postgres`` database (see above)."""
    given = os.environ.get("ASSERTLY_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    initdb = _initdb()
    if initdb is None:
        pytest.skip("PostgreSQL's initdb is not installed (apt-get install postgresql)")
    import pwd
    import socket
    import subprocess
    import tempfile

    # Short: the server's Unix socket path must stay under 107 bytes.
    home = Path(tempfile.mkdtemp(prefix="assertly-pg-", dir="/tmp"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(home, user.pw_uid, user.pw_gid)
    password_file = home / "password"
    password_file.write_text(_POSTGRES_PASSWORD)
    if os.geteuid() == 0:
        os.chown(password_file, user.pw_uid, user.pw_gid)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = home / "data"
    bin_dir = initdb.parent
    subprocess.run(
        _as_postgres(
            [str(initdb), "-D", str(data), "-U", "assertly", "-A", "scram-sha-256",
             f"--pwfile={password_file}", "--no-sync", "-E", "UTF8"]
        ),
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_postgres(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
             str(home / "log"), "-w", "start"]
        ),
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    try:
        yield f"postgresql://assertly:{_POSTGRES_PASSWORD}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
            check=False,
        )
        import shutil

        shutil.rmtree(home, ignore_errors=True)


def _postgres_admin(server: str) -> Any:
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (.[dev] has it)")
    try:
        return psycopg.connect(server, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        pytest.skip(f"no PostgreSQL server at {server.split('@')[-1]} ({error})")


@pytest.fixture
def postgres_database(postgres_server: str) -> Iterator[str]:
    """The URL of a fresh database on the test PostgreSQL server, dropped afterwards."""
    import psycopg

    name = f"assertly_{uuid.uuid4().hex[:12]}"
    with _postgres_admin(postgres_server) as admin:
        for attempt in range(20):
            try:
                admin.execute(f'CREATE DATABASE "{name}"')
                break
            except psycopg.errors.ObjectInUse:
                # Two CREATE DATABASE at once (pytest -n): template1 is busy for a moment.
                if attempt == 19:
                    raise
                time.sleep(0.1)
    head, _, _ = postgres_server.rpartition("/")
    yield f"{head}/{name}"
    with _postgres_admin(postgres_server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
