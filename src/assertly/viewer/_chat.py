"""A conversation test as the viewer shows it: each trial's transcript as a chat (issue 32).

Reads the record contract (`assertly._records`): a conversation trial's steps are its turns
(``turn 1``, ``turn 2`` …, each with `StepRecord.user`) and then one ``conversation`` step
(the whole-conversation checks and `StepRecord.ended`); a trial whose agent call failed ends
at the failed turn, with no conversation step. The store is untrusted: every field is
checked before use, and everything returned is text or numbers the templates escape.

Each turn has an anchor unique in its page, ``<test>-trial-N-turn-K`` (``<test>`` the test's
own id, `_pages.cell_anchor`: a run page holds many tests), and the conversation's end
``<test>-trial-N-end``; the top of the test links every turn that did not pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._check_records import CheckRecord
from .._records import CONVERSATION_STEP, StepRecord, TestRecord, TrialRecord, combined_metrics
from ..reports._analysis import format_cost, format_metrics
from ..reports._conversation_view import ENDED
from ..reports._matrix_text import MARKS
from ._values import folded

__all__ = ["CHECK_SYMBOLS", "conversation_view"]

# A verdict as one character: the reports' marks, not a copy of them.
CHECK_SYMBOLS = MARKS
# The most trials of a test whose transcripts a page shows (those that did not pass first);
# the JSON has every one.
CHATS_SHOWN = 10


def _setup(value: Any) -> dict[str, Any]:
    """What the test set up (`TestMeta.input` of a conversation).

    Its input mapping, scripted turns and simulated user, each None or 0 when absent or not
    of the contract's shape.
    """
    data = value if isinstance(value, dict) else {}
    turns = data.get("turns")
    simulated = data.get("simulated_user")
    simulated = simulated if isinstance(simulated, dict) else None
    persona = None if simulated is None else simulated.get("persona")
    first = None if simulated is None else simulated.get("first_message")
    most = None if simulated is None else simulated.get("max_turns")
    return {
        "input": None if data.get("input") is None else folded(data["input"]),
        "scripted": len(turns) if isinstance(turns, list) else 0,
        "simulated": simulated is not None,
        "persona": None if persona is None else folded(persona),
        "first_message": first if isinstance(first, str) else None,
        "max_turns": most if isinstance(most, int) and not isinstance(most, bool) else None,
    }


def _symbol(outcome: str) -> str:
    return CHECK_SYMBOLS.get(outcome, "?")


def _checks(checks: Sequence[CheckRecord]) -> list[dict[str, Any]]:
    """Each assertion's verdict on a reply (or on the conversation), in the order written."""
    rows: list[dict[str, Any]] = []
    for check in checks:
        results = check.results
        if not results and check.outcome != "passed":  # a check that judged nothing
            rows.append(
                {
                    "assertion": "expectation",
                    "outcome": check.outcome,
                    "symbol": _symbol(check.outcome),
                    "message": "",
                    "score": None,
                    "expected": None,
                    "actual": None,
                }
            )
            continue
        for result in results:
            shown = result.outcome not in ("passed", "skipped")
            score = result.score
            rows.append(
                {
                    "assertion": result.assertion,
                    "outcome": result.outcome,
                    "symbol": _symbol(result.outcome),
                    "message": result.message,
                    # A model's or a similarity's grade between the extremes says something.
                    "score": f"{score:.3g}" if score is not None and 0 < score < 1 else None,
                    "expected": folded(result.expected)
                    if shown and result.expected is not None
                    else None,
                    "actual": folded(result.actual)
                    if shown and result.actual is not None
                    else None,
                }
            )
    return rows


def _tool_calls(value: Any) -> list[dict[str, Any]]:
    """A turn's tool calls (``[{name, arguments}]``), each name and its arguments as text."""
    if value is None or value == []:
        return []
    if not isinstance(value, list):
        return [{"name": "?", "arguments": folded(value)}]
    calls = []
    for call in value:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            arguments = call.get("arguments")
            shown = None if arguments in (None, "", {}, "{}") else folded(arguments)
            calls.append({"name": call["name"], "arguments": shown})
        else:
            calls.append({"name": "?", "arguments": folded(call)})
    return calls


def _simulator_cost(step: StepRecord) -> str | None:
    """What the simulated user's model cost for a message (None: it wrote nothing here)."""
    if step.simulator_cost_usd is None and step.simulator_tokens is None:
        return None
    return f"{format_cost(step.simulator_cost_usd)} · {step.simulator_tokens or 0} tokens"


def _said(output: Any) -> tuple[Any, Any]:
    """What the agent said in a reply, and the reply as it came when that is not it.

    The text is the one the conversation kept for the agent's next turn (`assistant_reply`:
    an OpenAI or Anthropic reply object's message text, a JSON object's ``content``); the
    reply object itself stays behind a fold. Any other reply is what it said.
    """
    from ..engine import Response  # the engine only for a conversation shown (~0.2 s)
    from ..engine.graded._reply_text import assistant_reply

    text = assistant_reply(output, None)[0]
    if isinstance(output, str):
        return text, None if text == output.strip() else output
    return (output, None) if text == Response(output).text.strip() else (text, output)


def _turn(step: StepRecord, index: int, anchor: str, setup: dict[str, Any]) -> dict[str, Any]:
    simulated = (step.simulator_cost_usd is not None or step.simulator_tokens is not None) or (
        setup["simulated"] and index > setup["scripted"]
    )
    written = setup["first_message"] is not None and index == setup["scripted"] + 1
    said, raw = (None, None) if step.output is None else _said(step.output)
    # The simulated user could not write this turn's message: no agent was called.
    unwritten = not step.user and step.output is None and step.error is not None
    return {
        "index": index,
        "anchor": f"{anchor}-turn-{index}",
        "status": step.status,
        "symbol": _symbol(step.status),
        "user": None if not step.user else folded(step.user),
        "simulated": simulated,
        # The simulated user's first message, as the test wrote it (no model wrote it).
        "first_message": simulated and written,
        "simulator": _simulator_cost(step),
        "output": None if said is None else folded(said),
        "raw": None if raw is None else folded(raw),
        "tool_calls": _tool_calls(step.tool_calls),
        "checks": _checks(step.checks),
        "error": None if unwritten else step.error,
        "user_error": step.error if unwritten else None,
        "metrics": format_metrics(step.metrics()),
    }


def _ending(step: StepRecord, setup: dict[str, Any]) -> str:
    text = ENDED.get(step.ended or "", "it ended" if not step.ended else f"it ended: {step.ended}")
    if step.ended == "max_turns" and setup["max_turns"] is not None:
        text += f" ({setup['max_turns']})"
    return text


def _trial(trial: TrialRecord, anchor: str, setup: dict[str, Any]) -> dict[str, Any]:
    """One trial's transcript: its turns, then how it ended and the conversation's checks."""
    prefix = f"{anchor}-trial-{trial.trial}"
    turns: list[dict[str, Any]] = []
    whole: dict[str, Any] | None = None
    for step in trial.steps:
        if step.user is None and step.name == CONVERSATION_STEP:
            whole = {
                "anchor": f"{prefix}-end",
                "status": step.status,
                "symbol": _symbol(step.status),
                "ended": step.ended,
                "ending": _ending(step, setup),
                "checks": _checks(step.checks),
                "error": step.error,
                "simulator": _simulator_cost(step),
            }
        else:
            turns.append(_turn(step, len(turns) + 1, prefix, setup))
    metrics = combined_metrics(trial.steps)
    extra = []
    if "simulator_cost_usd" in metrics:
        cost = format_cost(metrics["simulator_cost_usd"])
        extra.append(f"simulated user {cost} · {metrics['simulator_tokens']} tokens")
    if "judge_cost_usd" in metrics:
        extra.append(f"judge {format_cost(metrics['judge_cost_usd'])}")
    return {
        "trial": trial.trial,
        "anchor": prefix,
        "status": trial.status,
        "symbol": _symbol(trial.status),
        "turns": turns,
        "whole": whole,
        # Why the trial stopped short (an agent call failed, the simulated user could not
        # write, a cancelled run): shown where the conversation's end would be.
        "error": trial.error if whole is None else None,
        "reason": trial.reason,
        "metrics": " · ".join([format_metrics(metrics if trial.steps else {}), *extra]),
    }


def _label(trials: list[dict[str, Any]], setup: dict[str, Any]) -> str:
    """What the test list says of a conversation test: ``conversation · 3 turns``.

    ``2\u20135 turns`` when trials differ; before any trial, what the test scripts; with
    ``· simulated user`` when a model plays the user.
    """
    counts = sorted({sum(not t["user_error"] for t in trial["turns"]) for trial in trials})
    if counts:
        low, high = counts[0], counts[-1]
        turns = (
            f"{low} turn{'s' if high != 1 else ''}" if low == high else f"{low}\u2013{high} turns"
        )
    elif setup["simulated"]:
        most = max(setup["scripted"], setup["max_turns"] or 0)
        turns = f"up to {most} turns" if most else "turns"
    else:
        turns = f"{setup['scripted']} turn{'s' if setup['scripted'] != 1 else ''}"
    return "conversation · " + turns + (" · simulated user" if setup["simulated"] else "")


def _failing(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every turn (and conversation end) that did not pass, to link from the top."""
    several = len(trials) > 1
    found = []
    for trial in trials:
        named = f"trial {trial['trial']} · " if several else ""
        places = [(f"turn {turn['index']}", turn) for turn in trial["turns"]]
        if trial["whole"] is not None:
            places.append(("conversation", trial["whole"]))
        for name, place in places:
            if place["status"] not in ("passed", "skipped"):
                found.append(
                    {
                        "href": "#" + place["anchor"],
                        "text": named + name,
                        "status": place["status"],
                        "symbol": place["symbol"],
                    }
                )
    return found


def conversation_view(test: TestRecord, anchor: str) -> dict[str, Any]:
    """Everything the run page shows of a conversation test, as text to escape.

    ``anchor`` is the test's id in the page: its turns' anchors start with it.

    ``setup`` (input mapping, persona…), ``trials`` (each a transcript: ``turns``, ``whole``,
    ``error``; at most `CHATS_SHOWN`, those that did not pass first; ``more``: how many
    others), ``label`` (what the test list says of it), ``failing`` (links to the turns that
    did not pass) and ``open`` (the trials shown unfolded: those that did not pass, else the
    first).
    """
    setup = _setup(test.input)
    every = [_trial(trial, anchor, setup) for trial in test.trials]
    not_passed = {t["trial"] for t in every if t["status"] not in ("passed", "skipped")}
    first = sorted(every, key=lambda t: t["trial"] not in not_passed)[:CHATS_SHOWN]
    trials = [t for t in every if t in first]
    return {
        "setup": setup,
        "trials": trials,
        "more": len(every) - len(trials),
        "label": _label(every, setup),
        "failing": _failing(trials),
        "open": not_passed or {trials[0]["trial"]} if trials else set(),
        # A step's failures link to the turn in the first trial it failed in.
        "step_links": {
            (trial["trial"], f"turn {turn['index']}"): "#" + turn["anchor"]
            for trial in trials
            for turn in trial["turns"]
        }
        | {
            (trial["trial"], CONVERSATION_STEP): "#" + trial["whole"]["anchor"]
            for trial in trials
            if trial["whole"] is not None
        },
    }
