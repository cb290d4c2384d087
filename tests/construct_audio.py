"""A short recording for the caption tests: three espeak-ng sentences over a -60 dBFS noise bed, with a two-tone
sound event in the gap after the first, and where each thing is (seconds)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from test_anchors_signals import RATE, SENTENCES, espeak

NOISE_SIGMA = 0.001  # white noise: RMS 0.001 = -60 dBFS
EVENT_SECONDS = 0.6
EVENT_AMPLITUDE = 0.1  # each tone; two tones: RMS 0.1 = -20 dBFS


@dataclass(frozen=True)
class Layout:
    path: Path
    duration: float
    sentences: list  # (start, end, text)
    event: tuple  # (start, end)


def two_tones(seconds: float = EVENT_SECONDS) -> np.ndarray:
    t = np.arange(int(round(seconds * RATE))) / RATE
    x = EVENT_AMPLITUDE * (np.sin(2 * np.pi * 660 * t) + np.sin(2 * np.pi * 990 * t))
    fade = int(0.01 * RATE)  # 10 ms fades: no click
    x[:fade] *= np.linspace(0, 1, fade)
    x[-fade:] *= np.linspace(1, 0, fade)
    return x.astype(np.float32)


def caption_recording(folder: Path) -> Layout:
    """1 s lead, sentence 0, 3 s gap (the event 1.2 s into it), sentence 1, 2 s gap, sentence 2, 1.5 s tail."""
    from audioreason.audio import write_audio

    parts, sentences, t, event = [np.zeros(RATE, np.float32)], [], 1.0, None
    for k, gap in enumerate((3.0, 2.0, 1.5)):
        speech = espeak(SENTENCES[k], folder)
        speech = 0.3 * speech / np.abs(speech).max()
        sentences.append((t, t + len(speech) / RATE, SENTENCES[k]))
        t += len(speech) / RATE
        silence = np.zeros(int(round(gap * RATE)), np.float32)
        if k == 0:
            at = int(round(1.2 * RATE))
            silence[at : at + int(round(EVENT_SECONDS * RATE))] += two_tones()
            event = (t + 1.2, t + 1.2 + EVENT_SECONDS)
        parts += [speech, silence]
        t += gap
    samples = np.concatenate(parts)
    samples = samples + np.random.default_rng(0).normal(0, NOISE_SIGMA, len(samples)).astype(np.float32)
    path = write_audio(folder / "recording.wav", samples, RATE)
    return Layout(path, len(samples) / RATE, sentences, event)
