"""What the viewer's SQL (`_queries`) says differently over a SQLite and a PostgreSQL store."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["POSTGRES", "SQLITE", "VERDICT_WHEN", "Dialect"]


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
    """

    tie: str
    verdicts: str
    nested: bool
    suite: str
    tag: str
    contains: str
    record: str

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

    def where(self, suite: str, tag: str, q: str) -> tuple[str, list[str]]:
        """SQL conditions on ``tests t`` (each starting with AND) and their parameters.

        Tests in ``suite``, tagged ``tag``, containing ``q`` (each: no condition when empty).
        """
        return _where_of(self, suite, tag, q)


SQLITE = Dialect(
    tie="rowid",
    verdicts=(
        "SELECT t.test_key AS test_key, CASE WHEN ? AND COUNT(r.trial) = 0 THEN 'pending' "
        "ELSE assertly_status("
        "COALESCE(SUM(r.status = 'passed'), 0), COALESCE(SUM(r.status = 'failed'), 0), "
        "COALESCE(SUM(r.status = 'error'), 0), COALESCE(SUM(r.status = 'skipped'), 0), "
        "COALESCE(json_extract(t.meta, '$.pass_threshold'), ?)) END AS verdict "
        "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
        "WHERE t.run_id = ?"
    ),
    nested=False,
    suite="json_extract(t.meta, '$.suite')",
    tag="EXISTS (SELECT 1 FROM json_each(t.meta, '$.tags') WHERE value = ?)",
    contains="instr(lower({column}), ?) > 0",
    record="assertly_text(x.record)",
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
POSTGRES = Dialect(
    tie="seq",
    # The verdict as `status_of_counts` gives it, from the test's counts (c).
    verdicts=(
        f"SELECT test_key, position, CASE WHEN ? AND n = 0 THEN 'pending' {VERDICT_WHEN} "
        "END AS verdict FROM ("
        "SELECT t.test_key AS test_key, t.position AS position, COUNT(r.trial) AS n, "
        "SUM(CASE WHEN r.status = 'passed' THEN 1 ELSE 0 END) AS p, "
        "SUM(CASE WHEN r.status = 'failed' THEN 1 ELSE 0 END) AS f, "
        "SUM(CASE WHEN r.status = 'error' THEN 1 ELSE 0 END) AS e, "
        "SUM(CASE WHEN r.status = 'skipped' THEN 1 ELSE 0 END) AS s, "
        "COALESCE(t.pass_threshold, ?) AS thr "
        "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
        "WHERE t.run_id = ? {where} GROUP BY t.position, t.test_key, t.pass_threshold) c"
    ),
    nested=True,
    # json, not jsonb: jsonb refuses the \u0000 an agent may answer.
    suite="(t.meta::json ->> 'suite')",
    tag="EXISTS (SELECT 1 FROM json_array_elements_text(t.meta::json -> 'tags') AS g(v) "
    "WHERE g.v = ?)",
    contains="strpos(lower({column}), ?) > 0",
    record="x.record",
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
