"""Comparing runs: what changed between a base and a candidate run, and whether it is real.

Sits above the store and the runner's verdicts, below the reports that render a comparison.
"""

from ._diff import CHANGES, FAIL_ON, EvalChange, RunDiff, TestChange, compare_runs
from ._gates import GateDecision, apply_gates
from ._sides import EvalOutcome, RunSide, TestOutcome, open_side

__all__ = [
    "CHANGES",
    "FAIL_ON",
    "EvalChange",
    "EvalOutcome",
    "GateDecision",
    "RunDiff",
    "RunSide",
    "TestChange",
    "TestOutcome",
    "apply_gates",
    "compare_runs",
    "open_side",
]
