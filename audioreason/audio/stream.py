"""Read long recordings (AudioSpan runs up to 2.7 hours) without loading the whole file.

Two entry points, each taking a path or a file's bytes (a dataset's embedded audio):

- ``read_prefix(path, seconds, sampling_rate=None)``: the leading ``seconds`` of a file, the way
  AudioSpan truncates audio for a model with an input limit (App. C.1: "min(limit, length) as the
  leading prefix").
- ``iter_blocks(path, block_seconds, sampling_rate=None)``: consecutive blocks covering the file.

``resample_blocks`` resamples any sequence of blocks as one stream (signals held in memory use it too).

soundfile is tried first here because it seeks to an exact frame and reads blocks of an exact length
(WAV, FLAC, OGG, MP3 through libsndfile). Formats it cannot open (m4a, aac, opus in mp4...) are read
through torchcodec's ranged decoding (``get_samples_played_in_range``), which also never decodes the
whole file; both failure kinds (ImportError, RuntimeError) of torchcodec are caught.

Resampling is streamed through ``soxr.ResampleStream``. Exactness, measured on this stack:
- at the source rate, the concatenated blocks equal the whole-file decode sample for sample, and a
  prefix equals the start of the whole-file decode;
- resampled, the streamed output equals ``soxr.resample`` of the whole (mono-mixed) file (identical
  samples here; the tests allow 1e-6), because ResampleStream keeps its filter state across blocks
  and is flushed with ``last=True`` on the final block. A resampled prefix is not "resample the
  first N seconds": that would ring at its cut end as if the signal stopped there. Instead about
  0.5 s more is fed and the output is cut, so the prefix equals the start of the whole-file
  resample. The cost is decoding 0.5 s beyond the prefix.
Channels are averaged to mono before resampling (as ``load_audio`` does) unless ``mono=False``.

Damaged files are ``AudioError``s, never a raw libsndfile error or a silently short result: a WAV that
holds fewer frames than its header promises is refused before reading (``header.py``); a FLAC cut short
fails when the stream reaches the cut (a prefix that ends before it is read as usual).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

import numpy as np

from .errors import AudioError
from .header import check_held, read_promise
from .io import first_that_reads

PathLike = Union[str, os.PathLike]
Source = Union[str, os.PathLike, bytes, bytearray]  # a path or a file's bytes


@dataclass(frozen=True)
class AudioInfo:
    """What a file header says: frames at the source rate, rate, channels, duration, reader used."""

    frames: int
    sampling_rate: int
    channels: int
    duration: float
    reader: str  # "soundfile" or "torchcodec"


def _check_source(source: Source, name: Optional[str] = None) -> tuple[Union[str, bytes], str]:
    """(what the readers open: a path or the file's bytes, what messages call it)."""
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), name or f"embedded audio ({len(source)} bytes)"
    path = os.fspath(source)
    if not Path(path).is_file():
        raise AudioError(f"audio file not found: {path}")
    return path, name or path


def _readable(source: Union[str, bytes]):
    """What soundfile opens: the path, or a fresh file object over the bytes."""
    return io.BytesIO(source) if isinstance(source, bytes) else source


def _soundfile_info(path: Union[str, bytes]) -> AudioInfo:
    import soundfile as sf

    info = sf.info(_readable(path))
    if info.frames <= 0 or info.samplerate <= 0:
        # MP3 through older libsndfile can report 0 frames; treat as unreadable here.
        raise RuntimeError(f"soundfile reports {info.frames} frames at {info.samplerate} Hz")
    return AudioInfo(
        int(info.frames), int(info.samplerate), int(info.channels), info.frames / info.samplerate, "soundfile"
    )


def _torchcodec_info(path: Union[str, bytes]) -> AudioInfo:
    from torchcodec.decoders import AudioDecoder  # ImportError / RuntimeError when unusable

    meta = AudioDecoder(path).metadata
    rate = int(meta.sample_rate)
    duration = float(meta.duration_seconds_from_header or meta.duration_seconds or 0.0)
    if rate <= 0 or duration <= 0:
        raise RuntimeError(f"torchcodec reports duration {duration} s at {rate} Hz")
    return AudioInfo(int(round(duration * rate)), rate, int(meta.num_channels), duration, "torchcodec")


def audio_info(path: Source, *, name: Optional[str] = None) -> AudioInfo:
    """Header information of an audio file (a path or its bytes; ``name``: what to call it in messages),
    without decoding it. A WAV that holds fewer frames than its header promises is an ``AudioError`` (both
    readers would report the shorter length without a word); a cut FLAC shows only when its frames are read."""
    path, name = _check_source(path, name)
    check_held(read_promise(path), name)
    return first_that_reads(
        [("soundfile", partial(_soundfile_info, path)), ("torchcodec", partial(_torchcodec_info, path))],
        f"cannot read the header of {name}",
    )


def soundfile_blocks(
    path: Union[str, bytes],
    block_frames: int,
    start_frame: int = 0,
    stop_frame: Optional[int] = None,
    name: Optional[str] = None,
) -> Iterator[np.ndarray]:
    """(frames, channels) float32 blocks of ``block_frames`` (the last shorter) from ``start_frame`` to
    ``stop_frame`` (default: the end the header gives), read with soundfile from a path or a file's bytes.

    A read that fails (libsndfile on a cut FLAC: "flac decoder lost sync", "Internal psf_fseek() failed")
    or a stream that ends before the promised frame is an ``AudioError`` naming the frames it could not read.
    """
    import soundfile as sf

    name = name or str(path)
    with sf.SoundFile(_readable(path)) as f:
        stop = f.frames if stop_frame is None else min(stop_frame, f.frames)
        position = start_frame
        while position < stop:
            wanted = min(block_frames, stop - position)
            try:
                if position == start_frame:
                    f.seek(start_frame)
                block = f.read(wanted, dtype="float32", always_2d=True)
            except RuntimeError as err:  # soundfile.LibsndfileError
                raise AudioError(
                    f"{name}: cannot read frames {position} to {position + wanted} of {f.frames} "
                    f"({type(err).__name__}: {err}); the file is truncated or damaged"
                ) from None
            if len(block) == 0:
                raise AudioError(
                    f"{name}: the stream ended at frame {position} of {f.frames} its header promises; "
                    "the file is truncated or damaged"
                )
            position += len(block)
            yield block


def _source_blocks_torchcodec(
    path: Union[str, bytes],
    rate: int,
    block_frames: int,
    start_frame: int,
    stop_frame: Optional[int],
    duration: float,
    name: str,
) -> Iterator[np.ndarray]:
    from torchcodec.decoders import AudioDecoder

    decoder = AudioDecoder(path)
    block_seconds = block_frames / rate
    start = start_frame / rate
    stop = duration if stop_frame is None else min(stop_frame / rate, duration)
    while start < stop - 1e-9:
        end = min(start + block_seconds, stop)
        try:
            samples = decoder.get_samples_played_in_range(start, end)
        except RuntimeError as err:  # FFmpeg on damaged data
            raise AudioError(
                f"{name}: cannot decode {start:.3f} s to {end:.3f} s ({err}); the file is truncated or damaged"
            ) from None
        block = samples.data.numpy().T.astype(np.float32, copy=False)  # (frames, channels)
        if len(block) == 0:
            break
        yield block
        start = end


def _source_blocks(
    path: Union[str, bytes], info: AudioInfo, block_frames: int, start_frame: int, stop_frame: Optional[int], name: str
) -> Iterator[np.ndarray]:
    if info.reader == "soundfile":
        return soundfile_blocks(path, block_frames, start_frame, stop_frame, name)
    return _source_blocks_torchcodec(
        path, info.sampling_rate, block_frames, start_frame, stop_frame, info.duration, name
    )


def _check_finite(block: np.ndarray, path: str) -> None:
    if not np.isfinite(block).all():
        raise AudioError(f"{path}: {int((~np.isfinite(block)).sum())} NaN or infinite samples")


def resample_blocks(blocks: Iterable[np.ndarray], source_rate: int, target_rate: int) -> Iterator[np.ndarray]:
    """Resample consecutive float32 blocks, (frames,) or (frames, channels), as one stream
    (``soxr.ResampleStream``, flushed with the last block): the output, concatenated, equals resampling the
    concatenated input at once (see the module docstring). Holds one block plus the resampler's state."""
    import soxr

    blocks = iter(blocks)
    resampler = None
    # Look one block ahead so the last one is flushed with last=True.
    pending = next(blocks, None)
    while pending is not None:
        following = next(blocks, None)
        if resampler is None:
            channels = 1 if pending.ndim == 1 else pending.shape[1]
            resampler = soxr.ResampleStream(source_rate, target_rate, channels, dtype="float32")
        out = resampler.resample_chunk(np.ascontiguousarray(pending, dtype=np.float32), last=following is None)
        if len(out):
            yield out
        pending = following


def iter_blocks(
    path: Source,
    block_seconds: float,
    sampling_rate: Optional[int] = None,
    *,
    mono: bool = True,
    start: float = 0.0,
    stop: Optional[float] = None,
    name: Optional[str] = None,
) -> Iterator[np.ndarray]:
    """Yield consecutive float32 blocks of about ``block_seconds`` each, covering [start, stop) s of a file
    (a path or its bytes; ``name``: what to call it in messages).

    Blocks are (frames,) when ``mono`` (channels averaged) else (frames, channels). At the source rate
    every block but the last has exactly ``round(block_seconds * rate)`` frames; resampled blocks
    vary by a few samples (the resampler's delay), and concatenating them gives the same samples as
    resampling the whole stretch at once. Only one block (plus the resampler state) is in memory.
    """
    if block_seconds <= 0:
        raise ValueError(f"block_seconds must be positive, got {block_seconds}")
    if start < 0 or (stop is not None and stop < start):
        raise ValueError(f"invalid range start={start}, stop={stop}")
    path, name = _check_source(path, name)
    info = audio_info(path, name=name)
    rate = info.sampling_rate
    block_frames = max(1, int(round(block_seconds * rate)))
    start_frame = int(round(start * rate))
    stop_frame = None if stop is None else int(round(stop * rate))

    def checked() -> Iterator[np.ndarray]:
        for block in _source_blocks(path, info, block_frames, start_frame, stop_frame, name):
            _check_finite(block, name)
            yield np.ascontiguousarray(block.mean(axis=1) if mono else block, dtype=np.float32)

    if not sampling_rate or sampling_rate == rate:
        yield from checked()
    else:
        yield from resample_blocks(checked(), rate, sampling_rate)


def read_prefix(
    path: Source, seconds: float, sampling_rate: Optional[int] = None, *, mono: bool = True, block_seconds: float = 60.0
) -> tuple[np.ndarray, int]:
    """The leading ``seconds`` of a file as (samples, rate), read without loading the rest.

    A file shorter than ``seconds`` is returned whole. Resampled, the prefix is
    ``round(seconds * sampling_rate)`` samples (fewer for a shorter file) and equals the start of the
    whole-file resample; the resampler is fed until it has produced that many samples plus its
    filter's right-hand context, so the last samples are not end-of-signal ringing.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    path, name = _check_source(path)
    info = audio_info(path, name=name)
    rate = info.sampling_rate
    if not sampling_rate or sampling_rate == rate:
        frames = min(int(round(seconds * rate)), info.frames) if info.reader == "soundfile" else None
        parts = list(iter_blocks(path, min(block_seconds, seconds), None, mono=mono, stop=seconds, name=name))
        samples = np.concatenate(parts) if parts else np.zeros((0,) if mono else (0, info.channels), np.float32)
        if frames is not None:
            samples = samples[:frames]
        if len(samples) == 0:
            raise AudioError(f"{name}: no samples in the first {seconds} s")
        return samples, rate
    wanted = int(round(seconds * sampling_rate))
    # Read a little past the prefix (about 0.5 s of source) so the filter sees the same future samples
    # as it would in the whole-file resample; stopping at the prefix would flush with last=True early.
    context = 0.5
    parts, produced = [], 0
    for block in iter_blocks(
        path, min(block_seconds, seconds + context), sampling_rate, mono=mono, stop=seconds + context, name=name
    ):
        parts.append(block)
        produced += len(block)
    samples = np.concatenate(parts) if parts else np.zeros((0,), np.float32)
    covered_whole_file = seconds + context >= info.duration
    if produced < wanted and not covered_whole_file:
        raise AudioError(f"{name}: resampler produced {produced} of {wanted} samples")
    samples = samples[:wanted]
    if len(samples) == 0:
        raise AudioError(f"{name}: no samples in the first {seconds} s")
    return np.ascontiguousarray(samples), int(sampling_rate)
