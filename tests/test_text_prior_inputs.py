"""Bad inputs to text_prior_decomposition are refused at the boundary, naming the row and the field; a None
(errored) first prediction goes through evaluate whatever the column's kind ("All That Glitters Is Not
Audio", arXiv:2604.24401, §2: one prediction per model, item and condition)."""

import math
import re
from pathlib import Path

import evaluate
import pytest

from audioreason.scorers.text_prior.scorer import score_text_prior

ROOT = Path(__file__).resolve().parents[1]
CHOICES = ["Dog barking", "Rain"]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(ROOT / "metrics" / "text_prior_decomposition"))


def test_a_none_first_raw_output_is_an_errored_prediction_through_evaluate(metric):
    got = metric.compute(
        predictions=[None, "(A) Dog barking"],
        references=["Dog barking"] * 2,
        choices=[CHOICES] * 2,
        model=["m"] * 2,
        item_id=["q1", "q2"],
        condition=["full"] * 2,
    )
    full = got["accuracy"]["per_model"]["m"]["full"]
    assert (full["accuracy"], full["errors"], full["correct"]) == (0.5, 1, 1)
    assert full["error_reasons"] == {"no_prediction": 1}


@pytest.mark.parametrize("item_id", [float("nan"), math.inf, -math.inf])
def test_a_non_finite_item_id_is_refused(item_id):
    """A NaN id (pandas' missing value) never equals itself: each row would become an item of its own."""
    records = [
        {"model": "m", "item_id": "q1", "condition": "full", "prediction": True},
        {"model": "m", "item_id": item_id, "condition": "full", "prediction": True},
    ]
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"row 1 (model 'm'): item_id must be a string or number (not NaN or infinite), got {item_id!r}"
        ),
    ):
        score_text_prior(records)


def test_the_metric_refuses_a_nan_item_id(metric):
    # item_id is a declared text feature: refused as the row is added, before any Arrow typing
    with pytest.raises(ValueError, match=re.escape("item_id[0] must be a string (or an integer id), got nan")):
        metric.compute(predictions=[True], model=["m"], item_id=[float("nan")], condition=["full"])
