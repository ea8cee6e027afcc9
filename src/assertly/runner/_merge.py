"""``assertly merge``: shard runs joined into one run, with one summary and one exit code.

The parts may come from the project's store (a run id, ``last``, ``last~N``), from other run
stores (``path/to/runs.sqlite`` for its last run, or ``path/to/runs.sqlite:RUN``) or from JSON
reports written on other machines (``report.json``). Every part must be a shard of the same
split (``--shard I/N`` with one N), no shard may come twice, none may be missing, and no test
may be in two parts: anything else is refused with what is wrong, and nothing is written.

A part read from a store keeps every stored trial as it is. A part read from a JSON report
keeps what the report holds: each trial's verdict, failures, error, output and metrics (not
each assertion's passing result).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._exceptions import StoreError
from .._records import RunRecord
from ..store import RunStore, new_run_id
from ..store._files import is_sqlite_file, read_report
from ._options import parse_shard
from ._verdict import build_run

__all__ = ["merge_runs"]

_BATCH = 1_000  # tests whose metadata is written in one transaction


@dataclass
class _Part:
    """One shard run to merge: where it is, which shard it is, and how to read it."""

    name: str
    run_id: str
    shard: str | None
    threshold: str
    duration_ms: float
    evals: list[dict[str, Any]]
    store: str | None = None  # a stored run: what opens its store again (a path or a URL)
    report: dict[str, Any] | None = None  # a JSON report

    def tests(self) -> Iterator[tuple[dict[str, Any], dict[int, dict[str, Any]]]]:
        """Each test's metadata with its trial records, in run order."""
        if self.store is not None:
            store = RunStore(self.store, must_exist=True, read_only=True)
            try:
                yield from store.iter_tests(self.run_id)
            finally:
                store.close()
            return
        assert self.report is not None
        for test in self.report.get("tests") or []:
            yield (
                _report_meta(test),
                {
                    int(trial.get("trial", number)): _report_trial(test, trial)
                    for number, trial in enumerate(test.get("trials") or [], start=1)
                },
            )


def _report_meta(test: dict[str, Any]) -> dict[str, Any]:
    key = test.get("key") or f"{test.get('file')}::{test.get('suite')}::{test.get('id')}"
    meta = {name: test.get(name) for name in ("id", "name", "suite", "file", "line", "tags")}
    meta.update(
        key=key,
        name=test.get("name") or test.get("id"),
        tags=test.get("tags") or [],
        definition=test.get("definition"),
        pass_threshold=test.get("pass_threshold"),
        input=test.get("input"),
    )
    return meta


def _report_trial(test: dict[str, Any], trial: dict[str, Any]) -> dict[str, Any]:
    metrics = trial.get("metrics") or {}
    step: dict[str, Any] = {
        "name": str(test.get("id")),
        "status": trial.get("status"),
        "response": trial.get("output"),
        "checks": [],
        "error": trial.get("error"),
        "latency_ms": metrics.get("latency_ms"),
        "cost_usd": metrics.get("cost_usd"),
        "model": metrics.get("model"),
        "score": None,
        "tokens": metrics.get("tokens"),
    }
    return {
        "test_key": "",  # set by the caller
        "trial": trial.get("trial"),
        "status": trial.get("status"),
        "duration_ms": trial.get("duration_ms") or 0.0,
        "steps": [step] if "output" in trial else [],
        "failures": trial.get("failures") or [],
        "error": trial.get("error"),
        "reason": trial.get("reason"),
        "score": test.get("score"),
    }


def _open_part(name: str, store_path: str | None) -> _Part:
    path, _, run = name.partition(":") if ".sqlite:" in name or ".db:" in name else (name, "", "")
    candidate = Path(path)
    if "://" in name:  # the project's store is a database: a run of it
        return _stored_part(name, store_path or "", name)
    if candidate.suffix == ".json" or (candidate.is_file() and not is_sqlite_file(candidate)):
        return _report_part(name, candidate)
    if candidate.is_file():
        return _stored_part(name, candidate, run or "last")
    if store_path is None:
        raise StoreError(f"{name!r} is not a file, and no run store is configured")
    return _stored_part(name, store_path, name)


def _stored_part(name: str, path: str | Path, run: str) -> _Part:
    store = RunStore(str(path), must_exist=True, read_only=True)
    try:
        run_id = store.resolve_run_id(run)
        info = store.run_info(run_id)
        evals = store.evals(run_id)
        location = store.location
    finally:
        store.close()
    options = info.get("options") or {}
    return _Part(
        name=name,
        run_id=run_id,
        shard=options.get("shard"),
        threshold=str(options.get("pass_threshold") or "all"),
        duration_ms=float(info.get("duration_ms") or 0.0),
        evals=evals,
        store=location,
    )


def _report_part(name: str, path: Path) -> _Part:
    data = read_report(path)
    summary = data.get("summary") or {}
    return _Part(
        name=name,
        run_id=str(data.get("run_id") or path.name),
        shard=data.get("shard"),
        threshold="all",
        duration_ms=float(summary.get("duration_ms") or 0.0),
        evals=[
            {
                "file": suite.get("file"),
                "score": suite.get("score"),
                "threshold": suite.get("threshold"),
                "passed": suite.get("passed"),
                "cases": [],
            }
            for suite in data.get("evals") or []
        ],
        report=data,
    )


def _check_shards(parts: list[_Part]) -> None:
    """Refuse parts that are not exactly the N shards of one split."""
    unsharded = [part.name for part in parts if not part.shard]
    if unsharded:
        raise StoreError(
            f"{', '.join(unsharded)}: not a shard run (run with --shard I/N); merge joins the "
            "shards of one split"
        )
    shards = [(part, parse_shard(str(part.shard))) for part in parts]
    counts = {count for _, (_, count) in shards}
    if len(counts) > 1:
        listed = ", ".join(f"{part.name} ({part.shard})" for part, _ in shards)
        raise StoreError(f"the parts come from different splits: {listed}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for part, (index, _) in shards:
        if index in seen:
            raise StoreError(f"shard {index}/{count} is given twice: {seen[index]} and {part.name}")
        seen[index] = part.name
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise StoreError(f"shard{'s' if len(missing) > 1 else ''} missing: {', '.join(missing)}")
    thresholds = {part.threshold for part in parts if part.store is not None}
    if len(thresholds) > 1:
        raise StoreError(f"the parts were run with different pass thresholds: {sorted(thresholds)}")


def merge_runs(sources: list[str], store_path: str) -> RunRecord:
    """Join shard runs into one new run of ``store_path``; return it as stored.

    Raises:
        StoreError: A part cannot be read, the parts are not the shards of one split, or a
            test is in two parts (nothing is written then).
    """
    parts = [_open_part(source, store_path) for source in sources]
    _check_shards(parts)
    store = RunStore(store_path)
    run_id = new_run_id()
    started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    threshold = next((part.threshold for part in parts if part.store is not None), "all")
    options = {
        "pass_threshold": threshold,
        "merged_from": [{"source": part.name, "run_id": part.run_id} for part in parts],
        "problems": [],
    }
    try:
        store.start_run(run_id, started, options)
        position = 0
        for part in parts:
            position = _copy(store, run_id, part, position)
        stored = store.count_tests(run_id)
        if stored != position:
            raise StoreError(
                f"{position - stored} test(s) are in more than one part: the shards were not "
                "made from the same test files"
            )
        for part in parts:
            for record in part.evals:
                store.save_eval(run_id, str(record["file"]), record)
        # The shards ran side by side: the merged run took as long as the slowest one.
        finished = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        store.finish_run(run_id, finished, max(part.duration_ms for part in parts))
        return build_run(store, run_id)
    except BaseException:
        with contextlib.suppress(StoreError):
            store.forget_run(run_id)
        raise
    finally:
        store.close()


def _copy(store: RunStore, run_id: str, part: _Part, position: int) -> int:
    """Copy a part's tests and trials into ``run_id`` from ``position`` on; the next position."""
    metas: list[dict[str, Any]] = []
    trials: list[tuple[str, int, dict[str, Any]]] = []

    def flush() -> None:
        store.save_tests(run_id, metas, start=position - len(metas))
        for key, number, record in trials:
            store.save_trial(run_id, key, number, record, batch=True)
        store.flush()
        metas.clear()
        trials.clear()

    for meta, by_trial in part.tests():
        if not meta.get("pass_threshold"):
            meta["pass_threshold"] = part.threshold
        metas.append(meta)
        for number, record in by_trial.items():
            trials.append((meta["key"], number, {**record, "test_key": meta["key"]}))
        position += 1
        if len(metas) >= _BATCH:
            flush()
    flush()
    return position
