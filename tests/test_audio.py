import numpy as np
import pytest
import soundfile as sf

from audioreason.audio import AudioError, load_audio, synthesize_clip, write_audio
from audioreason.audio.io import decode_file


def test_synthesized_clip_is_deterministic_and_shaped():
    a = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-1")
    b = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-1")
    c = synthesize_clip("mix-sound-speech", 1.5, 16000, seed="item-2")
    assert a.shape == (24000,) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.isclose(np.abs(a).max(), 0.8)
    with pytest.raises(ValueError, match="unknown modality"):
        synthesize_clip("noise", 1.0)


def test_wav_round_trip_through_decoder(tmp_path):
    clip = synthesize_clip("music", 1.0, 16000, seed="x")
    path = write_audio(tmp_path / "a.wav", clip, 16000)
    samples, rate = load_audio(path)
    assert rate == 16000 and samples.shape == clip.shape
    # 16-bit PCM: within one quantisation step
    assert np.abs(samples - clip).max() <= 1 / 32768 + 1e-7
    _, _, decoder = decode_file(path)
    assert decoder in ("torchcodec", "soundfile")


def test_stereo_is_averaged_and_resampled(tmp_path):
    left = np.full(8000, 0.5, dtype=np.float32)
    right = np.full(8000, -0.1, dtype=np.float32)
    path = tmp_path / "stereo.wav"
    sf.write(str(path), np.stack([left, right], axis=1), 8000, subtype="FLOAT")
    samples, rate = load_audio(path, 16000)
    assert rate == 16000 and len(samples) == 16000
    assert np.allclose(samples[2000:-2000], 0.2, atol=1e-3)


def test_array_sources():
    tone = np.sin(np.arange(48000) / 48000 * 2 * np.pi * 440).astype(np.float32)
    samples, rate = load_audio({"array": tone, "sampling_rate": 48000}, 16000)
    assert (len(samples), rate) == (16000, 16000)
    samples, rate = load_audio((np.stack([tone, tone]), 48000))  # (channels, frames)
    assert (len(samples), rate) == (48000, 48000)


@pytest.mark.parametrize("source, message", [
    ("/nonexistent/clip.wav", "not found"),
    ((np.array([0.1, np.nan, 0.2]), 16000), "NaN"),
    ((np.zeros(0), 16000), "no samples"),
    ((np.zeros(10), 0), "sampling rate"),
    (42, "unsupported audio source"),
])
def test_bad_audio_gives_clear_error(source, message):
    with pytest.raises(AudioError, match=message):
        load_audio(source)


def test_corrupt_file_gives_clear_error(tmp_path):
    path = tmp_path / "corrupt.wav"
    path.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")
    with pytest.raises(AudioError, match="cannot decode"):
        load_audio(path)
