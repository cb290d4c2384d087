"""Where anchors go (AudioSpan, arXiv:2608.26431, App. B.3 "Anchor selection", second pass): a window
"held within [one] segment, kept clear of the audio's opening and close, floored at a few seconds and
capped to a small fraction of the total", "placed over active speech", and several positions "spread
across distinct segments".

``place_windows`` implements those constraints, deterministically for a seed:

1. window length: ``length`` when fixed (an added event lasts as long as its clip), else drawn uniformly in
   [min_seconds, min(max_seconds, max_fraction x duration, the segment's usable length)];
2. usable part of a segment: the segment minus the first and last ``edge`` seconds of the recording, edge =
   max(edge_seconds, edge_fraction x duration);
3. segments whose usable part can hold a window are visited in an order drawn from the seed; in each, up to
   ``attempts`` starts are drawn uniformly and the first window whose speech fraction (``speech(start,
   end)``, the share of the window covered by detected speech) reaches ``min_speech`` is kept; one window
   per segment, until ``count`` are found;
4. a ``PlacementError`` (a ValueError) says which rule left no room: too short a recording for the length
   rules, too few usable segments, or too few windows over speech.

The paper's first pass (a language model choosing semantically rich segments from the summary caption)
is not reproduced: ``segments`` are given (the caption's segment index) or cut every ``segment_seconds``
(§4.2 caps a segment at about 5 minutes).

Speech: ``silero_speech(path)`` runs Silero VAD (the ``silero-vad`` package, its model shipped in the
wheel) on each candidate window only, read from the file at 16 kHz through ``stream.iter_blocks``, so a
2-hour recording is never decoded whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import numpy as np

SpeechFraction = Callable[[float, float], float]
VAD_RATE = 16000


class PlacementError(ValueError):
    """No placement satisfies the rules; the message names the rule."""


@dataclass(frozen=True)
class Segment:
    id: str
    start: float
    end: float


@dataclass(frozen=True)
class PlacementRules:
    """App. B.3's constraints, as numbers (defaults chosen for 10-minute to 2-hour recordings)."""

    min_seconds: float = 3.0  # "floored at a few seconds"
    max_seconds: float = 10.0
    max_fraction: float = 0.02  # "capped to a small fraction of the total"
    edge_seconds: float = 30.0  # "kept clear of the audio's opening and close"
    edge_fraction: float = 0.05
    min_speech: float = 0.5  # "placed over active speech": at least half the window is speech
    attempts: int = 20  # candidate starts tried per segment


@dataclass(frozen=True)
class Window:
    start: float
    end: float
    segment: str
    speech: float  # the speech fraction measured over the window


def fixed_segments(duration: float, segment_seconds: float = 300.0) -> list[Segment]:
    """Consecutive segments of ``segment_seconds`` (the last one shorter), named seg-1, seg-2, ..."""
    if duration <= 0 or segment_seconds <= 0:
        raise ValueError(f"duration and segment_seconds must be positive, got {duration}, {segment_seconds}")
    starts = np.arange(0.0, duration, segment_seconds)
    return [Segment(f"seg-{i + 1}", float(s), float(min(s + segment_seconds, duration))) for i, s in enumerate(starts)]


def place_windows(
    duration: float,
    count: int,
    speech: SpeechFraction,
    *,
    seed: int,
    segments: Optional[Sequence[Segment]] = None,
    length: Optional[float] = None,
    rules: PlacementRules = PlacementRules(),
) -> list[Window]:
    """``count`` windows in time order; see the module docstring for the rules. Raises PlacementError."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    segments = list(segments) if segments is not None else fixed_segments(duration)
    cap = min(rules.max_seconds, rules.max_fraction * duration)
    if length is not None and not rules.min_seconds <= length <= cap:
        raise PlacementError(
            f"a {length:.3f} s window breaks the length rules: at least {rules.min_seconds} s and "
            f"at most min({rules.max_seconds} s, {rules.max_fraction:g} x {duration:.1f} s) = {cap:.3f} s"
        )
    if cap < rules.min_seconds:
        raise PlacementError(
            f"no room: windows of at least {rules.min_seconds} s may be at most {cap:.3f} s in a "
            f"{duration:.1f} s recording (max_fraction {rules.max_fraction:g})"
        )
    edge = max(rules.edge_seconds, rules.edge_fraction * duration)
    shortest = length if length is not None else rules.min_seconds
    usable = []
    for seg in segments:
        lo, hi = max(seg.start, edge), min(seg.end, duration - edge)
        if hi - lo >= shortest:
            usable.append((seg, lo, hi))
    if len(usable) < count:
        raise PlacementError(
            f"no room: {len(usable)} of {len(segments)} segments hold a {shortest:.3f} s window "
            f"clear of the first and last {edge:.1f} s; {count} distinct segments are needed"
        )
    rng = np.random.default_rng(seed)
    found: list[Window] = []
    low_speech = 0
    for i in rng.permutation(len(usable)):
        seg, lo, hi = usable[i]
        for _ in range(rules.attempts):
            size = length if length is not None else float(rng.uniform(rules.min_seconds, min(cap, hi - lo)))
            start = round(float(rng.uniform(lo, hi - size)), 3)
            end = round(start + size, 3)
            fraction = speech(start, end)
            if fraction >= rules.min_speech:
                found.append(Window(start, end, seg.id, fraction))
                break
            low_speech += 1
        if len(found) == count:
            return sorted(found, key=lambda w: w.start)
    raise PlacementError(
        f"no room: only {len(found)} of {count} windows over speech (>= {rules.min_speech:g} of the "
        f"window) in {len(usable)} usable segments; {low_speech} candidates had too little speech"
    )


_MODEL = None


def _silero():
    global _MODEL
    if _MODEL is None:
        import warnings

        from .anchors import optional

        with warnings.catch_warnings():  # its loader uses deprecated importlib and torch.jit calls
            warnings.simplefilter("ignore", DeprecationWarning)
            _MODEL = optional("silero_vad").load_silero_vad()
    return _MODEL


def speech_spans(samples: np.ndarray, rate: int = VAD_RATE) -> list[tuple[float, float]]:
    """(start, end) seconds of speech that Silero VAD finds in mono 16 kHz ``samples`` (its defaults)."""
    import torch
    from silero_vad import get_speech_timestamps

    if rate != VAD_RATE:
        raise ValueError(f"Silero VAD is run at {VAD_RATE} Hz here, got {rate}")
    found = get_speech_timestamps(
        torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32)), _silero(), sampling_rate=VAD_RATE
    )
    return [(s["start"] / VAD_RATE, s["end"] / VAD_RATE) for s in found]


def silero_speech(path: Union[str, os.PathLike]) -> SpeechFraction:
    """``speech(start, end)`` for ``place_windows``: the share of [start, end] of the file that Silero VAD
    marks as speech, reading only that window (resampled to 16 kHz, channels averaged)."""
    from .stream import iter_blocks

    def fraction(start: float, end: float) -> float:
        blocks = list(iter_blocks(path, end - start, VAD_RATE, start=start, stop=end))
        samples = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
        if len(samples) == 0:
            return 0.0
        covered = sum(b - a for a, b in speech_spans(samples))
        return covered / (len(samples) / VAD_RATE)

    return fraction
