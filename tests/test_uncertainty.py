"""audioreason.analysis.uncertainty against reference values: statsmodels' Wilson interval and McNemar test,
hand-computed values, and a brute-force numpy bootstrap drawing the same indices as scipy."""

import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from audioreason.analysis import uncertainty as U


@pytest.mark.parametrize("k,n", [(3, 12), (0, 10), (10, 10), (1, 1), (517, 1000)])
def test_wilson_matches_statsmodels(k, n):
    got = U.wilson(k, n)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert got["ci95"] == pytest.approx([lo, hi], abs=1e-12)
    assert got["se"] == pytest.approx(math.sqrt(k / n * (1 - k / n) / n))
    assert got["method"] == "wilson" and got["n"] == n and got["unavailable"] is None


def test_wilson_by_hand():
    # 3 of 12, z = 1.959964: centre (0.25 + z^2/24) / (1 + z^2/12), half z/(1 + z^2/12) sqrt(0.25*0.75/12 + z^2/576)
    z = 1.959963984540054
    centre = (0.25 + z * z / 24) / (1 + z * z / 12)
    half = z / (1 + z * z / 12) * math.sqrt(0.25 * 0.75 / 12 + z * z / 576)
    assert U.wilson(3, 12)["ci95"] == pytest.approx([centre - half, centre + half], abs=1e-12)
    assert U.wilson(3, 12)["ci95"] == pytest.approx([0.0889, 0.5323], abs=1e-4)
    assert U.wilson(3, 12, U.UncertaintyOptions(confidence=0.9))["ci95"] == pytest.approx(
        proportion_confint(3, 12, alpha=0.1, method="wilson"), abs=1e-12
    )


@pytest.mark.parametrize("n", [1, 7, 12, 40, 1000])
def test_wilson_contains_its_estimate_at_the_ends(n):
    # k = 0 and k = n: the bounds are exactly 0 and 1 (by hand: centre = half when p = 0), never 2.8e-17 above.
    assert U.wilson(0, n)["ci95"][0] == 0.0 and U.wilson(n, n)["ci95"][1] == 1.0
    z = 1.959963984540054
    assert U.wilson(0, n)["ci95"][1] == pytest.approx(z * z / (n + z * z), abs=1e-12)
    for k in range(0, n + 1, max(1, n // 10)):
        lo, hi = U.wilson(k, n)["ci95"]
        assert lo <= k / n <= hi


def test_wilson_unavailable():
    assert U.wilson(0, 0)["unavailable"] == "no items" and U.wilson(0, 0)["ci95"] is None
    assert "no verdict" in U.wilson_of([True, None])["unavailable"]
    assert U.wilson_of([True, False, True, True])["ci95"] == pytest.approx(
        proportion_confint(3, 4, method="wilson"), abs=1e-12
    )


def _brute_force(columns, statistic, resamples, seed, confidence=0.95):
    """The percentile bootstrap by hand: the same generator draws the (resamples, n) item indices."""
    data = [np.asarray(c, float) for c in columns]
    idx = np.random.default_rng(seed).integers(0, len(data[0]), (resamples, len(data[0])))
    dist = statistic(*[d[idx] for d in data])
    alpha = (1 - confidence) / 2
    return np.quantile(dist, [alpha, 1 - alpha]), np.std(dist, ddof=1)


def test_bootstrap_mean_equals_brute_force():
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 1.0, 0.0, 0.4, 0.6]
    got = U.bootstrap_mean(values, U.UncertaintyOptions(resamples=500, seed=7))
    ci, se = _brute_force([values], lambda x: x.mean(axis=-1), 500, 7)
    assert got["ci95"] == pytest.approx(list(ci), abs=1e-12) and got["se"] == pytest.approx(se, abs=1e-12)
    assert got["method"] == "bootstrap_percentile" and got["resamples"] == 500 and got["seed"] == 7 and got["n"] == 10
    # seeded: the same seed gives the same interval, another seed another one
    assert U.bootstrap_mean(values, U.UncertaintyOptions(resamples=500, seed=7)) == got
    assert U.bootstrap_mean(values, U.UncertaintyOptions(resamples=500, seed=8))["ci95"] != got["ci95"]


def test_bootstrap_ratio_equals_brute_force_and_is_centred_on_the_ratio():
    none = [1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1]
    full = [1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    got = U.bootstrap_ratio(none, full, U.UncertaintyOptions(resamples=1000, seed=3))
    ci, se = _brute_force([none, full], lambda a, b: a.sum(axis=-1) / b.sum(axis=-1), 1000, 3)
    assert got["ci95"] == pytest.approx(list(ci), abs=1e-12) and got["se"] == pytest.approx(se, abs=1e-12)
    assert got["ci95"][0] < 7 / 10 < got["ci95"][1]  # R_TP = 7 / 10


def test_bootstrap_large_sample_se_is_the_binomial_se():
    # 1000 items, 600 correct: the bootstrap se of the mean is sqrt(p(1-p)/n) = 0.01549 within 5 %
    values = [1] * 600 + [0] * 400
    got = U.bootstrap_mean(values)
    assert got["se"] == pytest.approx(math.sqrt(0.6 * 0.4 / 1000), rel=0.05)


def test_bootstrap_edge_cases_are_unavailable_never_nan():
    assert "at least 2" in U.bootstrap_mean([0.5])["unavailable"]
    assert "at least 2" in U.bootstrap_mean([])["unavailable"]
    assert "same value" in U.bootstrap_mean([1, 1, 1])["unavailable"]
    assert "no value" in U.bootstrap_mean([0.2, None, 0.4])["unavailable"]
    zero = U.bootstrap_ratio([0, 0, 1], [0, 0, 1], U.UncertaintyOptions(resamples=200))
    assert "undefined in" in zero["unavailable"] and zero["ci95"] is None and zero["se"] is None


def test_paired_difference_by_hand_and_brute_force():
    a = [1, 1, 0, 1, 0, 1, 1, 0]
    b = [0, 1, 0, 0, 0, 1, 0, 1]
    got = U.paired_difference(a, b, U.UncertaintyOptions(resamples=400, seed=1))
    assert got["difference"] == pytest.approx(5 / 8 - 3 / 8)
    ci, se = _brute_force([a, b], lambda x, y: x.mean(axis=-1) - y.mean(axis=-1), 400, 1)
    assert got["ci95"] == pytest.approx(list(ci), abs=1e-12) and got["se"] == pytest.approx(se, abs=1e-12)
    same = U.paired_difference([1, 0, 1], [1, 0, 1])
    assert same["difference"] == 0 and "no spread" in same["unavailable"]


@pytest.mark.parametrize("b,c", [(1, 6), (0, 0), (5, 5), (12, 3), (0, 9)])
def test_mcnemar_matches_statsmodels(b, c):
    table = [[10, b], [c, 4]]
    assert U.mcnemar_exact(b, c)["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)


def test_mcnemar_by_hand():
    # b=1, c=6: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 2 * 8 / 128 = 0.125
    assert U.mcnemar_exact(1, 6)["p_value"] == pytest.approx(0.125)
    assert U.mcnemar_exact(0, 0)["p_value"] == 1.0


def test_rater_spread():
    # item 1: raters 0.5 and 1.0 -> sd 0.25; item 2: 0.2, 0.2, 0.8 -> sd sqrt(0.08); item 3 has one rater
    got = U.rater_spread([[0.5, 1.0], [0.2, 0.2, 0.8], [0.4, None]])
    assert got == {"sd": pytest.approx((0.25 + math.sqrt(0.08)) / 2), "raters": 3}
    assert U.rater_spread([[0.3], [None]]) == {"sd": None, "raters": 1}


def test_options_are_checked():
    with pytest.raises(ValueError, match="confidence"):
        U.UncertaintyOptions(confidence=95)
    with pytest.raises(ValueError, match="resamples"):
        U.UncertaintyOptions(resamples=10)
