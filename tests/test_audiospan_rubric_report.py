"""Report-level conventions of AudioSpan (arXiv:2608.26431): Table 3's Avg (the unweighted mean of the S/M/L
tier means) beside the pooled mean, and D.3's matched set limited to items with an essential criterion
(Table 10's caption), with every left-out item counted."""

import pytest

from audioreason.scorers.audiospan_rubric.scorer import score_verdicts

ESSENTIAL = [{"text": "Names the speaker", "importance": "essential", "time_range": None}]
SUPPORTING = [{"text": "Mentions the rain", "importance": "supporting", "time_range": None}]


def item(n, tier, rubric=ESSENTIAL):
    return {"id": f"oeq-{n}", "rubric": rubric, "duration_tier": tier, "pair_id": f"pair-{n}"}


def one(label):
    return [{"criteria": [{"index": 0, "semantic": label, "temporal": "none"}]}]


def test_table3_avg_is_the_unweighted_mean_of_the_tiers():
    items = [item(0, "S"), item(1, "S"), item(2, "M"), item(3, "L")]
    verdicts = [one("correct"), one("correct"), one("wrong"), one("partial")]
    out = score_verdicts(items, verdicts)
    assert out["rubric"] == 0.625  # pooled: (1 + 1 + 0 + 0.5) / 4
    assert out["rubric_avg"] == 0.5  # Table 3 Avg: (1 + 0 + 0.5) / 3
    assert out["rubric_avg_missing_tiers"] == []
    assert {k: v["mean"] for k, v in out["by"]["duration_tier"].items()} == {"L": 0.5, "M": 0.0, "S": 1.0}


def test_table3_avg_needs_all_three_tiers():
    out = score_verdicts([item(0, "S"), item(1, "M"), item(2, "L")], [one("correct"), one("wrong"), [None]])
    # the failed L item counts at 0 in the headline numbers, and is left out of the judged-only ones
    assert out["rubric"] == pytest.approx(1 / 3) and out["rubric_avg"] == pytest.approx(1 / 3)
    assert out["rubric_judged_only"] == 0.5 and out["rubric_upper"] == pytest.approx(2 / 3)
    assert out["rubric_avg_judged_only"] is None and out["rubric_avg_missing_tiers"] == []
    assert out["n_failed"] == 1 and out["by"]["duration_tier"]["L"]["mean_judged_only"] is None
    none_judged = score_verdicts([item(0, "S"), item(1, "M")], [one("correct"), one("wrong")])
    assert none_judged["rubric_avg"] is None and none_judged["rubric_avg_missing_tiers"] == ["L"]


def test_d3_matched_set_keeps_items_with_an_essential_criterion():
    items = [item(0, "S"), item(1, "S"), item(2, "S", SUPPORTING), item(3, "M"), item(4, "M")]
    verdicts = [one("correct"), one("wrong"), one("correct"), one("partial"), [None]]
    mcq = {"pair-0": True, "pair-1": False, "pair-2": False, "pair-4": True}  # pair-3 has no MCQ twin
    d3 = score_verdicts(items, verdicts, mcq_correct=mcq)["mcq_oeq"]
    # matched: oeq-0 (right, 1) and oeq-1 (wrong, 0); oeq-2 has no essential criterion, oeq-3 no MCQ
    # outcome, oeq-4 no Rubric (its only rater failed)
    assert (d3["n"], d3["n_no_essential"], d3["n_no_mcq"], d3["n_unscored"]) == (2, 1, 1, 1)
    assert d3["auc"] == 1.0 and d3["rubric_plus"] == 1.0 and d3["rubric_minus"] == 0.0 and d3["p"] == 0.5
