"""The measured part of docs/performance.md, rewritten from a run (`suite.py --update-docs`)."""

from __future__ import annotations

from datetime import datetime

import peers as peer_install
from harness import RATIO_NOTE, REPO, Run, speed_line

DOCS = REPO / "docs" / "performance.md"


def update_docs(run: Run, peers: dict[str, peer_install.Peer], created: datetime) -> None:
    """Replace the measured part of docs/performance.md, between its markers."""
    start, end = "<!-- bench:table:start -->", "<!-- bench:table:end -->"
    text = DOCS.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{DOCS}: markers {start} and {end} not found")
    m, results = run.results["machine"], run.results
    lines = [
        start,
        f"Measured on {created:%Y-%m-%d} at {created:%H:%M} UTC by `make bench"
        + (" BENCH_ARGS=--quick" if results["quick"] else "")
        + f"`, assertly {results['assertly']} at commit `{results['commit']}`, in "
        + f"{results['total_s']:.0f} s.",
        "",
        f"- machine: {m['nproc']} CPUs (`nproc`), {m['cpu']} (/proc/cpuinfo), {m['memory']}",
        f"- Python {m['python']}, Node {m['node']}, {m['platform']}",
    ]
    for peer in peers.values():
        took = f", installed in {peer.install_s:.0f} s" if peer.install_s else ""
        lines.append(f"- peer: {peer.status}{took}")
    lines += ["", run.table.markdown(), "", RATIO_NOTE, ""]
    lines += [f"- {results['contention_line']}", f"- {speed_line(results['speed_probe'])}"]
    lines += [f"- {warning}" for warning in results["contention_warnings"]]
    for name, found in run.agreement.items():
        if "cases" in found:
            lines.append(
                f"- verdicts, {name}: {found['cases_differing']} of {found['cases']:,} cases "
                "differ from assertly's in pass/fail or score"
            )
        else:
            lines.append(
                f"- verdicts, {name}: {found['responses_differing']} of "
                f"{found['responses_compared']:,} responses differ from assertly's, assertion "
                "by assertion"
            )
    lines.append(end)
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    DOCS.write_text(before + "\n".join(lines) + after, encoding="utf-8")
    print(f"updated {DOCS.relative_to(REPO)}")
