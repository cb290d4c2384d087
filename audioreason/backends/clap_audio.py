"""The audio CLAP reads for ARIA M1, read without ever holding a whole clip.

Every source (a path, a file's bytes, ``{"path", "bytes"}``, a dataset's audio value, ``(array, rate)`` or
``{"array", "sampling_rate"}``) is opened as a ``Signal``: its length and its samples as 48 kHz mono
float32 blocks of about 10 s, read from the file (``audio.iter_blocks``) or sliced from the array and
resampled as one stream (``audio.resample_blocks``). On top of it:

- ``windows``: consecutive CLAP windows (the whole-audio mode);
- ``read_range``: one stretch of the 48 kHz signal (the random-crop mode), reading only that stretch plus
  0.5 s of resampler context on either side; equal to the same stretch of the whole-clip resample to
  float32 rounding (about 3e-7 measured);
- ``fusion_input``: the input of a fused CLAP (transformers' ``truncation="fusion"``: a downsampled
  global view of the whole clip's log-mel spectrogram and three seeded 10-s crops of it), computed from
  the few thousand mel frames it uses while the clip streams past once.

A dataset's audio value (a torchcodec decoder made by ``datasets``) is read from the file or bytes it was
made from, resampled once to 48 kHz (a rate cast on the column is not applied first). A decoder that keeps
no file, the only source still decoded whole, goes through ``audio.load_audio``.
"""

from __future__ import annotations

import hashlib
import math
import os
from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

import numpy as np

from ..audio import AudioError, audio_info, in_memory_audio, iter_blocks, load_audio, resample_blocks
from ..audio.fragments import resampled_length

CLAP_RATE = 48000
AUDIO_MODES = ("whole", "random_crop")  # M1: the paper's whole audio, or one seeded 10-s crop (option)
BLOCK_S = 10.0  # seconds per read
CONTEXT_S = 0.5  # resampler context read on either side of a stretch (as audio.read_prefix does)


@contextmanager
def numpy_seed(seed: int):
    """Seed numpy's global generator (the one CLAP's feature extractor draws from), then restore it."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


# ---------------------------------------------------------------------- sources
def encoded(source: Any) -> Union[str, bytes, None]:
    """The file behind a source, as a path or its bytes; None for samples held in memory (or a decoder that
    keeps no readable file)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    if isinstance(source, Mapping):
        held = source if source.get("array") is None else {}
    else:  # a datasets AudioDecoder keeps what it was made from
        held = getattr(source, "_hf_encoded", None) or {}
        if held.get("bytes") is None and not (held.get("path") and Path(held["path"]).is_file()):
            return None
    if held.get("bytes") is not None:
        return bytes(held["bytes"])
    return str(held["path"]) if held.get("path") else None


def in_memory(source: Any) -> Optional[tuple[Any, Any]]:
    """(array, rate) of a source that holds its samples, else None."""
    if isinstance(source, Mapping) and source.get("array") is not None:
        return source["array"], source.get("sampling_rate")
    if isinstance(source, tuple) and len(source) == 2:
        return source
    return None


def describe(source: Any) -> str:
    """What messages call a source."""
    held = encoded(source)
    if isinstance(held, str):
        return held
    if held is not None:
        meta = source if isinstance(source, Mapping) else getattr(source, "_hf_encoded", None) or {}
        return f"embedded audio {meta['path']!r}" if meta.get("path") else f"embedded audio ({len(held)} bytes)"
    pair = in_memory(source)
    if pair is not None:
        shape = getattr(pair[0], "shape", None)
        return "an audio array" + (f" of shape {tuple(shape)}" if shape is not None else "")
    return f"an audio value of type {type(source).__name__}"


def source_key(source: Any) -> tuple:
    """What identifies a source's audio: a file by path, size and modification time; bytes and arrays by a
    hash (of the arrays' float32 samples, block by block)."""
    held = encoded(source)
    if isinstance(held, str):
        try:
            st = Path(held).stat()
        except OSError:
            return ("missing", held)
        return ("file", str(Path(held).resolve()), st.st_size, st.st_mtime_ns)
    if held is not None:
        return ("bytes", hashlib.sha1(held).hexdigest())
    pair = in_memory(source)
    if pair is None:
        return ("unhashable", id(source))
    try:
        samples, rate = in_memory_audio(*pair)
    except AudioError:
        return ("unhashable", id(source))
    digest = hashlib.sha1()
    step = max(1, int(BLOCK_S * rate))
    for i in range(0, len(samples), step):
        digest.update(np.ascontiguousarray(samples[i : i + step], dtype=np.float32))
    return ("array", digest.hexdigest(), samples.shape, rate)


class Signal(ABC):
    """A source opened for reading at 48 kHz, never whole: ``frames`` at the source ``rate``, ``length``
    (48 kHz samples), ``blocks(start, stop)``: 48 kHz mono float32 blocks of source frames [start, stop)."""

    rate: int

    @property
    @abstractmethod
    def frames(self) -> int:
        """Frames at the source rate."""

    @property
    def length(self) -> int:
        return resampled_length(self.frames, self.rate, CLAP_RATE)

    @abstractmethod
    def blocks(self, start: int = 0, stop: Optional[int] = None) -> Iterator[np.ndarray]:
        """48 kHz mono float32 blocks of source frames [start, stop)."""


class FileSignal(Signal):
    """A file (a path or its bytes), streamed by ``audio.iter_blocks``. Its frames come from the header
    where soundfile reads it (exact for WAV and FLAC, which the readers hold to it); for formats only FFmpeg
    reads (m4a, opus...) the header gives a duration only, so the frames are counted once, streaming."""

    def __init__(self, source: Union[str, bytes], name: str):
        self.source, self.name = source, name
        self.info = audio_info(source, name=name)
        self.rate = self.info.sampling_rate
        self._frames = self.info.frames if self.info.reader == "soundfile" else None

    @property
    def frames(self) -> int:
        if self._frames is None:
            self._frames = sum(len(b) for b in iter_blocks(self.source, BLOCK_S, name=self.name))
        return self._frames

    def blocks(self, start: int = 0, stop: Optional[int] = None) -> Iterator[np.ndarray]:
        return iter_blocks(
            self.source,
            BLOCK_S,
            CLAP_RATE,
            start=start / self.rate,
            stop=None if stop is None else stop / self.rate,
            name=self.name,
        )


class ArraySignal(Signal):
    """Samples held in memory, sliced into blocks: only one block is converted, averaged to mono and
    resampled at a time. NaN or infinite samples anywhere are an ``AudioError`` as soon as it is opened,
    as ``load_audio`` makes them."""

    def __init__(self, samples: np.ndarray, rate: int):
        self.samples, self.rate = samples, rate
        self.step = max(1, int(BLOCK_S * rate))
        if not len(samples) or not samples.size:
            raise AudioError("audio has no samples")
        bad = sum(int((~np.isfinite(b)).sum()) for b in self._mono(0, len(samples)))
        if bad:
            raise AudioError(f"audio has {bad} NaN or infinite samples")

    @property
    def frames(self) -> int:
        return len(self.samples)

    def _mono(self, start: int, stop: int) -> Iterator[np.ndarray]:
        for i in range(start, stop, self.step):
            block = np.asarray(self.samples[i : min(i + self.step, stop)], dtype=np.float32)
            yield block.mean(axis=1) if block.ndim == 2 else block

    def blocks(self, start: int = 0, stop: Optional[int] = None) -> Iterator[np.ndarray]:
        mono = self._mono(start, len(self.samples) if stop is None else min(stop, len(self.samples)))
        return mono if self.rate == CLAP_RATE else resample_blocks(mono, self.rate, CLAP_RATE)


def open_signal(source: Any) -> Signal:
    """The ``Signal`` of a source; ``AudioError`` for a missing or unreadable file or invalid samples."""
    held = encoded(source)
    if held is not None:
        return FileSignal(held, describe(source))
    pair = in_memory(source)
    if pair is not None:
        return ArraySignal(*in_memory_audio(*pair))
    return ArraySignal(*load_audio(source))  # None, a decoder without a file, an unsupported type


def joined(blocks: Iterable[np.ndarray]) -> np.ndarray:
    parts = list(blocks)
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


# ---------------------------------------------------------------------- whole audio and crops
def windows(blocks: Iterable[np.ndarray], size: int) -> Iterator[tuple[np.ndarray, float]]:
    """Consecutive windows of ``size`` samples (the last one shorter), each a new array, with its share of a
    window (samples / size); ``AudioError`` when there is no sample at all. Holds one block and one window."""
    window, filled, total = np.empty(size, np.float32), 0, 0
    for block in blocks:
        used = 0
        while used < len(block):
            take = min(size - filled, len(block) - used)
            window[filled : filled + take] = block[used : used + take]
            filled, used = filled + take, used + take
            if filled == size:
                yield window, 1.0
                window, filled, total = np.empty(size, np.float32), 0, total + size
    if filled:
        yield window[:filled], filled / size
    elif total == 0:
        raise AudioError("audio has no samples")


def read_range(signal: Signal, start: int, size: int) -> np.ndarray:
    """Samples [start, start + size) of the signal at 48 kHz, reading only about that stretch.

    At another source rate the read starts ``CONTEXT_S`` before, on a source frame that falls on a whole
    48 kHz sample (a multiple of rate / gcd(rate, 48000)), so the resampler's output lines up with the
    whole-clip resample, and ends ``CONTEXT_S`` after, so the flush at its end stays outside the stretch."""
    rate = signal.rate
    if rate == CLAP_RATE:
        return joined(signal.blocks(start, start + size))
    step = rate // math.gcd(rate, CLAP_RATE)
    context = int(CONTEXT_S * rate)
    first = max(0, (start * rate // CLAP_RATE - context) // step * step)
    stop = min(signal.frames, -(-(start + size) * rate // CLAP_RATE) + context)
    offset = start - first * CLAP_RATE // rate
    return joined(signal.blocks(first, stop))[offset : offset + size]


def crop(signal: Signal, size: int, seed: int) -> np.ndarray:
    """The crop transformers' ``rand_trunc`` takes from the whole 48 kHz clip (an offset drawn with
    ``np.random.randint(0, length - size + 1)`` after seeding), read alone; a clip of at most ``size``
    samples whole."""
    if signal.length <= size:
        return joined(signal.blocks())
    with numpy_seed(seed):
        start = np.random.randint(0, signal.length - size + 1)
    return read_range(signal, int(start), size)


# ---------------------------------------------------------------------- fused CLAP
def fusion_crop_starts(total: int, chunk: int) -> list[int]:
    """The three crops of CLAP's fusion: transformers splits the possible starts 0..total-chunk into three
    ranges (``np.array_split``) and draws one start from each with ``np.random.choice`` (an empty range
    becomes [0]); the same draws, from the range sizes alone."""
    count = total - chunk + 1
    sizes = [count // 3 + (1 if i < count % 3 else 0) for i in range(3)]
    firsts = [0, sizes[0], sizes[0] + sizes[1]]
    starts = []
    for first, size in zip(firsts, sizes):
        drawn = int(np.random.choice(size or 1))  # choice(n) draws as choice(range(n)) does; [0] as range(1)
        starts.append(first + drawn if size else 0)
    return starts


def global_view_rows(total: int, chunk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower rows, upper rows, upper weights) of torch's bilinear resize (align_corners=False) of a
    ``total``-row mel to ``chunk`` rows, as its CPU kernel computes them for float32 input: the source
    position scale·(row + ½) − ½ in float32 with a fused multiply-add, clamped at 0."""
    f32 = np.float32
    scale = f32(total) / f32(chunk)
    centres = (np.arange(chunk, dtype=f32) + f32(0.5)).astype(np.float64)
    position = np.maximum((np.float64(scale) * centres - 0.5).astype(f32), f32(0))
    lower = np.minimum(np.floor(position).astype(np.int64), total - 1)
    upper = np.minimum(lower + 1, total - 1)
    weight = np.clip(position - lower.astype(f32), f32(0), f32(1)).astype(f32)
    return lower, upper, weight


def mel_frames(blocks: Iterable[np.ndarray], length: int, wanted: np.ndarray, extractor) -> np.ndarray:
    """Rows ``wanted`` (sorted, distinct) of the log-mel spectrogram CLAP's fusion computes over the whole
    clip (frames of ``fft_window_size`` samples every ``hop_length``, centred, reflect-padded at both
    ends), from the clip's 48 kHz blocks read once; only one block and the frames it completes are held.
    Each run of consecutive frames goes through transformers' own ``spectrogram`` (uncentred, on the samples
    it covers)."""
    from transformers.audio_utils import spectrogram, window_function

    hop, n_fft = extractor.hop_length, extractor.fft_window_size
    half = n_fft // 2
    window = window_function(n_fft, "hann")
    out = np.empty((len(wanted), extractor.mel_filters.shape[1]), np.float32)
    buffer, buffer_start, seen, done = np.zeros(0, np.float32), 0, 0, 0

    def compute(upto: int) -> None:
        """Frames wanted[done:upto], from the buffer."""
        runs = np.split(np.arange(done, upto), np.flatnonzero(np.diff(wanted[done:upto]) != 1) + 1)
        for run in runs:
            first, last = wanted[run[0]], wanted[run[-1]]
            index = np.arange(first * hop - half, last * hop + half)
            index = np.abs(index)  # reflect at the start: x[-i] = x[i]
            index = np.where(index >= length, 2 * (length - 1) - index, index)  # and at the end
            out[run] = spectrogram(
                buffer[index - buffer_start].astype(np.float64),
                window,
                frame_length=n_fft,
                hop_length=hop,
                power=2.0,
                mel_filters=extractor.mel_filters,
                log_mel="dB",
                center=False,
            ).T

    for block in list_then_none(blocks):
        if block is not None:
            buffer = np.concatenate([buffer, block])
            seen += len(block)
        elif seen != length:
            raise AudioError(f"read {seen} samples at 48 kHz where the header promises {length}")
        upto = done
        while upto < len(wanted) and (block is None or min(wanted[upto] * hop + half, length) <= seen):
            upto += 1
        if upto > done:
            compute(upto)
            done = upto
        if done < len(wanted):  # keep what the next frame (and a reflection at the end) can need
            cut = min(max(0, wanted[done] * hop - n_fft - buffer_start), len(buffer))
            buffer, buffer_start = buffer[cut:], buffer_start + cut
    return out


def list_then_none(blocks: Iterable[np.ndarray]) -> Iterator[Optional[np.ndarray]]:
    """The blocks, then None (the end)."""
    yield from blocks
    yield None


def fusion_input(signal: Signal, extractor, seed: int) -> Optional[np.ndarray]:
    """The (4, chunk, mel) input of a fused CLAP for a clip longer than one window and one hop: its global
    view, then its front, middle and back crops, the crops drawn after seeding, as transformers'
    ``_random_mel_fusion`` computes them from the whole clip. None for a shorter clip, whose features the
    extractor computes from the (short) clip itself."""
    hop, n_fft, size = extractor.hop_length, extractor.fft_window_size, extractor.nb_max_samples
    length = signal.length
    chunk = size // hop + 1
    total = 1 + (length + 2 * (n_fft // 2) - n_fft) // hop  # frames of the centred spectrogram
    if length <= size or total == chunk:
        return None
    with numpy_seed(seed):
        starts = fusion_crop_starts(total, chunk)
    lower, upper, weight = global_view_rows(total, chunk)
    wanted = np.unique(np.concatenate([lower, upper] + [np.arange(s, s + chunk) for s in starts]))
    mel = mel_frames(signal.blocks(), length, wanted, extractor)

    def rows(index: np.ndarray) -> np.ndarray:
        return mel[np.searchsorted(wanted, index)]

    # (1 - w)·lower + w·upper with torch's fused multiply-add: the product w·upper rounded to float32 first
    view = (
        (np.float32(1) - weight)[:, None].astype(np.float64) * rows(lower) + (weight[:, None] * rows(upper))
    ).astype(np.float32)
    return np.stack([view] + [rows(np.arange(s, s + chunk)) for s in starts])
