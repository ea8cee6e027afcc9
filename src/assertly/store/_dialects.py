"""What the viewer's SQL (`_queries`) says differently over a SQLite and a PostgreSQL store."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DISAGREE", "POSTGRES", "SQLITE", "VERDICT_WHEN", "Dialect", "is_postgres_url"]

# Whether the cells of one matrix row (a test under each target; its verdicts ``verdict``)
# disagree: two verdicts differ, a cell with no trial yet (``pending``) left out. The SQL of
# `targets_disagree` (the Python rule), proved equal by tests/store/test_matrix_queries.py.
DISAGREE = "COUNT(DISTINCT CASE WHEN verdict <> 'pending' THEN verdict END) > 1"
# A cell's row: its key without the ``[label]`` of its target (`TestRecord.base_key`).
_BASE = (
    "CASE WHEN target IS NULL OR substr(test_key, length(test_key) - length(target) - 1) "
    "<> '[' || target || ']' THEN test_key "
    "ELSE substr(test_key, 1, length(test_key) - length(target) - 2) END"
)


@dataclass(frozen=True)
class Dialect:
    """What the viewer's SQL says differently on SQLite and on PostgreSQL.

    Attributes:
        tie: The column that orders runs started at the same instant (as ``last~N`` does).
        verdicts: Each test of a run with its verdict (``test_key``, ``verdict``), before its
            GROUP BY. Parameters: whether the run is still being written (a test with no
            trial yet is then ``pending``), the run's pass threshold, the run id.
        nested: Whether the verdict is computed in a subquery (PostgreSQL: no output alias in
            HAVING) rather than on the grouped rows (SQLite, which streams them in run order).
        suite: A test's suite; tag: whether the test has the tag ``?``; contains: whether a
            text column holds ``?`` (ASCII letters in either case).
        record: A trial's record (``x``) as text, for `contains` (SQLite compresses records).
        target: A test's target label (a matrix run's; NULL in a run of one target).
        cells: Each test of a run (``test_key``, ``position``, ``target``, ``verdict``, and
            ``hit``: 1 when it meets the conditions put in for ``{where}``, else 0).
            Parameters: as `verdicts`'s, the conditions' between the threshold and the run id.
        run_keys: A run's ``files`` (JSON text; NULL for a run stored before runs kept
            them) and its target labels (JSON text, ``[]`` for a run of one target), from
            ``runs.options``: what "the previous run of the same files and targets" compares.
    """

    tie: str
    verdicts: str
    nested: bool
    suite: str
    tag: str
    contains: str
    record: str
    target: str
    cells: str
    run_keys: str

    def counts_sql(self) -> str:
        """Tests by verdict over the whole run."""
        if self.nested:
            return f"SELECT verdict, COUNT(*) FROM ({self.verdicts}) v GROUP BY verdict"
        return (
            f"SELECT verdict, COUNT(*) FROM ({self.verdicts} GROUP BY t.position) GROUP BY verdict"
        )

    def page_sql(self, where: str, marks: str) -> str:
        """The keys of a page of tests whose verdict is one of ``marks``, in run order."""
        if self.nested:
            inner = self.verdicts.replace("{where}", where)
            return (
                f"SELECT test_key FROM ({inner}) v WHERE verdict IN ({marks}) "
                "ORDER BY position LIMIT ? OFFSET ?"
            )
        return (
            f"{self.verdicts} {where} GROUP BY t.position HAVING verdict IN ({marks}) "
            "ORDER BY t.position LIMIT ? OFFSET ?"
        )

    def matrix_rows_sql(self) -> str:
        """Each cell of a matrix run with its row (``base``), verdict and ``hit``."""
        return f"SELECT {_BASE} AS base, position, verdict, hit FROM ({self.cells}) c"

    def matrix_page_sql(self, where: str, marks: str, disagree: bool) -> str:
        """A page of a matrix run's rows, in run order, as the filters keep them.

        A row is kept when one of its cells meets the conditions ``where`` and has a verdict
        among ``marks`` (any, when empty) and, with ``disagree``, when its verdicts differ.

        Each row: ``base``, its first and last position, how many rows the run has and how
        many the filters keep. Parameters: the statuses of ``marks``, those of `cells`
        (``where``'s among them), then limit and offset. With neither statuses nor
        ``disagree``, no verdict is computed (a third of the time): the parameters are then
        ``where``'s, the run id, limit and offset.
        """
        if marks or disagree:
            status = f" AND verdict IN ({marks})" if marks else ""
            keep = f"SUM(CASE WHEN hit = 1{status} THEN 1 ELSE 0 END) > 0"
            if disagree:
                keep += f" AND {DISAGREE}"
            rows = self.matrix_rows_sql().replace("{where}", where)
        else:
            keep = "SUM(hit) > 0"
            rows = (
                f"SELECT {_BASE} AS base, position, hit FROM (SELECT t.test_key AS test_key, "
                f"t.position AS position, {self.target} AS target, "
                f"CASE WHEN 1 = 1 {where} THEN 1 ELSE 0 END AS hit "
                "FROM tests t WHERE t.run_id = ?) c"
            )
        return (
            "SELECT base, first, last, total, matched FROM ("
            "SELECT base, first, last, keep, COUNT(*) OVER () AS total, "
            "SUM(keep) OVER () AS matched FROM ("
            f"SELECT base, MIN(position) AS first, MAX(position) AS last, "
            f"CASE WHEN {keep} THEN 1 ELSE 0 END AS keep "
            f"FROM ({rows}) m GROUP BY base) k) g "
            "WHERE keep = 1 ORDER BY first LIMIT ? OFFSET ?"
        )

    def matrix_counts_sql(self) -> tuple[str, str]:
        """Cells by target and verdict; and how many rows the run has, how many disagree.

        Parameters of each: as `cells`'s, with no conditions.
        """
        cells = self.cells.replace("{where}", "")
        rows = self.matrix_rows_sql().replace("{where}", "")
        return (
            f"SELECT target, verdict, COUNT(*) FROM ({cells}) c GROUP BY target, verdict",
            f"SELECT COUNT(*), COALESCE(SUM(d), 0) FROM (SELECT base, "
            f"CASE WHEN {DISAGREE} THEN 1 ELSE 0 END AS d FROM ({rows}) m GROUP BY base) g",
        )

    def where(self, suite: str, tag: str, q: str) -> tuple[str, list[str]]:
        """SQL conditions on ``tests t`` (each starting with AND) and their parameters.

        Tests in ``suite``, tagged ``tag``, containing ``q`` (each: no condition when empty).
        """
        return _where_of(self, suite, tag, q)


_SQLITE_VERDICT = (
    "CASE WHEN ? AND COUNT(r.trial) = 0 THEN 'pending' "
    "ELSE assertly_status("
    "COALESCE(SUM(r.status = 'passed'), 0), COALESCE(SUM(r.status = 'failed'), 0), "
    "COALESCE(SUM(r.status = 'error'), 0), COALESCE(SUM(r.status = 'skipped'), 0), "
    "COALESCE(json_extract(t.meta, '$.pass_threshold'), ?)) END AS verdict"
)
_TRIALS_JOIN = (
    "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
    "WHERE t.run_id = ?"
)
SQLITE = Dialect(
    tie="rowid",
    verdicts=f"SELECT t.test_key AS test_key, {_SQLITE_VERDICT} {_TRIALS_JOIN}",
    nested=False,
    suite="json_extract(t.meta, '$.suite')",
    tag="EXISTS (SELECT 1 FROM json_each(t.meta, '$.tags') WHERE value = ?)",
    contains="instr(lower({column}), ?) > 0",
    record="assertly_text(x.record)",
    target="json_extract(t.meta, '$.target')",
    cells=(
        "SELECT t.test_key AS test_key, t.position AS position, "
        f"json_extract(t.meta, '$.target') AS target, {_SQLITE_VERDICT}, "
        "CASE WHEN 1 = 1 {where} THEN 1 ELSE 0 END AS hit "
        f"{_TRIALS_JOIN} GROUP BY t.position"
    ),
    run_keys="json_extract(options, '$.files'), "
    "COALESCE(json_extract(options, '$.target_labels'), '[]')",
)
# The verdict rule (`status_of_counts`, the one source) as the WHEN branches of an SQL CASE
# over a test's trial counts p, f, e, s (passed, failed, error, skipped) and its pass
# threshold thr. SQLite calls the Python rule itself (``assertly_status``, registered by the
# store); PostgreSQL cannot, so this restates it, and tests/store/test_verdict_sql.py proves
# the two agree on every combination of counts and thresholds, on SQLite and on PostgreSQL.
VERDICT_WHEN = (
    "WHEN p + f + e = 0 THEN (CASE WHEN s > 0 THEN 'skipped' ELSE 'error' END) "
    "WHEN (thr = 'any' AND p > 0) OR (thr = 'majority' AND 2 * p > p + f + e) "
    "OR (thr NOT IN ('any', 'majority') AND p = p + f + e) THEN 'passed' "
    "WHEN f > 0 THEN 'failed' ELSE 'error'"
)
_PG_COUNTS = (
    "COUNT(r.trial) AS n, "
    "SUM(CASE WHEN r.status = 'passed' THEN 1 ELSE 0 END) AS p, "
    "SUM(CASE WHEN r.status = 'failed' THEN 1 ELSE 0 END) AS f, "
    "SUM(CASE WHEN r.status = 'error' THEN 1 ELSE 0 END) AS e, "
    "SUM(CASE WHEN r.status = 'skipped' THEN 1 ELSE 0 END) AS s, "
    "COALESCE(t.pass_threshold, ?) AS thr"
)
_PG_VERDICT = f"CASE WHEN ? AND n = 0 THEN 'pending' {VERDICT_WHEN} END AS verdict"
_PG_TARGET = "(t.meta::json ->> 'target')"
POSTGRES = Dialect(
    tie="seq",
    # The verdict as `status_of_counts` gives it, from the test's counts (c).
    verdicts=(
        f"SELECT test_key, position, {_PG_VERDICT} FROM ("
        f"SELECT t.test_key AS test_key, t.position AS position, {_PG_COUNTS} "
        f"{_TRIALS_JOIN} {{where}} GROUP BY t.position, t.test_key, t.pass_threshold) c"
    ),
    nested=True,
    # json, not jsonb: jsonb refuses the \u0000 an agent may answer.
    suite="(t.meta::json ->> 'suite')",
    tag="EXISTS (SELECT 1 FROM json_array_elements_text(t.meta::json -> 'tags') AS g(v) "
    "WHERE g.v = ?)",
    contains="strpos(lower({column}), ?) > 0",
    record="x.record",
    target=_PG_TARGET,
    # Grouped by the primary key, so the test's other columns may be read (hit, target).
    cells=(
        f"SELECT test_key, position, target, hit, {_PG_VERDICT} FROM ("
        f"SELECT t.test_key AS test_key, t.position AS position, {_PG_TARGET} AS target, "
        f"{_PG_COUNTS}, CASE WHEN 1 = 1 {{where}} THEN 1 ELSE 0 END AS hit "
        f"{_TRIALS_JOIN} GROUP BY t.run_id, t.test_key) c"
    ),
    run_keys="(options::json -> 'files')::text, "
    "COALESCE((options::json -> 'target_labels')::text, '[]')",
)


def _where_of(dialect: Dialect, suite: str, tag: str, q: str) -> tuple[str, list[str]]:
    """SQL conditions on ``tests t`` (each starting with AND) and their parameters."""
    clauses: list[str] = []
    params: list[str] = []
    if suite:
        clauses.append(f"AND {dialect.suite} = ?")
        params.append(suite)
    if tag:
        clauses.append(f"AND {dialect.tag}")
        params.append(tag)
    if q:
        # The text as stored (JSON): key, names, ids, file, input, and each trial's output
        # and messages. ASCII letters match in either case.
        needle = q.lower()
        key = dialect.contains.format(column="t.test_key")
        meta = dialect.contains.format(column="t.meta")
        record = dialect.contains.format(column=dialect.record)
        clauses.append(
            f"AND ({key} OR {meta} OR EXISTS (SELECT 1 FROM trials x "
            f"WHERE x.run_id = t.run_id AND x.test_key = t.test_key AND {record}))"
        )
        params += [needle, needle, needle]
    return " ".join(clauses), params


def is_postgres_url(location: object) -> bool:
    """Whether a store location names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))
