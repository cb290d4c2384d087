"""AudioSpan Rubric in exact arithmetic: rater means, the D.3 four cells and AUC ties do not depend on float
rounding or on rater order (AudioSpan, arXiv:2608.26431, Eq. 2, D.3 Eq. 5-6)."""

from fractions import Fraction
from itertools import permutations

import pytest

from audioreason.scorers.audiospan_rubric.formulas import (
    FAIL,
    PASS,
    auc,
    criterion_score,
    histogram,
    mcq_oeq,
    rubric_score,
    semantic_temporal,
)
from audioreason.scorers.audiospan_rubric.scorer import score_verdicts, validate_reply

# Sum of weights 2.5: two essential (content) criteria and one supporting criterion without a time range.
RUBRIC = [
    {"text": "Names the speaker", "importance": "essential", "time_range": None},
    {"text": "Names the venue", "importance": "essential", "time_range": None},
    {"text": "Mentions the rain", "importance": "supporting", "time_range": None},
]
SEMANTICS = {
    Fraction(3, 5): ("correct", "partial", "wrong"),  # (1 + 0.5 + 0) / 2.5
    Fraction(4, 5): ("correct", "correct", "wrong"),  # (1 + 1 + 0) / 2.5
    Fraction(1): ("correct", "correct", "correct"),
}  # 2.5 / 2.5


def rater(value):
    sem = SEMANTICS[value]
    return validate_reply(
        {"criteria": [{"index": i, "semantic": s, "temporal": "none"} for i, s in enumerate(sem)]}, RUBRIC
    )


def item(n):
    return {"id": f"oeq-{n}", "rubric": RUBRIC, "duration_tier": "S", "pair_id": f"pair-{n}"}


def test_fractions_through_the_pure_functions():
    assert criterion_score("supporting", "partial", "correct") == Fraction(3, 4)
    assert type(criterion_score("supporting", "partial", "correct")) is Fraction
    rows = [{"importance": "essential", "semantic": s, "temporal": "none"} for s in ("correct", "partial")]
    rows.append({"importance": "supporting", "semantic": "wrong", "temporal": "none"})
    assert rubric_score(rows) == Fraction(3, 5)
    assert semantic_temporal(rows)["semantic"] == Fraction(1, 2)  # (1 + 0.5) / 3
    assert (PASS, FAIL) == (Fraction(4, 5), Fraction(1, 5))


@pytest.mark.parametrize("order", list(permutations([Fraction(3, 5), Fraction(4, 5), Fraction(1)])))
def test_rater_mean_is_exact_in_every_order(order):
    # (3/5 + 4/5 + 1) / 3 = 4/5 exactly: a passing item whatever the rater order (float sums give
    # 0.7999999999999999 in four of the six orders).
    out = score_verdicts([item(0)], [[rater(v) for v in order]], mcq_correct=[True], return_items=True)
    assert out["rubric"] == 0.8
    assert out["items"][0]["rubric"] == 0.8
    assert out["items"][0]["rater_scores"] == [float(v) for v in order]
    assert out["mcq_oeq"]["cells"] == {"both_pass": 1, "both_fail": 0, "mcq_only": 0, "oeq_only": 0, "middle": 0}
    assert out["histogram"] == [0] * 8 + [1, 0]  # 0.8 lands in [0.8, 0.9)


def test_tied_items_count_half_in_the_auc():
    # Both items average 4/5; in float the first order gives 0.8000000000000002 and the second
    # 0.7999999999999999, which made the MCQ-right item "win" (AUC 1.0) and sent the other to the middle.
    a = [rater(Fraction(3, 5)), rater(Fraction(1)), rater(Fraction(4, 5))]
    b = [rater(Fraction(4, 5)), rater(Fraction(3, 5)), rater(Fraction(1))]
    out = score_verdicts([item(0), item(1)], [a, b], mcq_correct=[True, False])["mcq_oeq"]
    assert out["auc"] == 0.5
    assert out["cells"] == {"both_pass": 1, "both_fail": 0, "mcq_only": 0, "oeq_only": 1, "middle": 0}
    assert out["rubric_plus"] == out["rubric_minus"] == 0.8


def test_trimmed_mean_and_majority_stay_exact():
    raters = [rater(Fraction(3, 5)), rater(Fraction(4, 5)), rater(Fraction(1)), rater(Fraction(4, 5))]
    # trimmed: drop 3/5 and 1 -> 4/5; majority: 4/5 (two of four)
    for method in ("trimmed_mean", "majority"):
        out = score_verdicts([item(0)], [raters], mcq_correct=[False], aggregation=method)
        assert out["rubric"] == 0.8 and out["mcq_oeq"]["cells"]["oeq_only"] == 1


def test_pure_d3_functions_read_floats_as_written():
    # A float input is read as the decimal it prints as (0.2 -> 1/5), so the documented boundaries hold.
    out = mcq_oeq([True, False, True], [0.8, 0.2, 0.7999999999999999])
    assert out["cells"] == {"both_pass": 1, "both_fail": 1, "mcq_only": 0, "oeq_only": 0, "middle": 1}
    assert auc([0.1 + 0.2], [0.3]) == 1  # 0.30000000000000004 was written: it is above 0.3
    assert auc([0.3, 0.3], [0.3]) == Fraction(1, 2)  # equal values tie: 1/2 each (Eq. 6)
    assert auc([Fraction(1, 3)], [Fraction(1, 3)]) == Fraction(1, 2)
    assert histogram([0.3, Fraction(3, 10), 0.7999999999999999]) == [0, 0, 0, 2, 0, 0, 0, 1, 0, 0]
