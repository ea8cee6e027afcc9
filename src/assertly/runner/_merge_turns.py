"""A conversation trial of a JSON report, as the store keeps it (issue 32): for ``merge``.

A shard's JSON report gives a conversation trial's ``turns`` and ``conversation`` (see
`_records.conversation_report`); merged from the report file, they become the trial's steps
again (one per turn, named ``turn N``, then the conversation's own), so the merged run renders,
diffs and rechecks its turns as the shard's own store would have.
"""

from __future__ import annotations

from typing import Any

from .._records import CONVERSATION_STEP

__all__ = ["conversation_steps"]


def conversation_steps(trial: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A report trial's steps in the store's form, or None when it is no conversation's.

    What only the trial's metrics say (the judge's and the simulated user's cost beyond the
    turns': the whole conversation's judge, the stop the simulated user wrote) goes to the
    conversation's own step, so the merged trial's metrics add up to the shard's.
    """
    turns = trial.get("turns")
    if not isinstance(turns, list):
        return None
    steps = [_turn_step(turn) for turn in turns if isinstance(turn, dict)]
    whole = trial.get("conversation")
    if isinstance(whole, dict):
        step = _step(CONVERSATION_STEP, whole.get("outcome"), trial.get("output"), whole)
        step["ended"] = whole.get("ended")
        metrics = trial.get("metrics") or {}
        for cost, tokens in (
            ("judge_cost_usd", "judge_tokens"),
            ("simulator_cost_usd", "simulator_tokens"),
        ):
            if metrics.get(cost) is None:
                continue
            rest = metrics[cost] - sum(s.get(cost) or 0.0 for s in steps)
            left = (metrics.get(tokens) or 0) - sum(s.get(tokens) or 0 for s in steps)
            if rest > 0 or left > 0:
                step[cost], step[tokens] = max(rest, 0.0), max(left, 0)
        steps.append(step)
    return steps


def _turn_step(turn: dict[str, Any]) -> dict[str, Any]:
    metrics = turn.get("metrics") or {}
    step = _step(f"turn {turn.get('index')}", turn.get("outcome"), turn.get("output"), turn)
    step.update(
        user=str(turn.get("user") or ""),
        tool_calls=turn.get("tool_calls"),
        latency_ms=metrics.get("latency_ms"),
        cost_usd=metrics.get("cost_usd"),
        model=metrics.get("model"),
        tokens=metrics.get("tokens"),
        judge_cost_usd=metrics.get("judge_cost_usd"),
        judge_tokens=metrics.get("judge_tokens"),
    )
    if "simulator_cost_usd" in metrics or "simulator_tokens" in metrics:
        step["simulator_cost_usd"] = metrics.get("simulator_cost_usd")
        step["simulator_tokens"] = metrics.get("simulator_tokens")
    return step


def _step(name: str, outcome: Any, output: Any, part: dict[str, Any]) -> dict[str, Any]:
    """A step's common fields: its name, verdict, output, checks and error."""
    checks = part.get("checks") or []
    scores = [c["score"] for c in checks if isinstance(c, dict) and _number(c.get("score"))]
    return {
        "name": name,
        "status": outcome,
        "response": output,
        "checks": checks,
        "error": part.get("error"),
        "score": sum(scores) / len(scores) if scores else None,
    }


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
