"""Phase 1 of the construction pipeline (AudioSpan, arXiv:2608.26431, §4.2): the streamed transcript's windows
and times (step 1) and the offline acoustic stand-in's measurements (step 3 offline)."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest
from construct_audio import EVENT_SECONDS, caption_recording

from audioreason.construct import transcribe as T
from audioreason.construct.offline_audio import EVENT_LABEL, energy_events, offline_dense
from audioreason.construct.transcribe import CaptionStepFailed, stream_transcript

RATE = 16000


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    return caption_recording(tmp_path_factory.mktemp("caption"))


def _words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


# --------------------------------------------------------------------------------- step 1: windows
def scripted(truth):
    """A recognizer that hears ``truth`` (start, end, text) exactly, but only the part inside its window: a
    sentence cut by the window comes back cut, with its times and text truncated to the window."""

    async def recognize(samples, offset):
        cut = offset + len(samples) / RATE
        out = []
        for a, b, text in truth:
            if b <= offset or a >= cut:
                continue
            whole = a >= offset and b <= cut
            out.append((max(a, offset), min(b, cut), text if whole else text[: len(text) // 2]))
        return out

    return recognize


@pytest.mark.parametrize("window, guard", [(6.0, 1.5), (9.0, 2.0), (30.0, 5.0)])
def test_windows_keep_every_sentence_whole_and_once(layout, window, guard):
    seen = []
    found = asyncio.run(
        stream_transcript(
            layout.path,
            scripted(layout.sentences),
            window=window,
            guard=guard,
            read_seconds=2.0,
            on_window=lambda a, b: seen.append((a, b)),
        )
    )
    assert [(s["start"], s["end"], s["text"]) for s in found] == [
        (round(a, 3), round(b, 3), t) for a, b, t in layout.sentences
    ]
    assert all(b - a <= window + 1e-9 for a, b in seen)
    assert seen[0][0] == 0.0 and seen[-1][1] == pytest.approx(layout.duration, abs=2e-3)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:]))  # every window moves on
    if window < layout.duration:
        assert len(seen) > 1


def test_a_failed_window_fails_the_step(layout):
    async def nothing(samples, offset):
        return None

    with pytest.raises(CaptionStepFailed, match="transcription"):
        asyncio.run(stream_transcript(layout.path, nothing, window=8.0, guard=2.0, name="rec"))


def test_local_transcript_streams_and_lands_on_the_sentences(layout, monkeypatch):
    from audioreason.backends import load_backend

    reads, windows = [], []
    real = T.iter_blocks

    def recorded(path, block_seconds, rate=None, **kw):
        reads.append((block_seconds, rate, kw))
        for block in real(path, block_seconds, rate, **kw):
            windows.append(len(block))
            yield block

    def no_whole_decode(*args, **kwargs):
        raise AssertionError("the transcriber decoded the whole file")

    monkeypatch.setattr(T, "iter_blocks", recorded)
    monkeypatch.setattr("audioreason.audio.io.load_audio", no_whole_decode)
    asr = load_backend("asr", "packaged:whisper-tiny.en")
    seen = []
    found = asyncio.run(
        T.transcribe_recording(layout.path, asr=asr, window=14.0, guard=3.0, on_window=lambda a, b: seen.append((a, b)))
    )
    # one front-to-back pass at 16 kHz in 10 s blocks; windows of at most 14 s (here [0, 14] and [6.5, 20.2])
    assert reads == [(T.READ_SECONDS, 16000, {})]
    assert max(windows) <= T.READ_SECONDS * RATE + 64
    assert len(seen) == 2 and all(b - a <= 14.0 + 1e-9 for a, b in seen)
    assert len(found) == 3
    for sentence, (a, b, text) in zip(found, layout.sentences):
        # word timestamps of whisper tiny.en on espeak-ng speech: measured within 0.45 s of the true edges
        assert abs(sentence["start"] - a) <= 0.6 and abs(sentence["end"] - b) <= 0.6
        assert len(_words(text) & _words(sentence["text"])) >= 0.8 * len(_words(text))


# --------------------------------------------------------------------------------- step 3 offline
def _burst(seconds, amplitude=0.1, freq=1000.0):
    t = np.arange(int(round(seconds * RATE))) / RATE
    return (amplitude * np.sqrt(2) * np.sin(2 * np.pi * freq * t)).astype(np.float32)  # RMS = amplitude


def test_energy_events_by_hand():
    x = np.zeros(4 * RATE, np.float32)
    x[RATE : RATE + RATE // 2] = _burst(0.5)  # 1.0-1.5 s at -20 dBFS
    x[2 * RATE : int(2.2 * RATE)] = _burst(0.2)  # 2.0-2.2 s
    x[int(2.4 * RATE) : int(2.6 * RATE)] = _burst(0.2)  # 2.4-2.6 s: 0.2 s after, merged with it
    x[int(3.5 * RATE) : int(3.55 * RATE)] = _burst(0.05)  # 50 ms: shorter than 0.1 s, dropped
    events = energy_events(x, 10.0, [], floor=-120.0)
    assert [(e["start"], e["end"]) for e in events] == [(11.0, 11.5), (12.0, 12.6)]
    assert events[0]["peak_dbfs"] == pytest.approx(-20.0, abs=0.05)
    assert events[0]["centroid_hz"] == pytest.approx(1000, abs=5)
    # inside speech (with its 0.25 s pad) nothing counts
    assert [e["start"] for e in energy_events(x, 10.0, [(12.0, 12.6)], floor=-120.0)] == [11.0]
    assert energy_events(x, 10.0, [(10.8, 11.7)], floor=-120.0)[0]["start"] == 12.0


def test_offline_substitute_measures_the_placed_event(layout):
    segment = {"index": 0, "start": 0.0, "end": layout.duration}
    sentences = [{"start": a, "end": b, "text": t} for a, b, t in layout.sentences]
    dense = offline_dense(layout.path, segment, sentences)
    (event,) = dense["events"]
    assert abs(event["start"] - layout.event[0]) <= 0.1 and abs(event["end"] - layout.event[1]) <= 0.1
    assert event["label"] == EVENT_LABEL and "source not identified" in event["description"]
    peak = float(re.search(r"peak (-?[\d.]+) dBFS", event["description"]).group(1))
    assert peak == pytest.approx(-20.0, abs=1.0)  # two tones of amplitude 0.1: RMS 0.1
    floor = dense["measurements"]["noise_floor_dbfs"]
    assert -61.0 <= floor <= -59.5  # the -60 dBFS noise bed (10th percentile of 50 ms frames)
    assert f"noise floor {floor:.1f} dBFS" in dense["environment"]
    speech = sum(b - a for a, b, _ in layout.sentences) / layout.duration
    assert dense["measurements"]["speech_share"] == pytest.approx(speech, abs=0.1)
    assert all(t["speaker"] is None and t["paralinguistic"].startswith("measured:") for t in dense["transcript"])
    assert dense["speakers"] == [] and EVENT_SECONDS == pytest.approx(event["end"] - event["start"], abs=0.1)
