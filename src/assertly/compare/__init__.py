"""Comparing runs: what changed between a base and a candidate run, and whether it is real.

Sits above the store and the runner's verdicts, below the reports that render a comparison.
The statistics (`fisher_exact`, `mcnemar_exact`, `wilson_interval`, `holm` and the one-sided
regression p-values) are pure Python and need nothing else. Names are imported on first use:
``assertly run`` without ``--baseline`` needs only `Allowances`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attributes

if TYPE_CHECKING:
    from ._diff import CHANGES, FAIL_ON, EvalChange, RunDiff, TestChange, compare_runs
    from ._gates import Allowances, BaselineVerdict, GateDecision, apply_gates, baseline_verdict
    from ._run_gates import check_gate_targets, gate_run, gate_targets_of, open_baseline
    from ._sides import EvalOutcome, RunSide, TestOutcome, open_side, pairing_problem, split_target
    from ._stats import (
        EXACT_LIMIT,
        Alternative,
        fisher_exact,
        holm,
        mcnemar_exact,
        paired_regression_p_value,
        regression_p_value,
        wilson_interval,
    )

__all__ = [
    "CHANGES",
    "EXACT_LIMIT",
    "FAIL_ON",
    "Allowances",
    "Alternative",
    "BaselineVerdict",
    "EvalChange",
    "EvalOutcome",
    "GateDecision",
    "RunDiff",
    "RunSide",
    "TestChange",
    "TestOutcome",
    "apply_gates",
    "baseline_verdict",
    "check_gate_targets",
    "compare_runs",
    "fisher_exact",
    "gate_run",
    "gate_targets_of",
    "holm",
    "mcnemar_exact",
    "open_baseline",
    "open_side",
    "pairing_problem",
    "paired_regression_p_value",
    "regression_p_value",
    "split_target",
    "wilson_interval",
]

_NAMES = {
    "._diff": ("CHANGES", "FAIL_ON", "EvalChange", "RunDiff", "TestChange", "compare_runs"),
    "._gates": ("Allowances", "BaselineVerdict", "GateDecision", "apply_gates", "baseline_verdict"),
    "._run_gates": ("check_gate_targets", "gate_run", "gate_targets_of", "open_baseline"),
    "._sides": (
        "EvalOutcome",
        "RunSide",
        "TestOutcome",
        "open_side",
        "pairing_problem",
        "split_target",
    ),
    "._stats": (
        "EXACT_LIMIT",
        "Alternative",
        "fisher_exact",
        "holm",
        "mcnemar_exact",
        "paired_regression_p_value",
        "regression_p_value",
        "wilson_interval",
    ),
}
_HOMES = {name: home for home, names in _NAMES.items() for name in names}

__getattr__ = attributes(__name__, _HOMES)
