"""What stands in for the audio-language model of step 3 (acoustic captioning, AudioSpan, arXiv:2608.26431
§4.2) when the "captioner" role is offline: measurements of the signal, and nothing they cannot support.

Per segment (read alone from the file at 16 kHz through ``audio.stream.iter_blocks``; a segment is capped at
about 5 minutes, so never more than ~19 MB of samples):

* frame levels: 10·log10 of the mean square of 50 ms frames (dBFS, floored at -120 for digital silence);
* noise floor: the 10th percentile of the frame levels (the environment record);
* speech: Silero VAD's speech spans (``audio.placement.speech_spans``) together with the ASR sentences;
* non-speech energy events: runs of frames outside speech (each side padded by 0.25 s) at least ``EVENT_DB``
  (10 dB) above the noise floor and above -70 dBFS, runs closer than 0.3 s merged, runs shorter than 0.1 s
  dropped; each with its onset, offset, peak level, height above the floor and spectral centroid;
* per sentence: its level and its speaking rate (words per second over the ASR times).

The records say what was measured: an event's label is "non-speech energy event", never a guessed source;
speakers are not identified (``speaker`` None) and voices are not described. ``OFFLINE_CAPTIONER`` is the
label written into the caption's provenance.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Sequence, Union

import numpy as np

from audioreason.audio.stream import iter_blocks

RATE = 16000
FRAME_SECONDS = 0.05
FLOOR_PERCENTILE = 10.0
EVENT_DB = 10.0
EVENT_MIN_DBFS = -70.0
SPEECH_PAD = 0.25
MERGE_GAP = 0.3
MIN_EVENT = 0.1
SILENCE_DB = -120.0
EVENT_LABEL = "non-speech energy event"
OFFLINE_CAPTIONER = (
    "offline: signal measurements (Silero VAD speech spans, RMS energy events, noise floor), "
    "no audio-language model: speakers, voices and sound sources are not identified"
)


def read_span(path: Union[str, os.PathLike], start: float, end: float) -> np.ndarray:
    """Mono float32 samples at 16 kHz of [start, end) s of the file, reading only that stretch."""
    blocks = list(iter_blocks(path, max(end - start, 0.01), RATE, start=start, stop=end))
    return np.concatenate(blocks) if blocks else np.zeros(0, np.float32)


def frame_levels(samples: np.ndarray) -> np.ndarray:
    """dBFS of consecutive 50 ms frames (the last partial frame dropped; one frame for a shorter clip)."""
    n = int(round(FRAME_SECONDS * RATE))
    count = max(1, len(samples) // n)
    frames = np.zeros((count, n), np.float64)
    usable = samples[: count * n].astype(np.float64)
    frames.reshape(-1)[: len(usable)] = usable
    power = np.mean(frames**2, axis=1)
    with np.errstate(divide="ignore"):
        return np.maximum(10 * np.log10(power), SILENCE_DB)


def noise_floor(levels: np.ndarray) -> float:
    return float(np.percentile(levels, FLOOR_PERCENTILE))


def _centroid(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    freqs = np.fft.rfftfreq(len(samples), 1 / RATE)
    total = spectrum.sum()
    return float((freqs * spectrum).sum() / total) if total > 0 else 0.0


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[first, last + 1) frame index runs where ``mask`` is true."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def energy_events(
    samples: np.ndarray, offset: float, speech: Iterable[tuple[float, float]], floor: float
) -> list[dict[str, Any]]:
    """Non-speech energy events in ``samples`` (which start at ``offset`` s of the recording): module docstring.
    ``speech``: (start, end) spans in the recording's seconds, masked out with ``SPEECH_PAD`` each side."""
    levels = frame_levels(samples)
    times = offset + np.arange(len(levels)) * FRAME_SECONDS
    active = (levels >= floor + EVENT_DB) & (levels >= EVENT_MIN_DBFS)
    for a, b in speech:
        active &= ~((times + FRAME_SECONDS > a - SPEECH_PAD) & (times < b + SPEECH_PAD))
    merged: list[list[int]] = []
    for first, stop in _runs(active):
        if merged and (first - merged[-1][1]) * FRAME_SECONDS < MERGE_GAP:
            merged[-1][1] = stop
        else:
            merged.append([first, stop])
    n = int(round(FRAME_SECONDS * RATE))
    events = []
    for first, stop in merged:
        if (stop - first) * FRAME_SECONDS < MIN_EVENT:
            continue
        peak = float(levels[first:stop].max())
        events.append(
            {
                "start": round(offset + first * FRAME_SECONDS, 3),
                "end": round(offset + stop * FRAME_SECONDS, 3),
                "peak_dbfs": round(peak, 1),
                "above_floor_db": round(peak - floor, 1),
                "centroid_hz": round(_centroid(samples[first * n : stop * n])),
            }
        )
    return events


def describe_event(event: dict[str, Any]) -> str:
    return (
        f"energy outside detected speech for {event['end'] - event['start']:.2f} s, peak {event['peak_dbfs']:.1f} "
        f"dBFS, {event['above_floor_db']:.1f} dB above the segment's noise floor, spectral centroid "
        f"{event['centroid_hz']} Hz (measured; source not identified offline)"
    )


def speech_spans_of(samples: np.ndarray, offset: float) -> list[tuple[float, float]]:
    """Silero VAD's speech spans of ``samples`` in the recording's seconds."""
    from audioreason.audio.placement import speech_spans

    if len(samples) < RATE // 10:
        return []
    return [(offset + a, offset + b) for a, b in speech_spans(samples)]


def _sentence_notes(sentence: dict[str, Any], samples: np.ndarray, offset: float) -> str:
    a = max(0, int(round((sentence["start"] - offset) * RATE)))
    b = min(len(samples), int(round((sentence["end"] - offset) * RATE)))
    length = sentence["end"] - sentence["start"]
    words = len(sentence["text"].split())
    power = float(np.mean(samples[a:b].astype(np.float64) ** 2)) if b > a else 0.0
    level = 10 * math.log10(power) if power > 0 else SILENCE_DB
    rate = f", {words / length:.1f} words/s" if length > 0 else ""
    return f"measured: level {level:.1f} dBFS{rate}"


def offline_dense(
    path: Union[str, os.PathLike], segment: dict[str, Any], sentences: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The dense caption of one segment (``{"index", "start", "end", ...}``) from measurements alone:
    ``{"segment", "start", "end", "environment", "transcript", "events", "speakers": [], "measurements"}``;
    ``sentences``: the ASR sentences that start inside the segment."""
    start, end = float(segment["start"]), float(segment["end"])
    samples = read_span(path, start, end)
    levels = frame_levels(samples)
    floor = noise_floor(levels)
    vad = speech_spans_of(samples, start)
    spoken = [(s["start"], s["end"]) for s in sentences]
    events = energy_events(samples, start, vad + spoken, floor)
    covered = _covered(vad, start, end)
    share = covered / (end - start) if end > start else 0.0
    environment = (
        f"noise floor {floor:.1f} dBFS (10th percentile of 50 ms frame levels); speech detected in "
        f"{share:.0%} of the segment (Silero VAD); {len(events)} non-speech energy event(s) "
        "(measured; the setting and its sound sources are not identified offline)"
    )
    transcript = [
        {
            "start": s["start"],
            "end": s["end"],
            "speaker": None,
            "text": s["text"],
            "paralinguistic": _sentence_notes(s, samples, start),
        }
        for s in sentences
    ]
    return {
        "segment": int(segment["index"]),
        "start": start,
        "end": end,
        "environment": environment,
        "transcript": transcript,
        "events": [
            {"start": e["start"], "end": e["end"], "label": EVENT_LABEL, "description": describe_event(e)}
            for e in events
        ],
        "speakers": [],  # not identified offline
        "measurements": {
            "noise_floor_dbfs": round(floor, 1),
            "speech_share": round(share, 3),
            "speech_spans": [[round(a, 3), round(b, 3)] for a, b in vad],
        },
    }


def _covered(spans: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] covered by the union of ``spans``."""
    total, reach = 0.0, start
    for a, b in sorted(spans):
        a, b = max(a, reach), min(b, end)
        if b > a:
            total += b - a
            reach = b
    return total


__all__ = [
    "EVENT_DB",
    "EVENT_LABEL",
    "OFFLINE_CAPTIONER",
    "energy_events",
    "frame_levels",
    "noise_floor",
    "offline_dense",
    "read_span",
    "speech_spans_of",
]
