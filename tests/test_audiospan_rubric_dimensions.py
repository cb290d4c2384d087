"""Which dimension an essential criterion is graded on is the judge's call (AudioSpan, arXiv:2608.26431,
App. C.3: semantic "none" means graded on temporal, temporal "none" means graded on semantic); a criterion's
``localization: true`` overrides it (temporal only)."""

import pytest

from audioreason.scorers.audiospan_rubric.formulas import criterion_score, rubric_score
from audioreason.scorers.audiospan_rubric.scorer import allowed_verdicts, score_verdicts, validate_reply

WHEN = {"text": "Says when the bell first rings", "importance": "essential", "time_range": [60.0, 70.0]}
WHO = {"text": "Names the speaker", "importance": "essential", "time_range": None}


def reply(*pairs):
    return {"criteria": [{"index": i, "semantic": s, "temporal": t} for i, (s, t) in enumerate(pairs)]}


@pytest.mark.parametrize("flag", [None, False])  # absent, or the loaders' default false
def test_unflagged_when_criterion_graded_on_time(flag):
    crit = dict(WHEN) if flag is None else dict(WHEN, localization=flag)
    item = {"id": "oeq-1", "rubric": [crit, WHO]}
    out = score_verdicts([item], [[reply(("none", "correct"), ("correct", "none"))]])
    assert out["rubric"] == 1.0
    assert out["temporal"] == 1.0 and out["by_importance"]["essential"]["n_temporal"] == 1
    out = score_verdicts([item], [[reply(("none", "missing"), ("correct", "none"))]])
    assert out["rubric"] == 0.5  # a localization answer without a time scores 0 (C.2)


def test_the_judge_may_grade_the_same_criterion_on_content():
    out = score_verdicts([{"id": "oeq-2", "rubric": [WHEN]}], [[reply(("partial", "none"))]])
    assert out["rubric"] == 0.5 and out["temporal"] is None


@pytest.mark.parametrize(
    "pair,rule",
    [
        (("correct", "correct"), "exactly one dimension"),
        (("none", "none"), "exactly one dimension"),
    ],
)
def test_essential_must_be_graded_on_exactly_one_dimension(pair, rule):
    with pytest.raises(ValueError, match=rule):
        validate_reply(reply(pair), [WHEN])


def test_localization_flag_overrides():
    flagged = dict(WHEN, localization=True)
    with pytest.raises(ValueError, match="marked as a localization criterion"):
        validate_reply(reply(("correct", "none")), [flagged])
    assert validate_reply(reply(("none", "wrong")), [flagged])["criteria"][0]["temporal"] == "wrong"
    assert allowed_verdicts(flagged) == {("none", t) for t in ("correct", "wrong", "missing")}
    assert len(allowed_verdicts(WHEN)) == 6  # 3 semantic-only pairs + 3 temporal-only pairs


def test_pure_criterion_score_reads_the_dimension_from_the_verdicts():
    assert criterion_score("essential", "none", "correct") == 1
    assert criterion_score("essential", "none", "missing") == 0
    assert criterion_score("essential", "partial", "none") == 0.5
    with pytest.raises(ValueError, match="exactly one dimension"):
        criterion_score("essential", "correct", "wrong")
    # an explicit choice decides regardless of the labels
    assert criterion_score("essential", "correct", "wrong", localization=True) == 0
    assert criterion_score("essential", "correct", "wrong", localization=False) == 1
    rows = [
        {"importance": "essential", "semantic": "none", "temporal": "correct"},
        {"importance": "essential", "semantic": "wrong", "temporal": "none"},
    ]
    assert rubric_score(rows) == 0.5


def test_changed_rules_change_the_cache_key():
    # Replies cached under the old rules (essential dimension fixed by the flag) must not be reused.
    from audioreason.scorers.audiospan_rubric.scorer import verdict_schema

    assert verdict_schema({"id": "oeq-1", "rubric": [WHEN]}).version == "2"
