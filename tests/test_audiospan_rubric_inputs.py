"""Bad inputs to the AudioSpan Rubric scorer are refused at the boundary, before any judge call, with one
ValueError naming the item (id and position) and the field: non-finite or reversed time ranges, NaN
tolerances, NaN MCQ outcomes, missing fields, repeated ids; and the evaluate module and Space widget pass
those errors on (and a None first response through evaluate like any other)."""

import copy
import json
import math
import re
from pathlib import Path

import evaluate
import numpy as np
import pytest
from fixtures.shell_helpers import NeverCalled, load_app

from audioreason.scorers.audiospan_rubric.scorer import AudioSpanRubricScorer, check_items, score_verdicts
from audioreason.text.timestamps import temporal_match

ROOT = Path(__file__).resolve().parents[1]
RUBRIC = [
    {"text": "Names the speaker", "importance": "essential", "time_range": None, "localization": False},
    {"text": "Says when the bell rings", "importance": "essential", "time_range": [30.0, 40.0], "localization": True},
]
ITEMS = [
    {
        "id": f"oeq-{n}",
        "question": f"Question {n}?",
        "rubric": copy.deepcopy(RUBRIC),
        "duration_tier": "S",
        "pair_id": f"pair-{n}",
    }
    for n in range(2)
]
REPLY = {
    "criteria": [
        {"index": 0, "semantic": "correct", "temporal": "none"},
        {"index": 1, "semantic": "none", "temporal": "correct"},
    ]
}
RESPONSES = ["The teacher speaks; the bell rings at 0:35.", "A student speaks; the bell at 0:50."]


def _items(change):
    items = copy.deepcopy(ITEMS)
    change(items[1])
    return items


BAD_ITEMS = [
    (
        lambda it: it["rubric"][1].update(time_range=[30, math.inf]),
        "item 1 ('oeq-1'): rubric criterion 1: 'time_range' must be [start, end] in seconds, finite, with "
        "0 <= start <= end; got [30, inf]",
    ),
    (lambda it: it["rubric"][1].update(time_range=[40.0, 30.0]), "rubric criterion 1: 'time_range' must be"),
    (lambda it: it["rubric"][1].update(time_range=[float("nan"), 30.0]), "rubric criterion 1: 'time_range'"),
    (lambda it: it["rubric"][1].update(time_range=[-5, 3]), "rubric criterion 1: 'time_range'"),
    (lambda it: it["rubric"][1].update(time_range=[30]), "rubric criterion 1: 'time_range'"),
    (lambda it: it["rubric"][1].update(time_range=["0:30", "0:40"]), "rubric criterion 1: 'time_range'"),
    (lambda it: it.pop("rubric"), "item 1 ('oeq-1'): the field 'rubric' is missing"),
    (lambda it: it.update(rubric=[]), "item 1 ('oeq-1'): 'rubric' must be a non-empty list of criteria"),
    (lambda it: it.update(rubric="be precise"), "'rubric' must be a non-empty list of criteria"),
    (
        lambda it: it["rubric"][0].pop("importance"),
        "rubric criterion 0: 'importance' must be 'essential' or 'supporting', got None",
    ),
    (
        lambda it: it["rubric"][0].update(localization="false"),
        "rubric criterion 0: 'localization' must be true or false, got 'false'",
    ),
    (lambda it: it["rubric"].__setitem__(0, "Names the speaker"), "rubric criterion 0 must be an object"),
    (lambda it: it.pop("id"), "item 1: the field 'id' is missing"),
    (lambda it: it.update(id="oeq-0"), "item 1 ('oeq-0'): the id is also item 0's; ids must be distinct"),
]


@pytest.mark.parametrize("change, message", BAD_ITEMS)
def test_precomputed_verdicts_refuse_bad_items_naming_item_and_field(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        score_verdicts(_items(change), [[REPLY], [REPLY]], RESPONSES)


@pytest.mark.parametrize(
    "change, message",
    BAD_ITEMS
    + [
        (lambda it: it.pop("question"), "item 1 ('oeq-1'): the field 'question' is missing"),
        (lambda it: it["rubric"][0].update(text=""), "rubric criterion 0: 'text' must be a non-empty string"),
    ],
)
def test_the_judged_path_refuses_them_before_any_call(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        AudioSpanRubricScorer(NeverCalled()).score(_items(change), RESPONSES)


def test_good_items_pass_and_a_criterion_may_have_no_time_range():
    check_items(ITEMS, for_judge=True)
    assert score_verdicts(ITEMS, [[REPLY], [REPLY]], RESPONSES)["rubric"] == 1.0


@pytest.mark.parametrize("option", ["tolerance_s", "span_tolerance_s"])
@pytest.mark.parametrize("value", [float("nan"), math.inf, -1.0, "5", True])
def test_tolerances_must_be_finite_seconds_at_least_zero(option, value):
    message = f"{option} must be a finite number of seconds >= 0, got {value!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        score_verdicts(ITEMS, [[REPLY], [REPLY]], RESPONSES, **{option: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        AudioSpanRubricScorer(NeverCalled(), **{option: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        temporal_match(35, [30, 40], **{option: value})


@pytest.mark.parametrize(
    "flags, message",
    [
        ([True, float("nan")], "mcq_correct[1] (item 1 ('oeq-1')): expected true, false or null, got nan"),
        ([True, "yes"], "mcq_correct[1] (item 1 ('oeq-1')): expected true, false or null, got 'yes'"),
        ([2, True], "mcq_correct[0] (item 0 ('oeq-0')): expected true, false or null, got 2"),
        ({"pair-0": True, "pair-1": float("nan")}, "mcq_correct['pair-1'] (item 1 ('oeq-1')): expected true, false"),
        ([True], "2 items but 1 MCQ outcomes"),
    ],
)
def test_mcq_outcomes_must_be_booleans(flags, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        score_verdicts(ITEMS, [[REPLY], [REPLY]], RESPONSES, mcq_correct=flags)


def test_boolean_like_mcq_outcomes_are_read_as_written():
    """numpy booleans and 0/1 are outcomes; None is "no MCQ twin" and counted as such."""
    d3 = score_verdicts(ITEMS, [[REPLY], [REPLY]], RESPONSES, mcq_correct=[np.bool_(True), 0])["mcq_oeq"]
    assert d3["cells"]["both_pass"] == 1 and d3["cells"]["oeq_only"] == 1 and d3["n_no_mcq"] == 0
    d3 = score_verdicts(ITEMS, [[REPLY], [REPLY]], RESPONSES, mcq_correct=[None, False])["mcq_oeq"]
    assert d3["n"] == 1 and d3["n_no_mcq"] == 1


def test_responses_must_be_text_or_none():
    with pytest.raises(
        ValueError, match=re.escape("response 1 (item 1 ('oeq-1')): expected a string or None, got float nan")
    ):
        score_verdicts(ITEMS, [[REPLY], [REPLY]], [RESPONSES[0], float("nan")])


def _metric():
    return evaluate.load(str(ROOT / "metrics" / "audiospan_rubric"))


def test_a_none_first_response_reaches_the_scorer_through_evaluate():
    out = _metric().compute(
        predictions=[None, RESPONSES[1]],
        references=[it["id"] for it in ITEMS],
        items=ITEMS,
        verdicts=[json.dumps([REPLY]), json.dumps([REPLY])],
    )
    assert out["n"] == 2 and out["rubric"] == 1.0


def test_the_metric_passes_the_boundary_errors_on():
    metric = _metric()
    with pytest.raises(ValueError, match=re.escape("rubric criterion 1: 'time_range' must be")):
        metric.compute(
            predictions=RESPONSES,
            references=[it["id"] for it in ITEMS],
            judge=NeverCalled(),
            items=_items(lambda it: it["rubric"][1].update(time_range=[30, math.inf])),
        )
    with pytest.raises(ValueError, match="tolerance_s must be a finite number"):
        metric.compute(
            predictions=RESPONSES,
            references=[it["id"] for it in ITEMS],
            items=ITEMS,
            judge=NeverCalled(),
            tolerance_s=float("nan"),
        )


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("concurrency", 0, "concurrency must be an integer of at least 1, got 0"),
        ("timeout_s", 0, "timeout_s must be a positive number of seconds, got 0"),
        ("timeout_s", float("nan"), "timeout_s must be a positive number of seconds, got nan"),
        ("base_url", "localhost:8000/v1", "base_url must be an http(s) URL"),
    ],
)
def test_the_metric_surfaces_judge_client_settings_errors(option, value, message, monkeypatch):
    monkeypatch.setenv("AUDIOSPAN_TEST_KEY", "sk-test")
    with pytest.raises(ValueError, match=re.escape(message)):
        _metric().compute(
            predictions=RESPONSES,
            references=[it["id"] for it in ITEMS],
            items=ITEMS,
            judge_model="gpt-4o",
            api_key_env="AUDIOSPAN_TEST_KEY",
            **{option: value},
        )


@pytest.mark.parametrize(
    "row, message",
    [
        ({"response": "x", "judge_reply": REPLY}, "JSON line 1: the field 'item' is missing"),
        ({"item": ITEMS[0], "response": "x"}, "JSON line 1: the field 'judge_reply' is missing"),
        (
            {
                "item": _items(lambda it: it["rubric"][1].update(time_range=[40, 30]))[1],
                "response": "x",
                "judge_reply": REPLY,
            },
            "item 0 ('oeq-1'): rubric criterion 1: 'time_range' must be",
        ),
    ],
)
def test_the_space_widget_names_the_line_and_field(row, message):
    import gradio as gr

    with pytest.raises(gr.Error, match=re.escape(message)):
        load_app("audiospan_rubric").score(json.dumps(row))
