"""Per-item values the evaluate modules' declared bool and int64 columns cannot hold as they are (NaN, 2, a
string) are refused with one line naming the column and the row, before the Arrow cast reads NaN as True
(an MCQ pass) or fails naming nothing; a missing choices list names its row. The scorer classes refuse the
same values."""

import json
import math
from pathlib import Path

import evaluate
import pytest

from audioreason.scorers.anchor_chain.scorer import score_anchor_chain
from audioreason.scorers.audiospan_rubric.scorer import score_verdicts

ROOT = Path(__file__).resolve().parents[1]
OEQ = [
    {
        "id": f"o{n}",
        "question": "What happens?",
        "pair_id": f"p{n}",
        "rubric": [{"text": "Names the applause", "importance": "essential", "time_range": None}],
    }
    for n in (1, 2)
]
VERDICT = json.dumps([{"criteria": [{"index": 0, "semantic": "correct", "temporal": "none"}]}])  # Rubric 1
CHAIN = dict(
    predictions=["A", "B", "A"],
    references=["x", "y", "z"],
    choices=[["x", "y"], ["x", "y"], ["z", "w"]],
    chain_id=["c1"] * 3,
    link_position=[1, 2, 3],
)


@pytest.fixture(scope="module")
def audiospan_rubric():
    return evaluate.load(str(ROOT / "metrics" / "audiospan_rubric"))


@pytest.fixture(scope="module")
def anchor_chain():
    return evaluate.load(str(ROOT / "metrics" / "anchor_chain"))


def rubric_args(mcq_correct):
    return dict(
        predictions=["applause", "applause"],
        references=[json.dumps(i) for i in OEQ],
        verdicts=[VERDICT, VERDICT],
        mcq_correct=mcq_correct,
    )


@pytest.mark.parametrize("value", [math.nan, 2, "yes"])
def test_mcq_correct_that_is_not_a_flag_is_refused_naming_its_row(audiospan_rubric, value):
    with pytest.raises(ValueError) as raised:
        audiospan_rubric.compute(**rubric_args([True, value]))
    assert str(raised.value) == f"mcq_correct[1] (row 1) must be true, false (or 1, 0) or null, got {value!r}"


def test_mcq_correct_flags_still_count(audiospan_rubric):
    # Both OEQs pass (Rubric 1); the MCQ twins: one pass, one fail (0 reads as false).
    cells = audiospan_rubric.compute(**rubric_args([True, 0]))["mcq_oeq"]["cells"]
    assert (cells["both_pass"], cells["oeq_only"]) == (1, 1)


def test_the_scorer_refuses_nan_too():
    verdicts = [json.loads(VERDICT)] * 2
    with pytest.raises(
        ValueError,
        match=r"mcq_correct\[0\] \(item 0 \('o1'\)\): expected true, false or null, "
        r"got nan",
    ):
        score_verdicts(OEQ, verdicts, ["a", "b"], mcq_correct=[math.nan, True])


@pytest.mark.parametrize("position", [math.nan, "2", True])
def test_a_link_position_that_is_not_an_integer_is_refused_naming_its_row(anchor_chain, position):
    with pytest.raises(ValueError) as raised:
        anchor_chain.compute(**dict(CHAIN, link_position=[1, 2, position]))
    assert str(raised.value) == f"link_position[2] (row 2) must be an integer or null, got {position!r}"


def test_missing_choices_are_named(anchor_chain):
    with pytest.raises(ValueError, match=r"^choices is missing: give one list of option texts per row"):
        anchor_chain.compute(**dict(CHAIN, choices=None))
    with pytest.raises(ValueError, match=r"^choices\[1\] \(row 1\) is missing"):
        anchor_chain.compute(**dict(CHAIN, choices=[["x", "y"], None, ["z", "w"]]))
    # Every link right (gold x, y, z are A, B, A): Chain 1; an integral float position is still a position.
    assert anchor_chain.compute(**dict(CHAIN, link_position=[1, 2.0, 3]))["chain"] == 1.0


def test_the_chain_scorer_names_nan_and_none():
    item = {"id": "q1", "chain_id": "c", "choices": ["a", "b"], "answer": "a"}
    with pytest.raises(ValueError, match=r"chain 'c': item 'q1' has link_position nan, expected 1, 2 or 3"):
        score_anchor_chain([dict(item, link_position=math.nan)], ["A"])
    with pytest.raises(ValueError, match=r"item 0 \('q1'\): the field 'choices' is missing"):
        score_anchor_chain([dict(item, link_position=1, choices=None)], ["A"])
