"""Correlations for the validity analyses (ARIA §4: the metric correlation matrix of Figure 4, Pearson r;
Spearman's rho with human ratings, Table 5): worked examples, hand-computed cases, and what is unavailable."""

import math

import pytest

from audioreason.analysis import Statistic, correlation_matrix, pearson, spearman


def test_pearson_reproduces_the_scipy_documented_example():
    # scipy.stats.pearsonr documentation example: r = -0.828503883588428, p = 0.021280260007523286; the 95%
    # interval is Fisher's z: tanh(atanh(r) -/+ 1.959964 / sqrt(n - 3)) with n = 7.
    out = pearson([1, 2, 3, 4, 5, 6, 7], [10, 9, 2.5, 6, 4, 3, 2])
    assert out.name == "pearson_r" and out.n == 7 and out.unavailable is None
    assert out.value == pytest.approx(-0.828503883588428, abs=1e-12)
    assert out.p_value == pytest.approx(0.021280260007523286, rel=1e-9)
    assert out.ci == pytest.approx((-0.9739212552869811, -0.20060647400568454), abs=1e-9)


def test_pearson_by_hand():
    # x = 1..4, y = 2, 4, 5, 9: deviations (-1.5, -.5, .5, 1.5) and (-3, -1, 0, 4); sum of products 11, sums of
    # squares 5 and 26, so r = 11 / sqrt(130). With 2 df, t = r sqrt(2 / (1 - r^2)) and p = 1 - t / sqrt(2 + t^2).
    out = pearson([1, 2, 3, 4], [2, 4, 5, 9])
    r = 11 / math.sqrt(130)
    t = r * math.sqrt(2 / (1 - r * r))
    assert out.value == pytest.approx(r, abs=1e-12)
    assert out.p_value == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-12)  # 0.0352
    assert out.details["df"] == 2


def test_spearman_reproduces_the_scipy_documented_example():
    # scipy.stats.spearmanr documentation example: rho = 0.8207826816681233, p = 0.08858700531354381
    # (ties in y get mid-ranks; p from Student's t with n - 2 df).
    out = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert out.name == "spearman_rho" and out.n == 5
    assert out.value == pytest.approx(0.8207826816681233, abs=1e-12)
    assert out.p_value == pytest.approx(0.08858700531354381, rel=1e-9)
    assert out.ci is None  # no interval for rho (the paper reports none)


def test_spearman_by_hand():
    # Ranks 1..5 against 2, 1, 4, 3, 5: sum d^2 = 4, rho = 1 - 6*4 / (5 * 24) = 0.8; t = 0.8 sqrt(3 / 0.36) with
    # 3 df, p = 1 - (2/pi) (atan(u) + u / (1 + u^2)), u = t / sqrt(3) = 4/3.
    out = spearman([10, 20, 30, 40, 50], [2, 1, 4, 3, 5])
    u = 4 / 3
    assert out.value == pytest.approx(0.8, abs=1e-12)
    assert out.p_value == pytest.approx(1 - 2 / math.pi * (math.atan(u) + u / (1 + u * u)), abs=1e-12)  # 0.1041


def test_pairs_with_a_missing_value_are_left_out_and_counted():
    full = spearman([10, 20, 30, 40, 50], [2, 1, 4, 3, 5])
    holed = spearman([10, None, 20, 30, 40, float("nan"), 50], [2, 7, 1, 4, 3, 1, 5])
    assert holed.value == pytest.approx(full.value) and holed.p_value == pytest.approx(full.p_value)
    assert holed.n == 5 and holed.details["dropped_pairs"] == 2
    assert full.details["dropped_pairs"] == 0


@pytest.mark.parametrize(
    "x, y, reason",
    [
        ([1, 2], [3, 4], "at least 3 pairs"),
        ([1, 2, None, 4], [3, 4, 5, None], "at least 3 pairs"),
        ([1, 1, 1, 1], [1, 2, 3, 4], "x is constant"),
        ([1, 2, 3, 4], [2, 2, 2, 2], "y is constant"),
    ],
)
def test_undefined_correlations_are_unavailable_with_the_reason(x, y, reason):
    for compute in (pearson, spearman):
        out = compute(x, y)
        assert isinstance(out, Statistic)
        assert out.value is None and out.p_value is None and reason in out.unavailable


def test_names_appear_in_the_reason():
    assert "M3 is constant" in pearson([0.5] * 4, [1, 2, 3, 4], names=("M3", "human")).unavailable


def test_three_pairs_give_r_and_p_but_no_interval():
    out = pearson([1, 2, 3], [1, 3, 2])
    assert out.value == pytest.approx(0.5) and out.p_value == pytest.approx(2 / 3)  # t = 1/sqrt(3) on 1 df
    assert out.ci is None and "n >= 4" in out.details["ci_unavailable"]


@pytest.mark.parametrize(
    "x, y, message",
    [
        ([1, 2, 3], [1, 2], "3 values against 2"),
        ([1, 2, "3"], [1, 2, 3], "'3' is not a number"),
        ([1, 2, True], [1, 2, 3], "True is not a number"),
        ([1, 2, float("inf")], [1, 2, 3], "infinite"),
        ([[1, 2], [3, 4]], [1, 2], "one-dimensional"),
    ],
)
def test_bad_input_is_a_clear_error(x, y, message):
    with pytest.raises(ValueError, match=message):
        pearson(x, y)


def test_correlation_matrix_is_symmetric_with_pairwise_counts():
    columns = {"M1": [1, 2, 3, 4, 5], "M2": [2, 1, 4, 3, 5], "M3": [5, 4, 3, None, 1]}
    out = correlation_matrix(columns, method="spearman")
    assert out["names"] == ["M1", "M2", "M3"] and out["method"] == "spearman"
    assert out["r"][0][1] == out["r"][1][0] == pytest.approx(0.8)
    assert out["r"][0][2] == pytest.approx(-1.0) and out["n"][0][2] == 4  # M3 misses one value
    assert out["r"][0][0] == out["r"][2][2] == 1.0
    assert [(s.measure, s.n) for s in out["pairs"]] == [("M1~M2", 5), ("M1~M3", 4), ("M2~M3", 4)]
    pearson_r = correlation_matrix(columns)["r"][0][1]
    assert pearson_r == pytest.approx(0.8)  # equal-spaced ranks: Pearson = Spearman here


def test_a_constant_column_has_no_correlations():
    out = correlation_matrix({"M1": [1, 2, 3], "M2": [0.5, 0.5, 0.5]})
    assert out["r"][0][1] is None and out["r"][1][1] is None and out["r"][0][0] == 1.0
    assert "M2 is constant" in out["pairs"][0].unavailable


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="kendall"):
        correlation_matrix({"a": [1, 2, 3], "b": [1, 2, 3]}, method="kendall")
