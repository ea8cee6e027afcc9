"""``assertly merge``: shard runs joined into one run, with one summary and one exit code.

The parts may come from the project's store (a run id, ``last``, ``last~N``), from other run
stores (``path/to/runs.sqlite`` for its last run, or ``path/to/runs.sqlite:RUN``) or from JSON
reports written on other machines (``report.json``). Every part must be a shard of the same
split (``--shard I/N`` with one N), no shard may come twice, none may be missing, and no test
may be in two parts: anything else is refused with what is wrong, and nothing is written.

Every part must also carry the same plan (`assertly._digests`: the filters and verdict-changing
config it ran with, and the digest of the whole test set with every test's definition), the
tests of all the parts must add up to that test set exactly, each test must belong to the
shard that holds it, a JSON report's records must match their digest, and no trial may claim
a pass (or a skip) that its own failures or error contradict.

A part read from a store keeps every stored trial as it is. A part read from a JSON report
keeps what the report holds: each trial's verdict, failures, error, output and metrics (not
each assertion's passing result).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._digests import combine_sums, plan_digest, records_digest, tests_sum
from .._exceptions import StoreError
from .._records import RunRecord
from ..engine._jsonschema import first_error
from ..store import RunStore, build_run, new_run_id, open_store
from ..store._files import is_sqlite_file, read_report
from ._merge_turns import conversation_steps
from ._options import RunOptions, parse_shard
from ._plan import describe_selection
from ._selection import in_shard

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
    plan: Any = None  # what the shard is a part of (`assertly._digests`), as the part says
    targets: list[str] = field(default_factory=list)  # a matrix run's labels, the base first
    options: dict[str, Any] = field(default_factory=dict)  # a stored run's options

    def tests(self) -> Iterator[tuple[dict[str, Any], dict[int, dict[str, Any]]]]:
        """Each test's metadata with its trial records, in run order."""
        if self.store is not None:
            with open_store(self.store, must_exist=True, read_only=True) as store:
                yield from store.iter_tests(self.run_id)
            return
        assert self.report is not None
        for test in self.report.get("tests") or []:
            meta = _report_meta(test)
            by_trial: dict[int, dict[str, Any]] = {}
            for trial in test["trials"]:
                by_trial.setdefault(trial["trial"], _report_trial(test, trial))
            # red team, probes "duplicate trial number" and "trial removed": assertly writes
            # trials 1..K, each once. Keeping one of two trials 1 would lose the other's
            # verdict (a failed trial hidden behind a passed one); a gap is a lost trial.
            if sorted(by_trial) != list(range(1, len(test["trials"]) + 1)):
                numbers = ", ".join(str(trial["trial"]) for trial in test["trials"])
                raise StoreError(
                    f"{self.name}: {meta['key']} holds trials {numbers}, not 1 to "
                    f"{len(test['trials'])} each once: the report was edited"
                )
            yield meta, by_trial


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
    if test.get("target") is not None:
        meta["target"] = test["target"]
    if any("turns" in trial for trial in test.get("trials") or []):
        meta["conversation"] = True
    return meta


def _report_trial(test: dict[str, Any], trial: dict[str, Any]) -> dict[str, Any]:
    metrics = trial.get("metrics") or {}
    turns = conversation_steps(trial)
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
        "steps": turns if turns is not None else [step] if "output" in trial else [],
        "failures": trial.get("failures") or [],
        "error": trial.get("error"),
        "reason": trial.get("reason"),
        "score": test.get("score"),
    }


# Options of one shard's invocation, not of the tests the merged run holds: which part it
# was, the run it resumed, what it was called.
_NOT_MERGED = frozenset({"shard", "resume", "name"})


def _run_options(parts: list[_Part]) -> dict[str, Any]:
    """The run options a merged run keeps: its shards', but for `_NOT_MERGED`.

    Paths, filters, ``--now``, facts, trials, config file...: so a ``recheck`` of the merged
    run loads the same tests (issue 32: it found none). The shards of one split share them.
    """
    stored = next((part.options for part in parts if part.options), {})
    if not stored:  # report files: their tests' files are what the run loaded
        files = [
            test.get("file")
            for part in parts
            for test in (part.report or {}).get("tests") or []
            if isinstance(test, dict)
        ]
        paths = list(dict.fromkeys(file for file in files if isinstance(file, str) and file))
        return {"paths": paths} if paths else {}
    return {
        item.name: stored[item.name]
        for item in fields(RunOptions)
        if item.name in stored and item.name not in _NOT_MERGED
    }


def _labels(part: _Part) -> list[str]:
    """A part's matrix labels: its plan's (checked by its digest), else what it says."""
    if isinstance(part.plan, dict) and isinstance(part.plan.get("targets"), list):
        return [str(label) for label in part.plan["targets"]]
    return part.targets


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
    with open_store(str(path), must_exist=True, read_only=True) as store:
        run_id = store.resolve_run_id(run)
        info = store.run_info(run_id)
        evals = store.evals(run_id)
        location = store.location
    options = info.get("options") or {}
    if not info.get("finished_at"):
        # A run killed or interrupted mid-test keeps the trials it finished: a test with 1 of
        # its 3 trials stored passes on that one, and tests never started may be missing.
        raise StoreError(
            f"{name}: run {run_id} (shard {options.get('shard')}) never finished (it was "
            f"interrupted or killed, or is still running): `assertly run --resume {run_id}` "
            "runs the rest, then merge it"
        )
    return _Part(
        name=name,
        run_id=run_id,
        shard=options.get("shard"),
        threshold=str(options.get("pass_threshold") or "all"),
        duration_ms=float(info.get("duration_ms") or 0.0),
        evals=evals,
        store=location,
        plan=options.get("plan"),
        targets=list(options.get("target_labels") or []),
        options=options,
    )


def _report_part(name: str, path: Path) -> _Part:
    data = read_report(path)
    _check_report(name, data)
    if data.get("shard"):  # not a shard: refused as such by _check_shards
        claimed = data.get("records_digest")
        if not claimed:
            raise StoreError(
                f"{name}: the report carries no records_digest (written by an assertly before "
                "shards were verified, or edited): run the shard again"
            )
        actual = records_digest(data["tests"], data.get("evals") or [])
        if actual != claimed:
            raise StoreError(
                f"{name}: its tests or evals do not match the report's records_digest: the "
                "report was changed after assertly wrote it; use the report as written"
            )
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
            if _check_eval(name, suite)
        ],
        report=data,
        plan=data.get("plan"),
        targets=[str(label) for label in data.get("targets") or []],
    )


def _types(*names: str) -> dict[str, Any]:
    return {"type": list(names)}


_NUMBER = {**_types("number", "null"), "minimum": 0}
_TEXT = _types("string", "null")
# What merge reads of a JSON report, with the types it reads them as (`assertly schema report`
# pins more, but a report whose other keys a redaction rewrote still merges).
_READ = {
    "type": "object",
    "required": ["tests"],
    "properties": {
        "shard": _TEXT,
        "summary": {"type": "object", "properties": {"duration_ms": _NUMBER}},
        "evals": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "score": _types("number", "null"),
                    "threshold": _types("number", "null"),
                    "passed": {"type": "boolean"},
                },
            },
        },
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["trials"],
                "properties": {
                    **{name: _TEXT for name in ("key", "id", "name", "suite", "file")},
                    "definition": _TEXT,
                    "line": _types("integer", "null"),
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "pass_threshold": {"enum": ["any", "all", "majority", None]},
                    "score": _types("number", "null"),
                    "trials": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["trial", "status"],
                            "properties": {
                                "trial": {"type": "integer", "minimum": 1},
                                "status": {"enum": ["passed", "failed", "error", "skipped"]},
                                "duration_ms": _NUMBER,
                                "failures": {"type": "array", "items": {"type": "object"}},
                                "error": _TEXT,
                                "reason": _TEXT,
                                "metrics": {
                                    "type": ["object", "null"],
                                    "properties": {
                                        "latency_ms": _NUMBER,
                                        "cost_usd": _types("number", "null"),
                                        "model": _TEXT,
                                        "tokens": {
                                            "type": ["object", "null"],
                                            "additionalProperties": {"type": "integer"},
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def _check_report(name: str, data: dict[str, Any]) -> None:
    """Refuse a report whose fields merge reads are not of the types ``run -o`` writes.

    Every field merge reads is checked before it is read: a report with a field of another type
    (a trial number that is text, a summary that is a list) is a user's file, not a bug.
    """
    import jsonschema_rs

    # red team, probes "hostile JSON shard": each such field was an `internal error`.
    validator = jsonschema_rs.validator_for(_READ, offline=True)
    if not validator.is_valid(data):
        raise StoreError(
            f"{name}: not an assertly JSON report as `run -o` writes it: "
            f"{first_error(validator, data)}"
        )


def _check_eval(name: str, suite: dict[str, Any]) -> bool:
    """Refuse an eval suite that says passed while its own score, threshold or cases say not.

    The rule is the runner's (`runner._evals`): cases, none in error, score >= threshold.
    """
    if not suite.get("passed"):
        return True
    score, threshold = suite.get("score"), suite.get("threshold")
    cases = suite.get("cases")
    errored = any(isinstance(case, dict) and case.get("status") == "error" for case in cases or [])
    if (
        score is None
        or threshold is None
        or score + 1e-12 < threshold
        or errored
        or (isinstance(cases, list) and not cases)
    ):
        # red team, probe "eval passed edited": a suite at 0.857 against 0.9 said passed and
        # merged green; like a trial, the verdict is checked against its own content.
        raise StoreError(
            f"{name}: eval suite {suite.get('file')} says passed, but its score {score} against "
            f"its threshold {threshold} (and its cases) make it failed: the report was edited"
        )
    return True


def _check_shards(parts: list[_Part]) -> None:
    """Refuse parts that are not exactly the N shards of one split."""
    unsharded = [part.name for part in parts if not part.shard]
    if unsharded:
        raise StoreError(
            f"{', '.join(unsharded)}: not a shard run (run with --shard I/N); merge joins the "
            "shards of one split"
        )
    shards = []
    for part in parts:
        try:
            shards.append((part, parse_shard(str(part.shard))))
        except ValueError as error:
            raise StoreError(f"{part.name}: shard: {error}") from None
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
    _check_plans(parts)


def _check_plans(parts: list[_Part]) -> None:
    """Refuse parts without a plan, with an edited one, or of different plans."""
    for part in parts:
        plan = part.plan
        if not isinstance(plan, dict) or not plan.get("digest"):
            raise StoreError(
                f"{part.name}: shard {part.shard} carries no plan digest (run by an assertly "
                "before shards were verified): run the shard again"
            )
        if plan_digest(plan) != plan["digest"]:
            raise StoreError(f"{part.name}: its plan does not match its digest (edited)")
    first = parts[0]
    assert isinstance(first.plan, dict)
    for part in parts[1:]:
        assert isinstance(part.plan, dict)
        if part.plan["digest"] == first.plan["digest"]:
            continue
        mine, theirs = part.plan, first.plan
        if mine.get("selection") != theirs.get("selection"):
            why = (
                f"it was run with {describe_selection(mine.get('selection'))}, "
                f"{first.name} with {describe_selection(theirs.get('selection'))}"
            )
        elif mine.get("config") != theirs.get("config"):
            why = (
                "the config parts that change verdicts (sensitive_prefixes, shape, facts, "
                "judge, plugins) differ"
            )
        else:
            why = (
                f"its test set is not {first.name}'s: {mine.get('tests')} tests against "
                f"{theirs.get('tests')}, or tests of the same ids with other definitions "
                "(the shards were not run from the same checkout)"
            )
        raise StoreError(
            f"{part.name} (shard {part.shard}) is not a part of the same run as {first.name} "
            f"(shard {first.shard}): {why}"
        )
    if not first.plan.get("tests") and not first.plan.get("evals"):
        # red team, probe "every shard empty": `run` refuses a run of nothing ("no tests
        # found"); shards may each be empty, but a merge of nothing would be a green run.
        raise StoreError(
            f"the shards' plan holds no test and no eval suite (no tests found after "
            f"{describe_selection(first.plan.get('selection'))}): there is nothing to merge"
        )


def merge_runs(sources: list[str], store_path: str) -> RunRecord:
    """Join shard runs into one new run of ``store_path``; return it as stored.

    Raises:
        StoreError: A part cannot be read, the parts are not the shards of one split, or a
            test is in two parts (nothing is written then).
    """
    parts = [_open_part(source, store_path) for source in sources]
    _check_shards(parts)
    with open_store(store_path) as store:
        return _merge_into(store, parts)


def _merge_into(store: RunStore, parts: list[_Part]) -> RunRecord:
    """Write the checked parts as one new run of ``store`` (removed again if that fails)."""
    run_id = new_run_id()
    started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    threshold = next((part.threshold for part in parts if part.store is not None), "all")
    options = {
        **_run_options(parts),
        "pass_threshold": threshold,
        "merged_from": [{"source": part.name, "run_id": part.run_id} for part in parts],
        "problems": [],
        # The shards of one split ran one matrix (its cells are in the test set they share).
        "target_labels": _labels(parts[0]),
    }
    try:
        store.start_run(run_id, started, options)
        position = 0
        sums: list[tuple[int, str]] = []
        for part in parts:
            position = _copy(store, run_id, part, position, sums)
        stored = store.count_tests(run_id)
        if stored != position:
            raise StoreError(
                f"{position - stored} test(s) are in more than one part: the shards were not "
                "made from the same test files"
            )
        _check_test_set(parts[0], combine_sums(sums))
        _check_evals(parts)
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


def _check_test_set(part: _Part, found: tuple[int, str]) -> None:
    """Refuse parts whose tests together are not the plan's test set, with its definitions."""
    plan = part.plan
    assert isinstance(plan, dict)
    count, total = found
    if count != plan.get("tests"):
        raise StoreError(
            f"the parts hold {count} tests, their plan {plan.get('tests')}: tests are missing "
            "from a part (or were added to one)"
        )
    if total != plan.get("sum"):
        raise StoreError(
            "the parts' tests are not those of their plan: a test's definition or key in a "
            "part differs from the one the shards were planned with"
        )


def _check_evals(parts: list[_Part]) -> None:
    """Refuse parts whose eval suites together are not the plan's."""
    plan = parts[0].plan
    assert isinstance(plan, dict)
    found = sorted(str(record.get("file")) for part in parts for record in part.evals)
    if found != sorted(plan.get("evals") or []):
        missing = sorted(set(plan.get("evals") or []) - set(found))
        raise StoreError(
            f"the parts' eval suites are not those of their plan (missing: "
            f"{', '.join(missing) or 'none'}; held: {', '.join(found) or 'none'})"
        )


_CONTRADICTED = ("passed", "skipped")  # verdicts a failing assertion or an error contradicts


def _check_trial(part: _Part, key: str, record: dict[str, Any]) -> None:
    """Refuse a trial whose verdict its own content contradicts (recomputed, not trusted)."""
    status = record.get("status")
    if status not in ("passed", "failed", "error", "skipped"):
        raise StoreError(f"{part.name}: {key} trial {record.get('trial')}: status {status!r}")
    if status not in _CONTRADICTED:
        return
    outcomes = {
        str(failure.get("outcome", "failed")) if isinstance(failure, dict) else "failed"
        for failure in record.get("failures") or []
    }
    outcomes |= {
        str(step.get("status"))
        for step in record.get("steps") or []
        if isinstance(step, dict) and step.get("status") in ("failed", "error")
    }
    if record.get("error"):
        outcomes.add("error")
    if outcomes:
        recomputed = "failed" if "failed" in outcomes else "error"
        raise StoreError(
            f"{part.name}: {key} trial {record.get('trial')} says {status}, but its failures "
            f"and error make it {recomputed}: the part was edited"
        )


def _copy(
    store: RunStore, run_id: str, part: _Part, position: int, sums: list[tuple[int, str]]
) -> int:
    """Copy a part's tests and trials into ``run_id`` from ``position`` on; the next position.

    Adds the part's ``(count, sum)`` of test definitions to ``sums``.
    """
    shard = parse_shard(str(part.shard))
    pairs: list[tuple[str, str | None]] = []
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
        key = str(meta["key"])
        if not in_shard(key, shard):
            raise StoreError(
                f"{part.name}: {key} is not a test of shard {part.shard}: the part is not the "
                "shard it says"
            )
        pairs.append((key, meta.get("definition")))
        if not meta.get("pass_threshold"):
            meta["pass_threshold"] = part.threshold
        metas.append(meta)
        for number, record in by_trial.items():
            _check_trial(part, key, record)
            trials.append((key, number, {**record, "test_key": key}))
        position += 1
        if len(metas) >= _BATCH:
            flush()
    flush()
    sums.append(tests_sum(pairs))
    return position
