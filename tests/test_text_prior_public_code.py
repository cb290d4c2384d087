"""text_prior_decomposition against the paper's published numbers and the conventions of its public
analysis code (leonardofhy/all-that-glitters-is-not-audio): the TB chance level, errored fragments under
errored_fragments="sufficient", and the XS/AN model mean."""

import pytest

from audioreason.scorers.text_prior import formulas as tp
from audioreason.scorers.text_prior.examples import demo_records
from audioreason.scorers.text_prior.scorer import score_text_prior
from audioreason.scorers.text_prior.tables import summary_tables

T, F, E = True, False, None  # correct, wrong, errored run


def _choices(n):
    return [f"option {chr(65 + i)}" for i in range(n)]


# ---------------------------------------------------------------------------------------------
# TB - chance: chance= wins over the choices
# ---------------------------------------------------------------------------------------------


def test_explicit_chance_wins_over_the_choices():
    # item choices 2, 4, 4, 4: per-item chance (1/2 + 3 * 1/4) / 4 = 0.3125
    # TB: m1 answers q0 and q1 correctly (0.5), m2 only q0 (0.25); model mean TB 0.375
    records = [
        {
            "model": m,
            "item_id": f"q{i}",
            "condition": "tb",
            "prediction": i < k,
            "choices": _choices(2 if i == 0 else 4),
        }
        for m, k in (("m1", 2), ("m2", 1))
        for i in range(4)
    ]
    default = score_text_prior(records)["text_prior"]
    assert default["per_model"]["m1"]["chance"] == pytest.approx(0.3125)
    assert default["per_model"]["m1"]["chance_source"] == "choices"
    assert default["tb_minus_chance_mean"] == pytest.approx(0.375 - 0.3125)
    flat = score_text_prior(records, chance=0.25)["text_prior"]
    assert [flat["per_model"][m]["chance"] for m in ("m1", "m2")] == [0.25, 0.25]
    assert flat["per_model"]["m1"]["chance_source"] == "option"
    assert flat["per_model"]["m1"]["tb_minus_chance"] == pytest.approx(0.25)
    assert flat["per_model"]["m2"]["tb_minus_chance"] == pytest.approx(0.0)
    assert flat["tb_minus_chance_mean"] == pytest.approx(0.125) and flat["chance_mean"] == 0.25
    assert flat["tb_mean"] == default["tb_mean"] == pytest.approx(0.375)  # chance moves TB - chance only
    assert score_text_prior(records, chance=0.25)["options"]["chance"] == 0.25


# MMAR's 1,000 items by number of choices (the benchmark's metadata: 815 x 4, 171 x 2, 10 x 3, 3 x 5,
# 1 x 6): per-item chance = (815/4 + 171/2 + 10/3 + 3/5 + 1/6) / 1000 = 293.35 / 1000 = 0.29335.
MMAR_CHOICE_COUNTS = [4] * 815 + [2] * 171 + [3] * 10 + [5] * 3 + [6]
# TB correct answers of the paper's eight text backbones on MMAR (Table 3a, TB column: 35.3, 26.2, 28.3,
# 22.5, 35.3, 37.6, 31.6, 26.3 % of 1,000 items); sum 2431, mean 30.3875 %.
MMAR_TB_CORRECT = {
    "Audio-Flamingo-3": 353,
    "DeSTA-2.5": 262,
    "Phi-4-MM": 283,
    "Qwen2-Audio": 225,
    "Qwen2.5-Omni": 353,
    "Qwen3-Omni (I)": 376,
    "Qwen3-Omni (T)": 316,
    "Voxtral-Mini": 263,
}


@pytest.fixture(scope="module")
def mmar_tb_records():
    """Raw TB outputs: each model answers its first k items "The answer is A." (the gold, choice A) and
    the others "The answer is B." (wrong), scored by the hybrid extractor."""
    records = []
    for model, k in MMAR_TB_CORRECT.items():
        for i, n in enumerate(MMAR_CHOICE_COUNTS):
            choices = _choices(n)
            records.append(
                {
                    "model": model,
                    "item_id": f"mmar-{i}",
                    "condition": "tb",
                    "choices": choices,
                    "reference": choices[0],
                    "prediction": f"The answer is {'A' if i < k else 'B'}.",
                }
            )
    return records


def test_mmar_tb_minus_chance_reproduces_the_paper_from_raw_outputs(mmar_tb_records):
    """§4.1: "TB surpasses chance by ... 5.4% ... on MMAR": a flat 25 % chance, not the per-item one."""
    flat = score_text_prior(mmar_tb_records, chance=0.25)["text_prior"]
    assert flat["tb_mean"] == pytest.approx(0.303875)
    assert flat["tb_minus_chance_mean"] == pytest.approx(0.053875)  # 30.3875 - 25
    assert round(100 * flat["tb_minus_chance_mean"], 1) == 5.4  # the published number
    assert len(flat["tb_minus_chance_models"]) == 8
    assert {e["chance_source"] for e in flat["per_model"].values()} == {"option"}
    # the default (1 / number of choices per item) is 29.335 %: TB - chance = 1.0525 points, not 5.4
    per_item = score_text_prior(mmar_tb_records)["text_prior"]
    assert per_item["chance_mean"] == pytest.approx(0.29335)
    assert per_item["tb_minus_chance_mean"] == pytest.approx(0.010525)
    assert summary_tables(score_text_prior(mmar_tb_records, chance=0.25))["text_prior"][1][-1][5:7] == [0.25, 0.0539]


# ---------------------------------------------------------------------------------------------
# errored_fragments="sufficient": only a run that errored counts as an error
# ---------------------------------------------------------------------------------------------

CHOICES = ["Dog barking", "Rain", "Piano", "Wind"]


def _raw(item, condition, output):
    return {
        "model": "m",
        "item_id": item,
        "condition": condition,
        "prediction": output,
        "reference": "Dog barking",
        "choices": CHOICES,
        "question": "What is it?",
    }


def _audio_needed(item, fragment_0, fragment_1):
    return [
        _raw(item, "full", "(A) Dog barking"),
        _raw(item, "none", "B"),
        _raw(item, "frag:2:0", fragment_0),
        _raw(item, "frag:2:1", fragment_1),
    ]


def _judge(text, question, choices):
    if "timeout" in text:
        raise TimeoutError("judge timed out")
    return 7  # out of range


# Audio-needed items, fragment 1 always wrong ("Rain"); fragment 0:
#   r: the run errored (None)            u: unreadable (an empty output: nothing to extract or to judge)
#   j: the judge raised (judge_error)    v: the judge answered out of range (judge_invalid)
#   w: wrong ("Rain")                    c: correct ("(A) Dog barking")
FRAGMENT_0 = {"r": None, "u": "", "j": "no idea, timeout", "v": "hmm, unsure", "w": "Rain", "c": "(A) Dog barking"}


@pytest.fixture(scope="module")
def fragment_runs():
    records = [row for item, first in FRAGMENT_0.items() for row in _audio_needed(item, first, "Rain")]
    return {
        mode: score_text_prior(records, errored_fragments=mode, judge=_judge, return_items=True)
        for mode in tp.ERRORED_FRAGMENT_MODES
    }


def test_sufficient_counts_only_errored_runs(fragment_runs):
    items = {r["item_id"]: (r["label"], r["unverified_reason"]) for r in fragment_runs["sufficient"]["items"]}
    # the public code: an errored run makes the item FS; an unreadable or unjudged answer is wrong -> XS
    assert items == {
        "r": ("FS", None),
        "u": ("XS", None),
        "j": ("XS", None),
        "v": ("XS", None),
        "w": ("XS", None),
        "c": ("FS", None),
    }
    entry = fragment_runs["sufficient"]["decomposition"]["per_model"]["m"]
    assert (entry["counts"]["FS"], entry["counts"]["XS"], entry["XS_unverified"]) == (2, 4, 0)
    assert entry["XS_over_AN"] == pytest.approx(4 / 6)


def test_separate_still_flags_every_unscored_fragment(fragment_runs):
    items = {r["item_id"]: (r["label"], r["unverified_reason"]) for r in fragment_runs["separate"]["items"]}
    assert items == {
        "r": ("XS", "errored"),
        "u": ("XS", "errored"),
        "j": ("XS", "errored"),
        "v": ("XS", "errored"),
        "w": ("XS", None),
        "c": ("FS", None),
    }
    entry = fragment_runs["separate"]["decomposition"]["per_model"]["m"]
    assert (entry["counts"]["FS"], entry["counts"]["XS"], entry["XS_unverified"]) == (1, 5, 4)
    assert entry["XS_over_AN_bounds"] == (pytest.approx(1 / 6), pytest.approx(5 / 6))


def test_fragment_error_reasons_are_reported_in_both_modes(fragment_runs):
    for result in fragment_runs.values():
        frag = result["accuracy"]["per_model"]["m"]["frag:2:0"]
        assert frag["error_reasons"] == {"no_prediction": 1, "unanswered": 1, "judge_error": 1, "judge_invalid": 1}
        assert (frag["correct"], frag["errors"], frag["n"]) == (1, 4, 6)


# ---------------------------------------------------------------------------------------------
# XS/AN model mean: a model with no audio-needed item
# ---------------------------------------------------------------------------------------------


def test_xs_over_an_contribution_by_hand():
    assert tp.ZERO_AN_MODES == ("as_zero", "exclude")
    assert tp.xs_over_an_for_mean(1, 3) == 0.75
    assert tp.xs_over_an_for_mean(0, 0) == 0.0 and tp.xs_over_an_for_mean(0, 0, zero_an="as_zero") == 0.0
    assert tp.xs_over_an_for_mean(0, 0, zero_an="exclude") is None
    assert tp.xs_over_an_for_mean(2, 2, zero_an="exclude") == 0.5
    with pytest.raises(ValueError, match="zero_an_models"):
        tp.xs_over_an_for_mean(1, 1, zero_an="skip")


def _zero_an_records():
    """m1: a FS (fragment 1 correct), b XS, c TS -> XS/AN 1/2. m2: a TS, b UN, c AH -> no audio-needed item.
    m3: no fragment condition (audio-needed b unsplit) -> excluded from XS/AN in every mode."""
    table = {
        "m1": {"a": (T, F, F, T), "b": (T, F, F, F), "c": (T, T, F, F)},
        "m2": {"a": (T, T, F, F), "b": (F, F, F, F), "c": (F, T, F, F)},
        "m3": {"a": (T, T, None, None), "b": (T, F, None, None)},
    }
    return [
        {"model": model, "item_id": item, "condition": condition, "prediction": value}
        for model, items in table.items()
        for item, values in items.items()
        for condition, value in zip(("full", "none", "frag:2:0", "frag:2:1"), values)
        if value is not None
    ]


def test_xs_over_an_mean_averages_zero_an_models_as_zero_by_default():
    dec = score_text_prior(_zero_an_records())["decomposition"]
    assert dec["per_model"]["m2"]["counts"]["AN_total"] == 0
    assert dec["per_model"]["m2"]["XS_over_AN"] is None  # undefined for the model itself
    assert dec["XS_over_AN"] == {
        "mean": pytest.approx(0.25),
        "min": 0.0,
        "max": 0.5,
        "n": 2,
        "models": ["m1", "m2"],
        "excluded": {"m3": "no fragment predictions"},
        "models_with_zero_AN": ["m2"],
        "zero_an_models": "as_zero",
    }
    assert dec["models_without_fragments"] == ["m3"]
    assert score_text_prior(_zero_an_records())["options"]["zero_an_models"] == "as_zero"


def test_xs_over_an_mean_can_leave_zero_an_models_out():
    dec = score_text_prior(_zero_an_records(), zero_an_models="exclude")["decomposition"]
    assert dec["XS_over_AN"] == {
        "mean": 0.5,
        "min": 0.5,
        "max": 0.5,
        "n": 1,
        "models": ["m1"],
        "excluded": {"m2": "no audio-needed item (zero_an_models='exclude')", "m3": "no fragment predictions"},
        "models_with_zero_AN": ["m2"],
        "zero_an_models": "exclude",
    }
    assert dec["per_model"] == score_text_prior(_zero_an_records())["decomposition"]["per_model"]


def _no_shared_item_records():
    """The issue's table. m0: q1 Full right, None wrong, both N=2 fragments wrong -> XS, XS/AN 1.
    m1: q1 Full right and fragment 0 right, but no None row: no item with both Full and None."""
    rows = [
        ("m0", "full", T),
        ("m0", "none", F),
        ("m0", "frag:2:0", F),
        ("m0", "frag:2:1", F),
        ("m1", "full", T),
        ("m1", "frag:2:0", T),
        ("m1", "frag:2:1", F),
    ]
    return [{"model": m, "item_id": "q1", "condition": c, "prediction": v} for m, c, v in rows]


@pytest.mark.parametrize("mode", tp.ZERO_AN_MODES)
def test_xs_over_an_mean_leaves_out_a_model_without_an_item_in_full_and_none(mode):
    # The public code's decompose_model returns None for m1 (no common ids), so Table 4 averages m0 only:
    # 1.0 over [m0], not (1 + 0) / 2 = 0.5 over [m0, m1].
    dec = score_text_prior(_no_shared_item_records(), zero_an_models=mode)["decomposition"]
    assert dec["per_model"]["m1"]["n_items"] == 0 and dec["per_model"]["m1"]["missing_none"] == 1
    assert dec["XS_over_AN"] == {
        "mean": 1.0,
        "min": 1.0,
        "max": 1.0,
        "n": 1,
        "models": ["m0"],
        "excluded": {"m1": "no item with both a Full and a None prediction"},
        "models_with_zero_AN": [],
        "zero_an_models": mode,
    }
    assert dec["AN_share"]["models"] == ["m0"] and dec["mean_shares"]["XS"] == 1.0


def test_zero_an_option_is_checked():
    with pytest.raises(ValueError, match="zero_an_models must be one of"):
        score_text_prior(_zero_an_records(), zero_an_models="skip")


def test_demo_xs_over_an_is_the_same_in_both_zero_an_modes():
    runs = [
        score_text_prior(demo_records(), zero_an_models=mode)["decomposition"]["XS_over_AN"]
        for mode in tp.ZERO_AN_MODES
    ]
    assert [r["models_with_zero_AN"] for r in runs] == [[], []]
    assert runs[0]["mean"] == runs[1]["mean"] == pytest.approx((1 / 4 + 2 / 4) / 2)
