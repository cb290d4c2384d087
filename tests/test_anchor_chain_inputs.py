"""Bad inputs to the anchor Chain / MCQ Accuracy scorers are refused at the boundary with one ValueError
naming the item (position and id) and the field: missing choices or answer, choices that are not a list of
strings, repeated ids (which Accuracy used to count twice); the evaluate module passes them on and takes a
None first reply like any other; the Space widget names the bad line."""

import json
import re
from pathlib import Path

import evaluate
import pytest
from fixtures.shell_helpers import load_app

from audioreason.scorers.anchor_chain.scorer import score_anchor_chain, score_mcq_accuracy

ROOT = Path(__file__).resolve().parents[1]
CH = ["dog barking", "cat meowing", "bird song", "cow mooing"]


def _mcq(n, gold=0):
    return {"id": f"q{n}", "choices": list(CH), "answer": CH[gold]}


def _chain(cid):
    return [
        {"id": f"{cid}-{p}", "chain_id": cid, "link_position": p, "choices": list(CH), "answer": CH[0]}
        for p in (1, 2, 3)
    ]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda it: it.pop("choices"), "item 1 ('q1'): the field 'choices' is missing"),
        (
            lambda it: it.pop("answer"),
            "item 1 ('q1'): the field 'answer' is missing (give the gold choice text or letter, or answer_index)",
        ),
        (
            lambda it: it.update(choices="dog or cat"),
            "item 1 ('q1'): 'choices' must be a list of strings, got 'dog or cat'",
        ),
        (lambda it: it.update(choices=["dog", None]), "item 1 ('q1'): 'choices' must be a list of strings"),
        (lambda it: it.update(choices=["dog"]), "item 1 ('q1'): an MCQ needs at least 2 choices, got 1"),
        (lambda it: it.update(answer="horse"), "item 1 ('q1'): no usable gold answer"),
        (lambda it: it.update(id="q0"), "item 1 ('q0'): the id is also item 0's; ids must be distinct"),
    ],
)
def test_accuracy_refuses_bad_items_naming_item_and_field(change, message):
    items = [_mcq(0), _mcq(1), _mcq(2)]
    change(items[1])
    with pytest.raises(ValueError, match=re.escape(message)):
        score_mcq_accuracy(items, ["A", "A", "A"])


def test_repeated_ids_are_no_longer_counted_twice():
    """Before: two records of q0 (one right, one wrong) and q1 wrong gave 1/3 over n=3."""
    with pytest.raises(ValueError, match=re.escape("item 2 ('q0'): the id is also item 0's")):
        score_mcq_accuracy([_mcq(0), _mcq(1), _mcq(0)], ["A", "B", "B"])
    assert score_mcq_accuracy([_mcq(0), _mcq(1)], ["A", "B"])["accuracy"] == 0.5


def test_chains_refuse_bad_links_and_repeated_ids_across_chains():
    items = _chain("c1") + _chain("c2")
    items[4]["id"] = "c1-1"
    with pytest.raises(ValueError, match=re.escape("item 4 ('c1-1'): the id is also item 0's")):
        score_anchor_chain(items, ["A"] * 6)
    items = _chain("c1")
    del items[2]["choices"]
    with pytest.raises(ValueError, match=re.escape("item 2 ('c1-3'): the field 'choices' is missing")):
        score_anchor_chain(items, ["A"] * 3)


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(ROOT / "metrics" / "anchor_chain"))


def test_the_metric_refuses_repeated_item_ids(metric):
    with pytest.raises(ValueError, match=re.escape("item 1 ('a'): the id is also item 0's; ids must be distinct")):
        metric.compute(
            predictions=["A", "A"], references=["A", "A"], choices=[CH, CH], task="accuracy", item_id=["a", "a"]
        )


def test_a_none_first_reply_is_unparsed_through_evaluate(metric):
    out = metric.compute(predictions=[None, "A"], references=["A", "A"], choices=[CH, CH], task="accuracy")
    assert out["accuracy"] == 0.5 and out["unparsed"] == 1 and out["n"] == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ('["A", "B"]', "JSON line 1: expected an object (an item with its reply), got a list"),
        (json.dumps({"id": "q0", "answer": "A", "reply": "A"}), "item 0 ('q0'): the field 'choices' is missing"),
    ],
)
def test_the_space_widget_names_the_line_or_item(text, message):
    import gradio as gr

    with pytest.raises(gr.Error, match=re.escape(message)):
        load_app("anchor_chain").score(text, "accuracy", "exact")
