"""Gates on a finished run: what decides ``assertly run``'s exit code in CI.

Without a gate, a run exits 0 only when every test passed (or was skipped). A gate lets a
team ship while known failures remain:

* ``--min-pass-rate R``: the run's pass rate (passed over judged tests) must be at least R;
* ``--baseline RUN``: no test may regress against the baseline run (``--max-regressions N``
  allows N), and no test the baseline did not have may fail (a new failing test is not a
  known failure).

With either gate, every eval suite must still meet its threshold and every file must load.
The decision is one line that names the gate that decided it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._diff import RunDiff, compare_runs
from ._sides import RunSide

__all__ = ["GateDecision", "apply_gates"]


@dataclass(slots=True)
class GateDecision:
    """The exit code a run's gates decided, the line that says why, and the comparison."""

    exit_code: int
    line: str
    diff: RunDiff | None = None


def apply_gates(
    record: Any,
    *,
    min_pass_rate: float | None = None,
    baseline: RunSide | None = None,
    candidate: RunSide | None = None,
    max_regressions: int = 0,
    alpha: float = 0.05,
) -> GateDecision:
    """Decide a finished run's exit code from its gates.

    Args:
        record: The finished run (`RunRecord`).
        min_pass_rate: The lowest pass rate that passes, in [0, 1]; None for no such gate.
        baseline: The run to compare with; None for no such gate.
        candidate: The finished run as a comparison side (same run as ``record``).
        max_regressions: Regressions the baseline gate allows.
        alpha: Significance level for the comparison's statistics.
    """
    reasons: list[str] = []
    passing = True
    summary = record.summary()
    if min_pass_rate is not None:
        rate = float(summary["pass_rate"])
        met = rate + 1e-12 >= min_pass_rate
        passing = passing and met
        reasons.append(
            f"pass rate {rate * 100:.1f}% {'≥' if met else '<'} {min_pass_rate * 100:.1f}% "
            "(--min-pass-rate)"
        )
    diff = None
    if baseline is not None and candidate is not None:
        diff = compare_runs(baseline, candidate, alpha=alpha)
        regressed = diff.counts["regressed"]
        new_failing = sum(
            1
            for item in diff.changed
            if item.change == "added" and item.candidate in ("failed", "error")
        )
        met = regressed <= max_regressions and not new_failing
        passing = passing and met
        text = (
            f"{regressed} regression{'' if regressed == 1 else 's'} against run "
            f"{baseline.run_id} (--baseline, at most {max_regressions} allowed)"
        )
        if new_failing:
            text += f", {new_failing} new test{'' if new_failing == 1 else 's'} failing"
        reasons.append(text)
    if not reasons:
        return GateDecision(0 if record.ok else 1, "")
    failing_evals = [suite.file for suite in record.evals if not suite.passed]
    if failing_evals:
        passing = False
        reasons.append(f"eval below its threshold: {', '.join(failing_evals)}")
    if record.problems:
        passing = False
        reasons.append(f"{len(record.problems)} file problem(s)")
    code = 0 if passing else 1
    return GateDecision(code, f"gate: {'; '.join(reasons)} → exit {code}", diff)
