"""Kendall's W across benchmarks (ARIA §4, Figure 3) and Krippendorff's alpha over an annotation matrix
(ARIA §4 Human evaluation; the MMAR-Rubrics reliability): published examples, hand-computed cases, and what
is unavailable."""

import pytest
from scipy import stats
from test_mmar_rubrics_scoring import KRIPPENDORFF_EXAMPLE

from audioreason.analysis import Statistic, annotator_alpha, kendalls_w

# ProofWiki, "Kendall's Coefficient of Concordance/Examples/Arbitrary Example 1": 3 competitors (rows) ranked
# by 4 judges (columns); rank sums 7, 9, 8, S = 2, W = 12 S / (m^2 n (n^2 - 1)) = 24 / 384 = 1/16.
PROOFWIKI = [[1, 1, 2, 3], [3, 2, 3, 1], [2, 3, 1, 2]]

# The "anxiety" ratings of the R packages irr / DescTools (20 subjects x 3 raters, many ties); the DescTools
# KendallW documentation prints KendallW(anxiety, correct=TRUE) = 0.5396569 (W corrected for ties).
ANXIETY = list(
    zip(
        [3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3],
        [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4],
        [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2],
    )
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing values (4
# observers x 12 units, as the MMAR-Rubrics tests use it): alpha = 0.743 (nominal), 0.815 (ordinal),
# 0.849 (interval), 0.797 (ratio).
KRIPPENDORFF_2011 = KRIPPENDORFF_EXAMPLE


def test_kendalls_w_reproduces_the_proofwiki_example():
    out = kendalls_w(PROOFWIKI)
    assert out.name == "kendalls_w" and out.n == 3 and out.details["raters"] == 4
    assert out.value == pytest.approx(1 / 16, abs=1e-12)
    # Friedman's chi^2 = m (n - 1) W = 0.5 on n - 1 = 2 df: p = exp(-0.5 / 2).
    assert out.details["chi2"] == pytest.approx(0.5) and out.details["df"] == 2
    assert out.p_value == pytest.approx(0.7788007830714049)


def test_kendalls_w_with_ties_reproduces_desctools():
    out = kendalls_w(ANXIETY)
    assert out.value == pytest.approx(0.5396569, abs=5e-8)
    assert out.details["chi2"] == pytest.approx(3 * 19 * out.value)
    assert out.p_value == pytest.approx(stats.chi2.sf(3 * 19 * 0.5396569, 19), rel=1e-6)


def test_kendalls_w_by_hand():
    assert kendalls_w([[1, 1], [2, 2], [3, 3], [4, 4]]).value == pytest.approx(1.0)  # identical rankings
    assert kendalls_w([[1, 3], [2, 2], [3, 1]]).value == pytest.approx(0.0)  # opposite rankings
    # Rater 1 ties the first two objects (mid-ranks 1.5, 1.5, 3), rater 2 ranks 1, 2, 3: rank sums 2.5, 3.5, 6,
    # mean 4, S = 6.5; sum over tie groups of t^3 - t = 6; W = 12 S / (m^2 (n^3 - n) - m * 6) = 78 / 84.
    assert kendalls_w([[0.3, 10], [0.3, 20], [0.9, 30]]).value == pytest.approx(78 / 84)
    # Scores are ranked within each column: any increasing transform of a column leaves W unchanged.
    assert kendalls_w([[0.1, 100], [0.5, 300], [0.4, 200]]).value == kendalls_w([[1, 1], [3, 3], [2, 2]]).value


@pytest.mark.parametrize(
    "table, reason",
    [
        ([[1, 2], [2, 1]], "at least 3 rows"),
        ([[1], [2], [3]], "at least 2 columns"),
        ([[1, 5], [1, 5], [1, 5]], "tied"),
        ([[1, 2], [2, None], [3, 3]], "(r1, c1)"),
    ],
)
def test_undefined_w_is_unavailable(table, reason):
    out = kendalls_w(table)
    assert isinstance(out, Statistic) and out.value is None and reason in out.unavailable


def test_missing_cells_are_named_with_labels():
    out = kendalls_w([[1, 2], [2, None], [3, 3]], row_labels=["a", "b", "c"], column_labels=["MMAR", "MMAU"])
    assert "(b, MMAU)" in out.unavailable


@pytest.mark.parametrize(
    "level, expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_annotator_alpha_reproduces_krippendorff_2011(level, expected):
    out = annotator_alpha(KRIPPENDORFF_2011, level=level)
    assert out.name == "krippendorff_alpha" and out.value == pytest.approx(expected, abs=5e-4)
    assert out.n == 11  # units rated at least twice: the last unit has one rating
    assert out.details == {"level": level, "raters": 4, "units": 12}
    assert out.p_value is None and out.ci is None


def test_annotator_alpha_defaults_to_interval():
    assert annotator_alpha(KRIPPENDORFF_2011).details["level"] == "interval"


@pytest.mark.parametrize(
    "ratings, reason",
    [
        ({"A": [1, 2, 3]}, "two raters"),
        ({"A": [1, None], "B": [None, 2]}, "scored by two raters"),
        ({"A": [3, 3, None], "B": [3, 3, 2]}, "one value"),
    ],
)
def test_undefined_alpha_is_unavailable(ratings, reason):
    out = annotator_alpha(ratings)
    assert out.value is None and reason in out.unavailable


@pytest.mark.parametrize(
    "ratings, level, message",
    [
        ({"A": [1, 2], "B": [1]}, "interval", "different numbers"),
        ({"A": [1, "x"], "B": [1, 2]}, "interval", "not a number"),
        ({"A": [1, 2], "B": [1, 2]}, "likert", "level"),
    ],
)
def test_bad_annotations_are_a_clear_error(ratings, level, message):
    with pytest.raises(ValueError, match=message):
        annotator_alpha(ratings, level=level)
