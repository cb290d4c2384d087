"""Decode audio from a file or an in-memory array into mono float32 at a requested rate.

torchcodec (FFmpeg) decodes first; when it is missing or cannot load its FFmpeg libraries the
decoder falls back to soundfile (WAV, FLAC, OGG). Both failure kinds are caught: ``ImportError`` when
torchcodec is absent, ``RuntimeError`` when it cannot load FFmpeg's shared libraries. Resampling uses soxr.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

AudioSource = Union[str, os.PathLike, dict, tuple]


class AudioError(ValueError):
    """Audio that cannot be used: missing file, undecodable data, no samples, NaN or Inf samples."""


def _decode_torchcodec(path: str) -> tuple[np.ndarray, int]:
    from torchcodec.decoders import AudioDecoder  # ImportError / RuntimeError when unusable

    samples = AudioDecoder(path).get_all_samples()
    return samples.data.numpy().T, int(samples.sample_rate)  # (frames, channels)


def _decode_soundfile(path: str) -> tuple[np.ndarray, int]:
    import soundfile as sf

    data, rate = sf.read(path, dtype="float32", always_2d=True)
    return data, int(rate)


def decode_file(path: Union[str, os.PathLike]) -> tuple[np.ndarray, int, str]:
    """(frames x channels float32, rate, decoder name) for an audio file."""
    path = str(path)
    if not Path(path).is_file():
        raise AudioError(f"audio file not found: {path}")
    errors = []
    for name, decode in (("torchcodec", _decode_torchcodec), ("soundfile", _decode_soundfile)):
        try:
            data, rate = decode(path)
            return np.asarray(data, dtype=np.float32), rate, name
        except (ImportError, RuntimeError, OSError, ValueError) as err:
            errors.append(f"{name}: {type(err).__name__}: {err}")
    raise AudioError(f"cannot decode {path}: " + "; ".join(errors))


def _as_array(source: Any) -> tuple[np.ndarray, int, str]:
    if isinstance(source, (str, os.PathLike)):
        return decode_file(source)
    if isinstance(source, dict):  # the datasets Audio form {"array", "sampling_rate", "path"?}
        if source.get("array") is None:
            if source.get("path"):
                return decode_file(source["path"])
            raise AudioError("audio dict has neither 'array' nor 'path'")
        array, rate = source["array"], source.get("sampling_rate")
    elif isinstance(source, tuple) and len(source) == 2:
        array, rate = source
    else:
        raise AudioError(f"unsupported audio source of type {type(source).__name__}: "
                         "give a path, (array, rate) or {'array': ..., 'sampling_rate': ...}")
    if rate is None or int(rate) <= 0:
        raise AudioError(f"invalid sampling rate {rate!r}")
    array = np.asarray(array, dtype=np.float32)
    if array.ndim == 2 and array.shape[0] < array.shape[1] and array.shape[0] <= 8:
        array = array.T  # (channels, frames) -> (frames, channels)
    return array, int(rate), "array"


def load_audio(source: AudioSource, sampling_rate: Optional[int] = None, *,
               mono: bool = True) -> tuple[np.ndarray, int]:
    """Return (samples, rate): float32, channels averaged when ``mono``, resampled to ``sampling_rate``.

    Raises ``AudioError`` for a missing or undecodable file, an empty signal, or NaN/Inf samples.
    """
    array, rate, _ = _as_array(source)
    if array.ndim == 2 and mono:
        array = array.mean(axis=1)
    if array.size == 0:
        raise AudioError("audio has no samples")
    if not np.isfinite(array).all():
        raise AudioError(f"audio has {int((~np.isfinite(array)).sum())} NaN or infinite samples")
    if sampling_rate and sampling_rate != rate:
        import soxr

        array = soxr.resample(array, rate, sampling_rate).astype(np.float32)
        rate = sampling_rate
    return np.ascontiguousarray(array), rate


def write_audio(path: Union[str, os.PathLike], samples: np.ndarray, sampling_rate: int) -> Path:
    """Write float samples as 16-bit PCM WAV (the format every decoder here reads)."""
    import soundfile as sf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(samples, -1.0, 1.0), sampling_rate, subtype="PCM_16")
    return path
