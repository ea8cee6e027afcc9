"""Scheduling, concurrency, timeouts, trials, multi-step tests, hooks and skip facts."""

from .._records import (
    EvalCaseRecord,
    EvalRecord,
    RunRecord,
    StepRecord,
    TestRecord,
    TrialRecord,
    pass_at_k,
    test_status,
)
from ..store import build_run
from ._entry import arun, load_run, prepare, run
from ._options import RunOptions, restore_options
from ._recheck import recheck
from ._run import Runner
from ._selection import select_tests
from ._streaming import RunStream

__all__ = [
    "EvalCaseRecord",
    "EvalRecord",
    "RunOptions",
    "RunRecord",
    "RunStream",
    "Runner",
    "StepRecord",
    "TestRecord",
    "TrialRecord",
    "arun",
    "build_run",
    "load_run",
    "pass_at_k",
    "prepare",
    "recheck",
    "restore_options",
    "run",
    "select_tests",
    "test_status",
]
