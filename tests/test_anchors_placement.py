"""Anchor placement (App. B.3's second pass): windows inside one segment, clear of the opening and close,
a few seconds long and a small fraction of the total, over speech, in distinct segments, deterministic
for a seed; a clear error when there is no room. Silero VAD on espeak-ng speech."""

from __future__ import annotations

import pytest
from test_anchors_signals import RATE, speech_recording

from audioreason.audio.placement import (
    PlacementError,
    PlacementRules,
    Segment,
    fixed_segments,
    place_windows,
    silero_speech,
    speech_spans,
)


def speech_in(intervals):
    """speech(start, end) for intervals of speech given by hand."""

    def fraction(start, end):
        covered = sum(max(0.0, min(end, b) - max(start, a)) for a, b in intervals)
        return covered / (end - start)

    return fraction


HOUR = 3600.0
TALK = speech_in([(0.0, HOUR)])


def test_windows_follow_every_rule():
    segments = fixed_segments(HOUR)  # twelve 5-minute segments
    assert len(segments) == 12 and segments[-1] == Segment("seg-12", 3300.0, 3600.0)
    windows = place_windows(HOUR, 3, TALK, seed=5, segments=segments)
    assert len(windows) == 3 and len({w.segment for w in windows}) == 3
    assert [w.start for w in windows] == sorted(w.start for w in windows)
    edge = max(30.0, 0.05 * HOUR)  # 180 s
    for w in windows:
        seg = next(s for s in segments if s.id == w.segment)
        assert seg.start <= w.start < w.end <= seg.end
        assert edge <= w.start and w.end <= HOUR - edge
        assert 3.0 <= w.end - w.start <= min(10.0, 0.02 * HOUR) + 1e-9
        assert w.speech == 1.0
    assert windows == place_windows(HOUR, 3, TALK, seed=5, segments=segments)  # deterministic
    assert windows != place_windows(HOUR, 3, TALK, seed=6, segments=segments)


def test_a_fixed_length_window_and_speech_decide_where_it_goes():
    # speech only in 1000-1010 s and 2000-2010 s: the two windows must land there, one per segment
    speech = speech_in([(1000.0, 1010.0), (2000.0, 2010.0)])
    rules = PlacementRules(attempts=2000)
    windows = place_windows(HOUR, 2, speech, seed=1, length=4.0, rules=rules)
    assert [w.end - w.start for w in windows] == pytest.approx([4.0, 4.0])
    assert 998.0 <= windows[0].start and windows[0].end <= 1012.0 and windows[0].speech >= 0.5
    assert 1998.0 <= windows[1].start and windows[1].end <= 2012.0


@pytest.mark.parametrize(
    "duration,count,kwargs,message",
    [
        (100.0, 1, {}, r"at most 2\.000 s in a 100\.0 s recording"),
        (HOUR, 1, {"length": 20.0}, "breaks the length rules"),
        (HOUR, 3, {"segments": [Segment("a", 0, 1800), Segment("b", 1800, HOUR)]}, "2 of 2 segments"),
        (HOUR, 2, {"segments": [Segment("a", 0, 182), Segment("b", 182, HOUR)]}, "1 of 2 segments"),
    ],
)
def test_no_room_is_a_clear_error(duration, count, kwargs, message):
    with pytest.raises(PlacementError, match=message):
        place_windows(duration, count, TALK, seed=0, **kwargs)


def test_a_recording_without_speech_has_no_room():
    with pytest.raises(PlacementError, match=r"only 0 of 3 windows over speech .* 240 candidates had too little"):
        place_windows(HOUR, 3, speech_in([]), seed=0)


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    return speech_recording(tmp_path_factory.mktemp("vad"), seconds=40.0)


def test_silero_finds_the_espeak_sentences_and_placement_lands_on_them(speech):
    from audioreason.audio import load_audio

    path, intervals = speech
    samples, _ = load_audio(path, sampling_rate=RATE)
    found = speech_spans(samples)
    truth = speech_in(intervals)
    # every detected stretch lies (almost) inside a sentence, and the sentences are (almost) all found
    assert sum((b - a) * truth(a, b) for a, b in found) / sum(b - a for a, b in found) > 0.9
    assert sum(b - a for a, b in found) / sum(b - a for a, b in intervals) > 0.8
    fraction = silero_speech(path)
    assert fraction(0.0, 1.9) == 0.0 and fraction(3.0, 5.5) > 0.8  # a gap, then inside the first sentence
    rules = PlacementRules(min_seconds=2.0, max_seconds=3.0, max_fraction=0.1, edge_seconds=1.0, min_speech=0.8)
    windows = place_windows(40.0, 3, fraction, seed=2, segments=fixed_segments(40.0, 10.0), rules=rules)
    for w in windows:
        assert truth(w.start, w.end) >= 0.7, (w, intervals)
