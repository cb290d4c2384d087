"""The anchor_chain evaluate module, loaded from its folder."""

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE = str(ROOT / "metrics" / "anchor_chain")
CH = ["dog barking", "cat meowing", "bird song", "cow mooing"]


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(MODULE)


def test_chain_task(metric):
    r = metric.compute(
        predictions=["A", "B", "A", "B", "B", None],
        references=["dog barking", "B", "C"] * 2,
        choices=[CH] * 6,
        chain_id=["c1"] * 3 + ["c2"] * 3,
        link_position=[1, 2, 3] * 2,
        operation=["addition"] * 3 + ["deletion"] * 3,
        duration_tier=["S"] * 6,
        language=["en"] * 3 + ["zh"] * 3,
        return_items=True,
    )
    # c1: 1,1,0 -> 2/3; c2: 0,1,unparsed -> 0
    assert r["chain"] == pytest.approx(1 / 3) and r["random_chain"] == pytest.approx(0.109375)
    assert (r["P"], r["U"], r["R"]) == (0.5, 1.0, 0.0)
    assert r["unparsed"] == 1 and r["unparsed_by_link"]["R"] == 1
    assert r["by_operation"]["addition"]["chain"] == pytest.approx(2 / 3)
    assert r["grounding"]["U|missed"] == 1.0 and len(r["chains"]) == 2


def test_numpy_link_positions_and_tolerant(metric):
    r = metric.compute(
        predictions=["(A)", "The answer is B", "C"],
        references=["A", "B", "C"],
        choices=[CH] * 3,
        chain_id=["c1"] * 3,
        link_position=np.array([1, 2, 3]),
        parse="tolerant",
    )
    assert r["chain"] == 1.0 and r["unparsed"] == 0


def test_accuracy_task(metric):
    r = metric.compute(
        predictions=["A", "b", "C"],
        references=["A", "B", "bird song"],
        choices=[CH] * 3,
        task="accuracy",
        cognitive_level=["P", "U", "R"],
        language=["en", "en", "zh"],
    )
    assert r["accuracy"] == pytest.approx(2 / 3) and r["unparsed"] == 1 and r["random_accuracy"] == 0.25
    assert r["by_cognitive_level"]["U"]["accuracy"] == 0.0 and r["by_language"]["zh"]["accuracy"] == 1.0


def test_malformed_chain_error_names_chain(metric):
    with pytest.raises(ValueError, match="'c7'.*out of order"):
        metric.compute(
            predictions=["A"] * 3, references=["A"] * 3, choices=[CH] * 3, chain_id=["c7"] * 3, link_position=[2, 1, 3]
        )


def test_bad_task_and_argument(metric):
    with pytest.raises(ValueError, match="task"):
        metric.compute(predictions=["A"], references=["A"], choices=[CH], task="rubric")
    with pytest.raises(ValueError, match="chain_id"):
        metric.compute(predictions=["A"], references=["A"], choices=[CH], task="accuracy", chain_id=["c"])


@pytest.mark.parametrize("task", ["chain", "accuracy"])
def test_empty_inputs_score_nothing(metric, task):
    # choices=[] for no rows is given, not missing: no score, n = 0 (it used to say "choices is missing").
    r = metric.compute(predictions=[], references=[], choices=[], task=task)
    assert r["n"] == 0 and r["chain" if task == "chain" else "accuracy"] is None
