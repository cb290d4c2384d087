"""The one audio decoder: a file (by path or by its bytes), a dataset's audio value or an array, to float32
samples at a requested rate.

Decoders: torchcodec (FFmpeg) first; when it is missing (``ImportError``) or cannot load FFmpeg's shared
libraries (``RuntimeError``, ``OSError``), soundfile (libsndfile: WAV, FLAC, OGG, MP3). ``backend`` chooses
"auto" (that order), "torchcodec" or "soundfile"; ``resolve_audio_backend`` says which one "auto" gets on
this machine and why (the dataset builders store their audio column by it).

Every decode of a file is held to what its header promises (``header.py``): a WAV shorter than its header,
and a WAV or FLAC that decodes to fewer frames than its header declares, raise ``AudioError`` instead of
returning the part that is there. Resampling uses soxr.
"""

from __future__ import annotations

import io
import math
import os
import wave
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Union

import numpy as np

from .errors import AudioError
from .header import Promise, check_decoded, check_held, read_promise

AudioSource = Union[str, os.PathLike, bytes, bytearray, Mapping, tuple, None]  # or a torchcodec AudioDecoder
AUDIO_BACKENDS = ("auto", "torchcodec", "soundfile")
# What a decoder raises on a file it cannot read (soundfile's LibsndfileError is a RuntimeError).
DECODE_ERRORS = (ImportError, RuntimeError, OSError, ValueError)
T = TypeVar("T")


def torchcodec_status() -> tuple[bool, str]:
    """(usable, why): torchcodec imports and loads its FFmpeg libraries (decoder and encoder)."""
    try:
        from torchcodec.decoders import AudioDecoder  # noqa: F401
        from torchcodec.encoders import AudioEncoder  # noqa: F401
    except (ImportError, RuntimeError, OSError) as err:
        return False, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return True, "torchcodec loads its FFmpeg libraries"


def resolve_audio_backend(requested: str = "auto") -> tuple[str, str]:
    """("torchcodec" | "soundfile", reason) for a requested backend ("auto" probes torchcodec)."""
    if requested not in AUDIO_BACKENDS:
        raise ValueError(f"audio_backend must be one of {AUDIO_BACKENDS}, got {requested!r}")
    if requested == "soundfile":
        return "soundfile", "requested (audio_backend='soundfile')"
    usable, why = torchcodec_status()
    if requested == "torchcodec":
        if not usable:
            raise RuntimeError(
                f"audio_backend='torchcodec' but torchcodec is unusable: {why}. Install the "
                "FFmpeg shared libraries (see install.sh) or use audio_backend='soundfile'."
            )
        return "torchcodec", why
    return ("torchcodec", why) if usable else ("soundfile", f"torchcodec unusable ({why}); soundfile fallback")


def first_that_reads(attempts: Sequence[tuple[str, Callable[[], T]]], failure: str) -> T:
    """The result of the first attempt that raises none of DECODE_ERRORS; else an AudioError that starts
    with ``failure`` and gives each reader's error."""
    errors = []
    for name, attempt in attempts:
        try:
            return attempt()
        except DECODE_ERRORS as err:
            errors.append(f"{name}: {type(err).__name__}: {err}")
    raise AudioError(f"{failure}: " + "; ".join(errors))


def samples_array(samples: Any) -> tuple[np.ndarray, int]:
    """torchcodec ``AudioSamples`` as (frames x channels float32, rate)."""
    return samples.data.numpy().T.astype(np.float32, copy=False), int(samples.sample_rate)


def _decode_torchcodec(source: Union[str, bytes]) -> tuple[np.ndarray, int]:
    from torchcodec.decoders import AudioDecoder  # ImportError / RuntimeError when unusable

    return samples_array(AudioDecoder(source).get_all_samples())


def _decode_soundfile(source: Union[str, bytes]) -> tuple[np.ndarray, int]:
    import soundfile as sf

    data, rate = sf.read(io.BytesIO(source) if isinstance(source, bytes) else source, dtype="float32", always_2d=True)
    return data, int(rate)


DECODERS = {"torchcodec": _decode_torchcodec, "soundfile": _decode_soundfile}


def _decoders(backend: str) -> tuple[str, ...]:
    if backend not in AUDIO_BACKENDS:
        raise ValueError(f"backend must be one of {AUDIO_BACKENDS}, got {backend!r}")
    return ("torchcodec", "soundfile") if backend == "auto" else (backend,)


def decode_file(
    source: Union[str, os.PathLike, bytes, bytearray], *, backend: str = "auto", name: Optional[str] = None
) -> tuple[np.ndarray, int, str]:
    """(frames x channels float32, rate, decoder name) of an audio file given by its path or its bytes
    (``name``: what to call bytes in messages). Raises ``AudioError`` for a missing, undecodable or
    truncated file, naming what each decoder said."""
    order = _decoders(backend)
    if isinstance(source, (bytes, bytearray)):
        source, what = bytes(source), f"embedded audio {name!r}"
    else:
        source = what = os.fspath(source)
        if not Path(source).is_file():
            raise AudioError(f"audio file not found: {source}")
    promise = read_promise(source)
    check_held(promise, what)

    def decode(decoder: str) -> tuple[np.ndarray, int, str]:
        data, rate = DECODERS[decoder](source)
        check_decoded(promise, len(data), rate)
        return np.asarray(data, dtype=np.float32), rate, decoder

    return first_that_reads([(d, partial(decode, d)) for d in order], f"cannot decode {what}")


def _source_promise(decoder: Any) -> tuple[Optional[Promise], str]:
    """The header promise of the file behind a datasets-made decoder, which keeps its encoded source as
    ``_hf_encoded`` ({"path", "bytes"}); (None, "") when there is none to read."""
    encoded = getattr(decoder, "_hf_encoded", None) or {}
    if encoded.get("bytes") is not None:
        return read_promise(encoded["bytes"]), f"embedded audio {encoded.get('path')!r}"
    path = encoded.get("path")
    if path and Path(path).is_file():
        return read_promise(path), path
    return None, ""


def _from_decoder(decoder: Any) -> tuple[np.ndarray, int]:
    """Samples of a torchcodec ``AudioDecoder`` (what datasets 5 gives for an ``Audio()`` column)."""
    promise, what = _source_promise(decoder)
    check_held(promise, what)
    data, rate = samples_array(decoder.get_all_samples())
    check_decoded(promise, len(data), rate, what)
    return data, rate


def _as_array(source: AudioSource, backend: str) -> tuple[np.ndarray, int]:
    if source is None:
        raise AudioError("no audio: the value is None (an item whose file was missing when the dataset was built)")
    if hasattr(source, "get_all_samples"):
        return _from_decoder(source)
    if isinstance(source, (str, os.PathLike, bytes, bytearray)):
        return decode_file(source, backend=backend)[:2]
    if isinstance(source, Mapping):  # the datasets Audio forms
        if source.get("array") is not None:
            array, rate = source["array"], source.get("sampling_rate")
            if rate is None:
                raise AudioError("audio dict has an 'array' but no 'sampling_rate'")
        elif source.get("bytes") is not None:
            return decode_file(source["bytes"], backend=backend, name=source.get("path"))[:2]
        elif source.get("path"):
            return decode_file(source["path"], backend=backend)[:2]
        else:
            raise AudioError("audio dict has neither 'array', 'bytes' nor 'path'")
    elif isinstance(source, tuple) and len(source) == 2:
        array, rate = source
    else:
        raise AudioError(
            f"unsupported audio source of type {type(source).__name__}: give a path, a file's "
            "bytes, (array, rate), {'array': ..., 'sampling_rate': ...} or a dataset's audio value"
        )
    array, rate = in_memory_audio(array, rate)
    return np.asarray(array, dtype=np.float32), rate


def in_memory_audio(array: Any, rate: Any) -> tuple[np.ndarray, int]:
    """A signal held in memory, checked and returned without a copy: (frames,) or (frames, channels) real
    numbers ((channels, frames) with at most 8 channels, as torchcodec gives it, is transposed) and its rate
    as an int. An ``AudioError`` names what is wrong: a sampling rate that is not a positive whole number of
    Hz (None, NaN, a string, 0, 22050.5), or an array that is not 1-D or 2-D real numbers."""
    if (
        isinstance(rate, (bool, np.bool_))
        or not isinstance(rate, (int, float, np.integer, np.floating))
        or not math.isfinite(rate)
        or rate <= 0
        or rate != int(rate)
    ):
        raise AudioError(f"invalid sampling rate {rate!r}: it must be a positive whole number of Hz")
    try:
        samples = np.asarray(array)
    except (TypeError, ValueError) as err:  # ragged nested lists
        raise AudioError(f"the audio array cannot be read as numbers ({err})") from None
    if samples.dtype.kind not in "iuf":
        raise AudioError(f"the audio array must hold real numbers, got dtype {samples.dtype}")
    if samples.ndim not in (1, 2):
        raise AudioError(f"the audio array must be 1-D (frames) or 2-D (frames, channels), got shape {samples.shape}")
    if samples.ndim == 2 and samples.shape[0] < samples.shape[1] and samples.shape[0] <= 8:
        samples = samples.T  # (channels, frames) -> (frames, channels)
    return samples, int(rate)


def load_audio(
    source: AudioSource, sampling_rate: Optional[int] = None, *, mono: bool = True, backend: str = "auto"
) -> tuple[np.ndarray, int]:
    """Return (samples, rate): float32, channels averaged when ``mono`` (else (frames, channels)), resampled
    with soxr to ``sampling_rate`` when given.

    ``source``: a path; a file's bytes; a dataset's audio value: a torchcodec ``AudioDecoder`` (datasets 5
    with decoding on), an ``Audio(decode=False)`` dict ``{"path", "bytes"}`` (embedded bytes or a local
    file) or ``{"array", "sampling_rate"}``; or an ``(array, rate)`` tuple. Arrays are (frames,),
    (frames, channels) or (channels, frames) with at most 8 channels. ``backend`` ("auto", "torchcodec",
    "soundfile") picks the decoder for paths and bytes.

    Raises ``AudioError`` for no audio (None: an item built without its file), a missing, undecodable or
    truncated file, an empty signal, or NaN/Inf samples.
    """
    _decoders(backend)  # a wrong name fails before any decoding
    array, rate = _as_array(source, backend)
    if array.ndim == 2 and mono:
        array = array.mean(axis=1)
    if array.size == 0:
        raise AudioError("audio has no samples")
    if not np.isfinite(array).all():
        raise AudioError(f"audio has {int((~np.isfinite(array)).sum())} NaN or infinite samples")
    if sampling_rate and int(sampling_rate) != rate:
        import soxr

        array = soxr.resample(array, rate, int(sampling_rate)).astype(np.float32)
        rate = int(sampling_rate)
    return np.ascontiguousarray(array), rate


def encode_wav(samples: np.ndarray, sampling_rate: int) -> bytes:
    """Float samples ((frames,) or (frames, channels)) as the bytes of a 16-bit PCM WAV file, clipped to
    [-1, 1]. Numpy and the standard library's ``wave``, byte for byte what libsndfile writes (its float to
    16-bit conversion: round(x * 2^31) held to 32 bits, then the top 16), at a tenth of its cost."""
    samples = np.asarray(samples)
    if samples.dtype not in (np.float32, np.float64):
        samples = samples.astype(np.float64)
    # Every step is exact in the samples' own float type (scaling by powers of two, rounding, flooring),
    # and done in place: one array, not four. The last clip only holds 1.0 (32768) to 32767: np.clip,
    # not np.minimum, which is four times slower on float32.
    pcm = np.clip(samples, -1.0, 1.0)
    pcm *= 2147483648.0
    np.rint(pcm, out=pcm)
    pcm *= 1.0 / 65536.0
    np.floor(pcm, out=pcm)
    pcm = np.clip(pcm, -32768.0, 32767.0, out=pcm).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sampling_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def encode_audio(samples: np.ndarray, sampling_rate: int, container: str = "wav") -> bytes:
    """Float samples, clipped to [-1, 1], as the bytes of a 16-bit PCM WAV (``container="wav"``,
    ``encode_wav``) or an MP3 (``"mp3"``, libsndfile's LAME encoder at its default quality) file."""
    if container == "wav":
        return encode_wav(samples, sampling_rate)
    if container != "mp3":
        raise ValueError(f"container must be one of ['mp3', 'wav'], got {container!r}")
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.clip(samples, -1.0, 1.0), sampling_rate, subtype="MPEG_LAYER_III", format="MP3")
    return buffer.getvalue()


def write_audio(path: Union[str, os.PathLike], samples: np.ndarray, sampling_rate: int) -> Path:
    """Write float samples as 16-bit PCM WAV (the format every decoder here reads)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_wav(samples, sampling_rate))
    return path


def wav_writer(path: Union[str, os.PathLike], sampling_rate: int, channels: int = 1) -> Any:
    """An open 16-bit PCM WAV file to write float blocks into (``.write(block)``, a context manager): a long
    recording written block by block is never held whole."""
    import soundfile as sf

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return sf.SoundFile(
        path, "w", samplerate=int(sampling_rate), channels=int(channels), subtype="PCM_16", format="WAV"
    )
