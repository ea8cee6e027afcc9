"""Gates on a finished run: what decides ``assertly run``'s and ``assertly diff``'s exit code.

Without a gate, a run exits 0 only when every test passed (or was skipped). A gate lets a
team ship while known failures remain:

* ``--min-pass-rate R``: the run's pass rate (passed over judged tests) must be at least R;
* ``--baseline RUN``: no test may regress against the baseline run (``--max-regressions N``
  allows N), and no test the baseline did not have may fail (a new failing test is not a
  known failure).

A gate never passes on less than the baseline (issue 28): by default each of these fails it,
with its own line, unless an option accepts it deliberately:

* a test whose definition changed and that now fails or errs (``--allow-changed-definition``);
* a test of the baseline missing from the run, e.g. renamed or filtered out
  (``--allow-removed``); a renamed test that fails is also a new failing test;
* a test the baseline judged that the run skipped (``--allow-skipped``);
* a run that judged no test and no eval suite (``--allow-empty``); ``--min-pass-rate`` too
  never passes on a run that judged no test, nor on a run ``--fail-fast`` stopped at a
  failure (the tests it did not reach are stored as skipped, outside the pass rate).

``assertly diff`` applies the same rules through `baseline_verdict` (its ``--fail-on``
chooses what a regression is: any, a significant one, any change, or nothing at all).

With either gate, every eval suite must still meet its threshold and every file must load.
The last line names the gate that decided. A matrix run is gated target by target, each
target's lines prefixed with ``[LABEL]`` (`_run_gates`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._diff import RunDiff, TestChange
    from ._sides import RunSide

__all__ = [
    "Allowances",
    "BaselineVerdict",
    "GateDecision",
    "apply_gates",
    "baseline_verdict",
]

# Tests named in a gate's line (the count is always exact; the diff above lists them all).
_NAMED = 5
_NOT_PASSING = ("failed", "error")


@dataclass(frozen=True, slots=True)
class Allowances:
    """What a gate accepts deliberately (each off by default, each an ``--allow-…`` option).

    Attributes:
        removed: Tests of the baseline missing from the run (``--allow-removed``).
        skipped: Tests the baseline judged that the run skipped (``--allow-skipped``).
        changed_definition: Tests whose definition changed and that now fail or err
            (``--allow-changed-definition``).
        empty: A run that judged no test and no eval suite (``--allow-empty``).
    """

    removed: bool = False
    skipped: bool = False
    changed_definition: bool = False
    empty: bool = False


@dataclass(slots=True)
class BaselineVerdict:
    """What the baseline rules decided about a comparison.

    Attributes:
        passed: Whether no rule is broken.
        summary: The short text of the verdict, for the decision line.
        reasons: One line for each rule the comparison breaks, saying why and what accepts it.
        notes: One line for each rule broken but accepted by an allowance (shown, not failing).
    """

    passed: bool
    summary: str
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class GateDecision:
    """The exit code a run's gates decided, the lines that say why, and the comparison.

    ``line`` is the decision (the last line printed); ``reasons`` come before it, one a rule.
    """

    exit_code: int
    line: str
    diff: RunDiff | None = None
    reasons: list[str] = field(default_factory=list)
    # Of a matrix run, one comparison a gated target (``diff`` is one of them).
    diffs: list[RunDiff] = field(default_factory=list)


def _plural(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _named(keys: list[str], total: int) -> str:
    shown = ", ".join(keys[:_NAMED])
    more = total - min(len(keys), _NAMED)
    return f"{shown}, and {more} more" if more > 0 else shown


def _keys(items: list[TestChange]) -> list[str]:
    return [item.key for item in items[:_NAMED]]


def baseline_verdict(
    diff: RunDiff,
    *,
    fail_on: str = "regressions",
    max_regressions: int = 0,
    allow: Allowances = Allowances(),
    label: str = "--baseline",
) -> BaselineVerdict:
    """Apply the baseline rules to a comparison (``run --baseline`` and ``assertly diff``).

    The one implementation of both commands' rules, so they never disagree.

    Args:
        diff: The comparison (base: the baseline; candidate: the run judged).
        fail_on: What counts as a regression: ``regressions`` (more than ``max_regressions``
            regressed tests), ``significant`` (a significant drop of a test or of the suite),
            ``changes`` (any test changed), or ``never`` (no rule at all: the exit code is 0).
        max_regressions: Regressions allowed under ``regressions``.
        allow: What is accepted deliberately.
        label: The option named in the summary's "(…, at most N allowed)".
    """
    if fail_on == "never":
        return BaselineVerdict(True, "nothing fails with --fail-on never")
    reasons: list[str] = []
    notes: list[str] = []
    against = f"run {diff.base.name}"
    regressed = diff.counts["regressed"]
    # The --fail-on rule itself is said by the summary (the decision line); the rules below
    # each get their own line.
    if fail_on == "regressions":
        broken = regressed > max_regressions
        summary = (
            f"{_plural(regressed, 'regression')} against {against} "
            f"({label}, at most {max_regressions} allowed)"
        )
    else:
        rule = diff.failing_rule(fail_on)
        broken = rule is not None
        what = "significant regression" if fail_on == "significant" else "change"
        summary = f"{rule if rule is not None else f'no {what} against {against}'} "
        summary += f"(--fail-on {fail_on})"
    # The rules below hold under every --fail-on but never: a gate does not pass on less.
    added = [
        item for item in diff.changed if item.change == "added" and item.candidate in _NOT_PASSING
    ]
    if added:
        summary += f", {_plural(len(added), 'new test')} failing"
        reasons.append(
            f"{_plural(len(added), 'new test')} failing (not in the baseline, so not a known "
            f"failure: {_named(_keys(added), len(added))})"
        )
    # Eval suites under the same rules as tests (issue 28 red team, probe G1): ``run
    # --baseline`` failed on an eval below its threshold but ``diff`` passed, and a suite of
    # the baseline missing from the run was not noticed by either.
    failing_evals = [suite.file for suite in diff.candidate.evals if not suite.passed]
    if failing_evals:
        summary += f", {_plural(len(failing_evals), 'eval suite')} below its threshold"
        reasons.append(
            f"eval below its threshold: {_named(failing_evals, len(failing_evals))} (an eval "
            "suite must meet its threshold whatever the baseline scored)"
        )
    present = {suite.file for suite in diff.candidate.evals}
    missing_evals = [suite.file for suite in diff.base.evals if suite.file not in present]
    redefined = [
        item
        for item in diff.changed
        if item.change == "changed_definition" and item.candidate in _NOT_PASSING
    ]
    # (why, accepted, option, text for the decision line), one a rule.
    rules: list[tuple[str, bool, str, str]] = []
    if redefined:
        rules.append(
            (
                f"{_plural(len(redefined), 'test')} changed definition and now "
                f"{'fails' if len(redefined) == 1 else 'fail'} "
                f"({_named(_keys(redefined), len(redefined))}): not comparable with the "
                "baseline, so not a known failure",
                allow.changed_definition,
                "--allow-changed-definition",
                f"{_plural(len(redefined), 'test')} changed definition and failing",
            )
        )
    removed = [item for item in diff.changed if item.change == "removed"]
    if removed:
        passing = sum(1 for item in removed if item.base in ("passed", "skipped"))
        rules.append(
            (
                f"{_plural(len(removed), 'test')} of the baseline missing from this run "
                f"({passing} of them passing there; renamed, deleted or filtered out?): "
                f"{_named(_keys(removed), len(removed))}",
                allow.removed,
                "--allow-removed",
                f"{_plural(len(removed), 'test')} missing from this run",
            )
        )
    if missing_evals:
        rules.append(
            (
                f"{_plural(len(missing_evals), 'eval suite')} of the baseline missing from this "
                f"run: {_named(missing_evals, len(missing_evals))}",
                allow.removed,
                "--allow-removed",
                f"{_plural(len(missing_evals), 'eval suite')} missing from this run",
            )
        )
    if diff.newly_skipped:
        rules.append(
            (
                f"{_plural(diff.newly_skipped, 'test')} judged in the baseline skipped in this "
                f"run ({_named(diff.newly_skipped_keys, diff.newly_skipped)})",
                allow.skipped,
                "--allow-skipped",
                f"{_plural(diff.newly_skipped, 'test')} skipped",
            )
        )
    if diff.candidate_rate[1] == 0 and not diff.candidate.evals:
        rules.append(
            (
                f"run {diff.candidate.name} judged no test and no eval suite (no test ran, "
                "or every test was skipped): nothing was compared with the baseline",
                allow.empty,
                "--allow-empty",
                "",
            )
        )
    for why, accepted, option, short in rules:
        if accepted:
            notes.append(f"{why} (accepted: {option})")
            continue
        reasons.append(f"{why}; {option} accepts {'an empty run' if not short else 'them'}")
        summary += f", {short}" if short else ", an empty run"
    return BaselineVerdict(not broken and not reasons, summary, reasons, notes)


@dataclass(slots=True)
class _Verdict:
    """What the gates decided about one scope: the whole run, or one target of a matrix run."""

    passing: bool = True
    reasons: list[str] = field(default_factory=list)  # for the decision line
    lines: list[str] = field(default_factory=list)  # one line a broken (or accepted) rule
    diff: RunDiff | None = None


def _pass_rate_gate(
    verdict: _Verdict,
    passed: int,
    judged: int,
    min_pass_rate: float,
    *,
    allow: Allowances,
    stopped: bool,
    prefix: str,
) -> None:
    """``--min-pass-rate`` on ``passed`` of ``judged`` tests (of the run, or of one target)."""
    rate = passed / judged if judged else 0.0
    met = rate + 1e-12 >= min_pass_rate
    if judged == 0:
        # A pass rate over no judged test is no evidence: 0 of 0 must not meet R = 0.
        met = allow.empty
        verdict.lines.append(
            f"{prefix}no test was judged (none ran, or every test was skipped): the pass rate "
            "is not defined"
            + (
                " (accepted: --allow-empty)"
                if allow.empty
                else "; --allow-empty accepts an empty run"
            )
        )
        verdict.reasons.append(
            f"{prefix}no test judged {'(accepted)' if met else '<'} {min_pass_rate * 100:.1f}% "
            "(--min-pass-rate)"
        )
    elif stopped:
        # A run stopped at its first failure: the tests it never ran are counted as
        # skipped, so the pass rate over those it ran is no evidence (rt30b: 1 passed,
        # 1 failed, 3 not run met 50%; the whole run passed 20%). In a matrix run the
        # failure of one target stops every target's tests.
        met = False
        verdict.lines.append(
            f"{prefix}--fail-fast stopped the run at a failure: the pass rate of the tests it "
            "ran says nothing of those it did not"
        )
        verdict.reasons.append(
            f"{prefix}run stopped by --fail-fast < {min_pass_rate * 100:.1f}% (--min-pass-rate)"
        )
    else:
        verdict.reasons.append(
            f"{prefix}pass rate {rate * 100:.1f}% {'≥' if met else '<'} "
            f"{min_pass_rate * 100:.1f}% (--min-pass-rate)"
        )
    verdict.passing = verdict.passing and met


def _baseline_gate(
    verdict: _Verdict,
    baseline: RunSide,
    candidate: RunSide,
    *,
    max_regressions: int,
    alpha: float,
    allow: Allowances,
    stopped: bool,
    prefix: str,
) -> None:
    """``--baseline``: the candidate (the run, or one target of it) against the baseline."""
    from ._diff import compare_runs  # a diff's code is loaded only when a run is compared

    diff = compare_runs(baseline, candidate, alpha=alpha)
    said = baseline_verdict(diff, max_regressions=max_regressions, allow=allow)
    verdict.diff = diff
    verdict.passing = verdict.passing and said.passed
    verdict.lines.extend(prefix + line for line in said.reasons + said.notes)
    verdict.reasons.append(prefix + said.summary)
    if stopped:
        # The tests it did not reach are stored as skipped: --allow-skipped (meant for
        # skip_if) would accept them, regressions unseen (rt30b).
        verdict.passing = False
        verdict.lines.append(
            f"{prefix}--fail-fast stopped the run at a failure: the tests it did not reach "
            "were not compared with the baseline"
        )
        verdict.reasons.append(f"{prefix}run stopped by --fail-fast")


def _decision(
    record: Any, verdicts: list[_Verdict], notes: list[str] | None = None
) -> GateDecision:
    """The exit code and lines of the gates' verdicts, with the run's evals and problems."""
    passing = all(verdict.passing for verdict in verdicts)
    reasons = [reason for verdict in verdicts for reason in verdict.reasons]
    lines = [line for verdict in verdicts for line in verdict.lines] + (notes or [])
    diffs = [verdict.diff for verdict in verdicts if verdict.diff is not None]
    # With a baseline, `baseline_verdict` has already said so (the same rule as ``diff``).
    failing_evals = [suite.file for suite in record.evals if not suite.passed]
    if failing_evals and not diffs:
        passing = False
        reasons.append(f"eval below its threshold: {', '.join(failing_evals)}")
    if record.problems:
        passing = False
        reasons.append(f"{len(record.problems)} file problem(s)")
    code = 0 if passing else 1
    shown = next(
        (verdict.diff for verdict in verdicts if verdict.diff is not None and not verdict.passing),
        diffs[0] if diffs else None,
    )
    return GateDecision(
        code,
        f"gate: {'; '.join(reasons)} → exit {code}",
        shown,
        [f"gate: {line}" for line in lines],
        diffs,
    )


def apply_gates(
    record: Any,
    *,
    min_pass_rate: float | None = None,
    baseline: RunSide | None = None,
    candidate: RunSide | None = None,
    max_regressions: int = 0,
    alpha: float = 0.05,
    allow: Allowances = Allowances(),
    fail_fast: bool = False,
) -> GateDecision:
    """Decide a finished run's exit code from its gates (a run of one target; see `gate_run`).

    Args:
        record: The finished run (`RunRecord`).
        min_pass_rate: The lowest pass rate that passes, in [0, 1]; None for no such gate.
        baseline: The run to compare with; None for no such gate.
        candidate: The finished run as a comparison side (same run as ``record``).
        max_regressions: Regressions the baseline gate allows.
        alpha: Significance level for the comparison's statistics.
        allow: What the gates accept deliberately (see `Allowances`).
        fail_fast: The run was asked to stop at its first failure (``--fail-fast``).
    """
    summary = record.summary()
    passed = int(summary["passed"])
    judged = passed + int(summary["failed"]) + int(summary["errored"])
    stopped = fail_fast and judged > passed
    verdict = _Verdict()
    if min_pass_rate is not None:
        _pass_rate_gate(
            verdict, passed, judged, min_pass_rate, allow=allow, stopped=stopped, prefix=""
        )
    if baseline is not None and candidate is not None:
        _baseline_gate(
            verdict,
            baseline,
            candidate,
            max_regressions=max_regressions,
            alpha=alpha,
            allow=allow,
            stopped=stopped,
            prefix="",
        )
    if not verdict.reasons:
        return GateDecision(0 if record.ok else 1, "")
    return _decision(record, [verdict])
