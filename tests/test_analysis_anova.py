"""Two-way ANOVA eta squared (ARIA §4, Figure 2: model vs dataset) and ICC(2,1) (Figure 3) on a rows x columns
table with one score per cell: published worked examples, hand-computed cases, and what is unavailable."""

import math

import pytest

from audioreason.analysis import Statistic, icc_2_1, two_way_anova

# Montgomery, "Design and Analysis of Experiments", §4.1, the hardness-testing experiment (randomized complete
# block design): Rockwell hardness of 4 tips (rows) on 4 metal coupons (blocks, columns). In the book's coded
# units (x - 9.5) * 10 the ANOVA gives SS_tips = 38.50, SS_blocks = 82.50, SS_E = 8.00, SS_T = 129.00;
# F_tips = 14.44 with P = 0.0009.
HARDNESS = [[9.3, 9.4, 9.6, 10.0], [9.4, 9.3, 9.8, 9.9], [9.2, 9.4, 9.5, 9.7], [9.7, 9.6, 10.0, 10.2]]

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability", Table 1: 6 targets
# rated by 4 judges. Their Table 2: BMS = 11.24, JMS = 32.49, EMS = 1.02 (df 5, 3, 15); Table 4:
# ICC(2,1) = .29. The R package psych (ICC, same data) gives F = 11.03 on (5, 15), p = 0.00013 and the 95%
# interval .019 to .76 (Shrout & Fleiss' approximate interval).
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def test_anova_reproduces_montgomerys_hardness_testing_experiment():
    coded = [[(x - 9.5) * 10 for x in row] for row in HARDNESS]
    out = two_way_anova(coded, factors=("tip", "coupon"))
    tip, coupon = out["tip"], out["coupon"]
    assert tip.name == "eta_squared_tip" and coupon.name == "eta_squared_coupon"
    assert tip.details["ss"] == pytest.approx(38.50) and coupon.details["ss"] == pytest.approx(82.50)
    assert tip.details["ss_residual"] == pytest.approx(8.00) and tip.details["ss_total"] == pytest.approx(129.0)
    assert tip.details["F"] == pytest.approx(14.44, abs=5e-3) and tip.details["df"] == 3
    assert tip.details["df_residual"] == 9
    assert round(tip.p_value, 4) == 0.0009
    assert tip.value == pytest.approx(38.5 / 129) and coupon.value == pytest.approx(82.5 / 129)
    assert tip.details["partial_eta_squared"] == pytest.approx(38.5 / 46.5)
    assert tip.n == 16
    # eta squared does not depend on the units: the raw hardness values give the same proportions.
    raw = two_way_anova(HARDNESS, factors=("tip", "coupon"))
    assert raw["tip"].value == pytest.approx(tip.value) and raw["tip"].details["ss"] == pytest.approx(0.385)


def test_anova_mean_squares_match_shrout_fleiss_table_2():
    out = two_way_anova(SHROUT_FLEISS, factors=("target", "judge"))
    target, judge = out["target"], out["judge"]
    assert target.details["ms"] == pytest.approx(11.24, abs=5e-3) and target.details["df"] == 5
    assert judge.details["ms"] == pytest.approx(32.49, abs=5e-3) and judge.details["df"] == 3
    assert target.details["ms_residual"] == pytest.approx(1.02, abs=5e-3) and target.details["df_residual"] == 15


def test_anova_by_hand():
    # [[1, 2], [3, 5], [5, 8]]: grand mean 4; row means 1.5, 4, 6.5; column means 3, 5.
    # SS_rows = 2 * (2.5^2 + 0 + 2.5^2) = 25, SS_cols = 3 * (1 + 1) = 6, SS_T = 9+4+1+1+1+16 = 32, SS_E = 1.
    # F_rows = (25/2) / (1/2) = 25 on (2, 2): p = 1 / (1 + F); F_cols = 6 / 0.5 = 12 on (1, 2): p = 1 - sqrt(12/14).
    out = two_way_anova([[1, 2], [3, 5], [5, 8]])
    model, dataset = out["model"], out["dataset"]
    assert model.value == pytest.approx(25 / 32) and dataset.value == pytest.approx(6 / 32)
    assert model.details["F"] == pytest.approx(25) and model.p_value == pytest.approx(1 / 26)
    assert dataset.details["F"] == pytest.approx(12) and dataset.p_value == pytest.approx(1 - math.sqrt(12 / 14))
    assert model.details["design"].startswith("additive two-way ANOVA")


def test_icc_2_1_reproduces_shrout_fleiss():
    out = icc_2_1(SHROUT_FLEISS)
    assert out.name == "icc_2_1" and out.n == 6 and out.details["raters"] == 4
    assert round(out.value, 2) == 0.29
    assert out.value == pytest.approx(
        (11.2417 - 1.0194) / (11.2417 + 3 * 1.0194 + 4 * (32.4861 - 1.0194) / 6), abs=1e-4
    )
    assert out.details["F"] == pytest.approx(11.03, abs=5e-3) and out.details["df"] == (5, 15)
    assert round(out.p_value, 5) == 0.00013
    assert round(out.ci[0], 3) == 0.019 and round(out.ci[1], 2) == 0.76


def test_icc_2_1_by_hand():
    # The table above: BMS = 12.5, JMS = 6, EMS = 0.5, n = 3, k = 2:
    # ICC(2,1) = (12.5 - 0.5) / (12.5 + 0.5 + 2 (6 - 0.5) / 3) = 12 / (50/3) = 0.72; F = 25 on (2, 2).
    out = icc_2_1([[1, 2], [3, 5], [5, 8]])
    assert out.value == pytest.approx(0.72)
    assert out.details["F"] == pytest.approx(25) and out.p_value == pytest.approx(1 / 26)
    assert out.ci[0] < 0.72 < out.ci[1]


def test_icc_is_negative_when_targets_agree_less_than_chance():
    # Two raters in opposite orders: every row mean and column mean is 2, so BMS = JMS = 0 and EMS = 4 / 2 = 2:
    # ICC(2,1) = (0 - 2) / (0 + 2 + 2 (0 - 2) / 3) = -3 (it is not bounded below by -1); F = 0, p = 1.
    out = icc_2_1([[1, 3], [2, 2], [3, 1]])
    assert out.value == pytest.approx(-3.0) and out.p_value == pytest.approx(1.0)


def test_a_missing_cell_makes_both_unavailable_naming_the_cell():
    table = [[0.2, 0.3], [0.4, None], [0.5, 0.6]]
    out = two_way_anova(table, row_labels=["Qwen2-Audio", "Phi-4", "GPT-4o-audio"], column_labels=["MMAR", "MMAU-mini"])
    for stat in out.values():
        assert stat.value is None and "(Phi-4, MMAU-mini)" in stat.unavailable
    assert "(r1, c1)" in icc_2_1(table).unavailable


@pytest.mark.parametrize(
    "table, reason",
    [
        ([[1, 2, 3]], "at least 2 rows"),
        ([[1], [2], [3]], "at least 2 columns"),
        ([[0.5, 0.5], [0.5, 0.5]], "no variance"),
    ],
)
def test_undefined_designs_are_unavailable(table, reason):
    for stat in [*two_way_anova(table).values(), icc_2_1(table)]:
        assert isinstance(stat, Statistic) and stat.value is None and reason in stat.unavailable


def test_exactly_additive_scores_have_eta_squared_but_no_f_test():
    # Rows 0, 1, 2 plus columns 0, 5: the residual is 0, so F is undefined (not a huge number).
    table = [[0, 5], [1, 6], [2, 7]]
    out = two_way_anova(table)
    assert out["model"].value == pytest.approx(4 / 41.5) and out["dataset"].value == pytest.approx(37.5 / 41.5)
    assert out["model"].p_value is None and out["model"].details["F"] is None
    assert "residual" in out["model"].details["test_unavailable"]
    icc = icc_2_1(table)
    assert icc.value == pytest.approx((2 - 0) / (2 + 0 + 2 * 37.5 / 3))
    assert icc.p_value is None and icc.ci is None and "residual" in icc.details["test_unavailable"]


@pytest.mark.parametrize(
    "table, message",
    [
        ([[1, 2], [3]], "ragged"),
        ([[1, "a"], [3, 4]], "not a number"),
        ([[1, 2], [3, float("inf")]], "infinite"),
        ([], "non-empty"),
    ],
)
def test_bad_tables_are_a_clear_error(table, message):
    with pytest.raises(ValueError, match=message):
        two_way_anova(table)
    with pytest.raises(ValueError, match=message):
        icc_2_1(table)


def test_factor_names_must_differ():
    with pytest.raises(ValueError, match="two different"):
        two_way_anova([[1, 2], [3, 4]], factors=("model", "model"))
