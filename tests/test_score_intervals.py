"""The MMAR-Rubrics breakdown rows (modality, category, sub-category) carry their own 95% intervals, over the
items of each row, as the headline does: computed by hand on four items."""

import pytest

from audioreason.analysis import uncertainty as U
from audioreason.scorers.mmar_rubrics.declaration import mmar_uncertainty

ITEMS = {
    "a": {"modality": "sound", "category": "Signal"},
    "b": {"modality": "sound", "category": "Signal"},
    "c": {"modality": "music", "category": "Signal"},
    "d": {"modality": "music", "category": "Semantic"},
}
# a, b judged (1, 1/2); c answered right but its judging failed (counted at 0); d answered wrong (gated: 0)
DETAILS = [
    {"id": "a", "score": 1.0, "correct": True},
    {"id": "b", "score": 0.5, "correct": True},
    {"id": "c", "score": None, "correct": True},
    {"id": "d", "score": 0.0, "correct": False},
]


def result():
    return {
        "rubrics": 0.375,
        "accuracy": 0.75,
        "modality": {"music": {"rubrics": 0.0, "accuracy": 0.5}, "sound": {"rubrics": 0.75, "accuracy": 1.0}},
        "category": {"Semantic": {"rubrics": 0.0, "accuracy": 0.0}, "Signal": {"rubrics": 0.5, "accuracy": 1.0}},
        "sub-category": {},
    }


def test_each_group_row_has_the_interval_of_its_own_items():
    r = result()
    out = mmar_uncertainty(r, DETAILS, items=ITEMS)
    # the headline: a bootstrap of (1, 1/2, 0, 0); the gate's 3 of 4 by Wilson
    assert out["uncertainty"]["accuracy"]["ci95"] == pytest.approx(U.wilson(3, 4)["ci95"])
    assert out["uncertainty"]["rubrics"]["n"] == 4 and out["uncertainty"]["rubrics"]["method"] == U.PERCENTILE
    sound = r["modality"]["sound"]["uncertainty"]
    # two items, 1 and 1/2: a resample's mean is 1/2, 3/4 or 1 (each end with probability 1/4), so the 2.5th and
    # 97.5th percentiles are the ends
    assert sound["rubrics"]["ci95"] == [0.5, 1.0] and sound["rubrics"]["n"] == 2
    assert sound["accuracy"]["ci95"] == pytest.approx(U.wilson(2, 2)["ci95"])
    music = r["modality"]["music"]["uncertainty"]
    assert music["rubrics"]["ci95"] is None and "same value" in music["rubrics"]["unavailable"]  # (0, 0)
    assert music["accuracy"]["ci95"] == pytest.approx(U.wilson(1, 2)["ci95"])
    assert r["category"]["Signal"]["uncertainty"]["rubrics"]["n"] == 3
    assert r["category"]["Semantic"]["uncertainty"]["accuracy"]["ci95"] == pytest.approx(U.wilson(0, 1)["ci95"])


def test_without_the_items_only_the_headline_has_intervals():
    r = result()
    mmar_uncertainty(r, DETAILS)
    assert "uncertainty" not in r["modality"]["sound"]
