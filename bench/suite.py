"""The benchmark suite behind `make bench`: assertly against its peers, in one run.

Not a test, and never part of `make test`. Every figure of the table comes from this run, on
inputs generated here from one seed, so every ratio compares the same work:

* engine: responses judged per second, in-process, for engine_bench's mixes (a typed list and
  an expect dict of 10 assertions each); the same typed-list workload through runsight-core
  (`run_assertions_sync`, in its own venv), through promptfoo's `assertions.runAssertions`
  (in-process, Node) and through `promptfoo eval` (echo provider, outputs as variables, CLI
  start-up subtracted), and a hand-written Python baseline. The peers' verdicts are compared
  with assertly's, assertion by assertion, on every response.
* end to end: `assertly run` over a 5,000-case fixture suite (8 typed assertions each) against
  `promptfoo eval` on the same cases: wall time and peak RSS.
* matrix: the same 5,000 cases answered by two fixtures targets in one run (`--target
  v1=… --target v2=…`) against one target: wall times and their ratio (issue 31: <= 2.1x).
* conversation: 100 scripted 10-turn conversations against a local HTTP agent, by `assertly
  run` and by a hand-written aiohttp loop sending the same histories (issue 32: <= 1.5x).
* traces: OTLP spans from the OpenTelemetry SDK received and judged per second (protobuf and
  JSON, one core), and the time receiving spans adds to a trial (issue 33: >= 50,000/s, <= 5 ms).
* runner: 2,000 tests against a local HTTP agent answering after 50 ms, at -j 64: tests per
  second as a fraction of the ideal 64 / 0.05 s = 1,280/s.
* diff: `assertly diff` of two stored runs of 1,000,000 tests each (text and JSON).
* start-up: `assertly --version` and `python -c "import assertly"`, and the peers' own, in
  interleaved rounds (mean and median of every command's runs).
* loading: a 3 MB test file loaded and compiled in a fresh process (issue 35: <= 0.15 s), and
  `assertly validate` / `assertly run` of a one-test suite.
* trajectory: tool-call assertions (`tool-called`, `tool-sequence`, `tool-call-count`, four
  trajectory assertions) against a plain `contains` (and `is-json`, which parses JSON as they
  must) on the same tool-calling responses, in every format assertly reads: checks per second
  and the ratio of times, overall and per format (`--only trajectory`).

This machine's speed moves by up to twofold for seconds at a time, so the tools are timed in
interleaved rounds (see `interleaved`), and the suite reports how much CPU other processes took
during each section, warning when that inflates the figures.

    .venv/bin/python bench/suite.py                  # the full run (5 to 10 minutes)
    .venv/bin/python bench/suite.py --quick          # smaller inputs, about 2 minutes
    .venv/bin/python bench/suite.py --update-docs    # also rewrite the table in docs/performance.md

Peers are installed on demand into bench/.peers/ (bench/peers.py); one that cannot be installed
is reported as such. Results: the table on stdout (progress on stderr), and
bench/results/latest.json with every raw figure.

This module is the command line and the order of the sections; the harness (timing, the table,
the shared run) is bench/harness.py, each section a module of bench/sections/, and the rewriting
of docs/performance.md bench/performance_docs.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import assertly
import engine_workload as ew
import workload as wl
from harness import (
    RATIO_NOTE,
    REPO,
    RESULTS,
    Contention,
    Run,
    Sizes,
    git_commit,
    install_peers,
    log,
    machine,
    prepare_bytecode,
    speed_line,
    speed_probe,
)
from performance_docs import update_docs
from sections.conversation import section_conversation
from sections.diff import section_diff
from sections.end_to_end import section_end_to_end
from sections.engine import section_engine
from sections.loading import section_loading
from sections.matrix import section_matrix
from sections.runner import section_py_agent, section_runner
from sections.scale import section_scale
from sections.scaleout import section_scaleout
from sections.similar import section_similar
from sections.startup import section_startup
from sections.traces import section_traces
from sections.trajectory import section_trajectory
from sections.viewer import section_viewer


def print_agreement(agreement: dict[str, Any]) -> None:
    """Every peer's verdicts against assertly's, with the first disagreements."""
    if not agreement:
        return
    print("\nverdicts against assertly's on the same responses:")
    for name, found in agreement.items():
        if "cases" in found:
            by_type = ", ".join(
                f"{k} {v}" for k, v in sorted(found.get("assertions_differing_by_type", {}).items())
            )
            print(
                f"  {name}: {found['cases_differing']} of {found['cases']:,} cases differ in "
                "pass/fail or score" + (f" ({by_type})" if by_type else "")
            )
            continue
        by_type = ", ".join(
            f"{k} {v}" for k, v in sorted(found["assertions_differing_by_type"].items())
        )
        line = (
            f"  {name}: {found['responses_differing']} of {found['responses_compared']:,} "
            "responses differ, assertion by assertion"
        )
        if by_type:
            line += f" ({by_type})"
        if found["responses_without_verdicts"]:
            line += f"; {found['responses_without_verdicts']} without verdicts"
        if found.get("outputs_not_echoed_verbatim"):
            line += f"; {found['outputs_not_echoed_verbatim']} outputs not echoed verbatim"
        print(line)
        for example in found["examples"]:
            print(f"    response {example['response']}: {json.dumps(example['verdicts'])}")
            print(f"      output: {example['output'][:120]!r}")


SECTIONS: dict[str, Callable[[Run], None]] = {
    "engine": section_engine,
    "end to end": section_end_to_end,
    "matrix": section_matrix,
    "conversation": section_conversation,
    "traces": section_traces,
    "runner": section_runner,
    "py agent": section_py_agent,
    "start-up": section_startup,
    "loading": section_loading,
    "scale": section_scale,
    "diff": section_diff,
    "trajectory": section_trajectory,
    "viewer": section_viewer,
    "similar": section_similar,
    "scale-out": section_scaleout,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every section, print the table, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats")
    parser.add_argument("--no-peers", action="store_true", help="neither install nor run peers")
    parser.add_argument("--update-docs", action="store_true", help="rewrite docs/performance.md")
    parser.add_argument("-o", "--output", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        help="run only this section (repeatable; the docs are not updated)",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    created = datetime.now(UTC)
    sizes = Sizes.make(args.quick)
    prepare_bytecode()
    peers = install_peers(args.no_peers)

    run = Run(sizes, peers, Path(tempfile.mkdtemp(prefix="assertly-bench-")))
    run.results.update(
        created=created.isoformat(timespec="seconds"),
        commit=git_commit(),
        assertly=assertly.__version__,
        machine=machine(),
        quick=args.quick,
        seed=ew.SEED,
        sizes=asdict(sizes),
        peers={key: {**asdict(peer), "status": peer.status} for key, peer in peers.items()},
        substitutions={
            "promptfoo": wl.PROMPTFOO_SUBSTITUTIONS,
            "runsight-core": wl.RUNSIGHT_SUBSTITUTIONS,
        },
    )
    log("speed probe")
    run.results["speed_probe"] = speed_probe(40)
    contention = Contention()
    try:
        for name, section in SECTIONS.items():
            if not args.only or name in args.only:
                contention.measure(name, partial(section, run))
    finally:
        if os.environ.get("BENCH_KEEP_WORKDIR"):
            log(f"kept {run.work}")
        else:
            shutil.rmtree(run.work, ignore_errors=True)

    m = run.results["machine"]
    header = (
        f"assertly {assertly.__version__} benchmark suite, {created:%Y-%m-%d %H:%M} UTC"
        f"{' (--quick)' if args.quick else ''}, commit {run.results['commit']}; "
        f"{m['nproc']} x {m['cpu']}, {m['memory']}, Python {m['python']}, Node {m['node']}"
    )
    peers_line = "peers: " + ("; ".join(p.status for p in peers.values()) or "none (--no-peers)")
    print(header)
    print(peers_line)
    print()
    print(run.table.text())
    print()
    print(RATIO_NOTE)
    print(contention.line())
    print(speed_line(run.results["speed_probe"]))
    for warning in contention.warnings():
        print(warning)
    print_agreement(run.agreement)
    run.results.update(
        contention=contention.sections,
        contention_line=contention.line(),
        contention_warnings=contention.warnings(),
        agreement=run.agreement,
        table=run.table.rows,
        table_markdown=run.table.markdown(),
        total_s=time.perf_counter() - started,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(run.results, indent=2, default=str) + "\n", encoding="utf-8")
    shown = args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output
    print(f"\nwrote {shown} ({run.results['total_s']:.0f} s)")
    if args.update_docs and not args.only:
        update_docs(run, peers, created)
    return 0


if __name__ == "__main__":
    sys.exit(main())
