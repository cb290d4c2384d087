"""Anchor operations on synthetic signals, against hand-computed values (audioreason.audio.anchors), and
the espeak-ng speech helpers the other anchor tests share."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from audioreason.audio import anchors as ops

RATE = 16000
SENTENCES = [
    "The committee met on Tuesday to discuss the new budget for the library.",
    "Several speakers argued that the river crossing should be rebuilt before winter.",
    "After a short break the chair asked for a vote on the second proposal.",
    "Nobody expected the results to arrive so early in the evening.",
    "The final speaker thanked everyone and closed the meeting with a joke.",
]


# --------------------------------------------------------------------------------- shared helpers
def espeak(text: str, folder: Path, rate: int = RATE) -> np.ndarray:
    """espeak-ng speech for ``text`` at ``rate`` (mono float32); skips when espeak-ng is absent."""
    from audioreason.audio import load_audio

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng (Debian package, installed by install.sh) is not installed")
    path = folder / f"espeak-{abs(hash(text))}.wav"
    subprocess.run(["espeak-ng", "-s", "160", "-w", str(path), text], check=True, capture_output=True)
    return load_audio(path, sampling_rate=rate)[0]


def speech_recording(folder: Path, seconds: float = 40.0, gap: float = 2.0) -> tuple[Path, list[tuple[float, float]]]:
    """A 16-bit WAV of espeak-ng sentences separated by ``gap`` s of silence (speech at 0.3 peak), and the
    (start, end) seconds of each sentence."""
    from audioreason.audio import write_audio

    parts, intervals, t = [np.zeros(int(gap * RATE), np.float32)], [], gap
    k = 0
    while t < seconds - gap:
        speech = espeak(SENTENCES[k % len(SENTENCES)], folder)
        speech = 0.3 * speech / np.abs(speech).max()
        speech = speech[: int((seconds - gap - t) * RATE)]
        parts += [speech, np.zeros(int(gap * RATE), np.float32)]
        intervals.append((t, t + len(speech) / RATE))
        t += len(speech) / RATE + gap
        k += 1
    samples = np.concatenate(parts)[: int(seconds * RATE)]
    path = folder / "speech.wav"
    write_audio(path, samples, RATE)
    return path, intervals


def tone(freq: float, seconds: float, amplitude: float = 0.3) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * freq * np.arange(int(seconds * RATE)) / RATE)


def peak_hz(x: np.ndarray) -> float:
    x = ops.as_frames(x).mean(axis=1)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.fft.rfftfreq(len(x), 1 / RATE)[np.argmax(spectrum)])


def band_power(x: np.ndarray, low: float, high: float) -> float:
    x = ops.as_frames(x).mean(axis=1)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2  # windowed: no leakage from the pass band
    freqs = np.fft.rfftfreq(len(x), 1 / RATE)
    return float(spectrum[(freqs >= low) & (freqs < high)].sum())


# --------------------------------------------------------------------------------- addition
def test_add_event_sets_the_snr_against_the_local_rms():
    local = np.full((RATE, 2), 0.1)  # RMS 0.1 = -20 dBFS on both channels
    clip = np.where(np.arange(RATE) % 40 < 20, 0.5, -0.5)  # square wave, RMS 0.5 = -6.0206 dBFS
    mixed, gain_db = ops.add_event(local, clip, RATE, 8.0, fade_s=0.0)
    # event RMS must be 0.1 * 10^(8/20) = 0.2511886; the clip's 0.5 is scaled by 0.5023773 (-5.9794 dB)
    assert gain_db == pytest.approx(-5.979400, abs=1e-6)
    np.testing.assert_allclose(mixed - local, 0.2511886432 * np.sign(clip)[:, None] * np.ones((1, 2)), atol=1e-9)


def test_add_event_fades_in_and_out_so_no_click_is_added():
    local = 0.05 * np.random.default_rng(0).standard_normal(RATE)
    clip = np.full(RATE, 0.5)  # a DC clip: without fades it would step by its full level at both ends
    mixed, gain_db = ops.add_event(local, clip, RATE, 6.0)
    added = (mixed - ops.as_frames(local))[:, 0]
    level = 0.5 * 10 ** (gain_db / 20)
    fade = int(ops.FADE_S * RATE)  # 160 frames
    assert abs(added[0]) < 1e-4 * level and abs(added[-1]) < 1e-4 * level
    assert np.max(np.abs(np.diff(added))) < 0.02 * level  # the steepest step: a 160-frame raised cosine
    np.testing.assert_allclose(added[fade:-fade], level)
    np.testing.assert_allclose(added[:fade], added[-fade:][::-1])


def test_add_event_lufs_measure_sets_the_bs1770_loudness_difference():
    import pyloudnorm

    rng = np.random.default_rng(1)
    local = 0.1 * rng.standard_normal(2 * RATE)
    clip = tone(100, 2.0, 0.5)
    mixed, _ = ops.add_event(local, clip, RATE, 8.0, measure="lufs")
    meter = pyloudnorm.Meter(RATE)
    achieved = meter.integrated_loudness(mixed[:, 0] - local) - meter.integrated_loudness(local)
    assert achieved == pytest.approx(8.0, abs=1e-6)
    # the RMS ratio is not 8 dB: K-weighting's high-pass discounts a 100 Hz tone against white noise, so
    # the tone must be 4.5 dB stronger in RMS to sound 8 dB above it (measured: 12.51 dB)
    rms_snr = ops.level_db(mixed[:, 0] - local, RATE) - ops.level_db(local, RATE)
    assert rms_snr == pytest.approx(12.51, abs=0.05)


def test_add_event_refuses_silence_and_a_clip_of_the_wrong_length():
    with pytest.raises(ValueError, match="silent"):
        ops.add_event(np.zeros(RATE), tone(1000, 1.0), RATE, 8.0)
    with pytest.raises(ValueError, match="frames"):
        ops.add_event(np.ones(RATE) * 0.1, tone(1000, 0.5), RATE, 8.0)
    with pytest.raises(ValueError, match="0.4 s"):
        ops.level_db(np.ones(1000), RATE, "lufs")


# --------------------------------------------------------------------------------- deletion
def test_silence_span_is_zero_inside_its_fades_and_starts_on_the_source():
    span = np.full(RATE, 0.2)
    out = ops.silence_span(span, RATE)[:, 0]
    fade = 160
    assert np.all(out[fade:-fade] == 0.0)
    assert out[0] == pytest.approx(0.2, rel=1e-4) and out[-1] == pytest.approx(0.2, rel=1e-4)
    assert np.all(np.diff(out[:fade]) < 0)


def test_lowpass_near_300_hz_attenuates_the_speech_band():
    noise = np.random.default_rng(2).standard_normal(4 * RATE)
    filtered = ops.lowpass(noise, RATE)
    ratio = {
        f: 10 * np.log10(band_power(filtered, f * 0.9, f * 1.1) / band_power(noise, f * 0.9, f * 1.1))
        for f in (100, 300, 600, 1000)
    }
    assert ratio[100] > -0.5  # pass band
    assert ratio[300] == pytest.approx(-6.0, abs=1.0)  # order 4 forward and back: -3 dB twice at the cut-off
    assert ratio[600] < -35 and ratio[1000] < -75  # theory: -48 dB at 600 Hz, -84 dB at 1 kHz


def test_smear_removes_the_content_above_1_khz_keeps_the_low_band_and_follows_the_seed():
    span = np.random.default_rng(3).standard_normal(2 * RATE) * 0.1
    out = ops.smear_span(span, RATE, np.random.default_rng(7))

    def band(x, keep):
        freqs = np.fft.rfftfreq(len(x), 1 / RATE)
        return np.fft.irfft(np.where(keep(freqs), np.fft.rfft(ops.as_frames(x)[:, 0]), 0))

    def hf(x):
        return band(x, lambda f: f > 1000)

    def lf(x):
        return band(x, lambda f: f < 150)

    assert abs(ops.correlation(hf(span), hf(out))) < 0.05
    assert ops.correlation(lf(span), lf(out)) > 0.9
    assert len(out) == len(span)
    np.testing.assert_array_equal(out, ops.smear_span(span, RATE, np.random.default_rng(7)))
    assert not np.array_equal(out, ops.smear_span(span, RATE, np.random.default_rng(8)))


# --------------------------------------------------------------------------------- modification
def test_change_loudness_applies_the_gain_between_its_ramps():
    out = ops.change_loudness(np.full(RATE, 0.1), RATE, -10.0)[:, 0]
    ramp = int(ops.RAMP_S * RATE)  # 800 frames
    np.testing.assert_allclose(out[ramp:-ramp], 0.1 * 10 ** (-10 / 20))  # 0.0316228
    assert out[0] == pytest.approx(0.1, rel=1e-5) and out[-1] == pytest.approx(0.1, rel=1e-5)
    assert np.all(np.diff(out[:ramp]) < 0)


@pytest.mark.parametrize("factor,frames", [(2.0, 16000), (3.0, 10667), (1 / 1.5, 48000), (1.5, 21333)])
def test_change_speed_gives_the_stretched_length_and_keeps_the_pitch(factor, frames):
    span = tone(440, 2.0)
    out = ops.change_speed(span, RATE, factor)
    assert out.shape == (frames, 1)
    assert ops.stretched_frames(2 * RATE, factor) == frames
    assert peak_hz(out) == pytest.approx(440, abs=3)  # pitch preserved (a resampling would give 880 at x2)
    assert out[0, 0] == pytest.approx(span[0], abs=1e-3)  # edges blended with the source's own samples


def test_stretched_frames_rounds_half_up():
    assert ops.stretched_frames(16001, 2.0) == 8001  # 8000.5
    assert ops.stretched_frames(16000, 3.0) == 5333  # 5333.33
