"""Precomputed verdicts (``verdicts=``) go through the judged path's validator: paired with criteria by their
C.3 ``index``, checked for count and dimension rules, bad shapes refused with the item named
(AudioSpan, arXiv:2608.26431, App. C.3)."""

import json
from pathlib import Path

import pytest

from audioreason.scorers.audiospan_rubric.scorer import score_verdicts

ROOT = Path(__file__).resolve().parents[1]

RUBRIC = [
    {"text": "Names the speaker", "importance": "essential", "time_range": None},
    {"text": "Says when the bell rings", "importance": "essential", "time_range": [60.0, 70.0], "localization": True},
    {"text": "Mentions the rain", "importance": "supporting", "time_range": None},
]
ITEM = {"id": "oeq-7", "question": "Who speaks, and when does the bell ring?", "rubric": RUBRIC, "duration_tier": "M"}
ENTRIES = [
    {"index": 0, "semantic": "correct", "temporal": "none"},
    {"index": 1, "semantic": "none", "temporal": "wrong"},
    {"index": 2, "semantic": "partial", "temporal": "none"},
]
EXPECTED = (1 + 0 + 0.5 * 0.5) / 2.5  # = 0.5


def test_entries_are_paired_by_index_not_position():
    shuffled = {"criteria": [ENTRIES[2], ENTRIES[0], ENTRIES[1]]}
    out = score_verdicts([ITEM], [[shuffled]])
    assert out["rubric"] == pytest.approx(EXPECTED)
    assert out["semantic"] == pytest.approx(1.5 / 2)


def test_a_bare_list_per_rater_is_a_reply():
    out = score_verdicts([ITEM], [[list(reversed(ENTRIES)), None]], return_items=True)
    assert out["rubric"] == pytest.approx(EXPECTED)
    assert out["items"][0]["n_failed_raters"] == 1 and out["items"][0]["n_valid_raters"] == 1


def test_a_raw_reply_text_is_parsed_like_a_judge_reply():
    text = "Here you go:\n```json\n" + json.dumps({"criteria": ENTRIES, "summary": "ok"}) + "\n```"
    assert score_verdicts([ITEM], [[text]])["rubric"] == pytest.approx(EXPECTED)


@pytest.mark.parametrize(
    "verdicts,message",
    [
        ([[{"criteria": ENTRIES[:1]}]], r"item 'oeq-7', rater 0: expected exactly 3 criteria entries, got 1"),
        ([[{"criteria": [ENTRIES[0], ENTRIES[0], ENTRIES[2]]}]], r"item 'oeq-7', rater 0: index 0 appears twice"),
        (
            [[None, {"criteria": [ENTRIES[0], dict(ENTRIES[1], semantic="correct"), ENTRIES[2]]}]],
            r"item 'oeq-7', rater 1: criterion 1: .*breaks the rule",
        ),
        ([[{"criteria": [dict(ENTRIES[0], index=5)] + ENTRIES[1:]}]], r"item 'oeq-7', rater 0: index 5 is not one of"),
        ([{"criteria": ENTRIES}], r"item 'oeq-7': expected a list with one entry per rater"),
        ([[]], r"item 'oeq-7': no rater entries"),
        ([[42]], r"item 'oeq-7', rater 0: expected a JSON object"),
        ([["no json here"]], r"item 'oeq-7', rater 0: "),
    ],
)
def test_bad_verdicts_are_refused_naming_the_item(verdicts, message):
    with pytest.raises(ValueError, match=message):
        score_verdicts([ITEM], verdicts)


def test_metric_module_validates_precomputed_verdicts():
    import evaluate

    metric = evaluate.load(str(ROOT / "metrics" / "audiospan_rubric"))
    shuffled = json.dumps([{"criteria": [ENTRIES[1], ENTRIES[2], ENTRIES[0]]}])
    out = metric.compute(predictions=["The mayor speaks."], references=[json.dumps(ITEM)], verdicts=[shuffled])
    assert out["rubric"] == pytest.approx(EXPECTED)
    with pytest.raises(ValueError, match="item 'oeq-7', rater 0: expected exactly 3"):
        metric.compute(
            predictions=["x"], references=[json.dumps(ITEM)], verdicts=[json.dumps([{"criteria": ENTRIES[:1]}])]
        )
