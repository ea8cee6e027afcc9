"""Scale-out figures for `make bench` (section "scale-out"): the PostgreSQL store against the
SQLite one, and the Ray backend against a local run.

* stores: N recorded cases (a dataset suite, 8 assertions each) through `assertly run` into a
  fresh SQLite file and into a fresh PostgreSQL database: wall time and rows per second. The
  server is ``ASSERTLY_BENCH_POSTGRES_URL`` (a ``postgres`` database URL of a server you run;
  default ``make postgres``'s); without one, that row says so.
* ray: M tests calling a `cmd:` agent that answers after 50 ms, at ``-j 2``: a local run
  against ``--backend ray`` (a local cluster of 2 workers it starts): the run's own duration
  and the overhead per task.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_SERVER = "postgresql://assertly:assertly-test@127.0.0.1:5432/postgres"


@contextmanager
def fresh_database() -> Iterator[str | None]:
    """A new database on the bench's PostgreSQL server (dropped after), or None without one."""
    server = os.environ.get("ASSERTLY_BENCH_POSTGRES_URL", DEFAULT_SERVER)
    try:
        import psycopg

        admin = psycopg.connect(server, autocommit=True, connect_timeout=3)
    except Exception:  # no psycopg, no server: the row says "not measured"
        yield None
        return
    name = f"assertly_bench_{uuid.uuid4().hex[:10]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{server.rpartition('/')[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def ray_figures(directory: Path, tests: int, sleep: float, jobs: int) -> dict[str, Any]:
    """Local and Ray runs of the same slow-agent suite (`bench/ray_bench.py`'s)."""
    import ray_bench

    directory.mkdir(parents=True, exist_ok=True)
    ray_bench.write_project(directory, tests, sleep)
    local = ray_bench.timed_run(directory, "local", [], jobs)
    remote = ray_bench.timed_run(directory, "ray", ["--backend", "ray"], jobs)
    return {
        "tests": tests,
        "sleep_s": sleep,
        "jobs": jobs,
        "local": local,
        "ray": remote,
        "overhead_ms_per_task": (remote["run_s"] - local["run_s"]) * 1000 / tests * jobs,
    }
