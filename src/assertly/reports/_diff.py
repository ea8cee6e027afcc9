"""A comparison of two runs as people read it: the terminal, a pull-request comment, JSON.

Regressions come first, each with the candidate's failing assertion; fixes next; then what was
added, removed or redefined. Everything that comes from a test file or an agent is made inert:
control characters escaped on the terminal, Markdown escaped in the comment.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from .._check_records import AssertionRecord
from .._json import report_json_bytes, to_json_bytes
from .._terminal import inert_json, inert_text, terminal_safe
from ..compare import RunDiff, TestChange
from ._analysis import NONE, clip
from ._markdown import md_code, md_text

__all__ = ["comparison_view", "render_diff_markdown", "render_diff_text", "write_diff_json"]

# Tests listed by name in the terminal and the comment, per kind (the JSON lists every test).
SHOWN = 50
_MESSAGE = 200

_SYMBOLS = {
    "regressed": "REGRESSED",
    "fixed": "FIXED",
    "changed_definition": "REDEFINED",
    "added": "ADDED",
    "removed": "REMOVED",
}


def _rate(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.1f}%"


def _interval(bounds: tuple[float, float]) -> str:
    return f"[{bounds[0] * 100:.1f}%, {bounds[1] * 100:.1f}%]"


def _p(value: float | None) -> str:
    return NONE if value is None else f"{value:.3g}"


def _failure_text(failure: AssertionRecord) -> str:
    message = clip(" ".join(failure.message.split()), _MESSAGE)
    return f"{failure.assertion}: {message}" if message else failure.assertion


def _headline(diff: RunDiff) -> str:
    counts = diff.counts
    parts = [
        f"{counts['regressed']} regressed",
        f"{counts['fixed']} fixed",
        f"{counts['unchanged']} unchanged",
        f"{counts['added']} added",
        f"{counts['removed']} removed",
        f"{counts['changed_definition']} changed definition",
    ]
    return ", ".join(parts)


def _rates_line(diff: RunDiff) -> str:
    base, base_interval = diff.pass_rate("base")
    cand, cand_interval = diff.pass_rate("candidate")
    return (
        f"pass rate {_rate(base)} {_interval(base_interval)} → {_rate(cand)} "
        f"{_interval(cand_interval)} (95% Wilson); McNemar p = {_p(diff.mcnemar_p)} "
        f"({diff.paired_regressions} passing→not, {diff.paired_fixes} not→passing)"
    )


def render_diff_text(diff: RunDiff) -> str:
    """The comparison for a terminal: regressions first, each with its failing assertion."""
    lines = [
        f"base      {terminal_safe(diff.base.name)}  {terminal_safe(diff.base.started_at)}",
        f"candidate {terminal_safe(diff.candidate.name)}  "
        f"{terminal_safe(diff.candidate.started_at)}",
        "",
    ]
    for kind in ("regressed", "fixed", "changed_definition", "added", "removed"):
        items = [item for item in diff.changed if item.change == kind]
        for item in items[:SHOWN]:
            lines.append(f"{_SYMBOLS[kind]:<10}{terminal_safe(item.key)}  {_status_change(item)}")
            for failure in item.failures[:3]:
                lines.append(f"          ✗ {terminal_safe(_failure_text(failure))}")
        if len(items) > SHOWN:
            lines.append(
                f"          … and {len(items) - SHOWN} more {kind} (--format json lists all)"
            )
    for change in diff.evals:
        if change.delta:
            lines.append(
                f"EVAL      {terminal_safe(change.file)}  score {_score(change.base_score)} → "
                f"{_score(change.candidate_score)} ({change.delta:+.3f})"
            )
    if len(lines) > 3:
        lines.append("")
    lines.append(_headline(diff))
    lines.append(_rates_line(diff))
    return inert_text("\n".join(lines))


def _score(value: float | None) -> str:
    return NONE if value is None else f"{value:.3f}"


def _status_change(item: TestChange) -> str:
    text = f"{item.base or NONE} → {item.candidate or NONE}"
    if item.base_pass_rate is not None and item.candidate_pass_rate is not None:
        rates = f"pass rate {_rate(item.base_pass_rate)} → {_rate(item.candidate_pass_rate)}"
        if item.p_value is not None:
            rates += f", p = {_p(item.p_value)}, Holm {_p(item.p_adjusted)}"
        text += f"  ({rates})"
    return text


def render_diff_markdown(diff: RunDiff) -> str:
    """The comparison as a pull-request comment: a summary line, regressions, then details."""
    counts = diff.counts
    icon = "❌" if counts["regressed"] else "✅"
    lines = [
        f"### {icon} assertly: {counts['regressed']} regressed, {counts['fixed']} fixed",
        "",
        f"Base {md_code(diff.base.name)} → candidate {md_code(diff.candidate.name)}: "
        f"{md_text(_headline(diff))}.",
        "",
        f"{md_text(_rates_line(diff))}.",
        "",
    ]
    regressions = diff.regressions
    if regressions:
        lines += _table(regressions[:SHOWN], with_failure=True)
        if len(regressions) > SHOWN:
            lines.append(f"… and {len(regressions) - SHOWN} more regressions.")
        lines.append("")
    for kind, title in (
        ("fixed", "Fixed"),
        ("changed_definition", "Changed definition (not compared)"),
        ("added", "Added"),
        ("removed", "Removed"),
    ):
        items = [item for item in diff.changed if item.change == kind]
        if not items:
            continue
        lines += [f"<details><summary>{title} ({len(items)})</summary>", ""]
        lines += _table(items[:SHOWN], with_failure=False)
        if len(items) > SHOWN:
            lines.append(f"… and {len(items) - SHOWN} more.")
        lines += ["", "</details>", ""]
    changed_evals = [change for change in diff.evals if change.delta]
    if changed_evals:
        lines += ["| eval | base score | candidate score | Δ |", "|---|---:|---:|---:|"]
        for change in changed_evals:
            lines.append(
                f"| {md_code(change.file)} | {_score(change.base_score)} | "
                f"{_score(change.candidate_score)} | {change.delta:+.3f} |"
            )
        lines.append("")
    return inert_text("\n".join(lines).rstrip() + "\n")  # no control reaches a terminal


def _table(items: list[TestChange], *, with_failure: bool) -> list[str]:
    head = "| test | base | candidate | pass rate | p (Holm) |"
    rule = "|---|---|---|---|---|"
    if with_failure:
        head += " failing assertion |"
        rule += "---|"
    rows = [head, rule]
    for item in items:
        rates = f"{_rate(item.base_pass_rate)} → {_rate(item.candidate_pass_rate)}"
        row = (
            f"| {md_code(item.key)} | {item.base or NONE} | {item.candidate or NONE} | {rates} | "
            f"{_p(item.p_adjusted)} |"
        )
        if with_failure:
            failure = item.failures[0] if item.failures else None
            row += f" {md_text(_failure_text(failure)) if failure else NONE} |"
        rows.append(row)
    return rows


# Changed tests the HTML report lists (regressions first); `assertly diff` lists them all.
HTML_ROWS = 200
_BADGES = {
    "regressed": "failed",
    "fixed": "passed",
    "changed_definition": "skipped",
    "added": "skipped",
    "removed": "skipped",
}


def comparison_view(diff: RunDiff) -> dict[str, Any]:
    """What the HTML report of a run with ``--baseline`` shows of the comparison.

    Plain strings only: the template escapes every one of them.
    """
    order = ("regressed", "fixed", "changed_definition", "added", "removed")
    ranked = sorted(diff.changed, key=lambda item: order.index(item.change))
    rows = []
    for item in ranked[:HTML_ROWS]:
        failure = item.failures[0] if item.failures else None
        rows.append(
            {
                "change": item.change,
                "label": _SYMBOLS[item.change].lower(),
                "badge": _BADGES[item.change],
                "key": item.key,
                "base": item.base,
                "candidate": item.candidate,
                "rates": f"{_rate(item.base_pass_rate)} → {_rate(item.candidate_pass_rate)}",
                "p": _p(item.p_adjusted),
                "failure": _failure_text(failure) if failure else "",
            }
        )
    return {
        "base_id": diff.base.name,
        "base_started": diff.base.started_at,
        "counts": diff.counts,
        "headline": _headline(diff),
        "rates": _rates_line(diff),
        "rows": rows,
        "more": max(0, len(ranked) - HTML_ROWS),
    }


def _json_chunks(diff: RunDiff) -> Iterator[bytes]:
    def side(run: Any) -> dict[str, Any]:
        named = {"run_id": run.run_id, "started_at": run.started_at, "source": run.source}
        # One target of a matrix run (`RUN:LABEL`) says which; a whole run's shape is unchanged.
        return named if run.target is None else {**named, "target": run.target}

    yield b'{"base":' + to_json_bytes(side(diff.base))
    yield b',"candidate":' + to_json_bytes(side(diff.candidate))
    yield b',"summary":' + report_json_bytes(diff.summary(), level=1)
    yield b',"tests":['
    first = True
    for item in diff.tests():
        yield (b"" if first else b",") + b"\n" + report_json_bytes(item.to_dict(), level=2)
        first = False
    evals = [change.to_dict() for change in diff.evals]
    yield b'],"evals":' + report_json_bytes(evals, level=1) + b"}\n"


def write_diff_json(diff: RunDiff, handle: BinaryIO) -> None:
    """``assertly diff --format json``, streamed test by test (flat memory on any run)."""
    for chunk in _json_chunks(diff):
        handle.write(inert_json(chunk))
