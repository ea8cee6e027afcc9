"""The run budget (``--max-cost-usd``, issue 34): the agents' reported cost plus the judge's.

Checked before each new call (an agent's in `Runner._answer`, the judge's before a step with
model-graded assertions is judged): once what was spent reaches the budget, no new call
starts and the trial ends in an ``error`` that says so. Agent calls are not reserved ahead:
an agent says what a call cost only after it, so with ``-j N`` the calls in flight when the
budget is reached finish and count, and a run may end up to N calls over its budget. The
judge's own client reserves before each of its calls (`JudgeClient._reserve`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RunBudget"]


@dataclass(slots=True)
class RunBudget:
    """What a run may spend and what it spent.

    Attributes:
        limit: The budget in US dollars (None: no budget).
        judge_spent: What the judge has spent so far in this invocation.
        agents_usd: What the agents reported their calls cost.
        stopped: Why the budget stopped the run (set by the first refused call), or None.
    """

    limit: float | None
    judge_spent: Callable[[], float] = field(default=lambda: 0.0)
    agents_usd: float = 0.0
    stopped: str | None = None

    @property
    def spent(self) -> float:
        """The agents' cost plus the judge's."""
        return self.agents_usd + self.judge_spent()

    def add(self, cost_usd: float | None) -> None:
        """Count an agent call's reported cost."""
        if cost_usd is not None and cost_usd > 0:
            self.agents_usd += cost_usd

    def refused(self) -> str | None:
        """Why no new call may start (the budget is spent), or None."""
        if self.limit is None:
            return None
        spent = self.spent
        if spent < self.limit:
            return None
        from ..judge._client import usd  # the judge's code is loaded only once money counts

        message = f"run budget of {usd(self.limit)} spent ({usd(spent)})"
        if self.stopped is None:
            self.stopped = message
        return message
