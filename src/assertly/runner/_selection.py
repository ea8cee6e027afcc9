"""Which tests a run takes: --agent, --suite, --test, --tag, -k, and --shard.

Also the filter values that match nothing: a typo must not silently run fewer tests.

``--shard I/N`` keeps the tests whose key hashes to part I of N (BLAKE2b of the key, modulo N):
the same test lands in the same shard on every machine and in every order, and the N shards
cover every test exactly once. An eval suite is judged whole, so it goes to the shard its
file's name hashes to.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence

from .._exceptions import ConfigError, Problem
from ..loading import Dataset, TestCase
from ._matrix import Matrix
from ._options import RunOptions, parse_shard

__all__ = ["TestPlan", "filtered", "in_shard", "select_tests", "selected", "unmatched_filters"]


def _matches_keyword(test: TestCase, expression: str) -> bool:
    """``-k``: words joined by ``and``/``or``/``not`` matched against id, name, suite, tags."""
    haystack = " ".join([test.id, test.name, test.suite, *test.tags]).lower()
    return compile_keyword(expression)(haystack)


# A -k expression is typed by a person: these bounds are far beyond any real one, and keep a
# pathological one (200,000 nested "not", a megabyte of parentheses) a usage error.
MAX_KEYWORD_LENGTH = 10_000
MAX_KEYWORD_NESTING = 100

_Match = Callable[[str], bool]


@functools.lru_cache(maxsize=16)
def compile_keyword(expression: str) -> _Match:
    """Compile a ``-k`` expression once into a matcher of a test's lower-cased text.

    Grammar (as pytest's ``-k``): ``or`` of ``and`` of ``not``-prefixed words or parenthesised
    expressions; a word matches when it is part of the text. Nothing is evaluated as Python.

    Raises:
        ConfigError: The expression cannot be parsed, is too long or nests too deeply.
    """

    def fail(reason: str) -> ConfigError:
        shown = expression if len(expression) <= 80 else expression[:77] + "..."
        return ConfigError([Problem("-k", f"cannot parse expression {shown!r}: {reason}")])

    if len(expression) > MAX_KEYWORD_LENGTH:
        raise fail(f"it is {len(expression):,} characters long; at most {MAX_KEYWORD_LENGTH:,}")
    tokens = expression.replace("(", " ( ").replace(")", " ) ").split()
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def parse_or(depth: int) -> _Match:
        nonlocal position
        parts = [parse_and(depth)]
        while peek() == "or":
            position += 1
            parts.append(parse_and(depth))
        return parts[0] if len(parts) == 1 else lambda text: any(p(text) for p in parts)

    def parse_and(depth: int) -> _Match:
        nonlocal position
        parts = [parse_not(depth)]
        while peek() == "and":
            position += 1
            parts.append(parse_not(depth))
        return parts[0] if len(parts) == 1 else lambda text: all(p(text) for p in parts)

    def parse_not(depth: int) -> _Match:
        nonlocal position
        if depth > MAX_KEYWORD_NESTING:
            raise fail(f"it nests deeper than {MAX_KEYWORD_NESTING} levels")
        token = peek()
        if token == "not":
            position += 1
            inner = parse_not(depth + 1)
            return lambda text: not inner(text)
        if token == "(":
            position += 1
            inner = parse_or(depth + 1)
            if peek() != ")":
                raise fail("a '(' is never closed")
            position += 1
            return inner
        if token is None or token in ("and", "or", ")"):
            raise fail(f"expected a word, got {token or 'the end'!r}")
        position += 1
        word = token.lower()
        return lambda text: word in text

    matcher = parse_or(0)
    if position < len(tokens):
        raise fail(f"unexpected {tokens[position]!r}")
    return matcher


def select_tests(tests: Iterable[TestCase], options: RunOptions) -> list[TestCase]:
    """Apply the combined filters (every given filter must match), then ``--shard``."""
    shard = parse_shard(options.shard) if options.shard else None
    return [
        test
        for test in tests
        if selected(test, options) and (shard is None or in_shard(test.key, shard))
    ]


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Whether the test (or eval file) ``key`` belongs to shard ``(I, N)``."""
    index, count = shard
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count == index - 1


def selected(test: TestCase, options: RunOptions) -> bool:
    """Whether ``test`` passes every filter given (--agent, --suite, --test, --tag, -k)."""
    if options.agents and test.agent not in options.agents:
        return False
    if options.suites and test.suite not in options.suites:
        return False
    if options.test_ids and not any(fnmatch.fnmatchcase(test.id, p) for p in options.test_ids):
        return False
    if options.tags and not set(options.tags) & set(test.tags):
        return False
    return not (options.keyword and not _matches_keyword(test, options.keyword))


class TestPlan:
    """The tests of a run, in order: the listed tests, then each dataset's cases, streamed.

    Dataset lines are read as the run reaches them, never all at once. In a matrix run each
    test is one cell per label, one after the other (`Matrix.cells`); ``--shard`` splits the
    cells, so the targets of one test may run in different shards.
    """

    __test__ = False  # not a pytest class

    def __init__(
        self,
        tests: list[TestCase],
        datasets: list[Dataset],
        options: RunOptions,
        matrix: Matrix | None = None,
    ):
        self.options = options
        self.matrix = matrix
        self._shard = parse_shard(options.shard) if options.shard else None
        # Every cell of the listed tests the shard keeps, and the tests they are cells of.
        self.cells = [cell for test in tests for cell in self._cells(test)]
        self.tests = list({id(cell.steps): _base(cell) for cell in self.cells}.values())
        self.datasets = [
            dataset
            for dataset in datasets
            if (not options.agents or dataset.agent in options.agents)
            and (not options.suites or dataset.suite in options.suites)
        ]
        # A shard's whole plan: the tests of every shard (set by `prepare`, for the plan digest).
        self.whole: TestPlan | None = None
        self.eval_files: list[str] = []  # on `whole`: every eval suite's file, before the split

    def _cells(self, test: TestCase) -> Iterator[TestCase]:
        cells = self.matrix.cells(test) if self.matrix is not None else (test,)
        for cell in cells:
            if self._shard is None or in_shard(cell.key, self._shard):
                yield cell

    def __iter__(self) -> Iterator[TestCase]:
        yield from self.cells
        case_filters = filtered(self.options)
        for dataset in self.datasets:
            for case in dataset.cases():
                if case_filters and not selected(case, self.options):
                    continue
                yield from self._cells(case)

    def __bool__(self) -> bool:
        return bool(self.cells or self.datasets)

    def labels_of(self, agent: str) -> tuple[str, ...]:
        """The target labels a test of ``agent`` runs under (none outside a matrix run)."""
        return self.matrix.labels_of(agent) if self.matrix is not None else ()

    def count(self) -> int:
        """How many tests will run (an upper bound when filters apply to dataset cases)."""
        return len(self.cells) + sum(
            dataset.count() * max(1, len(self.labels_of(dataset.agent)))
            for dataset in self.datasets
        )


def _base(cell: TestCase) -> TestCase:
    return cell if cell.target is None else dataclasses.replace(cell, target=None)


def filtered(options: RunOptions) -> bool:
    """Whether any test filter (--agent, --suite, --test, --tag, -k) is given."""
    return bool(
        options.agents or options.suites or options.test_ids or options.tags or options.keyword
    )


def _unmatched(option: str, kind: str, given: Sequence[str], known: Iterable[str]) -> list[Problem]:
    names = sorted(set(known))
    problems = []
    for value in given:
        if value in names:
            continue
        close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        listed = ", ".join(names[:20]) + (", …" if len(names) > 20 else "") or "none"
        problems.append(
            Problem(option, f"'{value}' matches no {kind} in these files{hint}; {kind}s: {listed}")
        )
    return problems


def unmatched_filters(
    tests: Sequence[TestCase],
    datasets: Sequence[Dataset],
    *,
    agents: Sequence[str],
    suites: Sequence[str],
    test_ids: Sequence[str],
) -> list[Problem]:
    """A problem for each ``--agent``, ``--suite`` or ``--test`` value that matches nothing.

    Each value is checked on its own, against every test loaded (before any filter), so one
    misspelt value among several is caught too. ``--test`` patterns are not checked when a
    dataset is loaded: its case ids are known only once its lines are read.
    """
    problems = _unmatched(
        "--agent", "agent", agents, [t.agent for t in tests] + [d.agent for d in datasets]
    )
    problems += _unmatched(
        "--suite", "suite", suites, [t.suite for t in tests] + [d.suite for d in datasets]
    )
    if datasets:
        return problems
    ids = sorted({test.id for test in tests})
    for pattern in test_ids:
        if any(fnmatch.fnmatchcase(test_id, pattern) for test_id in ids):
            continue
        close = difflib.get_close_matches(pattern, ids, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        problems.append(Problem("--test", f"'{pattern}' matches no test id in these files{hint}"))
    return problems
