"""The gates of ``assertly run`` on a finished, stored run: of one target, or target by target.

A matrix run (``--target LABEL=SPEC``, the config's ``matrix:``) is gated target by target:
``--min-pass-rate`` on each target's pass rate, ``--baseline`` on each target against the
baseline (its cells of the same label when the baseline is a whole matrix run, else the
baseline as named: a run of one target, a report, or ``RUN:LABEL``). ``--gate-target LABEL``
(repeatable) names the targets that decide the exit code; without a gate, those targets'
tests must pass. The rules of each gate are `_gates`' (the same as ``assertly diff``'s).
"""

from __future__ import annotations

from typing import Any

from .._exceptions import ConfigError, Problem
from ._gates import (
    Allowances,
    GateDecision,
    _baseline_gate,
    _decision,
    _pass_rate_gate,
    _plural,
    _Verdict,
    apply_gates,
)
from ._sides import RunSide, open_side

__all__ = ["check_gate_targets", "gate_run", "gate_targets_of", "open_baseline"]

_NOTHING_ALLOWED = Allowances()


def _counts(side: RunSide) -> tuple[int, int]:
    """(passed, judged) over a side's tests."""
    passed = judged = 0
    for test in side.tests(scores=False):
        if test.status != "skipped":
            judged += 1
            passed += test.status == "passed"
    return passed, judged


def _refused(option: str, what: str) -> ConfigError:
    return ConfigError([Problem(option, what)], title="invalid option")


def check_gate_targets(
    gate_targets: tuple[str, ...], labels: list[str] | tuple[str, ...], baseline: RunSide | None
) -> None:
    """Refuse ``--gate-target`` labels and a ``--baseline`` the run's targets cannot use.

    Called before the run when its labels are known from the command line or the config,
    and on the finished run (its stored labels) in any case.

    Args:
        gate_targets: The labels ``--gate-target`` names.
        labels: The run's target labels (empty: a run of one target).
        baseline: The ``--baseline`` side, if any.

    Raises:
        ConfigError: A label the run does not have, ``--gate-target`` on a run of one
            target, or a whole matrix baseline without a target of the run (or against a
            run of one target).
    """
    labels = list(labels)
    for label in gate_targets:
        if not labels:
            raise _refused(
                "--gate-target",
                f"{label!r}: this run has one target (no --target LABEL=SPEC, no matrix: in "
                "the config): there is no target to name",
            )
        if label not in labels:
            raise _refused(
                "--gate-target",
                f"{label!r} is not a target of this run (its targets: {', '.join(labels)})",
            )
    if baseline is None or not baseline.is_matrix:
        return
    if not labels:
        raise _refused(
            "--baseline",
            f"run {baseline.run_id} is a matrix run (targets {', '.join(baseline.labels)}) and "
            f"this run has one target: no test pairs; name the baseline's target to compare "
            f"with, e.g. --baseline {baseline.run_id}:{baseline.labels[0]}",
        )
    missing = [label for label in gate_targets or labels if label not in baseline.labels]
    if missing:
        raise _refused(
            "--baseline",
            f"run {baseline.run_id} (targets {', '.join(baseline.labels)}) has no target "
            f"{missing[0]!r} to compare this run's {missing[0]!r} with: name one target of "
            f"it for every target of this run (e.g. --baseline {baseline.run_id}:"
            f"{baseline.labels[0]}), or gate the others only (--gate-target)",
        )


def gate_targets_of(
    record: Any,
    whole: RunSide,
    *,
    gate_targets: tuple[str, ...] = (),
    min_pass_rate: float | None = None,
    baseline: RunSide | None = None,
    max_regressions: int = 0,
    alpha: float = 0.05,
    allow: Allowances = _NOTHING_ALLOWED,
    fail_fast: bool = False,
) -> GateDecision:
    """Decide a finished matrix run's exit code, target by target.

    Each target named by ``gate_targets`` (every target when none is) is gated on its own
    side (`RunSide.restricted`: its cells and the tests no target varies): its pass rate must
    reach ``min_pass_rate``; against the baseline (its cells of the same label when the
    baseline is a whole matrix run, else the baseline as named) it must not regress. With
    neither gate, a named target's tests must all pass. The other targets' failures do not
    decide the exit code (a line names them). Evals and file problems count as for any run.

    Args:
        record: The finished run (`RunRecord`), a matrix run (``record.targets``).
        whole: The finished run as a comparison side.
        gate_targets: The labels ``--gate-target`` names; empty for every target.
        min_pass_rate: The lowest pass rate that passes, in [0, 1]; None for no such gate.
        baseline: The run to compare with; None for no such gate.
        max_regressions: Regressions the baseline gate allows (each target on its own).
        alpha: Significance level for the comparison's statistics.
        allow: What the gates accept deliberately (see `Allowances`).
        fail_fast: The run was asked to stop at its first failure (``--fail-fast``).

    Raises:
        ConfigError: See `check_gate_targets`.
    """
    labels = list(record.targets)
    check_gate_targets(gate_targets, labels, baseline)
    counts = record.status_counts()
    # A failure of any target stops every target's tests: none of them is judged whole.
    stopped = fail_fast and counts["failed"] + counts["error"] > 0
    gated = list(dict.fromkeys(gate_targets)) or labels
    verdicts: list[_Verdict] = []
    for label in gated:
        side = whole.restricted(label)
        prefix = f"[{label}] "
        passed, judged = _counts(side)
        verdict = _Verdict()
        if min_pass_rate is not None:
            _pass_rate_gate(
                verdict, passed, judged, min_pass_rate, allow=allow, stopped=stopped, prefix=prefix
            )
        if baseline is not None:
            against = baseline.restricted(label) if baseline.is_matrix else baseline
            _baseline_gate(
                verdict,
                against,
                side,
                max_regressions=max_regressions,
                alpha=alpha,
                allow=allow,
                stopped=stopped,
                prefix=prefix,
            )
        if min_pass_rate is None and baseline is None:
            # --gate-target alone: the run's own rule (every test passes), on this target.
            failing = judged - passed
            verdict.passing = failing == 0 and not stopped
            verdict.reasons.append(
                f"{prefix}{_plural(failing, 'test')} failing"
                + (", run stopped by --fail-fast" if stopped and not failing else "")
            )
        verdicts.append(verdict)
    notes = []
    for label in labels:
        if label not in gated:
            passed, judged = _counts(whole.restricted(label))
            if judged > passed:
                notes.append(
                    f"[{label}] {_plural(judged - passed, 'test')} failing, not gated "
                    "(--gate-target names the targets that decide the exit code)"
                )
    return _decision(record, verdicts, notes)


def open_baseline(baseline: str, store_path: str, *, resume: str | None = None) -> RunSide:
    """The run ``run --baseline`` compares with, opened before the run starts.

    Opened first so that ``last`` names the run before this one, not this one.

    Args:
        baseline: The run as users name it (id, last, last~N, blessed, or a JSON report).
        store_path: The run store the run is written to.
        resume: The run ``--resume`` names, if any: it cannot be its own baseline.

    Raises:
        ConfigError: ``baseline`` is the run being resumed.
        StoreError: The baseline cannot be found or read.
    """
    side = open_side(baseline, store_path)
    if resume and _resumed_run(store_path, resume) == side.run_id:
        raise ConfigError(
            [
                Problem(
                    "--baseline",
                    f"{baseline!r} is run {side.run_id}, the run being resumed: "
                    "name the run to compare with (e.g. last~1 or blessed)",
                )
            ]
        )
    return side


def _resumed_run(store_path: str, resume: str) -> str:
    """The id of the run ``--resume`` names."""
    from ..store import open_store

    with open_store(store_path, must_exist=True, read_only=True) as store:
        return str(store.resolve_run_id(resume))


def gate_run(
    record: Any,
    store_path: str,
    *,
    min_pass_rate: float | None,
    baseline: RunSide | None,
    max_regressions: int = 0,
    allow: Allowances = _NOTHING_ALLOWED,
    fail_fast: bool = False,
    gate_targets: tuple[str, ...] = (),
) -> GateDecision:
    """Apply ``run``'s gates to a finished, stored run (`apply_gates`, `gate_targets_of`).

    With a baseline, the comparison is kept on the record (``record.comparison``), where the
    HTML report shows it (of a matrix run: the first gated target that failed its gate, else
    the first gated target).

    Args:
        record: The finished run (`RunRecord`), stored in ``store_path``.
        store_path: The run store the run was written to.
        min_pass_rate: The lowest pass rate that passes, in [0, 1]; None for no such gate.
        baseline: The run to compare with (`open_baseline`); None for no such gate.
        max_regressions: Regressions the baseline gate allows.
        allow: What the gates accept deliberately (see `Allowances`).
        fail_fast: The run was asked to stop at its first failure (``--fail-fast``).
        gate_targets: Of a matrix run, the targets that decide (``--gate-target``); empty
            for every target.

    Raises:
        StoreError: The finished run cannot be read back from the store.
        ConfigError: See `check_gate_targets`.
    """
    gates: dict[str, Any] = {
        "min_pass_rate": min_pass_rate,
        "baseline": baseline,
        "max_regressions": max_regressions,
        "allow": allow,
        "fail_fast": fail_fast,
    }
    if record.targets:
        whole = open_side(record.run_id, store_path)
        decision = gate_targets_of(record, whole, gate_targets=gate_targets, **gates)
    else:
        check_gate_targets(gate_targets, [], baseline)
        candidate = open_side(record.run_id, store_path) if baseline is not None else None
        decision = apply_gates(record, candidate=candidate, **gates)
    if decision.diff is not None:
        record.comparison = decision.diff
    return decision
