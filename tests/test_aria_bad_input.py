"""Bad input to ARIA: each case gives a defined score or a clear error naming the item."""

import math

import numpy as np
import pytest
import soundfile as sf

from audioreason.audio import synthesize_clip
from audioreason.scorers.aria.scorer import AriaInputError, AriaScorer

GOOD = (
    "[PERCEPTION]\nEntities: dog\nDescription: barking.\n[ANALYSIS]\nA dog is close.\n[REASONING]\n"
    "It is a dog.\n[ANSWER]\nDog barking"
)
CHOICES = ["Dog barking", "Rain"]


@pytest.fixture(scope="module")
def scorer(tiny_backbones):
    return AriaScorer(backbones=tiny_backbones, m3_mode="logprob", vocabulary=["dog", "thunder"])


def score_one(scorer, text, audio=None, **kwargs):
    audio = [audio if audio is not None else (synthesize_clip("sound", 1.0, 16000, "x"), 16000)]
    return scorer.score([text], ["Dog barking"], [CHOICES], audio=audio, return_items=True, **kwargs)["items"][0]


def test_no_slots_scores_zero_everywhere_but_m4_and_m6(scorer):
    item = score_one(scorer, "I don't know what this is.")
    assert (item["M1"], item["M2"], item["M3"], item["M5"]) == (0.0, 0.0, 0.0, 0.0)
    assert item["M4"] == 0.5  # both Info terms absent: "Info is 0" (§3.3.4), each term 1/2
    assert item["M6"] == 0.0 and item["extracted"]["method"] == "unanswered"


def test_only_an_answer(scorer):
    item = score_one(scorer, "[ANSWER] Dog barking")
    assert (item["M2"], item["M3"], item["M4"], item["M5"]) == (0.0, 0.25, 0.5, 0.0)
    assert item["correct"]


def test_empty_entities_give_zero_m1_and_are_counted(scorer):
    text = GOOD.replace("Entities: dog", "Entities: ")
    r = scorer.score([text], ["Dog barking"], [CHOICES], audio=[(np.ones(16000) * 0.1, 16000)])
    assert r["M1"] == 0.0 and r["counts"]["m1_items_without_entities"] == 1


def test_very_long_cot_is_truncated_and_counted(scorer):
    long_text = " ".join(["the dog barks loudly again"] * 2000)  # 10,000 words
    text = (
        f"[PERCEPTION] Entities: dog\n{long_text}\n[ANALYSIS] {long_text}\n[REASONING] {long_text}\n"
        "[ANSWER] Dog barking"
    )
    r = scorer.score([text], ["Dog barking"], [CHOICES], audio=[(np.ones(8000) * 0.1, 16000)])
    assert r["counts"]["m4_truncated_items"] == 1
    assert all(0 <= r[m] <= 1 for m in ("M1", "M2", "M3", "M4", "M5", "M6"))


def test_non_english_words_are_counted_without_vectors(scorer):
    r = scorer.score(
        ["[PERCEPTION] Entities: 狗\n狗在叫。\n[ANALYSIS] 很响。\n[REASONING] 是狗。\n[ANSWER] 狗叫"],
        ["Dog barking"],
        [CHOICES],
        audio=[(np.ones(8000) * 0.1, 16000)],
    )
    assert r["counts"]["m6_words"] == 0 and r["counts"]["m6_words_without_vector"] > 0
    assert r["counts"]["m6_items_without_words"] == 1 and r["M6"] == 0.0


@pytest.mark.parametrize(
    "audio",
    [
        (np.zeros(16000, dtype=np.float32), 16000),  # silence
        (synthesize_clip("speech", 0.1, 16000, "short"), 16000),  # 0.1 s
    ],
)
def test_silent_and_short_audio_have_defined_m1(scorer, audio):
    assert math.isfinite(score_one(scorer, GOOD, audio)["M1"])


def test_stereo_and_8khz_are_resampled_like_mono(scorer, tmp_path):
    clip = synthesize_clip("music", 1.0, 8000, "r")
    sf.write(str(tmp_path / "stereo.wav"), np.stack([clip, clip], axis=1), 8000, subtype="FLOAT")
    from_file = score_one(scorer, GOOD, str(tmp_path / "stereo.wav"))["M1"]
    from_array = score_one(scorer, GOOD, (clip, 8000))["M1"]
    assert from_file == pytest.approx(from_array, abs=1e-6)


def test_nan_samples_name_the_item(scorer):
    bad = np.ones(16000, dtype=np.float32)
    bad[5] = np.nan
    with pytest.raises(AriaInputError, match=r"item 1: .*NaN"):
        scorer.score(
            [GOOD, GOOD], ["Dog barking"] * 2, [CHOICES] * 2, audio=[(np.ones(16000) * 0.1, 16000), (bad, 16000)]
        )


def test_missing_audio_file_raises_or_is_skipped_and_counted(tiny_backbones):
    kwargs = dict(backbones=tiny_backbones, m3_mode="logprob", vocabulary=["dog"])
    with pytest.raises(AriaInputError, match=r"item 0: audio file not found: /nope.wav"):
        AriaScorer(**kwargs).score([GOOD], ["Dog barking"], [CHOICES], audio=["/nope.wav"])
    r = AriaScorer(on_audio_error="skip", **kwargs).score(
        [GOOD, GOOD],
        ["Dog barking"] * 2,
        [CHOICES] * 2,
        audio=["/nope.wav", (np.ones(8000) * 0.1, 16000)],
        return_items=True,
    )
    assert math.isnan(r["items"][0]["M1"]) and math.isfinite(r["items"][1]["M1"])
    assert r["counts"]["audio_errors"] == 1 and r["counts"]["M1_items_not_scored"] == 1
    assert math.isnan(r["items"][0]["aria"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=[GOOD, GOOD], references=["a"], choices=[CHOICES, CHOICES]), "references has 1"),
        (dict(predictions=[GOOD], references=["a"], choices=[CHOICES, CHOICES]), "choices has 2"),
        (dict(predictions=[GOOD], references=["a"], choices=[CHOICES], audio=[]), "audio has 0"),
        (dict(predictions=[GOOD], references=[""], choices=[CHOICES]), "item 0: the reference"),
        (dict(predictions=[GOOD], references=["a"], choices=[[]]), "item 0: choices"),
    ],
)
def test_input_shape_errors(scorer, kwargs, message):
    with pytest.raises(AriaInputError, match=message):
        scorer.score(**kwargs)


def test_non_string_prediction_is_an_empty_cot(scorer):
    item = score_one(scorer, None)
    assert item["M3"] == 0.0 and item["extracted"]["method"] == "unanswered"
