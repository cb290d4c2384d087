"""Conditions and the audio each one sends: parsing, no audio for none/tb, leading-prefix truncation recorded,
fragments equal to the in-memory split and cut once per source file, anchored items only."""

import numpy as np
import pytest
import soundfile as sf

from audioreason.audio import AudioError, load_audio, split_samples
from audioreason.inference.conditions import (
    AudioPreparer,
    Condition,
    expand_condition,
    has_anchored_variant,
    not_applicable,
    parse_conditions,
)

RATE = 16000


@pytest.fixture
def clip(tmp_path):
    """3 s + 1 sample of a float WAV at 16 kHz (L = 48001: the last fragment takes the remainder)."""
    samples = (0.5 * np.sin(np.arange(48001) * 2 * np.pi * 440 / RATE)).astype(np.float32)
    path = tmp_path / "clip.wav"
    sf.write(path, samples, RATE, subtype="FLOAT")
    return path, samples


def test_parse_condition_names_and_expansions():
    assert [c.name for c in expand_condition("frag:3")] == ["frag:3:0", "frag:3:1", "frag:3:2"]
    assert len(expand_condition("frag")) == 2 + 3 + 4 + 5
    assert expand_condition(" FULL ") == [Condition("full")]
    assert [c.name for c in parse_conditions(["full", "none", "tb", "frag:2:1", "anchored"])] == [
        "full",
        "none",
        "tb",
        "frag:2:1",
        "anchored",
    ]
    for bad, message in (
        ("frag:6", "N must be one of"),
        ("frag:2:2", "k must be in 0..1"),
        ("mute", "unknown"),
        ("frag:x", "unknown"),
        ("frag:2:1:0", "unknown"),
    ):
        with pytest.raises(ValueError, match=message):
            expand_condition(bad)
    with pytest.raises(ValueError, match="given twice"):
        parse_conditions(["frag:2", "frag:2:0"])
    with pytest.raises(ValueError, match="at least one"):
        parse_conditions([])


@pytest.mark.parametrize("name", ["none", "tb"])
def test_none_and_tb_send_no_audio_at_all(clip, name):
    prepared = AudioPreparer(RATE, 30.0).prepare(expand_condition(name)[0], str(clip[0]))
    assert prepared.audio is None  # not a silent clip
    assert prepared.info["seconds"] == 0.0 and prepared.info["truncated"] is False


def test_full_under_the_limit_is_the_whole_clip(clip):
    path, samples = clip
    prepared = AudioPreparer(RATE, 5.0).prepare(Condition("full"), str(path))
    np.testing.assert_array_equal(prepared.audio.array, samples)
    assert prepared.info == {
        "seconds": 48001 / RATE,
        "source_seconds": 48001 / RATE,
        "truncated": False,
        "max_audio_s": 5.0,
        "sampling_rate": RATE,
    }


def test_full_over_the_limit_is_the_leading_prefix_and_recorded(clip):
    path, samples = clip
    prepared = AudioPreparer(RATE, 1.25).prepare(Condition("full"), {"path": str(path), "bytes": None})
    np.testing.assert_array_equal(prepared.audio.array, samples[:20000])  # round(1.25 * 16000)
    assert prepared.audio.truncated and prepared.audio.source_seconds == 48001 / RATE
    assert prepared.info["seconds"] == 1.25 and prepared.info["truncated"] is True


def test_resampled_prefix_equals_the_start_of_the_whole_resample(tmp_path):
    rate = 22050
    samples = np.random.default_rng(0).uniform(-0.5, 0.5, 3 * rate).astype(np.float32)
    path = tmp_path / "r.wav"
    sf.write(path, samples, rate, subtype="FLOAT")
    prepared = AudioPreparer(RATE, 1.0).prepare(Condition("full"), str(path))
    whole, _ = load_audio(str(path), RATE)
    assert len(prepared.audio.array) == RATE and prepared.audio.truncated
    np.testing.assert_allclose(prepared.audio.array, whole[:RATE], atol=1e-6)


def test_embedded_bytes_are_decoded_and_cut(clip):
    path, samples = clip
    prepared = AudioPreparer(RATE, 2.0).prepare(Condition("full"), {"path": "x.wav", "bytes": path.read_bytes()})
    np.testing.assert_array_equal(prepared.audio.array, samples[:32000])
    assert prepared.info["truncated"] and prepared.info["source_seconds"] == 48001 / RATE


@pytest.mark.parametrize("n", [2, 3, 5])
def test_fragments_equal_the_in_memory_split(clip, tmp_path, n):
    path, samples = clip
    preparer = AudioPreparer(RATE, None, tmp_path / "cache")
    expected = split_samples(samples, n)
    m = 48001 // n
    for k in range(n):
        prepared = preparer.prepare(Condition("frag", n, k), str(path))
        np.testing.assert_array_equal(prepared.audio.array, expected[k])
        stop = (k + 1) * m if k < n - 1 else 48001
        assert prepared.info["fragment"] == {"n": n, "k": k, "start_s": k * m / RATE, "end_s": stop / RATE}
        assert prepared.info["source_seconds"] == (stop - k * m) / RATE and not prepared.info["truncated"]


def test_fragments_are_cut_once_per_source_file(clip, tmp_path):
    path, _ = clip
    cache = tmp_path / "cache"
    AudioPreparer(RATE, None, cache).prepare(Condition("frag", 2, 0), str(path))
    folders = [p for p in cache.iterdir()]
    assert len(folders) == 1 and len(list(folders[0].glob("*.wav"))) == 14  # N = 2..5 in one pass
    stamps = {p.name: p.stat().st_mtime_ns for p in folders[0].iterdir()}
    again = AudioPreparer(RATE, None, cache)  # another process, same cache
    again.prepare(Condition("frag", 4, 3), str(path))
    assert {p.name: p.stat().st_mtime_ns for p in folders[0].iterdir()} == stamps
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_embedded_audio_fragments_are_split_in_memory(clip, tmp_path):
    path, samples = clip
    prepared = AudioPreparer(RATE, None, tmp_path / "cache").prepare(
        Condition("frag", 3, 2), {"path": None, "bytes": path.read_bytes()}
    )
    np.testing.assert_array_equal(prepared.audio.array, samples[32000:])
    assert not (tmp_path / "cache").exists()


def test_a_fragment_longer_than_the_limit_is_cut(clip, tmp_path):
    path, samples = clip
    prepared = AudioPreparer(RATE, 1.0, tmp_path / "cache").prepare(Condition("frag", 2, 1), str(path))
    np.testing.assert_array_equal(prepared.audio.array, samples[24000:40000])
    assert prepared.info["truncated"] and prepared.info["source_seconds"] == 24001 / RATE


def test_missing_audio_is_an_audio_error(tmp_path):
    preparer = AudioPreparer(RATE, None, tmp_path)
    with pytest.raises(AudioError, match="no audio"):
        preparer.prepare(Condition("full"), None)
    with pytest.raises(AudioError, match="not found"):
        preparer.prepare(Condition("full"), str(tmp_path / "gone.wav"))


def test_a_fragment_without_samples_is_an_audio_error(tmp_path):
    path = tmp_path / "tiny.wav"
    sf.write(path, np.ones(3, np.float32) * 0.1, RATE, subtype="FLOAT")
    with pytest.raises(AudioError, match="no sample"):
        AudioPreparer(RATE, None, tmp_path / "c").prepare(Condition("frag", 5, 0), str(path))


def test_anchored_applies_only_to_items_with_an_anchored_variant():
    anchor = {"subset": "anchor", "edit_manifest": {"operation": "addition"}}
    native = {"subset": "native_mcq", "edit_manifest": {"operation": None}}
    mmar = {"id": "m"}
    assert has_anchored_variant(anchor) and not has_anchored_variant(native) and not has_anchored_variant(mmar)
    assert not_applicable(Condition("anchored"), native) == "no anchored variant"
    assert not_applicable(Condition("anchored"), anchor) is None
    assert not_applicable(Condition("full"), mmar) is None


def test_expected_seconds_from_the_header(clip):
    path, _ = clip
    preparer = AudioPreparer(RATE, 2.0)
    assert preparer.expected_seconds(Condition("full"), str(path)) == 2.0
    assert preparer.expected_seconds(Condition("frag", 2, 0), str(path)) == pytest.approx(48001 / RATE / 2)
    assert preparer.expected_seconds(Condition("none"), str(path)) == 0.0
    assert AudioPreparer(RATE, None).expected_seconds(Condition("full"), None) == 0.0
