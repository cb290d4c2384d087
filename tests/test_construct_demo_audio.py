"""The synthesized recordings of ``audioreason construct --demo`` and the Phase 1 benchmark
(audioreason.construct.demo_audio): the same bytes for a seed, the stated layout, every event heard at its
stated time and nowhere else, speech where the truth says (Silero VAD), and a long writer whose memory does not
grow with the length."""

from __future__ import annotations

import shutil
import tracemalloc

import numpy as np
import pytest
import soundfile as sf

from audioreason.base.errors import UsageError
from audioreason.construct import demo_audio
from audioreason.construct.demo_audio import NOISE_FLOOR_RMS, long_recording, synthesize_recording

RATE = 16000
pytestmark = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng (Debian package, installed by install.sh) is not installed"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo_audio") / "demo.wav"
    truth = synthesize_recording(path, seed=0)
    samples, rate = sf.read(path, dtype="float64")
    assert rate == RATE
    return path, truth, samples


def rms(samples: np.ndarray, start: float, end: float) -> float:
    part = samples[int(round(start * RATE)) : int(round(end * RATE))]
    return float(np.sqrt(np.mean(part**2)))


def frame_rms(samples: np.ndarray, start: float, end: float, frame: float) -> np.ndarray:
    """RMS of consecutive ``frame``-s frames from ``start`` to ``end``."""
    part = samples[int(round(start * RATE)) : int(round(end * RATE))]
    n = int(frame * RATE)
    part = part[: len(part) // n * n].reshape(-1, n)
    return np.sqrt((part**2).mean(axis=1))


def test_the_same_seed_writes_the_same_bytes_and_another_seed_differs(demo, tmp_path):
    path, truth, _ = demo
    again = synthesize_recording(tmp_path / "again.wav", seed=0)
    assert (tmp_path / "again.wav").read_bytes() == path.read_bytes()
    assert again == {**truth, "audio_file": "again.wav"}
    other = synthesize_recording(tmp_path / "other.wav", seed=1)
    assert (tmp_path / "other.wav").read_bytes() != path.read_bytes()
    assert other["duration"] != truth["duration"]  # other pauses and speeds
    assert [s["text"] for s in other["sentences"]] == [s["text"] for s in truth["sentences"]]


def test_duration_segments_sentences_and_events_are_laid_out_as_stated(demo):
    path, truth, samples = demo
    info = sf.info(path)
    assert (info.samplerate, info.channels, info.subtype) == (RATE, 1, "PCM_16")
    assert info.frames == len(samples) == truth["frames"]
    assert truth["duration"] == truth["frames"] / RATE
    assert 180 < truth["duration"] < 240  # a few minutes: the script read at the voices' speeds
    assert [s["title"] for s in truth["segments"]] == [
        "Opening",
        "Weather for the week",
        "A visit to the Corner Loaf bakery",
        "Community announcements",
        "Closing",
    ]
    assert len(truth["sentences"]) == 33
    assert [e["label"] for e in truth["events"]] == ["rain", "doorbell", "knock", "phone"]
    assert [e["segment"] for e in truth["events"]] == [1, 2, 2, 4]
    assert {s["voice"] for s in truth["sentences"]} == {"en-us+m3", "en-us+f2", "en+f4", "en+m7"}
    assert truth["segments"][2]["speakers"] == ["baker", "host"]
    assert sorted(d["kind"] for d in truth["dependencies"]) == ["causal", "contrast", "reference"]
    # segments in order, apart; every record inside its segment; at least 0.35 s of floor between records
    segments = truth["segments"]
    assert all(a["end"] < b["start"] for a, b in zip(segments, segments[1:]))
    assert 0 < segments[0]["start"] and segments[-1]["end"] < truth["duration"]
    records = sorted(truth["sentences"] + truth["events"], key=lambda r: r["start"])
    for r in records:
        assert segments[r["segment"]]["start"] <= r["start"] < r["end"] <= segments[r["segment"]]["end"]
    assert min(b["start"] - a["end"] for a, b in zip(records, records[1:])) >= 0.35


def test_each_event_is_heard_at_its_stated_time_and_not_around_it(demo):
    _, truth, samples = demo
    floor = NOISE_FLOOR_RMS  # 0.002264: white noise 0.002 and a 60 Hz hum of amplitude 0.0015
    for event in truth["events"]:
        start, end = event["start"], event["end"]
        # 0.5 s before and after: the noise floor alone (measured ratios 0.99-1.02)
        assert rms(samples, start - 0.5, start) == pytest.approx(floor, rel=0.05)
        assert rms(samples, end, end + 0.5) == pytest.approx(floor, rel=0.05)
        assert rms(samples, start, end) > 15 * floor  # measured: rain 29x, doorbell 43x, knocks 17x, phone 37x
        frames = frame_rms(samples, start - 0.5, end + 0.5, 0.01)
        above = np.flatnonzero(frames > 10 * floor)
        onset, offset = start - 0.5 + above[0] * 0.01, start - 0.5 + (above[-1] + 1) * 0.01
        # the rain fades in over 0.15 s and crosses 10x the floor 0.05 s in; the others start on a frame
        assert onset == pytest.approx(start, abs=0.06 if event["label"] == "rain" else 0.011)
        assert end - 0.15 <= offset <= end + 0.011  # the doorbell's decay ends 0.11 s under the threshold


def test_the_events_sound_like_their_labels(demo):
    _, truth, samples = demo
    events = {e["label"]: e for e in truth["events"]}
    bell = events["doorbell"]["start"]

    def peak_hz(start: float, end: float) -> float:
        part = samples[int(start * RATE) : int(end * RATE)]
        spectrum = np.abs(np.fft.rfft(part * np.hanning(len(part)), n=16 * len(part)))
        return float(np.fft.rfftfreq(16 * len(part), 1 / RATE)[np.argmax(spectrum)])

    assert peak_hz(bell, bell + 0.6) == pytest.approx(659.25, abs=2.0)  # E5, then C5 a major third below
    assert peak_hz(bell + 0.6, bell + 1.5) == pytest.approx(523.25, abs=2.0)
    # three knocks 0.25 s apart: three rises of the 5-ms RMS through 10x the floor
    knock = events["knock"]["start"]
    loud = frame_rms(samples, knock - 0.1, events["knock"]["end"] + 0.1, 0.005) > 10 * NOISE_FLOOR_RMS
    rises = np.flatnonzero(loud[1:] & ~loud[:-1]) + 1
    np.testing.assert_allclose(knock - 0.1 + rises * 0.005, [knock, knock + 0.25, knock + 0.5], atol=0.0051)
    # two rings of 0.9 s with 0.5 s of floor between them
    ring = events["phone"]["start"]
    assert events["phone"]["end"] - ring == pytest.approx(2.3, abs=1e-4)
    assert rms(samples, ring + 0.95, ring + 1.35) == pytest.approx(NOISE_FLOOR_RMS, rel=0.1)
    assert min(rms(samples, ring, ring + 0.9), rms(samples, ring + 1.4, ring + 2.3)) > 20 * NOISE_FLOOR_RMS


def test_silero_vad_finds_speech_in_every_sentence_and_none_in_the_events(demo):
    pytest.importorskip("silero_vad")
    from audioreason.audio.placement import speech_spans

    _, truth, samples = demo
    spans = speech_spans(samples.astype(np.float32), RATE)

    def covered(start: float, end: float) -> float:
        return sum(max(0.0, min(end, b) - max(start, a)) for a, b in spans) / (end - start)

    assert min(covered(s["start"], s["end"]) for s in truth["sentences"]) > 0.85  # measured: 0.913 at least
    assert max(covered(e["start"], e["end"]) for e in truth["events"]) == 0.0
    # every span VAD finds overlaps a stated sentence; what lies outside them is its padding (measured 3.5 s)
    for a, b in spans:
        assert any(min(b, s["end"]) > max(a, s["start"]) for s in truth["sentences"])
    inside = sum(covered(s["start"], s["end"]) * (s["end"] - s["start"]) for s in truth["sentences"])
    assert sum(b - a for a, b in spans) - inside < 5.0


def test_the_long_writer_streams_in_constant_memory_and_writes_exactly_its_length(demo, tmp_path):
    path, truth, _ = demo
    peaks = {}
    for minutes in (2, 10):
        tracemalloc.start()
        long = long_recording(tmp_path / f"{minutes}.wav", minutes / 60, seed=0)
        peaks[minutes] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        assert sf.info(tmp_path / f"{minutes}.wav").frames == long["frames"] == minutes * 60 * RATE
        assert long["duration"] == minutes * 60.0
    # measured: 16.7 MB and 16.0 MB (the spoken lines, rendered once, are ~10 MB); 10 min of float32 is 36.6 MB
    assert peaks[10] < 25.0 and abs(peaks[10] - peaks[2]) < 2.0
    # 600 s holds three whole episodes and the start of a fourth; the first episode is the short recording
    assert long["episodes"] == 4
    first = sf.read(tmp_path / "10.wav", dtype="int16", frames=truth["frames"])[0]
    np.testing.assert_array_equal(first, sf.read(path, dtype="int16")[0])
    assert all(r["end"] <= 600.0 for r in long["sentences"] + long["events"])
    assert [r["episode"] for r in long["segments"]][:10] == [0] * 5 + [1] * 5
    # later episodes vary their events: another doorbell pitch, another rain length
    bells = [e["description"] for e in long["events"] if e["label"] == "doorbell"]
    rains = [e["description"] for e in long["events"] if e["label"] == "rain"]
    assert bells[0] == "a two-tone doorbell chime, 659 Hz then 523 Hz" and len(set(bells)) == len(bells)
    assert rains[0].endswith("5.0 s") and len(set(rains)) == len(rains)


def test_without_espeak_ng_the_error_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_audio.shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="apt-get install espeak-ng"):
        synthesize_recording(tmp_path / "x.wav", seed=0)
    assert not (tmp_path / "x.wav").exists()
    with pytest.raises(ValueError, match="hours must be positive"):
        long_recording(tmp_path / "y.wav", 0)
