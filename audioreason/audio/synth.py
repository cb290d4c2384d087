"""Deterministic synthetic clips standing in for benchmark audio, which is not redistributable here.

The signals are crude on purpose (they only need to be real, decodable audio with the right broad
character): "speech" is a voiced harmonic source with a gliding pitch and syllable-rate envelope,
"music" a sequence of harmonic notes, "sound" band-limited noise bursts; MMAR's "mix-*" modalities sum
their parts.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _rng(seed_text: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(seed_text.encode()).digest()[:8], "little"))


def _step(t: np.ndarray) -> float:
    return float(t[1] - t[0]) if len(t) > 1 else 0.0


def _speech(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    f0 = rng.uniform(100, 220) * (1 + 0.15 * np.sin(2 * np.pi * rng.uniform(0.3, 0.8) * t))
    phase = 2 * np.pi * np.cumsum(f0) * _step(t)
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    syllables = np.clip(np.sin(2 * np.pi * rng.uniform(3, 5) * t), 0, None) ** 2
    return 0.3 * voiced * syllables


def _music(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    notes = 440 * 2 ** (rng.choice([-9, -7, -5, -4, -2, 0, 3, 5], size=8) / 12)
    idx = np.minimum((t / (t[-1] + 1e-9) * len(notes)).astype(int), len(notes) - 1)
    phase = 2 * np.pi * np.cumsum(notes[idx]) * _step(t)
    note_pos = (t / (t[-1] + 1e-9) * len(notes)) % 1
    envelope = np.exp(-3 * note_pos)
    return 0.25 * envelope * sum(np.sin(k * phase) / k**1.5 for k in range(1, 6))


def _sound(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(len(t))
    smooth = np.convolve(noise, np.ones(8) / 8, mode="same")  # crude low-pass
    bursts = (np.sin(2 * np.pi * rng.uniform(0.5, 2) * t) > 0.3).astype(float)
    return 0.3 * smooth * bursts


_PARTS = {"speech": _speech, "music": _music, "sound": _sound}


def synthesize_clip(modality: str, seconds: float = 3.0, sampling_rate: int = 16000, seed: str = "") -> np.ndarray:
    """A float32 mono clip for an MMAR modality ("speech", "music", "sound", "mix-sound-speech", ...).

    The same (modality, seconds, rate, seed) always gives the same samples.
    """
    parts = [p for p in modality.replace("mix-", "").split("-") if p]
    unknown = [p for p in parts if p not in _PARTS]
    if not parts or unknown:
        raise ValueError(f"unknown modality {modality!r}: use speech, music, sound or mix-<a>-<b>")
    t = np.arange(int(round(seconds * sampling_rate))) / sampling_rate
    rng = _rng(f"{seed}|{modality}|{seconds}|{sampling_rate}")
    clip = sum(_PARTS[p](t, rng) for p in parts) / len(parts)
    peak = np.abs(clip).max()
    return (0.8 * clip / peak if peak > 0 else clip).astype(np.float32)
