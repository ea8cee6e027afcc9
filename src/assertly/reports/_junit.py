"""JUnit XML for CI systems.

One ``testsuite`` per (file, suite), one ``testcase`` per test, eval cases under a suite per
workflow file. Failures carry expected / actual / path.

An eval suite is judged by its score against its threshold: its own ``threshold`` testcase
fails when the suite fails. A case that did not pass in a suite that met its threshold is not a
``<failure>`` (CI would count a failure while the run exits 0); its detail goes to
``<system-out>``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from xml.etree import ElementTree as ET

from .._records import EvalRecord, RunRecord, TestRecord
from ._failures import eval_case_detail, test_failure_lines

__all__ = ["render_junit"]

# What XML 1.0 cannot hold, raw or as a character reference: C0 controls but tab, newline and
# carriage return; lone surrogates (which ElementTree would write as an invalid &#55296;);
# U+FFFE and U+FFFF. Agent output may hold any of them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _clean(text: str) -> str:
    r"""``text`` with what XML cannot hold shown as escapes (``\x01``, ``\ud800``), not dropped."""
    return _INVALID_XML.sub(_escape, text)


def _failure_text(test: TestRecord) -> str:
    return _clean("\n".join(test_failure_lines(test)))


def render_junit(run: RunRecord) -> bytes:
    """The run as JUnit XML."""
    root = ET.Element("testsuites", name="assertly", tests="0", failures="0", errors="0")
    groups: dict[tuple[str, str], list[TestRecord]] = defaultdict(list)
    for test in run.tests:
        groups[(test.file, test.suite)].append(test)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for (file, suite), tests in groups.items():
        element = ET.SubElement(root, "testsuite", name=_clean(suite), file=_clean(file))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for test in tests:
            # A matrix run's cells of one test differ by target: ``two[cand]``, as its key.
            name = test.id if test.target is None else f"{test.id}[{test.target}]"
            case = ET.SubElement(
                element,
                "testcase",
                name=_clean(name),
                classname=_clean(f"{file}.{suite}"),
                time=f"{test.duration_ms / 1000:.3f}",
            )
            counts["tests"] += 1
            if test.status == "failed":
                counts["failures"] += 1
                node = ET.SubElement(case, "failure", message=_clean(_first_message(test)))
                node.text = _failure_text(test)
            elif test.status == "error":
                counts["errors"] += 1
                node = ET.SubElement(case, "error", message=_clean(_first_message(test)))
                node.text = _failure_text(test)
            elif test.status == "skipped":
                counts["skipped"] += 1
                reason = next((t.reason for t in test.trials if t.reason), "skipped")
                ET.SubElement(case, "skipped", message=_clean(reason or "skipped"))
        for key, value in counts.items():
            element.set(key, str(value))
            totals[key] += value
    for evals in run.evals:
        element = ET.SubElement(root, "testsuite", name=_clean(f"eval: {evals.file}"))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for verdict in evals.cases:
            node = ET.SubElement(
                element, "testcase", name=_clean(verdict.id), classname=_clean(evals.file)
            )
            counts["tests"] += 1
            detail = _clean(eval_case_detail(verdict).replace("; [", "\n["))
            if verdict.status == "failed" and evals.passed:
                note = f"failed (score {verdict.score:.3f}), but the suite met its threshold"
                ET.SubElement(node, "system-out").text = f"{note}\n{detail}"
            elif verdict.status == "failed":
                counts["failures"] += 1
                failure = ET.SubElement(node, "failure", message=f"score {verdict.score:.3f}")
                failure.text = detail
            elif verdict.status == "error":
                counts["errors"] += 1
                ET.SubElement(node, "error", message=_clean(verdict.error or "error"))
        # The suite's verdict: its score against its threshold.
        counts["tests"] += 1
        node = ET.SubElement(
            element, "testcase", name="suite threshold", classname=_clean(evals.file)
        )
        if not evals.passed:
            counts["failures"] += 1
            ET.SubElement(node, "failure", message=_threshold_message(evals))
        for key, value in counts.items():
            element.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        if key != "skipped":
            root.set(key, str(value))
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _threshold_message(suite: EvalRecord) -> str:
    """Why an eval suite failed: its score, an errored case, or no cases at all."""
    reasons = []
    if suite.score + 1e-12 < suite.threshold:
        reasons.append("below the threshold")
    errored = sum(1 for case in suite.cases if case.status == "error")
    if errored:
        reasons.append(f"{errored} case{'s' if errored != 1 else ''} errored")
    if not suite.cases:
        reasons.append("no cases")
    return f"score {suite.score:.3f}, threshold {suite.threshold:g}: " + "; ".join(reasons)


def _first_message(test: TestRecord) -> str:
    for trial in test.trials:
        if trial.error:
            return trial.error[:300]
        for failure in trial.failures:
            return f"{failure.assertion}: {failure.message}"[:300]
    return test.status
