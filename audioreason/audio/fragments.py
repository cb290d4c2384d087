"""Equal-duration audio fragments ("All That Glitters Is Not Audio", §2.2), streamed in blocks.

A clip of L samples (mono, at the output rate) is cut into N contiguous fragments of floor(L / N)
samples each, the last one taking the remainder: fragment k spans [k·m, (k+1)·m) for k < N-1 and
[(N-1)·m, L) for the last, with m = floor(L / N). A fragment with no sample (L < N) is reported in
``skipped``, never written.

``fragment_audio`` reads the file once, in blocks, and writes the fragments of every requested N in
that same pass (14 files for N = 2..5), so an hour-long file never sits in memory. Channels are
averaged in float32 (as ``load_audio`` does); when the output rate differs from the file's, a
streaming soxr resampler is fed block by block, so block boundaries do not change a sample (its
output equals a one-shot ``soxr.resample`` of the whole clip). Fragments are WAV files, 32-bit float
by default: at the source rate, concatenating the N fragments gives back the mono samples bit for bit.
``subtype="PCM_16"`` halves the size; samples are then clipped to [-1, 1] and the clipped ones counted.

Input formats are those libsndfile streams (WAV, FLAC, OGG/Vorbis/Opus, MP3, AIFF...); other
containers (m4a, mp4) raise ``AudioError``: convert them to FLAC first. A damaged file is an
``AudioError`` before anything is kept: a WAV that holds fewer frames than its header promises (checked
before reading, ``header.py``), a FLAC cut short (found when the stream reaches the cut), a stream that
yields fewer samples than the header promises; fragments written before the error are removed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from .errors import AudioError
from .header import check_held, read_promise
from .stream import soundfile_blocks

PAPER_NS = (2, 3, 4, 5)
PAPER_RATE = 16000
DEFAULT_BLOCK_FRAMES = 1 << 18  # 262,144 frames: ~16 s at 16 kHz, a few MB per block


def fragment_bounds(total_samples: int, n: int) -> list[tuple[int, int]]:
    """[start, stop) of each of the N fragments of a clip of ``total_samples`` samples."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of fragments must be a positive integer, got {n!r}")
    if total_samples < 0:
        raise ValueError(f"total_samples must be >= 0, got {total_samples}")
    m = total_samples // n
    return [(k * m, (k + 1) * m if k < n - 1 else total_samples) for k in range(n)]


def split_samples(samples: np.ndarray, n: int) -> list[np.ndarray]:
    """The N fragments of an in-memory mono signal (views, no copy); empty fragments included."""
    samples = np.asarray(samples)
    if samples.ndim != 1:
        raise ValueError(f"split_samples takes a mono 1-D signal, got shape {samples.shape}")
    return [samples[a:b] for a, b in fragment_bounds(len(samples), n)]


def resampled_length(frames: int, source_rate: int, target_rate: int) -> int:
    """Samples soxr produces for ``frames`` input frames: round(frames · target / source), halves up
    (checked against soxr for many lengths and rate pairs; the writer verifies it on every file)."""
    if source_rate == target_rate:
        return frames
    return (2 * frames * target_rate + source_rate) // (2 * source_rate)


@dataclass(frozen=True)
class Fragment:
    n: int
    k: int
    start: int  # first sample, at the output rate
    stop: int  # one past the last sample
    path: Path
    sampling_rate: int

    @property
    def num_samples(self) -> int:
        return self.stop - self.start

    @property
    def seconds(self) -> float:
        return self.num_samples / self.sampling_rate

    @property
    def condition(self) -> str:
        """The condition name the text-prior scorer uses for this fragment (``frag:N:k``)."""
        return f"frag:{self.n}:{self.k}"


@dataclass(frozen=True)
class SkippedFragment:
    n: int
    k: int
    start: int
    stop: int
    reason: str

    @property
    def condition(self) -> str:
        return f"frag:{self.n}:{self.k}"


@dataclass
class FragmentResult:
    source: str
    source_rate: int
    sampling_rate: int
    channels: int
    total_samples: int  # mono samples at the output rate
    subtype: str
    fragments: list[Fragment] = field(default_factory=list)
    skipped: list[SkippedFragment] = field(default_factory=list)
    clipped_samples: int = 0  # PCM output only: samples outside [-1, 1] before writing

    @property
    def seconds(self) -> float:
        return self.total_samples / self.sampling_rate

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "source_rate": self.source_rate,
            "sampling_rate": self.sampling_rate,
            "channels": self.channels,
            "total_samples": self.total_samples,
            "seconds": self.seconds,
            "subtype": self.subtype,
            "clipped_samples": self.clipped_samples,
            "fragments": [
                {
                    "condition": f.condition,
                    "n": f.n,
                    "k": f.k,
                    "start": f.start,
                    "stop": f.stop,
                    "seconds": f.seconds,
                    "path": str(f.path),
                }
                for f in self.fragments
            ],
            "skipped": [
                {"condition": s.condition, "n": s.n, "k": s.k, "start": s.start, "stop": s.stop, "reason": s.reason}
                for s in self.skipped
            ],
        }


def _check_ns(ns: Sequence[int]) -> list[int]:
    if isinstance(ns, (int, np.integer)):
        ns = [ns]
    ns = list(ns)
    if not ns:
        raise ValueError("ns: give at least one number of fragments, e.g. (2, 3, 4, 5)")
    for n in ns:
        fragment_bounds(0, n)  # type and range check
    if len(set(ns)) != len(ns):
        raise ValueError(f"ns has repeated values: {ns}")
    return sorted(int(n) for n in ns)


class _Writer:
    """Writes the fragments of one N as the output samples stream past: one file open at a time."""

    def __init__(self, n: int, total: int, out_dir: Path, stem: str, rate: int, subtype: str):
        import soundfile as sf

        self._sf = sf
        self.n, self.rate, self.subtype = n, rate, subtype
        self.bounds = fragment_bounds(total, n)
        self.paths = [out_dir / f"{stem}_N{n}_k{k}.wav" for k in range(n)]
        self.k = 0
        self.handle = None
        self.clipped = 0

    def write(self, block: np.ndarray, offset: int) -> None:
        """Write the part of ``block`` (output samples [offset, offset+len)) that each fragment owns."""
        end = offset + len(block)
        while self.k < self.n:
            start, stop = self.bounds[self.k]
            if stop <= start:  # an empty fragment: reported by the caller, never opened
                self.k += 1
                continue
            if start >= end:  # this fragment starts in a later block
                return
            lo, hi = max(start, offset), min(stop, end)
            if lo < hi:
                if self.handle is None:
                    self.handle = self._sf.SoundFile(
                        str(self.paths[self.k]),
                        "w",
                        samplerate=self.rate,
                        channels=1,
                        format="WAV",
                        subtype=self.subtype,
                    )
                piece = block[lo - offset : hi - offset]
                if self.subtype not in ("FLOAT", "DOUBLE"):  # PCM would wrap or saturate silently
                    over = np.abs(piece) > 1.0
                    if over.any():
                        self.clipped += int(over.sum())
                        piece = np.clip(piece, -1.0, 1.0)
                self.handle.write(piece)
            if stop > end:  # continues in the next block
                return
            self.close()
            self.k += 1

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def fragment_audio(
    source: Union[str, os.PathLike],
    out_dir: Union[str, os.PathLike],
    *,
    ns: Sequence[int] = PAPER_NS,
    sampling_rate: Optional[int] = PAPER_RATE,
    subtype: str = "FLOAT",
    block_frames: int = DEFAULT_BLOCK_FRAMES,
    stem: Optional[str] = None,
) -> FragmentResult:
    """Cut an audio file into N equal-duration mono fragments for every N in ``ns``, in one pass.

    ``sampling_rate``: output rate (16 kHz as in the paper; None keeps the file's rate). Fragments are
    written to ``out_dir`` as ``<stem>_N<n>_k<k>.wav`` (``stem`` defaults to the file's stem; an
    existing file of that name is replaced). ``subtype``: "FLOAT" (default, lossless) or a PCM subtype
    such as "PCM_16". Returns the fragments written, the fragments skipped (no sample) with the
    reason, and the number of clipped samples (PCM only). Raises ``AudioError`` for a missing,
    unreadable, truncated or non-finite file; files written before an error are removed.
    """
    import soundfile as sf

    ns = _check_ns(ns)
    path = Path(source)
    if not path.is_file():
        raise AudioError(f"audio file not found: {path}")
    if sampling_rate is not None and (
        isinstance(sampling_rate, bool) or int(sampling_rate) != sampling_rate or sampling_rate <= 0
    ):
        raise ValueError(f"sampling_rate must be a positive integer or None, got {sampling_rate!r}")
    if block_frames < 1:
        raise ValueError(f"block_frames must be >= 1, got {block_frames}")
    subtype = subtype.upper()
    if not sf.check_format("WAV", subtype):
        raise ValueError(f"subtype {subtype!r} cannot be written to WAV; use 'FLOAT' or 'PCM_16'")
    check_held(read_promise(path), str(path))
    try:
        info = sf.info(str(path))
    except (RuntimeError, OSError) as err:  # soundfile.LibsndfileError is a RuntimeError
        raise AudioError(
            f"cannot stream {path} with soundfile ({err}); formats such as m4a/mp4 need "
            "converting first, e.g. `ffmpeg -i in.m4a out.flac`"
        ) from None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    source_rate, channels, frames = int(info.samplerate), int(info.channels), int(info.frames)
    rate = int(sampling_rate or source_rate)
    total = resampled_length(frames, source_rate, rate)
    result = FragmentResult(str(path), source_rate, rate, channels, total, subtype)
    writers = [_Writer(n, total, out_dir, stem or path.stem, rate, subtype) for n in ns]
    for w in writers:
        for k, (a, b) in enumerate(w.bounds):
            if b <= a:
                reason = (
                    f"no sample: the clip has {total} samples at {rate} Hz, fewer than N={w.n}, so each "
                    "fragment but the last is floor(L/N) = 0 samples long"
                    if total
                    else "no sample: the clip is empty"
                )
                result.skipped.append(SkippedFragment(w.n, k, a, b, reason))
    try:
        written = _stream(soundfile_blocks(str(path), block_frames), source_rate, rate, writers, path)
        if written != total:
            raise AudioError(
                f"{path}: expected {total} output samples from {frames} frames, got {written} "
                "(the file's frame count is wrong or the file is truncated)"
            )
    except BaseException:
        for w in writers:
            w.close()
            for p in w.paths:
                p.unlink(missing_ok=True)
        raise
    for w in writers:
        w.close()
        result.clipped_samples += w.clipped
        result.fragments.extend(Fragment(w.n, k, a, b, w.paths[k], rate) for k, (a, b) in enumerate(w.bounds) if b > a)
    return result


def _stream(blocks: Iterator[np.ndarray], source_rate: int, rate: int, writers: list[_Writer], path: Path) -> int:
    """Downmix and resample each (frames, channels) block, hand it to every writer; the output samples."""
    resampler = None
    if rate != source_rate:
        import soxr

        resampler = soxr.ResampleStream(source_rate, rate, 1, dtype="float32")
    read = written = 0
    # Look one block ahead so that the resampler is flushed (last=True) with the final block.
    block = next(blocks, None)
    while block is not None:
        following = next(blocks, None)
        if not np.isfinite(block).all():
            bad = int(np.argmax(~np.isfinite(block).all(axis=1)))
            raise AudioError(f"{path}: NaN or infinite sample at frame {read + bad}")
        read += len(block)
        mono = block[:, 0] if block.shape[1] == 1 else block.mean(axis=1)
        if resampler is not None:
            mono = resampler.resample_chunk(np.ascontiguousarray(mono, dtype=np.float32), last=following is None)
        if len(mono):
            for w in writers:
                w.write(mono, written)
            written += len(mono)
        block = following
    return written
