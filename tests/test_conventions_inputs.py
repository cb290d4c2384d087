"""Every per-item input of a scorer is a declared evaluate feature: add/add_batch stream it and compute() with no
arguments scores what was added; evaluate.combine works for the pairs that score one run together and fails
with a message naming any other pair. Run outside the repository, offline."""

import json

import evaluate
import pytest

import audioreason
from audioreason.apps.shells import INPUTS
from audioreason.scorers.aria.scorer import AriaScorer

CH = ["dog", "cat", "bird", "cow"]
OEQ = {
    "id": "oeq1",
    "duration_tier": "S",
    "language": "en",
    "cognitive_level": "P",
    "dimension": "localization",
    "rubric": [
        {
            "text": "Says the siren starts at about 1:05",
            "importance": "essential",
            "time_range": [60.0, 75.0],
            "localization": True,
        },
        {
            "text": "Mentions the dog barking after the siren",
            "importance": "supporting",
            "time_range": [70.0, 80.0],
            "localization": False,
        },
    ],
}
# Essential, graded on tau: 1; supporting: 1[sigma>0] (sigma + tau) / 2 = (1 + 0) / 2. Rubric = (1 + 0.5 * 0.5) / 1.5 =
# 5/6.
VERDICT = {
    "criteria": [
        {"index": 0, "semantic": "none", "temporal": "correct"},
        {"index": 1, "semantic": "correct", "temporal": "wrong"},
    ]
}


@pytest.fixture(autouse=True)
def outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def load(name):
    return evaluate.load(audioreason.metric_path(name))


def test_every_declared_input_is_a_feature():
    for name, columns in INPUTS.items():
        assert list(load(name)._feature_names()) == ["predictions", "references", *columns], name


def test_anchor_chain_streams_every_column_and_compute_scores_what_was_added():
    metric = load("anchor_chain")
    rows = [
        ("c1", 1, "A", "dog", "addition"),
        ("c1", 2, "B", "cat", "addition"),
        ("c1", 3, "A", "bird", "addition"),
        ("c2", 1, "B", "dog", "deletion"),
        ("c2", 2, "B", "cat", "deletion"),
        ("c2", 3, "C", "bird", "deletion"),
    ]
    for chain, link, reply, gold, operation in rows[:3]:
        metric.add(
            prediction=reply, reference=gold, choices=CH, chain_id=chain, link_position=link, operation=operation
        )
    metric.add_batch(
        predictions=[r[2] for r in rows[3:]],
        references=[r[3] for r in rows[3:]],
        choices=[CH] * 3,
        chain_id=[r[0] for r in rows[3:]],
        link_position=[r[1] for r in rows[3:]],
        operation=[r[4] for r in rows[3:]],
    )
    got = metric.compute()
    # c1: P, U right, R wrong -> (1 + 1 + 0) / 3 = 2/3; c2: P wrong -> 0. Chain = (2/3 + 0) / 2 = 1/3.
    assert got["chain"] == 1 / 3 and got["n"] == 2
    assert got["by_operation"]["addition"]["chain"] == 2 / 3 and got["by_operation"]["deletion"]["chain"] == 0.0
    with pytest.raises(ValueError, match="parse: option.* of compute"):
        metric.add_batch(predictions=["A"], references=["dog"], choices=[CH], parse="tolerant")


def test_mmar_rubrics_streams_the_answers():
    metric = load("mmar_rubrics")
    assert "answers" in metric._feature_names()
    with pytest.raises(ValueError, match="'answers' has 1 values but there are 2 rows"):
        metric.add_batch(predictions=["r1", "r2"], references=["a", "b"], answers=["x"])


def _audiospan_run():
    """One AudioSpan run: an anchor chain of three MCQ rows and one open-ended row."""
    return dict(
        predictions=["A", "B", "D", "The siren starts at 1:05, and then a dog barks at 2:30."],
        references=["dog", "cat", "bird", None],
        choices=[CH, CH, CH, None],
        chain_id=["c1", "c1", "c1", None],
        link_position=[1, 2, 3, None],
        item_id=["c1-1", "c1-2", "c1-3", "oeq1"],
        verdicts=[None, None, None, json.dumps([VERDICT])],
        items=[OEQ],
        rows="applicable",
    )


def test_anchor_chain_and_audiospan_rubric_combine_on_one_run():
    combined = evaluate.combine([load("anchor_chain"), load("audiospan_rubric")])
    got = combined.compute(**_audiospan_run())
    assert got["chain"] == 2 / 3  # P, U right, R wrong
    assert got["rubric"] == 5 / 6 and got["n_scored"] == 1
    assert got["anchor_chain_rows_left_out"] == {"n": 1, "why": "no choices: not a multiple-choice row"}
    assert got["audiospan_rubric_rows_left_out"] == {"n": 3, "why": "choices: a multiple-choice row"}
    assert set(got["anchor_chain_ignored_inputs"]) == {"verdicts", "items"}
    assert set(got["audiospan_rubric_ignored_inputs"]) == {"chain_id", "link_position"}
    assert (
        "which anchor_chain does not read (combined: one AudioSpan run" in got["anchor_chain_ignored_inputs"]["items"]
    )


def test_the_combination_streams_too():
    combined = evaluate.combine([load("anchor_chain"), load("audiospan_rubric")])
    run = _audiospan_run()
    options = {k: run.pop(k) for k in ("items", "rows")}
    # add_batch of a combination hands each module exactly its columns: every column of both is given
    combined.add_batch(
        **run,
        mcq_correct=[None] * 4,
        operation=[None] * 4,
        duration_tier=[None] * 4,
        language=[None] * 4,
        cognitive_level=[None] * 4,
        dimension=[None] * 4,
    )
    got = combined.compute(**options)
    assert got["chain"] == 2 / 3 and got["rubric"] == 5 / 6


def test_pairs_that_do_not_combine_fail_naming_the_pair():
    combined = evaluate.combine([load("anchor_chain"), load("mmar_rubrics")])
    with pytest.raises(
        ValueError,
        match=r"anchor_chain got answers, input\(s\) of mmar_rubrics: anchor_chain does "
        r"not combine with mmar_rubrics .*aria \+ text_prior_decomposition",
    ):
        combined.compute(predictions=["A"], references=["dog"], choices=[CH], answers=["dog"], items=[{"id": "x"}])
    with pytest.raises(ValueError, match="anchor_chain takes no argument colour"):
        load("anchor_chain").compute(predictions=["A"], references=["dog"], choices=[CH], colour=["red"])


COT = (
    "[PERCEPTION]\nEntities: dog\nDescription: A dog barks.\n[ANALYSIS]\nThe bark is loud.\n[REASONING]\n"
    "It is a dog.\n[ANSWER]\nDog barking"
)


def test_aria_and_text_prior_combine_on_one_mmar_run(tiny_backbones):
    choices = [["Dog barking", "Rain"]] * 2
    run = dict(
        predictions=[COT, "[ANSWER] Rain", "[ANSWER] Rain", "[ANSWER] Rain"],
        references=["Dog barking", "Rain", "Dog barking", "Rain"],
        choices=choices * 2,
        model=["m"] * 4,
        item_id=["q1", "q2", "q1", "q2"],
        condition=["full", "full", "none", "none"],
    )
    options = dict(backbones=tiny_backbones, m3_mode="logprob", vocabulary=["dog", "thunder"])
    combined = evaluate.combine([load("aria"), load("text_prior_decomposition")])
    got = combined.compute(**run, **options, rows="applicable")
    want = AriaScorer(**options).score(run["predictions"][:2], run["references"][:2], choices)
    assert got["aria"] == pytest.approx(want["aria"]) and got["rows_left_out"]["n"] == 2  # the none rows
    # Full: both right (1); None: q1 wrong, q2 right (1/2); R_TP = (1/2) / 1.
    assert got["text_prior"]["R_TP"] == 0.5
    assert set(got["aria_ignored_inputs"]) == {"item_id"}
    assert set(got["text_prior_decomposition_ignored_inputs"]) == {"backbones", "m3_mode", "vocabulary"}
    with pytest.raises(ValueError, match=r"condition column holds \['full', 'none'\].*rows='applicable'"):
        load("aria").compute(**run, **options)
    with pytest.raises(ValueError, match=r"aria scores one model per compute\(\)"):
        load("aria").compute(**dict(run, model=["m", "m", "n", "n"]), **options, rows="applicable")
