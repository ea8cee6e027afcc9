"""The statistics of run comparison, against values computed independently of this code.

Three kinds of reference: values derived by hand from the definitions (exact fractions), values
from scipy and statsmodels pasted as constants (see the comment above them), and brute-force
oracles in exact rational arithmetic, written straight from the textbook formulas, that the
Hypothesis properties compare with on random inputs.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from math import comb

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertly.compare import (
    EXACT_LIMIT,
    fisher_exact,
    holm,
    mcnemar_exact,
    paired_regression_p_value,
    regression_p_value,
    wilson_interval,
)
from assertly.compare._stats import _fisher_exact_integers, _fisher_exact_logspace

EXAMPLES = int(os.environ.get("ASSERTLY_PROPERTY_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
ALTERNATIVES = ("two-sided", "greater", "less")

# Reference values computed once, outside the project, in a throwaway venv (not a dependency):
#   python -m venv /tmp/scipy-venv && /tmp/scipy-venv/bin/pip install scipy statsmodels
#   (scipy 1.17.1, statsmodels 0.15.0), then
#   FISHER:  (a, b, c, d, p two-sided, p greater, p less) with
#            float(scipy.stats.fisher_exact([[a, b], [c, d]], alternative=alt).pvalue)
#   MCNEMAR: (b, c, p two-sided, p greater, p less) with
#            float(scipy.stats.binomtest(b, b + c, 0.5, alternative=alt).pvalue)
#   WILSON:  (k, n, confidence, low, high) with
#            scipy.stats.binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
#   HOLM_ADJ: statsmodels.stats.multitest.multipletests(HOLM_RAW, method="holm")[1]
# printed with repr(). Tables above EXACT_LIMIT observations exercise the log-space path.
FISHER = [
    (3, 1, 1, 3, 0.48571428571428565, 0.24285714285714283, 0.9857142857142858),
    (8, 2, 1, 5, 0.034965034965034975, 0.024475524475524483, 0.9991258741258742),
    (6, 2, 1, 4, 0.10256410256410256, 0.08624708624708625, 0.9953379953379954),
    (1, 9, 11, 3, 0.0027594561852200836, 0.9999663480953022, 0.0013797280926100418),
    (10, 0, 0, 10, 1.082508822446903e-05, 5.412544112234515e-06, 1.0),
    (0, 10, 10, 0, 1.082508822446903e-05, 1.0, 5.412544112234515e-06),
    (5, 5, 5, 5, 1.0, 0.6718591006516703, 0.6718591006516703),
    (0, 0, 3, 4, 1.0, 1.0, 1.0),
    (2, 0, 0, 0, 1.0, 1.0, 1.0),
    (7, 3, 2, 8, 0.06977851869492736, 0.03488925934746368, 0.9972612526792093),
    (20, 0, 13, 7, 0.008316008316008316, 0.004158004158004158, 1.0),
    (50, 0, 40, 10, 0.0011868393451716574, 0.0005934196725858288, 1.0),
    (45, 5, 30, 20, 0.0009668432030628979, 0.0004834216015314489, 0.9999283208956695),
    (25, 25, 25, 25, 1.0, 0.5791923305806652, 0.5791923305806652),
    (49, 1, 1, 49, 4.957808841313452e-26, 2.478904420656726e-26, 1.0),
    (3, 7, 3, 7, 1.0, 0.6857585139318885, 0.6857585139318886),
    (9, 1, 4, 6, 0.05727554179566563, 0.028637770897832822, 0.9984520123839009),
    (50, 0, 0, 50, 1.9823306042836675e-29, 9.911653021418337e-30, 1.0),
    (300, 200, 250, 250, 0.0018270076470658027, 0.0009135038235329013, 0.9994116213432264),
    (4000, 1000, 3900, 1100, 0.015061669203052717, 0.007530834601526358, 0.9934311917773571),
    (6000, 4000, 5800, 4200, 0.004221576115003382, 0.002110788057501691, 0.9980729902455218),
    (90000, 10000, 89500, 10500, 0.0002341934148969048, 0.0001170967074484524, 0.9998894925710469),
]
MCNEMAR = [
    (1, 0, 1.0, 0.5, 1.0),
    (5, 0, 0.0625, 0.03125, 1.0),
    (0, 5, 0.0625, 1.0, 0.03125),
    (3, 3, 1.0, 0.65625, 0.65625),
    (10, 2, 0.03857421875, 0.019287109375, 0.996826171875),
    (2, 10, 0.03857421875, 0.996826171875, 0.019287109375),
    (25, 10, 0.016673847800120715, 0.008336923900060357, 0.9970059397164732),
    (100, 70, 0.025844387581341693, 0.012922193790670847, 0.9914156513274206),
    (5000, 4800, 0.04440414879984631, 0.022202074399923156, 0.9788451255052996),
    (6000, 5500, 3.2572139388351413e-06, 1.6286069694175707e-06, 0.9999985126181535),
    (60000, 59000, 0.0037798696347767836, 0.0018899348173883918, 0.9981446904228487),
    (1, 20000, 0.0, 1.0, 0.0),
]
WILSON = [
    (0, 10, 0.95, 0.0, 0.27753279986288926),
    (0, 10, 0.9, 0.0, 0.21294197008340698),
    (0, 10, 0.99, 0.0, 0.39885409330490806),
    (10, 10, 0.95, 0.7224672001371109, 1.0),
    (10, 10, 0.9, 0.787058029916593, 1.0),
    (10, 10, 0.99, 0.6011459066950919, 1.0),
    (3, 10, 0.95, 0.10779126740630102, 0.6032218525388546),
    (3, 10, 0.9, 0.1268765839031979, 0.5583002041301649),
    (3, 10, 0.99, 0.07956631652306578, 0.6799753207988974),
    (1, 1, 0.95, 0.20654931437723745, 1.0),
    (1, 1, 0.9, 0.2698659487840541, 1.0),
    (1, 1, 0.99, 0.13097754328018596, 1.0),
    (0, 1, 0.95, 0.0, 0.7934506856227626),
    (0, 1, 0.9, 0.0, 0.7301340512159458),
    (0, 1, 0.99, 0.0, 0.8690224567198142),
    (50, 100, 0.95, 0.4038315303659956, 0.5961684696340044),
    (50, 100, 0.9, 0.41884779611252954, 0.5811522038874705),
    (50, 100, 0.99, 0.37527962504483986, 0.6247203749551602),
    (1, 1000, 0.95, 0.00017654637062607809, 0.0056425585979579355),
    (1, 1000, 0.9, 0.00022312384391207085, 0.00446972290936893),
    (1, 1000, 0.99, 0.00011741635361832165, 0.008460566219981695),
    (999, 1000, 0.95, 0.9943574414020421, 0.9998234536293739),
    (999, 1000, 0.9, 0.9955302770906311, 0.9997768761560879),
    (999, 1000, 0.99, 0.9915394337800183, 0.9998825836463816),
    (7, 9, 0.95, 0.4525889691069889, 0.9367748928821533),
    (7, 9, 0.9, 0.503642782376754, 0.9235052624456035),
    (7, 9, 0.99, 0.3645304121723405, 0.955267033732957),
]
HOLM_RAW = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.0001, 0.04, 0.9, 0.012]
HOLM_ADJ = [0.08, 0.2, 0.18, 0.045, 0.6000000000000001, 1.0, 0.001, 0.2, 1.0, 0.084]


def close(mine: float, reference: float, observations: int) -> bool:
    """Within float rounding on the exact path; within lgamma's precision beyond it."""
    rel = 1e-12 if observations <= EXACT_LIMIT else 1e-8
    return math.isclose(mine, reference, rel_tol=rel, abs_tol=1e-300)


# --- independent oracles: the textbook definitions in exact rational arithmetic ------------


def fisher_oracle(a: int, b: int, c: int, d: int, alternative: str) -> Fraction:
    """Fisher's p-value by enumerating every table with the observed margins."""
    r1, r2, c1 = a + b, c + d, a + c
    total = comb(r1 + r2, c1)
    probability = {
        x: Fraction(comb(r1, x) * comb(r2, c1 - x), total)
        for x in range(max(0, c1 - r2), min(r1, c1) + 1)
    }
    if alternative == "less":
        return sum((p for x, p in probability.items() if x <= a), Fraction(0))
    if alternative == "greater":
        return sum((p for x, p in probability.items() if x >= a), Fraction(0))
    return sum((p for p in probability.values() if p <= probability[a]), Fraction(0))


def binomial_half_cdf_oracle(k: int, n: int) -> Fraction:
    return Fraction(sum(comb(n, j) for j in range(k + 1)), 2**n)


def mcnemar_oracle(b: int, c: int, alternative: str) -> Fraction:
    n = b + c
    if n == 0:
        return Fraction(1)
    if alternative == "greater":
        return 1 - binomial_half_cdf_oracle(b - 1, n) if b else Fraction(1)
    if alternative == "less":
        return binomial_half_cdf_oracle(b, n)
    return min(Fraction(1), 2 * binomial_half_cdf_oracle(min(b, c), n))


def holm_oracle(p: list[float]) -> list[float]:
    """O(m^2) Holm: a value's adjustment is the largest (m - rank + 1) * p over p <= it."""
    m = len(p)
    smaller = [sum(1 for q in p if q < v) for v in p]  # rank - 1 of the first of a tie group
    return [
        min(1.0, max((m - smaller[k]) * p[k] for k in range(m) if p[k] <= p[i])) for i in range(m)
    ]


# --- Fisher's exact test ------------------------------------------------------------------


def test_fisher_tea_tasting_by_hand() -> None:
    # Fisher (1935), the lady tasting tea: [[3, 1], [1, 3]], margins 4 and 4. The weights
    # C(4, x) C(4, 4 - x) for x = 0..4 are 1, 16, 36, 16, 1 over C(8, 4) = 70.
    assert fisher_exact(3, 1, 1, 3) == 34 / 70  # 0.4857142857...
    assert fisher_exact(3, 1, 1, 3, "greater") == 17 / 70
    assert fisher_exact(3, 1, 1, 3, "less") == 69 / 70
    assert fisher_exact(4, 0, 0, 4, "greater") == 1 / 70


@pytest.mark.parametrize(("a", "b", "c", "d", "two_sided", "greater", "less"), FISHER)
def test_fisher_matches_scipy(
    a: int, b: int, c: int, d: int, two_sided: float, greater: float, less: float
) -> None:
    n = a + b + c + d
    assert close(fisher_exact(a, b, c, d), two_sided, n)
    assert close(fisher_exact(a, b, c, d, alternative="two-sided"), two_sided, n)
    assert close(fisher_exact(a, b, c, d, "greater"), greater, n)
    assert close(fisher_exact(a, b, c, d, "less"), less, n)


def test_fisher_keeps_the_digits_of_tiny_p_values() -> None:
    # [[50, 0], [0, 50]]: only the observed table is that extreme on its side, 1 / C(100, 50).
    assert fisher_exact(50, 0, 0, 50, "greater") == 1 / comb(100, 50)
    assert fisher_exact(50, 0, 0, 50) == 2 / comb(100, 50)


def test_regression_p_value_is_one_sided_fisher_on_passes() -> None:
    # Base 9/10, candidate 4/10: the (9, 1, 4, 6) row of FISHER, "greater".
    assert close(regression_p_value(9, 10, 4, 10), 0.028637770897832822, 20)
    # An improvement is no evidence of a regression.
    assert regression_p_value(4, 10, 9, 10) == pytest.approx(0.9984520123839009, rel=1e-12)
    assert regression_p_value(0, 0, 3, 5) == 1.0
    assert regression_p_value(5, 5, 5, 5) == 1.0


@PROPERTY
@given(
    st.integers(0, 15), st.integers(0, 15), st.integers(0, 15), st.integers(0, 15),
    st.sampled_from(ALTERNATIVES),
)  # fmt: skip
def test_fisher_equals_the_definition(a: int, b: int, c: int, d: int, alternative: str) -> None:
    expected = fisher_oracle(a, b, c, d, alternative)
    # Exact rational sums rounded once: the nearest float (the min guards 1.0 only).
    assert fisher_exact(a, b, c, d, alternative) == float(min(expected, Fraction(1)))


@PROPERTY
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_fisher_symmetries(a: int, b: int, c: int, d: int) -> None:
    p = fisher_exact(a, b, c, d)
    assert 0.0 <= p <= 1.0
    # Two-sided: the same for swapped rows, swapped columns and the transposed table.
    assert fisher_exact(c, d, a, b) == p
    assert fisher_exact(b, a, d, c) == p
    assert fisher_exact(a, c, b, d) == p
    greater = fisher_exact(a, b, c, d, "greater")
    less = fisher_exact(a, b, c, d, "less")
    assert 0.0 <= greater <= 1.0 and 0.0 <= less <= 1.0
    # Swapping the rows (or the columns) turns one side into the other; transposing keeps it.
    assert fisher_exact(c, d, a, b, "less") == greater
    assert fisher_exact(b, a, d, c, "less") == greater
    assert fisher_exact(a, c, b, d, "greater") == greater
    # The two tails overlap in the observed table: together they are at least 1.
    assert greater + less >= 1.0 - 1e-12
    # The two-sided set includes the whole tail on the observed table's far side.
    assert p >= min(greater, less) - 1e-15


@PROPERTY
@given(
    st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60),
    st.sampled_from(ALTERNATIVES),
)  # fmt: skip
def test_fisher_logspace_path_agrees_with_the_exact_one(
    a: int, b: int, c: int, d: int, alternative: str
) -> None:
    # The path used above EXACT_LIMIT observations, run on small tables: no two distinct
    # weights are within 1e-7 of each other for rows up to 60 (checked exhaustively), so
    # its tolerance cannot count a different set of tables.
    exact = _fisher_exact_integers(a, a + b, c + d, a + c, alternative)
    approx = _fisher_exact_logspace(a, a + b, c + d, a + c, alternative)
    assert math.isclose(approx, exact, rel_tol=1e-9, abs_tol=1e-300)


def test_fisher_large_tables_are_fast_and_sane() -> None:
    # A million trials per run: the log-space path, bounded by the terms a float can hold.
    p = fisher_exact(500_000, 500_000, 500_000, 500_000)
    assert p == pytest.approx(1.0)
    # scipy 1.17.1: fisher_exact([[510000, 490000], [490000, 510000]], "greater") and the
    # same for 520,000 / 480,000 (which underflows to 0.0).
    p = fisher_exact(510_000, 490_000, 490_000, 510_000, "greater")
    assert p == pytest.approx(2.734283026193751e-176, rel=1e-8)
    assert fisher_exact(520_000, 480_000, 480_000, 520_000, "greater") == 0.0
    assert fisher_exact(0, 1_000_000, 0, 1_000_000) == 1.0


# --- McNemar's exact test -----------------------------------------------------------------


def test_mcnemar_by_hand() -> None:
    # b = 10, c = 2: n = 12, P(X <= 2) = (C(12,0) + C(12,1) + C(12,2)) / 2**12 = 79 / 4096.
    assert mcnemar_exact(10, 2) == 158 / 4096
    assert mcnemar_exact(10, 2, "greater") == 79 / 4096
    assert paired_regression_p_value(10, 2) == 79 / 4096
    assert paired_regression_p_value(2, 10) == 1 - 79 / 4096 + comb(12, 2) / 4096
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 0, "greater") == 1.0
    assert mcnemar_exact(4, 4) == 1.0  # 2 * P(X <= 4) > 1 is capped
    assert mcnemar_exact(5, 0) == 1 / 16  # 2 * 1/32


@pytest.mark.parametrize(("b", "c", "two_sided", "greater", "less"), MCNEMAR)
def test_mcnemar_matches_scipy_binomtest(
    b: int, c: int, two_sided: float, greater: float, less: float
) -> None:
    n = b + c
    assert close(mcnemar_exact(b, c), two_sided, n)
    assert close(mcnemar_exact(b, c, "greater"), greater, n)
    assert close(mcnemar_exact(b, c, "less"), less, n)
    assert close(paired_regression_p_value(b, c), greater, n)


@PROPERTY
@given(st.integers(0, 300), st.integers(0, 300), st.sampled_from(ALTERNATIVES))
def test_mcnemar_equals_the_definition(b: int, c: int, alternative: str) -> None:
    p = mcnemar_exact(b, c, alternative)
    assert 0.0 <= p <= 1.0
    assert p == float(mcnemar_oracle(b, c, alternative))


@PROPERTY
@given(*[st.integers(0, 2_000) | st.integers(20_000, 1_000_000)] * 2)
def test_mcnemar_symmetries(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)
    assert mcnemar_exact(b, c, "greater") == mcnemar_exact(c, b, "less")
    for alternative in ALTERNATIVES:
        assert 0.0 <= mcnemar_exact(b, c, alternative) <= 1.0


# --- Wilson score interval ----------------------------------------------------------------


@pytest.mark.parametrize(("k", "n", "confidence", "low", "high"), WILSON)
def test_wilson_matches_scipy(k: int, n: int, confidence: float, low: float, high: float) -> None:
    lower, upper = wilson_interval(k, n, confidence)
    assert lower == pytest.approx(low, rel=1e-12, abs=1e-15)
    assert upper == pytest.approx(high, rel=1e-12, abs=1e-15)


def test_wilson_by_hand_and_edges() -> None:
    # z = 1.959963984540054 (the 97.5% normal quantile); 0 of 10: upper = z^2 / (10 + z^2).
    z2 = 1.959963984540054**2
    assert wilson_interval(0, 10) == (0.0, pytest.approx(z2 / (10 + z2), rel=1e-14))
    assert wilson_interval(10, 10) == (pytest.approx(10 / (10 + z2), rel=1e-14), 1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 0, 0.5) == (0.0, 1.0)
    lower, upper = wilson_interval(500_000, 1_000_000, 0.999999999)
    assert 0.0 < lower < 0.5 < upper < 1.0


@PROPERTY
@given(
    st.integers(0, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.floats(0.5, 0.9999),
)
def test_wilson_contains_the_estimate_and_solves_the_score_equation(
    counts: tuple[int, int], confidence: float
) -> None:
    x, n = counts
    lower, upper = wilson_interval(x, n, confidence)
    assert 0.0 <= lower <= upper <= 1.0
    if n == 0:
        return
    assert lower <= x / n <= upper
    # The endpoints are the roots of n (p_hat - p)^2 = z^2 p (1 - p) (Wilson 1927).
    from statistics import NormalDist

    z = NormalDist().inv_cdf((1 + confidence) / 2)
    for p in (lower, upper):
        assert n * (x / n - p) ** 2 == pytest.approx(z * z * p * (1 - p), abs=1e-9)
    # Symmetry: failures' interval is the mirror image.
    mirror_lower, mirror_upper = wilson_interval(n - x, n, confidence)
    assert mirror_lower == pytest.approx(1 - upper, abs=1e-12)
    assert mirror_upper == pytest.approx(1 - lower, abs=1e-12)
    # A higher confidence never gives a narrower interval.
    wider = wilson_interval(x, n, min(0.99999, confidence + 0.01))
    assert wider[0] <= lower + 1e-15 and wider[1] >= upper - 1e-15


# --- Holm ---------------------------------------------------------------------------------


def test_holm_by_hand_and_statsmodels() -> None:
    # Sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, max(0.04 * 1, 0.06) = 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(HOLM_RAW) == pytest.approx(HOLM_ADJ, rel=1e-15)
    assert holm([]) == []
    assert holm([0.3]) == [0.3]
    assert holm((0, 1)) == [0.0, 1.0]
    assert all(type(v) is float for v in holm([0, 1, 0.5]))


@PROPERTY
@given(st.lists(st.floats(0.0, 1.0) | st.sampled_from([0.0, 0.01, 0.05, 1.0]), max_size=30))
def test_holm_properties(p: list[float]) -> None:
    adjusted = holm(p)
    assert len(adjusted) == len(p)
    assert adjusted == pytest.approx(holm_oracle(p), rel=1e-15, abs=0.0) if p else True
    for raw, adj in zip(p, adjusted, strict=True):
        assert raw <= adj <= 1.0
    for i in range(len(p)):
        for j in range(len(p)):
            if p[i] <= p[j]:
                assert adjusted[i] <= adjusted[j]


def test_holm_handles_many_values() -> None:
    # p[i] = 1e-9 (m - i) / m: the j-th smallest is p(j) = 1e-9 j / m, scaled to
    # (m - j + 1) j 1e-9 / m, which rises up to j = m / 2 and falls after; so the adjusted
    # value is the scaled one below rank m / 2 and the peak, (m/2 + 1)(m/2) 1e-9 / m, above.
    m = 200_000  # a million take ~1.5 s (measured), too long for `make test`
    p = [1e-9 * (m - i) / m for i in range(m)]
    adjusted = holm(p)
    assert adjusted[m - 1] == pytest.approx(m * 1e-9 / m, rel=1e-12)  # rank 1
    assert adjusted[m - 1000] == pytest.approx((m - 999) * 1000 * 1e-9 / m, rel=1e-12)
    peak = (m // 2 + 1) * (m // 2) * 1e-9 / m
    assert adjusted[0] == pytest.approx(peak, rel=1e-12)
    assert adjusted[m // 4] == pytest.approx(peak, rel=1e-12)


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fisher_exact(-1, 0, 0, 0), "a must be a non-negative integer, got -1"),
        (lambda: fisher_exact(1, 2.0, 0, 0), "b must be a non-negative integer, got 2.0"),  # type: ignore[arg-type]
        (lambda: fisher_exact(1, 2, True, 0), "c must be a non-negative integer, got True"),
        (lambda: fisher_exact(1, 2, 3, "4"), "d must be a non-negative integer, got '4'"),  # type: ignore[arg-type]
        (lambda: fisher_exact(1, 2, 3, 4, "two_sided"), "alternative must be one of"),  # type: ignore[arg-type]
        (lambda: regression_p_value(5, 4, 0, 1), r"base_passes \(5\) cannot exceed base_trials"),
        (lambda: regression_p_value(1, 4, 2, 1), r"cand_passes \(2\) cannot exceed cand_trials"),
        (lambda: regression_p_value(1, -4, 0, 1), "base_trials must be a non-negative integer"),
        (lambda: mcnemar_exact(-3, 1), "b must be a non-negative integer, got -3"),
        (lambda: mcnemar_exact(3, 1, "bigger"), "alternative must be one of"),  # type: ignore[arg-type]
        (lambda: paired_regression_p_value(1, None), "fixes must be a non-negative integer"),  # type: ignore[arg-type]
        (lambda: wilson_interval(3, 2), r"successes \(3\) cannot exceed n \(2\)"),
        (lambda: wilson_interval(1, 2, 1.0), "confidence must be a number strictly between"),
        (lambda: wilson_interval(1, 2, 0), "confidence must be a number strictly between"),
        (lambda: wilson_interval(1, 2, math.nan), "confidence must be a number strictly between"),
        (lambda: wilson_interval(1, 2, "95%"), "confidence must be a number strictly between"),  # type: ignore[arg-type]
        (lambda: holm([0.1, math.nan]), r"p_values\[1\] must be a number in \[0, 1\], got nan"),
        (lambda: holm([0.1, 1.5]), r"p_values\[1\] must be a number in \[0, 1\], got 1.5"),
        (lambda: holm([-0.1]), r"p_values\[0\] must be a number in \[0, 1\]"),
        (lambda: holm([0.1, "0.2"]), r"p_values\[1\] must be a number in \[0, 1\], got '0.2'"),  # type: ignore[list-item]
        (lambda: holm([False]), r"p_values\[0\] must be a number in \[0, 1\], got False"),
    ],
)
def test_invalid_arguments_are_clear_errors(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
