"""AudioSpan anchor operations on samples (AudioSpan, arXiv:2608.26431, §3.2, §4.4, App. B.3): pure signal
code, one function per operation. File streaming, manifests and placement live in ``anchor_files``,
``anchor_manifest`` and ``placement``.

Every function takes the samples of ONE span as float64 ``(frames, channels)`` in [-1, 1] and returns the
edited span (and, where the operation has one, the number it applied). The audio outside the span is
never seen here, so the caller copies it untouched.

- **Addition** (``add_event``): the event clip, faded in and out over ``fade_s`` (10 ms raised cosine, so
  no click is added), is scaled so that its level is ``snr_db`` above the level of the local signal under
  it, and added to every channel. Level = ``measure``: "rms" (default: 10·log10 of the mean square of the
  channel mean) or "lufs" (ITU-R BS.1770-4 integrated loudness, ``pyloudnorm``; needs >= 0.4 s).
  B.3: "laid over the existing audio at a controlled signal-to-noise ratio, roughly 6-10 dB".
- **Deletion**: ``silence_span`` (the span faded to zero over ``fade_s`` at each edge) or ``smear_span``
  (B.3: "a low-pass filter near 300 Hz mixed with a modulated noise bed"): a zero-phase Butterworth
  low-pass (scipy ``sosfiltfilt``, order 4 run forward and back: -6 dB at the cut-off, -48 dB at 600 Hz,
  -84 dB at 1 kHz) plus Gaussian noise at ``noise_db`` relative to the span's own RMS, its amplitude modulated by
  a raised cosine at ``mod_hz`` (a syllable-like 4 Hz) with depth ``mod_depth``; edges cross-faded over
  ``fade_s``. The span keeps its place and length.
- **Modification**: ``change_loudness`` (gain ``gain_db``, B.3's ±8-12 dB, reached through ``ramp_s``
  raised-cosine ramps inside the span) or ``change_speed`` (pitch-preserving time-stretch by the Rubber
  Band library through ``pedalboard.time_stretch``; playback speed ``speed_factor`` > 1 speeds up, < 1
  slows down, B.3's "factor of 1.5-3"; the span becomes ``round(frames / speed_factor)`` frames long, its
  edges cross-faded over ``fade_s`` with the stretch of the original's own first and last samples).

Libraries (and why): pedalboard (Rubber Band) for the time-stretch, the one maintained pitch-preserving
stretcher on PyPI here; scipy's Butterworth for the low-pass, because pedalboard's ``LowpassFilter`` is
first order (measured on white noise at 16 kHz: -3 dB at 300 Hz but only -11 dB at 1 kHz and -17 dB at
2 kHz, so speech stays intelligible) and its ``LadderFilter`` LPF24 gives -28 dB at 600 Hz and -44 dB at
1 kHz, against -48 and -84 dB here; pyloudnorm for BS.1770 loudness; gains and fades are one multiplication each.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

FADE_S = 0.010  # edge fades and cross-fades: 10 ms
RAMP_S = 0.050  # loudness ramps: 50 ms
SNR_MEASURES = ("rms", "lufs")
LOWPASS_HZ = 300.0
LOWPASS_ORDER = 4  # run forward and backward (sosfiltfilt): order 8 in magnitude, zero phase
NOISE_DB = -6.0  # noise bed RMS relative to the span's RMS
MOD_HZ = 4.0
MOD_DEPTH = 0.8


def optional(module: str) -> Any:
    """Import a module of the ``anchors`` extra, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{module} is needed for anchored audio: pip install 'audioreason[anchors]' ({err})") from err


def as_frames(x: np.ndarray) -> np.ndarray:
    """float64 (frames, channels) from (frames,) or (frames, channels)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"expected samples shaped (frames,) or (frames, channels), got {x.shape}")
    return x


def ramp(n: int) -> np.ndarray:
    """A raised-cosine ramp of ``n`` values rising from near 0 to near 1 (symmetric, never exactly 0 or 1)."""
    if n <= 0:
        return np.zeros(0)
    return 0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


def edge_frames(frames: int, rate: int, seconds: float) -> int:
    """Frames of a fade of ``seconds``, at most a quarter of the span so the two edges never meet."""
    return min(int(round(seconds * rate)), frames // 4)


def crossfade_edges(original: np.ndarray, edited: np.ndarray, fade: int) -> np.ndarray:
    """``edited`` with its first and last ``fade`` frames blended in from ``original`` (same shape), so the
    span starts and ends on the source's own samples: no step at either boundary."""
    if original.shape != edited.shape:
        raise ValueError(f"cross-fade needs equal shapes, got {original.shape} and {edited.shape}")
    out = edited.copy()
    if fade > 0:
        w = ramp(fade)[:, None]
        out[:fade] = (1 - w) * original[:fade] + w * edited[:fade]
        out[-fade:] = w * original[-fade:] + (1 - w) * edited[-fade:]
    return out


def level_db(x: np.ndarray, rate: int, measure: str = "rms") -> float:
    """The level of ``x`` (channels averaged for "rms"): 10·log10(mean square) dBFS, or BS.1770-4 integrated
    loudness in LUFS ("lufs", pyloudnorm); -inf for digital silence."""
    x = as_frames(x)
    if measure == "rms":
        power = float(np.mean(np.mean(x, axis=1) ** 2))
        return 10 * math.log10(power) if power > 0 else -math.inf
    if measure == "lufs":
        pyloudnorm = optional("pyloudnorm")
        if len(x) < int(0.4 * rate):
            raise ValueError(f"BS.1770 loudness needs at least 0.4 s, got {len(x) / rate:.3f} s")
        return float(pyloudnorm.Meter(rate).integrated_loudness(x))
    raise ValueError(f"measure must be one of {SNR_MEASURES}, got {measure!r}")


def faded_clip(clip: np.ndarray, rate: int, fade_s: float = FADE_S) -> np.ndarray:
    """The event clip as mixed: mono (channels averaged), raised-cosine fade in and out over ``fade_s``."""
    mono = as_frames(clip).mean(axis=1)
    fade = edge_frames(len(mono), rate, fade_s)
    envelope = np.ones(len(mono))
    if fade:
        envelope[:fade] = ramp(fade)
        envelope[-fade:] = ramp(fade)[::-1]
    return mono * envelope


def add_event(
    local: np.ndarray, clip: np.ndarray, rate: int, snr_db: float, *, measure: str = "rms", fade_s: float = FADE_S
) -> tuple[np.ndarray, float]:
    """Addition: (local + g·faded clip on every channel, g in dB) with level(g·clip) - level(local) = snr_db.

    ``local`` is the source under the clip (as many frames as the clip). A silent ``local`` has no SNR to
    aim at: ValueError (placement puts anchors over speech)."""
    local = as_frames(local)
    event = faded_clip(clip, rate, fade_s)
    if len(event) != len(local):
        raise ValueError(f"the clip has {len(event)} frames, the span under it {len(local)}")
    local_level, clip_level = level_db(local, rate, measure), level_db(event, rate, measure)
    if not math.isfinite(local_level):
        raise ValueError("the signal under the event is silent: no SNR can be set against it")
    if not math.isfinite(clip_level):
        raise ValueError("the event clip is silent")
    gain_db = snr_db - (clip_level - local_level)
    return local + (10 ** (gain_db / 20) * event)[:, None], gain_db


def silence_span(span: np.ndarray, rate: int, *, fade_s: float = FADE_S) -> np.ndarray:
    """Deletion by silence: zeros, reached through ``fade_s`` cross-fades at both edges."""
    span = as_frames(span)
    return crossfade_edges(span, np.zeros_like(span), edge_frames(len(span), rate, fade_s))


def lowpass(x: np.ndarray, rate: int, cutoff_hz: float = LOWPASS_HZ, order: int = LOWPASS_ORDER) -> np.ndarray:
    """Zero-phase Butterworth low-pass (scipy ``sosfiltfilt``) along the frames."""
    from scipy.signal import butter, sosfiltfilt

    x = as_frames(x)
    sos = butter(order, cutoff_hz, btype="lowpass", fs=rate, output="sos")
    pad = min(3 * (2 * len(sos) + 1), len(x) - 1)  # scipy's default pad length, shortened for short spans
    return sosfiltfilt(sos, x, axis=0, padlen=max(pad, 0))


def noise_bed(
    frames: int,
    channels: int,
    rate: int,
    rng: np.random.Generator,
    *,
    mod_hz: float = MOD_HZ,
    mod_depth: float = MOD_DEPTH,
) -> np.ndarray:
    """Gaussian noise of unit RMS before modulation, amplitude-modulated by 1 - depth·(1 - cos(2π·f·t))/2."""
    t = np.arange(frames) / rate
    envelope = 1 - mod_depth * (1 - np.cos(2 * np.pi * mod_hz * t)) / 2
    return rng.standard_normal((frames, channels)) * envelope[:, None]


def smear_span(
    span: np.ndarray,
    rate: int,
    rng: np.random.Generator,
    *,
    cutoff_hz: float = LOWPASS_HZ,
    order: int = LOWPASS_ORDER,
    noise_db: float = NOISE_DB,
    mod_hz: float = MOD_HZ,
    mod_depth: float = MOD_DEPTH,
    fade_s: float = FADE_S,
) -> np.ndarray:
    """Deletion by smearing: low-passed span + modulated noise at ``noise_db`` below the span's RMS."""
    span = as_frames(span)
    span_rms = math.sqrt(float(np.mean(span**2)))
    bed = noise_bed(len(span), span.shape[1], rate, rng, mod_hz=mod_hz, mod_depth=mod_depth)
    smeared = lowpass(span, rate, cutoff_hz, order) + span_rms * 10 ** (noise_db / 20) * bed
    return crossfade_edges(span, smeared, edge_frames(len(span), rate, fade_s))


def change_loudness(span: np.ndarray, rate: int, gain_db: float, *, ramp_s: float = RAMP_S) -> np.ndarray:
    """Modification of loudness: ``gain_db`` over the span, reached by raised-cosine ramps of ``ramp_s``."""
    span = as_frames(span)
    return crossfade_edges(span, span * 10 ** (gain_db / 20), edge_frames(len(span), rate, ramp_s))


def change_speed(span: np.ndarray, rate: int, speed_factor: float, *, fade_s: float = FADE_S) -> np.ndarray:
    """Modification of playback speed: pitch-preserving time-stretch to ``round(frames / speed_factor)``
    frames (Rubber Band through pedalboard, its high-quality defaults)."""
    pedalboard = optional("pedalboard")
    span = as_frames(span)
    if not speed_factor > 0:
        raise ValueError(f"speed_factor must be positive, got {speed_factor}")
    stretched = pedalboard.time_stretch(
        np.ascontiguousarray(span.T, dtype=np.float32), float(rate), stretch_factor=float(speed_factor)
    ).T.astype(np.float64)
    expected = stretched_frames(len(span), speed_factor)
    if len(stretched) != expected:  # the manifest promises this length; never hand back another
        raise RuntimeError(f"time_stretch gave {len(stretched)} frames, expected {expected}")
    fade = edge_frames(len(stretched), rate, fade_s)
    if fade:  # blend the stretched edges with the original's own first and last frames
        head, tail = span[:fade], span[-fade:]
        stretched = crossfade_edges(np.concatenate([head, stretched[fade:-fade], tail]), stretched, fade)
    return stretched


def stretched_frames(frames: int, speed_factor: float) -> int:
    """Frames of a span of ``frames`` played at ``speed_factor`` (what Rubber Band gives: round half up)."""
    return int(math.floor(frames / speed_factor + 0.5))


def correlation(a: np.ndarray, b: np.ndarray) -> Optional[float]:
    """Pearson correlation of the channel means of two equal-length signals; None when either is constant."""
    a, b = as_frames(a).mean(axis=1), as_frames(b).mean(axis=1)
    a, b = a - a.mean(), b - b.mean()
    denom = math.sqrt(float(np.dot(a, a)) * float(np.dot(b, b)))
    return float(np.dot(a, b)) / denom if denom > 0 else None
