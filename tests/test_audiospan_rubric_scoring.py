"""AudioSpan Rubric pure scoring (Table 7, Eq. 2, Eq. 4, Eq. 5-6, four cells, histogram) and timestamps."""

import pytest

from audioreason.scorers.audiospan_rubric.formulas import (
    auc,
    axis_counts,
    breakdown,
    criterion_score,
    histogram,
    mcq_oeq,
    rubric_score,
    semantic_temporal,
)
from audioreason.text.timestamps import find_timestamps, parse_span, parse_timestamp, temporal_match

# Table 7 (supporting), rows sigma, columns tau; "missing" falls back to sigma like "none".
TABLE7 = {
    ("correct", "correct"): 1.0,
    ("correct", "wrong"): 0.5,
    ("correct", "none"): 1.0,
    ("correct", "missing"): 1.0,
    ("partial", "correct"): 0.75,
    ("partial", "wrong"): 0.25,
    ("partial", "none"): 0.5,
    ("partial", "missing"): 0.5,
    ("wrong", "correct"): 0.0,
    ("wrong", "wrong"): 0.0,
    ("wrong", "none"): 0.0,
    ("wrong", "missing"): 0.0,
}


@pytest.mark.parametrize("cell,expected", sorted(TABLE7.items()))
def test_table7_supporting(cell, expected):
    assert criterion_score("supporting", *cell) == expected


@pytest.mark.parametrize("sem,expected", [("correct", 1.0), ("partial", 0.5), ("wrong", 0.0), ("none", 0.0)])
def test_essential_semantic(sem, expected):
    # localization=False chooses semantic: the temporal verdict is then ignored
    assert criterion_score("essential", sem, "none", localization=False) == expected
    assert criterion_score("essential", sem, "wrong", localization=False) == expected


@pytest.mark.parametrize("tem,expected", [("correct", 1.0), ("wrong", 0.0), ("missing", 0.0), ("none", 0.0)])
def test_essential_temporal(tem, expected):
    assert criterion_score("essential", "none", tem, localization=True) == expected
    assert criterion_score("essential", "correct", tem, localization=True) == expected


def test_bad_verdicts():
    with pytest.raises(ValueError, match="semantic"):
        criterion_score("supporting", "right", "none")
    with pytest.raises(ValueError, match="temporal"):
        criterion_score("supporting", "correct", "late")
    with pytest.raises(ValueError, match="importance"):
        criterion_score("optional", "correct", "none")


def C(imp, sem, tem, loc=False):
    return {"importance": imp, "semantic": sem, "temporal": tem, "localization": loc}


def test_eq2_by_hand():
    crits = [
        C("essential", "correct", "none"),  # 1 * 1
        C("essential", "none", "wrong", True),  # 1 * 0
        C("supporting", "partial", "correct"),  # 0.5 * 0.75
        C("supporting", "correct", "wrong"),
    ]  # 0.5 * 0.5
    assert rubric_score(crits) == pytest.approx((1 + 0 + 0.375 + 0.25) / 3)
    assert rubric_score([]) is None


def test_semantic_temporal_conditioning_by_hand():
    crits = [
        C("essential", "correct", "none"),
        C("essential", "partial", "none"),
        C("essential", "none", "correct", True),
        C("essential", "none", "wrong", True),
        C("essential", "none", "missing", True),
        C("supporting", "correct", "correct"),
        C("supporting", "correct", "missing"),
        C("supporting", "partial", "wrong"),  # temporal not counted: sigma not correct
        C("supporting", "wrong", "correct"),
    ]  # temporal not counted
    counts = axis_counts(crits)
    assert counts["semantic"] == {"correct": 3, "partial": 2, "none": 3, "wrong": 1}
    assert counts["temporal"] == {"none": 2, "correct": 2, "wrong": 1, "missing": 2}
    st = semantic_temporal(crits)
    assert st["semantic"] == pytest.approx((3 + 1) / 6)
    assert st["temporal"] == pytest.approx(2 / 3)
    assert st["n_temporal_missing"] == 2
    assert semantic_temporal([C("essential", "correct", "none")])["temporal"] is None


def test_auc_by_hand_with_ties():
    # pairs: (1,0.5)=1, (1,1)=.5, (0.5,0.5)=.5, (0.5,1)=0 -> 2/4
    assert auc([1.0, 0.5], [0.5, 1.0]) == 0.5
    assert auc([0.9, 0.8], [0.1]) == 1.0
    assert auc([0.3], [0.3, 0.2, 0.9]) == pytest.approx((0.5 + 1 + 0) / 3)
    assert auc([], [0.1]) is None
    from scipy.stats import mannwhitneyu

    pos, neg = [0.2, 0.5, 0.5, 0.9], [0.1, 0.5, 0.7]
    u = mannwhitneyu(pos, neg).statistic
    assert auc(pos, neg) == pytest.approx(u / 12)


def test_rubric_pm_and_four_cells():
    a = [True, True, True, False, False, False]
    r = [1.0, 0.8, 0.1, 0.2, 0.85, 0.5]
    out = mcq_oeq(a, r)
    assert out["rubric_plus"] == pytest.approx(1.9 / 3)
    assert out["rubric_minus"] == pytest.approx(1.55 / 3)
    assert out["p"] == 0.5
    assert out["p"] * out["rubric_plus"] + (1 - out["p"]) * out["rubric_minus"] == pytest.approx(sum(r) / 6)
    # boundaries: 0.8 passes, 0.2 fails
    assert out["cells"] == {"both_pass": 2, "mcq_only": 1, "both_fail": 1, "oeq_only": 1, "middle": 1}
    assert out["auc"] == pytest.approx((1 + 1 + 1 + 1 + 0 + 1 + 0 + 0 + 0) / 9)
    with pytest.raises(ValueError):
        mcq_oeq([True], [0.1, 0.2])


def test_histogram_edges():
    h = histogram([0.0, 0.0999, 0.1, 0.3, 0.7, 0.9, 0.95, 1.0])
    assert h == [2, 1, 0, 1, 0, 0, 0, 1, 0, 3]
    assert sum(histogram([i / 20 for i in range(21)])) == 21
    with pytest.raises(ValueError):
        histogram([1.2])


def test_breakdown():
    b = breakdown([1.0, 0.0, None, 0.5], ["S", "S", "L", "L"])
    assert b == {
        "L": {"n": 2, "n_scored": 1, "n_failed": 1, "mean": 0.25, "mean_judged_only": 0.5},
        "S": {"n": 2, "n_scored": 2, "n_failed": 0, "mean": 0.5, "mean_judged_only": 0.5},
    }


@pytest.mark.parametrize(
    "text,expected",
    [
        ("12:30", 750.0),
        ("64:00", 3840.0),
        ("1:04:00", 3840.0),
        ("01:04:00", 3840.0),
        ("522.640 s", 522.64),
        ("522.64", 522.64),
        ("522 seconds", 522.0),
        ("0:05", 5.0),
        ("00:01:02.5", 62.5),
        (90, 90.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("1:2:3:4", None),
        ("-3", None),
        ("12:3x", None),
        (True, None),
    ],
)
def test_timestamp_golden(text, expected):
    assert parse_timestamp(text) == expected


def test_timestamp_strict_and_spans():
    with pytest.raises(ValueError, match="not a timestamp"):
        parse_timestamp("later", strict=True)
    assert parse_span("12:30-13:05") == (750.0, 785.0)
    assert parse_span("12:30 – 13:05") == (750.0, 785.0)
    assert parse_span("12:30 to 13:05") == (750.0, 785.0)
    assert parse_span([10, 20.5]) == (10.0, 20.5)
    assert parse_span("12:30") == (750.0, 750.0)
    assert parse_span("13:05-12:30") is None
    with pytest.raises(ValueError, match="not a time span"):
        parse_span("whenever", strict=True)
    assert find_timestamps("at 12:30, then 1:04:00 and 522.640 s") == [750.0, 3840.0, 522.64]


def test_tolerance_and_overlap():
    ref = [750, 780]
    assert temporal_match("12:25", ref) is True  # 745 = start - 5
    assert temporal_match("12:24", ref) is False  # 744
    assert temporal_match("13:05", ref) is True  # 785 = end + 5
    assert temporal_match("13:06", ref) is False
    assert temporal_match("11:00-12:26", ref) is False  # a span must overlap (C.3): no tolerance
    assert temporal_match("11:00-12:26", ref, span_tolerance_s=5) is True
    assert temporal_match("11:00-12:20", ref, span_tolerance_s=5) is False
    assert temporal_match("64:00", [3838, 3839]) is True
    assert temporal_match("garbage", ref) is None
    assert temporal_match("12:30", None) is None
