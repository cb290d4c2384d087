"""The demo recording's non-speech events, made with numpy: a two-tone doorbell chime, knocks on a door, a
rain bed and a telephone ring. Each maker returns a float32 clip of peak 1 with silent ends (short raised-cosine
fades) and a one-line description. Without ``vary`` a maker gives its canonical sound; with a generator it
varies pitch, count and length (the long recording's later episodes)."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

DOORBELL_HZ = (659.25, 523.25)  # E5 then C5, "ding-dong"
KNOCKS, KNOCK_SPACING = 3, 0.25  # knocks, seconds between their onsets
RAIN_SECONDS = 5.0
RINGS, RING_SECONDS, RING_GAP = 2, 0.9, 0.5  # rings of a 1000 + 1250 Hz bell trilled at 20 Hz
FADE_S = 0.005


def _fade(clip: np.ndarray, rate: int, seconds: float = FADE_S) -> np.ndarray:
    n = min(int(seconds * rate), len(clip) // 2)
    ramp = 0.5 - 0.5 * np.cos(np.pi * np.arange(n) / n)
    clip[:n] *= ramp
    clip[len(clip) - n :] *= ramp[::-1]
    return clip


def _finish(clip: np.ndarray, rate: int, fade: float = FADE_S) -> np.ndarray:
    clip = _fade(clip.astype(np.float64), rate, fade)
    return (clip / np.abs(clip).max()).astype(np.float32)


def doorbell(rate: int, vary: Optional[np.random.Generator]) -> tuple[np.ndarray, str]:
    """Two decaying bell notes, the second a major third below the first: 0.6 s then 0.9 s."""
    scale = 1.0 + (vary.uniform(-0.04, 0.04) if vary is not None else 0.0)
    high, low = DOORBELL_HZ[0] * scale, DOORBELL_HZ[1] * scale
    notes = []
    for freq, seconds in ((high, 0.6), (low, 0.9)):
        t = np.arange(int(seconds * rate)) / rate
        tone = np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t) + 0.1 * np.sin(6 * np.pi * freq * t)
        notes.append(_fade(tone * np.exp(-t / 0.35), rate, 0.02))
    return _finish(np.concatenate(notes), rate), f"a two-tone doorbell chime, {high:.0f} Hz then {low:.0f} Hz"


def knock(rate: int, vary: Optional[np.random.Generator]) -> tuple[np.ndarray, str]:
    """Knocks on a wooden door: each a short noise burst with a 150 Hz thud, decaying in tens of ms."""
    rng = vary if vary is not None else np.random.default_rng(7)
    count = int(vary.integers(2, 5)) if vary is not None else KNOCKS
    spacing = vary.uniform(0.2, 0.32) if vary is not None else KNOCK_SPACING
    hit = int(0.12 * rate)
    t = np.arange(hit) / rate
    clip = np.zeros(int((count - 1) * spacing * rate) + hit)
    for k in range(count):
        strike = rng.standard_normal(hit) * np.exp(-t / 0.008) + 2.0 * np.sin(2 * np.pi * 150 * t) * np.exp(-t / 0.03)
        at = int(k * spacing * rate)
        clip[at : at + hit] += strike
    words = {2: "two", 3: "three", 4: "four"}[count]
    return _finish(clip, rate, 0.001), f"{words} knocks on a wooden door"


def rain(rate: int, vary: Optional[np.random.Generator]) -> tuple[np.ndarray, str]:
    """A rain bed: low-passed noise (the hiss) with scattered droplet clicks, faded in and out over 0.15 s."""
    rng = vary if vary is not None else np.random.default_rng(11)
    seconds = vary.uniform(4.0, 7.0) if vary is not None else RAIN_SECONDS
    n = int(seconds * rate)
    hiss = np.convolve(rng.standard_normal(n), np.ones(4) / 4, mode="same")
    drops = np.zeros(n)
    drops[rng.integers(0, n, size=int(40 * seconds))] = rng.uniform(1.0, 3.0, size=int(40 * seconds))
    t = np.arange(int(0.004 * rate)) / rate
    drops = np.convolve(drops, np.sin(2 * np.pi * 3000 * t) * np.exp(-t / 0.001), mode="same")
    return _finish(hiss + 0.5 * drops, rate, 0.15), f"rain falling, a steady hiss with droplets, {seconds:.1f} s"


def phone(rate: int, vary: Optional[np.random.Generator]) -> tuple[np.ndarray, str]:
    """A telephone bell: rings of a 1000 + 1250 Hz pair trilled at 20 Hz, 0.5 s apart."""
    rings = int(vary.integers(1, 4)) if vary is not None else RINGS
    t = np.arange(int(RING_SECONDS * rate)) / rate
    trill = 0.5 + 0.5 * np.sin(2 * np.pi * 20 * t)
    ring = _fade((np.sin(2 * np.pi * 1000 * t) + np.sin(2 * np.pi * 1250 * t)) * trill, rate, 0.01)
    gap = np.zeros(int(RING_GAP * rate))
    parts = [ring] + [p for _ in range(rings - 1) for p in (gap, ring)]
    words = {1: "once", 2: "twice", 3: "three times"}[rings]
    return _finish(np.concatenate(parts), rate), f"a telephone ringing {words}"


MAKERS: dict[str, Callable[[int, Optional[np.random.Generator]], tuple[np.ndarray, str]]] = {
    "doorbell": doorbell,
    "knock": knock,
    "rain": rain,
    "phone": phone,
}


def make(label: str, rate: int, vary: Optional[np.random.Generator] = None) -> tuple[np.ndarray, str]:
    """The clip and description of the event ``label`` (one of MAKERS)."""
    if label not in MAKERS:
        raise ValueError(f"unknown sound {label!r}: one of {sorted(MAKERS)}")
    return MAKERS[label](rate, vary)
