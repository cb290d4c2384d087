"""The deterministic temporal check of AudioSpan (arXiv:2608.26431, App. C.3): a time point is correct within
+-5 s of the reference range, exactly at the boundary; a span is correct when it overlaps the range, with no
tolerance unless ``span_tolerance_s`` widens it (an option, not the paper)."""

import random

import pytest

from audioreason.scorers.audiospan_rubric.scorer import deterministic_check, score_verdicts
from audioreason.text.timestamps import SPAN_TOLERANCE_S, TOLERANCE_S, temporal_match

REF = [750.0, 780.0]  # 12:30-13:00


def test_defaults_are_the_papers():
    assert (TOLERANCE_S, SPAN_TOLERANCE_S) == (5.0, 0.0)


@pytest.mark.parametrize(
    "span,plain,widened",
    [
        ("11:00-12:26", False, True),  # ends 4 s before the range
        ("11:00-12:25", False, True),  # ends 5 s before: widening by 5 s reaches it exactly
        ("11:00-12:24", False, False),
        ("11:00-12:30", True, True),  # touches the start
        ("13:00-13:30", True, True),  # touches the end
        ("13:04-13:30", False, True),
        ("12:40-12:50", True, True),  # inside
        ("12:00-14:00", True, True),  # covers it
        ([700, 744.5], False, False),
    ],
)
def test_span_overlap_without_tolerance(span, plain, widened):
    assert temporal_match(span, REF) is plain
    assert temporal_match(span, REF, span_tolerance_s=5) is widened


def test_point_tolerance_is_exact_at_the_boundary():
    # 0:28:53.053 = 1733.053 s, exactly 5 s before 1738.053 (in floats 1680 + 53.053 = 1733.0529999999999)
    assert temporal_match("0:28:53.053", [1738.053, 1740.0]) is True
    assert temporal_match("0:28:53.052", [1738.053, 1740.0]) is False
    assert temporal_match("0:28:53.053", [1720.0, 1728.053]) is True  # 5 s after the end
    assert temporal_match("0:28:53.054", [1720.0, 1728.053]) is False
    assert temporal_match(1733.053, [1738.053, 1740.0]) is True
    assert temporal_match("12:25", REF) is True and temporal_match("12:24.999", REF) is False
    assert temporal_match("13:05", REF) is True and temporal_match("13:05.001", REF) is False


def test_deterministic_check_uses_plain_overlap_by_default():
    crit = {"importance": "supporting", "time_range": REF}
    response = "The applause runs from 11:00-12:26, before the speech."
    assert deterministic_check(crit, response, None) == "wrong"
    assert deterministic_check(crit, response, None, span_tolerance_s=5.0) == "correct"
    assert deterministic_check(crit, response, "11:00-12:26") == "wrong"


def test_score_verdicts_span_tolerance_option_only_moves_the_flags():
    item = {
        "id": "oeq-3",
        "rubric": [{"text": "Says when the applause runs", "importance": "essential", "time_range": REF}],
    }
    verdict = [{"criteria": [{"index": 0, "semantic": "none", "temporal": "correct", "timestamp": "11:00-12:26"}]}]
    plain = score_verdicts([item], [verdict], ["Applause 11:00-12:26."])
    widened = score_verdicts([item], [verdict], ["Applause 11:00-12:26."], span_tolerance_s=5.0)
    assert plain["rubric"] == widened["rubric"] == 1.0
    assert [(d["judge"], d["check"]) for d in plain["temporal_disagreements"]] == [("correct", "wrong")]
    assert widened["temporal_disagreements"] == []
    assert plain["span_tolerance_s"] == 0.0 and widened["span_tolerance_s"] == 5.0


def near_misses(n=500, seed=2608431):
    """n predicted spans that miss a reference range by a gap uniform in (0, 30] s, before or after it."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        start = rng.uniform(60, 3000)
        ref = [round(start, 3), round(start + rng.uniform(2, 30), 3)]
        gap, length = rng.uniform(0.001, 30), rng.uniform(2, 30)
        if rng.random() < 0.5:
            span = [round(ref[0] - gap - length, 3), round(ref[0] - gap, 3)]
        else:
            span = [round(ref[1] + gap, 3), round(ref[1] + gap + length, 3)]
        out.append((span, ref))
    return out


def test_measured_effect_of_widening_on_near_misses():
    # The number quoted in the metric card: on these 500 near misses, widening spans by 5 s turns this many
    # from "wrong" into "correct" (every gap <= 5 s); plain overlap calls all 500 wrong.
    pairs = near_misses()
    assert not any(temporal_match(span, ref) for span, ref in pairs)
    flipped = sum(bool(temporal_match(span, ref, span_tolerance_s=5.0)) for span, ref in pairs)
    assert flipped == 75
