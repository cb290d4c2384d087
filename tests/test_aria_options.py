"""ARIA's options are checked when the scorer is made, before any model loads or any item is read: one
ValueError naming the option, the value and what is allowed (a misspelt on_audio_error used to skip every
unreadable clip silently; batch_size=0 failed deep inside the first backbone)."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from audioreason.audio import synthesize_clip
from audioreason.scorers.aria.formulas import FittedThresholds, ProfileThresholds
from audioreason.scorers.aria.scorer import AriaConfig, AriaInputError, AriaScorer

ROOT = Path(__file__).resolve().parents[1]
GOOD = (
    "[PERCEPTION]\nEntities: dog\nDescription: barking.\n[ANALYSIS]\nA dog is close.\n[REASONING]\n"
    "It is a dog.\n[ANSWER]\nDog barking"
)
CHOICES = ["Dog barking", "Rain"]
NONE = dict.fromkeys(("clap", "embedder", "lm", "nli", "vectors"))  # every backbone off


@pytest.mark.parametrize(
    "option, value, allowed",
    [
        ("batch_size", 0, "a whole number >= 1"),
        ("batch_size", -4, "a whole number >= 1"),
        ("batch_size", 2.5, "a whole number >= 1"),
        ("batch_size", True, "a whole number >= 1"),
        ("batch_size", "16", "a whole number >= 1"),
        ("m3_retries", -1, "a whole number >= 0"),
        ("m4_max_segment_tokens", 0, "a whole number >= 1"),
        ("seed", 1.5, "a whole number from 0 to 4294967295"),
        ("seed", None, "a whole number from 0 to 4294967295"),
        ("seed", -1, "a whole number from 0 to 4294967295"),  # numpy's seeds (the crops) are 0 .. 2**32 - 1
        ("seed", 2**32, "a whole number from 0 to 4294967295"),
        ("on_audio_error", "skp", "'raise', 'skip'"),
        ("on_audio_error", None, "'raise', 'skip'"),
        ("m1_audio", "crop", "'whole', 'random_crop'"),
        ("m3_mode", "greedy", "'generate', 'logprob'"),
        ("m4_absent", "zero", "'info_zero', 'term_zero'"),
        ("answer_tags", "brackets", "'bracket', 'tolerant'"),
        ("answer_substring", "last", "'first', 'longest'"),
        ("mode_rule", "table4", "'paper', 'fitted'"),
        ("batched", "yes", "True or False"),
        ("allow_download", 1, "True or False"),
        ("vocabulary", "dog", "a list of words (non-empty strings) or None for the shipped list"),
        ("vocabulary", ["dog", 3], "a list of words (non-empty strings) or None for the shipped list"),
        ("vocabulary", [], "a list of words (non-empty strings) or None for the shipped list"),
    ],
)
def test_a_bad_option_value_is_refused_up_front(option, value, allowed, monkeypatch):
    import audioreason.scorers.aria.scorer as aria_module

    monkeypatch.setattr(aria_module, "resolve_backbones", lambda *a: pytest.fail("checked after the backbones"))
    with pytest.raises(ValueError, match=re.escape(f"{option} must be {allowed}, got {value!r}")):
        AriaScorer(**{option: value})
    with pytest.raises(ValueError, match=re.escape(f"{option} must be")):  # the config object too
        AriaScorer(AriaConfig(**{option: value}))


def test_thresholds_must_fit_the_rule():
    with pytest.raises(ValueError, match=r"mode_thresholds must be ProfileThresholds for mode_rule='paper'"):
        AriaScorer(backbones=NONE, mode_thresholds=FittedThresholds())
    with pytest.raises(ValueError, match=r"mode_thresholds must be FittedThresholds for mode_rule='fitted'"):
        AriaScorer(backbones=NONE, mode_rule="fitted", mode_thresholds=ProfileThresholds())
    with pytest.raises(ValueError, match=r"mode_thresholds must be .* got \{'M2': 0.5\}"):
        AriaScorer(backbones=NONE, mode_thresholds={"M2": 0.5})
    AriaScorer(backbones=NONE, mode_rule="fitted", mode_thresholds=FittedThresholds(accuracy=0.5))  # fits


def test_a_misspelt_option_name_lists_the_options():
    with pytest.raises(ValueError, match=r"unknown ARIA option 'on_audio_eror'; the options are .*on_audio_error"):
        AriaScorer(on_audio_eror="skip")


def test_good_values_pass():
    s = AriaScorer(
        backbones=NONE,
        batch_size=np.int64(3),
        seed=7,
        on_audio_error="skip",
        m1_audio="random_crop",
        vocabulary=("dog", "rain"),
        m3_retries=0,
    )
    assert (s.config.batch_size, s.config.seed, s.vocabulary) == (3, 7, ["dog", "rain"])


def test_the_metric_module_refuses_before_scoring():
    import evaluate

    metric = evaluate.load(str(ROOT / "metrics" / "aria"))
    with pytest.raises(ValueError, match=r"on_audio_error must be 'raise', 'skip', got 'Skip'"):
        metric.compute(
            predictions=[GOOD], references=["Dog barking"], choices=[CHOICES], backbones=NONE, on_audio_error="Skip"
        )


# ---------------------------------------------------------------------- bad audio held in memory
TONE = np.ones(8000) * 0.1
BAD_AUDIO = [
    ((TONE, float("nan")), r"invalid sampling rate nan"),
    ((TONE, np.float64("nan")), r"invalid sampling rate np.float64\(nan\)"),
    ((TONE, "16000"), r"invalid sampling rate '16000'"),
    ((TONE, 0), r"invalid sampling rate 0"),
    ((TONE, -16000), r"invalid sampling rate -16000"),
    ((TONE, 22050.5), r"invalid sampling rate 22050.5: it must be a positive whole number of Hz"),
    ((TONE, True), r"invalid sampling rate True"),
    ({"array": TONE}, r"invalid sampling rate None"),
    (
        (np.ones((2, 2, 8000)) * 0.1, 16000),
        r"must be 1-D \(frames\) or 2-D \(frames, channels\), got shape \(2, 2, 8000\)",
    ),
    ((np.float32(0.1), 16000), r"must be 1-D \(frames\) or 2-D \(frames, channels\), got shape \(\)"),
    ((np.array(["a", "b"]), 16000), r"must hold real numbers, got dtype <U1"),
    ((["a", 0.5], 16000), r"must hold real numbers"),
    ((np.ones(8000, complex), 16000), r"must hold real numbers, got dtype complex128"),
    ((np.ones(8000, bool), 16000), r"must hold real numbers, got dtype bool"),
    ((np.array([0.1] * 8000, dtype=object), 16000), r"must hold real numbers, got dtype object"),
    (([[0.1, 0.2], [0.3]], 16000), r"cannot be read as numbers"),
    ((np.full(8000, np.nan), 16000), r"8000 NaN or infinite samples"),
    ((np.array([0.1, np.inf, 0.2] * 1000), 16000), r"1000 NaN or infinite samples"),
    ((np.zeros(0), 16000), r"audio has no samples"),
    ((np.ones((8000, 0)), 16000), r"audio has no samples"),
    ((TONE, 16000, 1), r"unsupported audio source of type tuple"),
    ({"sampling_rate": 16000}, r"audio dict has neither 'array', 'bytes' nor 'path'"),
]


@pytest.fixture(scope="module")
def clap(tiny_backbones):
    from audioreason.backends import load_backend

    backend = load_backend("clap", tiny_backbones["clap"])
    backend.clear_caches()
    return backend


@pytest.fixture(scope="module")
def good_clip(clap):
    """A readable clip and its embedding in each mode, computed alone."""
    clip = (synthesize_clip("sound", 1.5, 16000, "x"), 16000)
    return clip, {mode: clap.embed_sources([clip], mode, use_cache=False)[0] for mode in ("whole", "random_crop")}


@pytest.mark.parametrize("audio, message", BAD_AUDIO)
def test_bad_audio_in_memory_is_that_sources_audio_error(clap, good_clip, audio, message):
    """Every M1 reading path returns the source's AudioError (never raises, never scores it), the sources
    around it embedded as if it were not there."""
    from audioreason.audio import AudioError

    good, expected = good_clip
    for mode in ("whole", "random_crop"):
        first, bad, last = clap.embed_sources([good, audio, good], mode, batch_size=2)
        assert isinstance(bad, AudioError) and re.search(message, str(bad)), (mode, bad)
        assert np.array_equal(first, expected[mode]) and np.array_equal(last, expected[mode])
        alone = clap.embed_sources([audio], mode, use_cache=False)[0]  # the uncached path (batched=False)
        assert isinstance(alone, AudioError) and re.search(message, str(alone)), (mode, alone)


def only(tiny_backbones, *roles):
    """These tiny backbones, every other role off."""
    return {
        role: tiny_backbones[role] if role in roles else None for role in ("clap", "embedder", "lm", "nli", "vectors")
    }


PATHS = [("whole", True), ("random_crop", True), ("whole", False)]  # M1 mode, batched


@pytest.fixture(scope="module")
def scorers(tiny_backbones):
    kwargs = dict(backbones=only(tiny_backbones, "clap"), vocabulary=["dog"])
    return {
        (mode, batched, errors): AriaScorer(m1_audio=mode, batched=batched, on_audio_error=errors, **kwargs)
        for mode, batched in PATHS
        for errors in ("raise", "skip")
    }


@pytest.mark.parametrize("audio, message", [BAD_AUDIO[0], BAD_AUDIO[2], BAD_AUDIO[8], BAD_AUDIO[10], BAD_AUDIO[16]])
def test_bad_audio_in_memory_follows_on_audio_error(scorers, audio, message):
    """ "skip" counts the item (M1 NaN, the others scored); "raise" raises one AriaInputError naming it."""
    good = (synthesize_clip("sound", 1.5, 16000, "x"), 16000)
    for mode, batched in PATHS:
        r = scorers[mode, batched, "skip"].score(
            [GOOD] * 3, ["Dog barking"] * 3, [CHOICES] * 3, audio=[good, audio, good], return_items=True
        )
        assert r["counts"]["audio_errors"] == 1 and r["counts"]["M1_items_not_scored"] == 1
        assert math.isnan(r["items"][1]["M1"]) and math.isfinite(r["items"][0]["M1"])
        assert r["items"][0]["M1"] == r["items"][2]["M1"]
        with pytest.raises(AriaInputError, match="item 1: .*" + message):
            scorers[mode, batched, "raise"].score([GOOD] * 2, ["Dog barking"] * 2, [CHOICES] * 2, audio=[good, audio])


def test_the_scorer_seed_seeds_the_crop(tiny_backbones, tmp_path):
    import soundfile as sf

    sf.write(str(tmp_path / "long.wav"), synthesize_clip("mix-sound-music", 20.0, 8000, "s"), 8000)
    m1 = [
        AriaScorer(backbones=only(tiny_backbones, "clap"), m1_audio="random_crop", seed=seed).score(
            [GOOD], ["Dog barking"], [CHOICES], audio=[str(tmp_path / "long.wav")], return_items=True
        )["items"][0]["M1"]
        for seed in (0, 1, 0)
    ]
    assert m1[0] != m1[1] and m1[0] == m1[2]
