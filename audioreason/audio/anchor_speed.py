"""Speed of an edited span measured from the audio (``verify_anchored``'s speed check).

A pitch-preserving time-stretch by ``speed_factor`` keeps the source's spectrum and compresses its time
axis: the magnitude spectrogram of the edited span at time t matches the source's at t · speed_factor.
``measure_speed`` finds the time scale that best aligns the two spectrograms (a grid of ±50 % around the
manifest's factor in 1 % steps): that scale is the measured speed, and the correlation there says how well
the edited span is the time-stretched source (a zeroed span has none). A plain resample to the same
length (the speed changed by pitch shifting, not time-stretching) aligns on time too, but its spectrum
is scaled in frequency: it matches the source resampled better than the source time-stretched, which
``resample_correlation`` shows.

Measured once here on espeak-ng speech, 3-s spans at x1.5, x2, x3 and x1/1.5: Rubber Band's stretch as
apply makes it correlates 0.92-0.99 with the source time-scaled by the factor (its low-quality mode, in
effect another stretcher, 0.72-0.93), and both are measured within 1 % of the factor; the span resampled
instead correlates 0.15-0.45 with it, and 1.0 with the resampled source. ``verify_anchored`` holds the
measured speed to ±3 %, the correlation to >= 0.7 and the resample correlation below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

GRID_STEP = 0.01  # relative step of the speed grid
GRID_SPAN = 0.5  # the grid covers factor x (1 +- GRID_SPAN)
MIN_OVERLAP = 0.5  # a scale must align at least half of the edited span's frames


@dataclass(frozen=True)
class SpeedMeasure:
    speed: Optional[float]  # the best-aligning time scale; None for a silent span
    stretch_correlation: Optional[float]  # spectrogram correlation with the source time-scaled by ``speed``
    at_factor: Optional[float]  # the same at the manifest's factor
    resample_correlation: Optional[float]  # spectrogram correlation with the source resampled to its length


def _spectrogram(x: np.ndarray, nperseg: int) -> np.ndarray:
    from scipy.signal import stft

    _, _, z = stft(x, nperseg=nperseg, noverlap=3 * nperseg // 4, boundary=None, padded=False)
    return np.abs(z)


def _correlation(a: np.ndarray, b: np.ndarray) -> Optional[float]:
    a, b = np.ravel(a - a.mean()), np.ravel(b - b.mean())
    dot = lambda u, v: float(np.einsum("i,i->", u, v))  # noqa: E731 - no BLAS threads: 100x faster when busy
    denom = math.sqrt(dot(a, a) * dot(b, b))
    return dot(a, b) / denom if denom > 0 else None


def _scaled(source: np.ndarray, frames: int, hop: int, nperseg: int, scale: float) -> tuple[np.ndarray, slice]:
    """The source spectrogram read at the edited frames' times x ``scale``, and which edited frames that covers."""
    centre = (np.arange(frames) * hop + nperseg / 2) * scale  # samples into the source span
    index = (centre - nperseg / 2) / hop
    inside = np.flatnonzero((index >= 0) & (index <= source.shape[1] - 1))
    if len(inside) == 0:
        return source[:, :0], slice(0, 0)
    keep = slice(int(inside[0]), int(inside[-1]) + 1)
    index = index[keep]
    low = np.minimum(np.floor(index).astype(int), source.shape[1] - 2)
    w = index - low
    return source[:, low] * (1 - w) + source[:, low + 1] * w, keep


def measure_speed(source_span: np.ndarray, edited_span: np.ndarray, rate: int, factor: float) -> SpeedMeasure:
    """See the module docstring. Spans are (frames,) or (frames, channels); channels are averaged."""
    from scipy.signal import resample

    src = np.asarray(source_span, np.float64).reshape(len(source_span), -1).mean(axis=1)
    edit = np.asarray(edited_span, np.float64).reshape(len(edited_span), -1).mean(axis=1)
    nperseg = 2 ** max(6, round(math.log2(0.032 * rate)))  # ~32 ms windows
    hop = nperseg // 4
    if len(src) < 2 * nperseg or len(edit) < 2 * nperseg or not np.any(edit):
        return SpeedMeasure(None, None, None, None)
    s, a = _spectrogram(src, nperseg), _spectrogram(edit, nperseg)
    best: tuple[float, Optional[float]] = (factor, None)
    at_factor = None
    steps = int(round(GRID_SPAN / GRID_STEP))
    for k in range(-steps, steps + 1):
        scale = factor * (1 + k * GRID_STEP)
        reference, keep = _scaled(s, a.shape[1], hop, nperseg, scale)
        if keep.stop - keep.start < MIN_OVERLAP * a.shape[1]:
            continue
        r = _correlation(a[:, keep], reference)
        if k == 0:
            at_factor = r
        if r is not None and (best[1] is None or r > best[1]):
            best = (scale, r)
    resampled = _spectrogram(resample(src, len(edit)), nperseg)
    width = min(resampled.shape[1], a.shape[1])
    return SpeedMeasure(
        best[0] if best[1] is not None else None, best[1], at_factor, _correlation(a[:, :width], resampled[:, :width])
    )
