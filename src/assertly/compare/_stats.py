"""Statistics that say whether a difference between two runs is real, in pure Python.

Every function is exact where it matters and stdlib-only (no numpy or scipy at run time):

* `fisher_exact` and `regression_p_value`: Fisher's exact test on one test's passes out of
  its trials, base against candidate (Fisher 1922; Agresti, *Categorical Data Analysis*,
  3rd ed., 2013, section 3.5).
* `mcnemar_exact` and `paired_regression_p_value`: the exact (binomial) McNemar test on the
  paired verdicts of a suite (McNemar 1947; Agresti 2013, section 11.1).
* `wilson_interval`: the Wilson score interval of a pass rate (Wilson 1927).
* `holm`: Holm's step-down adjustment of many p-values (Holm 1979).

Exactness. Up to `EXACT_LIMIT` observations, p-values are ratios of exact integers (sums of
binomial coefficients) rounded once to the nearest float, so ties between tables are decided
exactly and a p-value of 1e-30 keeps all its digits. Beyond, they are sums of
``exp(log-probability)`` (``math.lgamma``) over every term a float can hold: relative error
below 1e-9 (lgamma of large arguments), milliseconds even for a million trials.

Speed. The hypergeometric weights of one table's margins are computed once (cached), after
which a Fisher p-value is two bisections and one division; see `fisher_exact`.

The one-sided "the candidate got worse" tests (`regression_p_value`,
`paired_regression_p_value`) are what ``--fail-on significant`` gates on; docs/decisions.md
("Statistics of run comparison") says why.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Literal, NamedTuple

__all__ = [
    "EXACT_LIMIT",
    "Alternative",
    "fisher_exact",
    "holm",
    "mcnemar_exact",
    "paired_regression_p_value",
    "regression_p_value",
    "wilson_interval",
]

Alternative = Literal["two-sided", "greater", "less"]
_ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")

# Largest number of observations (a table's grand total, or the discordant pairs of McNemar)
# computed with exact integers. At this size one new table costs 10 to 25 ms; beyond,
# integer sizes grow with n and the cost with n², so larger inputs use the log-space sums.
EXACT_LIMIT = 10_000

# R's fisher.test and scipy's binomtest count a table as "as extreme" when its probability is at
# most the observed one times 1 + 1e-7; the log-space path needs such a tolerance too, since
# lgamma of large arguments loses ~1e-9 of relative precision. The exact path needs none.
_RELATIVE_TOLERANCE = 1e-7
_LOG_TOLERANCE = math.log1p(_RELATIVE_TOLERANCE)
# Terms below exp(-750) times the largest are under the smallest positive float (4.9e-324)
# relative to any sum they join: the log-space sums stop there.
_LOG_CUTOFF = 750.0


def _count(value: object, name: str) -> int:
    """``value`` as a count, or ValueError saying what is wrong (booleans are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


def _alternative(value: object) -> str:
    if value not in _ALTERNATIVES:
        allowed = ", ".join(repr(a) for a in _ALTERNATIVES)
        raise ValueError(f"alternative must be one of {allowed}, got {value!r}")
    return str(value)


def _passes_of(passes: object, trials: object, name: str) -> tuple[int, int]:
    """``(passes, failures)`` of one run's trials, validated."""
    p = _count(passes, f"{name}_passes")
    n = _count(trials, f"{name}_trials")
    if p > n:
        raise ValueError(f"{name}_passes ({p}) cannot exceed {name}_trials ({n})")
    return p, n - p


# --- Fisher's exact test -----------------------------------------------------------------


class _Margins(NamedTuple):
    """The null distribution of the top-left cell for fixed margins (exact integer weights).

    ``weights[i]`` is proportional to P(X = low + i); ``total`` is their sum, C(n, c1).
    """

    low: int
    weights: tuple[int, ...]
    cumulative: tuple[int, ...]  # cumulative[i] = weights[0] + ... + weights[i]
    mode: int  # index of the first largest weight
    total: int


# Rows of Pascal's triangle up to this size are cached whole (row 200: ~10 kB).
_ROW_LIMIT = 200
_CACHE_LIMIT = 200


@lru_cache(maxsize=_ROW_LIMIT + 1)
def _binomial_row(r: int) -> tuple[int, ...]:
    """C(r, 0), C(r, 1), ..., C(r, r), exactly."""
    row = [1]
    for k in range(r):
        row.append(row[-1] * (r - k) // (k + 1))
    return tuple(row)


def _margins(r1: int, r2: int, c1: int) -> _Margins:
    """The weights of these margins: cached for small tables, computed afresh for large ones.

    A suite compared with a fixed number of trials has only a few dozen distinct margins, so
    a call is mostly two bisections. The cache is bounded in memory too: 1,024 entries of at
    most 200 observations (~12 kB each); a large table's weights (~10 MB at 10,000) are
    not kept.
    """
    if r1 + r2 <= _CACHE_LIMIT:
        return _cached_margins(r1, r2, c1)
    return _compute_margins(r1, r2, c1)


def _compute_margins(r1: int, r2: int, c1: int) -> _Margins:
    """Exact hypergeometric weights w(x) = C(r1, x) * C(r2, c1 - x) over the support of x."""
    low = max(0, c1 - r2)
    high = min(r1, c1)
    if r1 <= _ROW_LIMIT and r2 <= _ROW_LIMIT:
        # Products of two cached rows of Pascal's triangle, at C speed.
        below = _binomial_row(r2)[c1 - high : c1 - low + 1]
        weights = tuple(map(operator.mul, _binomial_row(r1)[low : high + 1], reversed(below)))
    else:
        # The ratio w(x+1) / w(x) = (r1 - x)(c1 - x) / ((x + 1)(r2 - c1 + x + 1)); its integer
        # division is exact, since w(x+1) is an integer. (math.comb per term costs O(n) big
        # multiplications each: 200 times slower at n = 5,000.)
        w = math.comb(r1, low) * math.comb(r2, c1 - low)
        terms = [w]
        for x in range(low, high):
            w = w * (r1 - x) * (c1 - x) // ((x + 1) * (r2 - c1 + x + 1))
            terms.append(w)
        weights = tuple(terms)
    cumulative = tuple(accumulate(weights))
    return _Margins(low, weights, cumulative, weights.index(max(weights)), cumulative[-1])


_cached_margins = lru_cache(maxsize=1024)(_compute_margins)


def _fisher_exact_integers(a: int, r1: int, r2: int, c1: int, alternative: str) -> float:
    m = _margins(r1, r2, c1)
    i = a - m.low
    cumulative = m.cumulative
    if alternative == "less":
        numerator = cumulative[i]
    elif alternative == "greater":
        numerator = m.total - (cumulative[i - 1] if i else 0)
    else:
        # Every table at most as probable as the observed one, ties included exactly. The
        # weights rise up to the mode and fall after it, so those tables are the two tails
        # [0, left) and [right, end), found by bisection on each monotone side.
        observed = m.weights[i]
        left = bisect_right(m.weights, observed, 0, m.mode)
        right = bisect_left(m.weights, -observed, m.mode, len(m.weights), key=operator.neg)
        numerator = (
            (cumulative[left - 1] if left else 0)
            + m.total
            - (cumulative[right - 1] if right else 0)
        )
    # int / int is correctly rounded in Python, however large both are.
    return min(1.0, numerator / m.total)


def _log_weight(x: int, r1: int, r2: int, c1: int) -> float:
    """Log C(r1, x) + log C(r2, c1 - x), up to a constant that cancels in all ratios."""
    return -(
        math.lgamma(x + 1)
        + math.lgamma(r1 - x + 1)
        + math.lgamma(c1 - x + 1)
        + math.lgamma(r2 - c1 + x + 1)
    )


def _fisher_exact_logspace(a: int, r1: int, r2: int, c1: int, alternative: str) -> float:
    """Fisher's p-value as sums of exp(log w(x) - log w(mode)) over the terms a float holds."""
    low = max(0, c1 - r2)
    high = min(r1, c1)
    mode = min(high, max(low, (c1 + 1) * (r1 + 1) // (r1 + r2 + 2)))
    top = _log_weight(mode, r1, r2, c1)
    observed = _log_weight(a, r1, r2, c1) - top
    total = 0.0
    tail = 0.0
    # The distribution is unimodal: walk out from the mode each way until terms vanish.
    for start, stop, step in ((mode, low - 1, -1), (mode + 1, high + 1, 1)):
        for x in range(start, stop, step):
            relative = _log_weight(x, r1, r2, c1) - top
            if relative < -_LOG_CUTOFF:
                break
            term = math.exp(relative)
            total += term
            if alternative == "less":
                counted = x <= a
            elif alternative == "greater":
                counted = x >= a
            else:
                counted = relative <= observed + _LOG_TOLERANCE
            if counted:
                tail += term
    return min(1.0, tail / total)


def fisher_exact(a: int, b: int, c: int, d: int, alternative: Alternative = "two-sided") -> float:
    """P-value of Fisher's exact test for the 2x2 table ``[[a, b], [c, d]]``.

    Rows are the two runs (base passes ``a`` and failures ``b``; candidate passes ``c`` and
    failures ``d``). With all margins fixed, the top-left cell X follows the hypergeometric
    distribution (Fisher 1922; Agresti, *Categorical Data Analysis*, 2013, section 3.5.1)::

        P(X = x) = C(r1, x) * C(r2, c1 - x) / C(n, c1)
        r1 = a + b,  r2 = c + d,  c1 = a + c,  n = r1 + r2,
        max(0, c1 - r2) <= x <= min(r1, c1)

    and the p-value is, for each ``alternative`` (the same conventions as
    ``scipy.stats.fisher_exact`` and R's ``fisher.test``):

    * ``"less"``: P(X <= a), evidence that the odds ratio ad/bc is below 1 (base worse);
    * ``"greater"``: P(X >= a), odds ratio above 1 (the candidate passes less often);
    * ``"two-sided"``: the sum of P(X = x) over every x with P(X = x) <= P(X = a).

    Up to `EXACT_LIMIT` observations the sums are exact integers divided once, so tables of
    equal probability are always counted (scipy and R compare floats within a relative
    1e-14 and 1e-7); beyond, log-space sums with R's tolerance 1 + 1e-7.

    Speed: the weights of each distinct margin triple of up to 200 observations are
    computed once (cached, 1,024 margins); a call is then two bisections and one division.
    Measured (CPU time, on a busy 2-core machine): a million calls on tables of at most 50
    trials per run take ~1.5 s when the margins repeat (a suite with a fixed trial count) and
    ~8 s when every table is drawn at random; a table of 10,000 observations ~20 ms, of
    2,000,000 ~40 ms.

    Args:
        a: Base passes.
        b: Base failures.
        c: Candidate passes.
        d: Candidate failures.
        alternative: ``"two-sided"`` (default), ``"greater"`` or ``"less"``.

    Returns:
        The p-value, in [0, 1]; 1.0 when a row or a column is empty.

    Raises:
        ValueError: A cell is not a non-negative integer, or ``alternative`` is unknown.
    """
    cells = (_count(a, "a"), _count(b, "b"), _count(c, "c"), _count(d, "d"))
    side = _alternative(alternative)
    a, b, c, d = cells
    r1, r2, c1 = a + b, c + d, a + c
    if r1 + r2 <= EXACT_LIMIT:
        return _fisher_exact_integers(a, r1, r2, c1, side)
    return _fisher_exact_logspace(a, r1, r2, c1, side)


def regression_p_value(
    base_passes: int, base_trials: int, cand_passes: int, cand_trials: int
) -> float:
    """One-sided Fisher p-value that the candidate's pass rate is lower than the base's.

    ``fisher_exact(base_passes, base_fails, cand_passes, cand_fails, "greater")``: the
    probability, with the total passes fixed and no real difference, that the base would hold
    at least as many of them as it does (Fisher 1922; Agresti 2013, section 3.5.1)::

        p = sum over x >= base_passes of C(base_trials, x) * C(cand_trials, k - x)
            / C(base_trials + cand_trials, k),   k = base_passes + cand_passes

    One-sided by decision: ``--fail-on significant`` asks whether the candidate got worse, so
    all of alpha goes to that direction; a two-sided test would spend half of it on
    improvements, which never fail the gate (docs/decisions.md, "Statistics of run
    comparison").

    Args:
        base_passes: Passed trials of the test in the base run.
        base_trials: Trials of the test in the base run.
        cand_passes: Passed trials in the candidate run.
        cand_trials: Trials in the candidate run.

    Returns:
        The p-value in [0, 1]; small means a real regression. 1.0 when either run has no
        trials or nothing differs.

    Raises:
        ValueError: A count is negative or not an integer, or passes exceed trials.
    """
    bp, bf = _passes_of(base_passes, base_trials, "base")
    cp, cf = _passes_of(cand_passes, cand_trials, "cand")
    return fisher_exact(bp, bf, cp, cf, "greater")


# --- McNemar's exact test ----------------------------------------------------------------


def _binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): sum of C(n, j) for j <= k, over 2**n."""
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    if n <= EXACT_LIMIT:
        term = 1
        total = 1
        for j in range(k):
            term = term * (n - j) // (j + 1)  # C(n, j + 1), exact
            total += term
        return total / (1 << n)
    if 2 * k >= n:
        # Upper half by symmetry: P(X <= k) = 1 - P(X <= n - k - 1).
        return 1.0 - _binomial_half_cdf(n - k - 1, n)
    # Lower tail, k < n / 2: terms shrink going down from k; stop once they cannot count.
    log_norm = math.lgamma(n + 1) - n * math.log(2.0)
    tail = 0.0
    for j in range(k, -1, -1):
        log_term = log_norm - math.lgamma(j + 1) - math.lgamma(n - j + 1)
        probability = math.exp(log_term)
        tail += probability
        if probability <= tail * 1e-17 or log_term < -_LOG_CUTOFF:
            break
    return min(1.0, tail)


def mcnemar_exact(b: int, c: int, alternative: Alternative = "two-sided") -> float:
    """P-value of the exact (binomial) McNemar test on the discordant pairs of paired verdicts.

    Of the tests judged in both runs, ``b`` passed in the base and failed in the candidate
    (regressions) and ``c`` failed in the base and passed in the candidate (fixes); tests with
    the same verdict in both runs carry no information about the change. Under no change,
    each discordant pair is equally likely to go either way, so b ~ Binomial(b + c, 1/2)
    (McNemar 1947; Agresti, *Categorical Data Analysis*, 2013, section 11.1.1)::

        two-sided: p = min(1, 2 * P(X <= min(b, c)))
        greater:   p = P(X >= b)   (more regressions than fixes: the candidate got worse)
        less:      p = P(X <= b)
        P(X <= k) = sum over j <= k of C(b + c, j) / 2**(b + c)

    the same values as ``scipy.stats.binomtest(b, b + c, 0.5, alternative=...)``. With no
    discordant pairs (``b + c == 0``) every p-value is 1.0. Exact integer sums up to
    `EXACT_LIMIT` pairs, log-space sums beyond.

    Args:
        b: Pairs that went from pass (base) to fail (candidate).
        c: Pairs that went from fail (base) to pass (candidate).
        alternative: ``"two-sided"`` (default), ``"greater"`` or ``"less"``.

    Returns:
        The p-value, in [0, 1].

    Raises:
        ValueError: A count is not a non-negative integer, or ``alternative`` is unknown.
    """
    b = _count(b, "b")
    c = _count(c, "c")
    side = _alternative(alternative)
    n = b + c
    if n == 0:
        return 1.0
    if side == "greater":
        return _binomial_half_cdf(c, n)  # P(X >= b) = P(n - X <= c), by symmetry
    if side == "less":
        return _binomial_half_cdf(b, n)
    return min(1.0, 2.0 * _binomial_half_cdf(min(b, c), n))


def paired_regression_p_value(regressions: int, fixes: int) -> float:
    """One-sided exact McNemar p-value that the candidate fails more tests than it fixes.

    ``mcnemar_exact(regressions, fixes, "greater")``: P(X >= regressions) for
    X ~ Binomial(regressions + fixes, 1/2) (McNemar 1947; Agresti 2013, section 11.1.1)::

        p = sum over j >= b of C(b + c, j) / 2**(b + c),   b = regressions, c = fixes

    One-sided for the same reason as `regression_p_value`.

    Args:
        regressions: Tests that passed in the base and failed in the candidate.
        fixes: Tests that failed in the base and passed in the candidate.

    Returns:
        The p-value, in [0, 1]; 1.0 when no verdict changed.

    Raises:
        ValueError: A count is not a non-negative integer.
    """
    return mcnemar_exact(_count(regressions, "regressions"), _count(fixes, "fixes"), "greater")


# --- Wilson score interval ---------------------------------------------------------------


@lru_cache(maxsize=64)
def _z(confidence: float) -> float:
    """The normal quantile z with P(-z <= Z <= z) = confidence, from the stdlib."""
    from statistics import NormalDist  # a few ms to import; only intervals need it

    # From the tail, (1 - confidence) / 2, so 0.999999999 keeps its precision.
    return -NormalDist().inv_cdf((1.0 - confidence) / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927; Agresti 2013, section 1.4.2).

    The interval of every p the score test at level ``1 - confidence`` does not reject, with
    p_hat = successes / n and z the normal quantile ``NormalDist().inv_cdf((1 + confidence)
    / 2)``::

        (p_hat + z**2 / (2n) -/+ z * sqrt(p_hat (1 - p_hat) / n + z**2 / (4 n**2)))
        / (1 + z**2 / n)

    The lower bound is computed as ``2 x**2 / (n (2x + z**2 + z sqrt(z**2 + 4x (n - x) / n)))``
    (the same value, rationalised), which has no cancellation when few trials pass; the
    bounds are exactly 0.0 at ``successes == 0`` and 1.0 at ``successes == n``. Unlike the
    Wald interval it never leaves [0, 1] and keeps close to its nominal coverage with few
    trials, which is why pass rates use it.

    Args:
        successes: Passed trials.
        n: Trials.
        confidence: Coverage, strictly between 0 and 1 (default 0.95, z = 1.959964).

    Returns:
        ``(lower, upper)``, with ``0 <= lower <= successes / n <= upper <= 1``; ``(0.0, 1.0)``
        when ``n == 0`` (nothing is known).

    Raises:
        ValueError: A count is negative or not an integer, ``successes > n``, or
            ``confidence`` is not a number strictly between 0 and 1.
    """
    x = _count(successes, "successes")
    n = _count(n, "n")
    if x > n:
        raise ValueError(f"successes ({x}) cannot exceed n ({n})")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0.0 < confidence < 1.0
    ):
        raise ValueError(
            f"confidence must be a number strictly between 0 and 1, got {confidence!r}"
        )
    if n == 0:
        return (0.0, 1.0)
    z = _z(float(confidence))
    z2 = z * z
    root = z * math.sqrt(z2 + 4.0 * x * (n - x) / n)
    lower = 0.0 if x == 0 else 2.0 * x * x / (n * (2.0 * x + z2 + root))
    upper = 1.0 if x == n else min(1.0, (2.0 * x + z2 + root) / (2.0 * (n + z2)))
    # The formula keeps p_hat inside; the clamp only guards the last bit of rounding.
    estimate = x / n
    return (min(lower, estimate), max(upper, estimate))


# --- Holm's step-down adjustment ---------------------------------------------------------


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given (Holm 1979).

    With the m p-values sorted increasingly as p(1) <= ... <= p(m), the adjusted value of the
    i-th smallest is::

        p_adj(i) = min(1, max over j <= i of (m - j + 1) * p(j))

    so that rejecting every hypothesis with ``p_adj <= alpha`` keeps the family-wise error
    rate at most alpha under any dependence between the tests. The running maximum makes the
    result monotone in the raw order; tied raw p-values get the same adjusted value (the same
    values as R's ``p.adjust(p, "holm")`` and statsmodels' ``multipletests(p,
    method="holm")``). One sort: O(m log m) time; a million p-values take about a second.

    Args:
        p_values: Raw p-values, each a number in [0, 1].

    Returns:
        The adjusted p-values, each >= its raw value and <= 1, in the input's order.

    Raises:
        ValueError: A value is not a number in [0, 1] (NaN included).
    """
    values = list(p_values)
    if not _all_probabilities(values):
        for index, p in enumerate(values):
            if not _all_probabilities([p]):
                raise ValueError(f"p_values[{index}] must be a number in [0, 1], got {p!r}")
    m = len(values)
    order = sorted(range(m), key=values.__getitem__)
    adjusted = [0.0] * m
    running = 0.0  # max over j <= i of (m - j + 1) * p(j), capped at 1
    factor = m
    for index in order:
        scaled = factor * values[index]
        factor -= 1
        if scaled > running:
            running = float(scaled) if scaled < 1.0 else 1.0
        adjusted[index] = running
    return adjusted


def _all_probabilities(values: list[float]) -> bool:
    """Whether every value is an int or a float in [0, 1] (not NaN, not a bool), at C speed."""
    if not values:
        return True
    if not set(map(type, values)) <= {float, int}:
        return False
    # NaN defeats min and max, but not fsum: any NaN makes the sum NaN.
    return min(values) >= 0.0 and max(values) <= 1.0 and not math.isnan(math.fsum(values))
