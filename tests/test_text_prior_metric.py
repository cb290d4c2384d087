"""The text_prior_decomposition evaluate module and its Space widget, through their real entry points."""

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audioreason.scorers.text_prior.examples import demo_records
from audioreason.scorers.text_prior.scorer import score_text_prior

ROOT = Path(__file__).resolve().parents[1]
MODULE = str(ROOT / "metrics" / "text_prior_decomposition")
CHOICES = ["Dog barking", "Rain", "Piano", "Wind"]


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(MODULE)


def _columns(records):
    keys = {
        "model": "model",
        "item_id": "item_id",
        "condition": "condition",
        "choices": "choices",
        "category": "category",
    }
    return {
        "predictions": [r["prediction"] for r in records],
        **{arg: [r.get(key) for r in records] for arg, key in keys.items()},
    }


def test_correctness_columns_match_the_core(metric):
    records = [r for r in demo_records() if not isinstance(r["prediction"], str)]
    got = metric.compute(**_columns(records), errored_fragments="sufficient", return_items=True)
    want = score_text_prior(
        [{k: v for k, v in r.items() if k != "reference"} for r in records],
        errored_fragments="sufficient",
        return_items=True,
    )
    assert got == want


def test_raw_outputs_match_the_core(metric):
    records = demo_records()
    raw = [
        dict(r, prediction="(A) Dog barking" if r["prediction"] else "Rain, I think")
        if isinstance(r["prediction"], bool)
        else r
        for r in records
    ]
    got = metric.compute(references=[r["reference"] for r in raw], **_columns(raw))
    assert got == score_text_prior(raw)
    # model-a Full: 5 "(A) ...", the demo's "[ANSWER] (A) Dog barking" and "The answer is B.", 1 "Rain, I think"
    assert got["accuracy"]["per_model"]["model-a"]["full"]["methods"] == {"letter_regex": 7, "content": 1}


def test_leading_errored_prediction_keeps_the_column_boolean(metric):
    # evaluate would type the column from its first row (None -> string) and turn True into "True"
    got = metric.compute(
        predictions=[None, True, 1, 0],
        model=["m"] * 4,
        item_id=["q1", "q2", "q1", "q2"],
        condition=["full", "full", "none", "none"],
    )
    full = got["accuracy"]["per_model"]["m"]["full"]
    assert (full["accuracy"], full["errors"], full["methods"]) == (0.5, 1, {"no_prediction": 1, "given": 1})


def test_add_batch_then_compute(metric):
    # every per-item input is a feature: add_batch streams the row columns and compute() scores what was added
    metric.add_batch(predictions=[True, False], model=["m"] * 2, item_id=["q"] * 2, condition=["full", "none"])
    metric.add(prediction=True, model="m", item_id="q", condition="frag:2:0")
    metric.add_batch(predictions=[None], model=["m"], item_id=["q"], condition=["frag:2:1"])
    got = metric.compute()
    assert got["decomposition"]["per_model"]["m"]["counts"]["FS"] == 1
    assert got["counts"]["errored_predictions"]["m"] == {"full": 0, "none": 0, "frag:2:0": 0, "frag:2:1": 1}
    metric.add_batch(predictions=[True], model=["m"], item_id=["q"], condition=["full"])
    with pytest.raises(ValueError, match="earlier batches held correctness"):
        metric.add_batch(predictions=["(A) Dog barking"], references=["Dog barking"])
    with pytest.raises(ValueError, match="chance: option.* of compute.*give them to text_prior_decomposition.compute"):
        metric.add_batch(predictions=[True], chance=0.25)
    metric.compute()  # drain the stored batch


def test_issue_options_reach_the_core(metric):
    # q1 is audio-needed for m1 (fragment correct: FS) and TS for m2 (no audio-needed item); TB on two
    # two-choice items: per-item chance 0.5, or the flat 0.25 given
    rows = [
        (m, item, condition, value)
        for m, item, values in (("m1", "q1", (1, 0, 1, 0)), ("m2", "q1", (1, 1, 0, 0)))
        for condition, value in zip(("full", "none", "frag:2:0", "frag:2:1"), values)
    ]
    rows += [(m, f"t{i}", "tb", i == 0) for m in ("m1", "m2") for i in range(2)]
    columns = {
        "predictions": [bool(r[3]) for r in rows],
        "model": [r[0] for r in rows],
        "item_id": [r[1] for r in rows],
        "condition": [r[2] for r in rows],
        "choices": [["x", "y"] if r[2] == "tb" else None for r in rows],
    }
    got = metric.compute(**columns, chance=0.25, zero_an_models="exclude")
    assert got["text_prior"]["tb_minus_chance_mean"] == pytest.approx(0.25)  # TB 0.5 - 0.25
    assert got["decomposition"]["XS_over_AN"]["models"] == ["m1"]
    assert got["options"]["zero_an_models"] == "exclude" and got["options"]["chance"] == 0.25
    default = metric.compute(**columns)
    assert default["text_prior"]["tb_minus_chance_mean"] == pytest.approx(0.0)  # TB 0.5 - 0.5
    assert default["decomposition"]["XS_over_AN"]["models"] == ["m1", "m2"]


def test_xs_over_an_mean_leaves_out_a_model_without_an_item_in_full_and_none(metric):
    # the issue's table: m0 q1 Full right, None wrong, both fragments wrong (XS/AN 1); m1 has Full and
    # fragments but no None row, so no decomposition: the mean is 1.0 over [m0], not 0.5 over [m0, m1]
    rows = [
        ("m0", "full", True),
        ("m0", "none", False),
        ("m0", "frag:2:0", False),
        ("m0", "frag:2:1", False),
        ("m1", "full", True),
        ("m1", "frag:2:0", True),
        ("m1", "frag:2:1", False),
    ]
    got = metric.compute(
        predictions=[r[2] for r in rows],
        model=[r[0] for r in rows],
        item_id=["q1"] * len(rows),
        condition=[r[1] for r in rows],
    )["decomposition"]["XS_over_AN"]
    assert (got["mean"], got["n"], got["models"]) == (1.0, 1, ["m0"])
    assert got["excluded"] == {"m1": "no item with both a Full and a None prediction"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=[True, "(A)"]), "prediction 1 is a raw value but prediction 0 is a correctness value"),
        (dict(predictions=[True, 3]), "prediction 1: .*got int 3"),
        (dict(predictions=[True], condition=["frag:2:5"]), r"row 0 \(model 'm', item 'q0'\): .*k=5 out of range"),
        (dict(predictions=[True, True], item_id=["q", "q"], condition=["tb", "tb"]), "row 1 .* duplicates row 0"),
        (dict(predictions=[True, True], model=["m"]), "'model' has 1 values but there are 2 rows"),
        (dict(predictions=[True], model=None), "'model' is required"),
        (dict(predictions=["(A) Dog"], references=["Dog"]), "needs the item's choices"),
        (dict(predictions=[True], errored_fragments="insufficient"), "errored_fragments must be one of"),
        (dict(predictions=[True], zero_an_models="skip"), "zero_an_models must be one of"),
    ],
)
def test_bad_input(metric, kwargs, message):
    n = len(kwargs["predictions"])
    full = {"model": ["m"] * n, "item_id": [f"q{i}" for i in range(n)], "condition": ["full"] * n, **kwargs}
    with pytest.raises(ValueError, match=message):
        metric.compute(**full)


def test_space_widget_through_gradio_client(tmp_path):
    pytest.importorskip("gradio")
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client, handle_file

    spec = importlib.util.spec_from_file_location("text_prior_app", Path(MODULE) / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        text_prior, retention, decomposition, by_category, full = client.predict(
            app.EXAMPLE, "separate", 0, "as_zero", api_name="/score"
        )
        want = score_text_prior(demo_records())
        assert text_prior["data"][0][:4] == ["model-a", 0.75, 0.375, 0.5]
        assert [row[0] for row in retention["data"]] == [2, 3, 4, 5]
        assert app.MODES == ["separate", "sufficient"]
        # model, items, TS FS XS AH UN AN, XS unverified: model-b's q4 (errored fragment) is XS, unverified
        assert [row[:9] for row in decomposition["data"][:3]] == [
            ["model-a", 8, 2, 3, 1, 1, 1, 0, 0],
            ["model-b", 7, 1, 2, 2, 1, 1, 0, 1],
            ["model-c", 8, 2, 0, 0, 1, 2, 3, 0],
        ]
        assert by_category["data"][0][0] == want["by_category"][0]["category"]
        assert full["text_prior"]["R_TP"] == round(want["text_prior"]["R_TP"], 4)  # 58/117, 4 decimals for reading
        decomposition = client.predict(app.EXAMPLE, "sufficient", 0, "as_zero", api_name="/score")[2]
        assert decomposition["data"][1][:9] == ["model-b", 7, 1, 3, 1, 1, 1, 0, 0]  # the public code: q4 is FS
        assert app.ZERO_AN == ["as_zero", "exclude"]
        # m1: q FS (XS/AN 0); m2: q TS, r XS (1); m3: q TS, no audio-needed item; TB on two-choice items
        rows = [
            ("m1", "q", (1, 0, 1, 0)),
            ("m2", "q", (1, 1, 0, 0)),
            ("m2", "r", (1, 0, 0, 0)),
            ("m3", "q", (1, 1, 0, 0)),
        ]
        lines = [
            {"model": m, "item_id": i, "condition": c, "prediction": bool(v)}
            for m, i, values in rows
            for c, v in zip(("full", "none", "frag:2:0", "frag:2:1"), values)
        ]
        lines += [{"model": "m1", "item_id": "t", "condition": "tb", "prediction": True, "choices": ["x", "y"]}]
        text = "\n".join(json.dumps(line) for line in lines)
        for chance, zero_an, tb_minus_chance, xs_over_an in ((0, "as_zero", 0.5, 0.3333), (0.25, "exclude", 0.75, 0.5)):
            text_prior, _, decomposition, _, _ = client.predict(text, "separate", chance, zero_an, api_name="/score")
            assert text_prior["data"][-1][6] == tb_minus_chance  # TB 1 - chance (0.5 or 0.25)
            assert decomposition["data"][-1][-2] == xs_over_an  # (0 + 1 + 0) / 3 or (0 + 1) / 2
        with pytest.raises(Exception, match="line 1 is not valid JSON"):
            client.predict("not json", "separate", 0, api_name="/score")

        clip = tmp_path / "clip.wav"
        sf.write(str(clip), np.linspace(-0.5, 0.5, 1601, dtype=np.float32), 16000, subtype="FLOAT")
        listing, files = client.predict(handle_file(str(clip)), ["2", "5"], 16000, api_name="/fragment")
        assert [row[0] for row in listing["data"]] == ["frag:2:0", "frag:2:1"] + [f"frag:5:{k}" for k in range(5)]
        assert [row[1:3] for row in listing["data"]][:2] == [[0, 800], [800, 1601]]
        assert len(files) == 7
    finally:
        demo.close()
