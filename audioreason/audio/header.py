"""How many frames a WAV or FLAC file promises, read from its own header, and the checks that hold a
decode to that promise.

Neither decoder notices a file cut short: FFmpeg (torchcodec) and libsndfile (soundfile) both clamp a WAV
whose data chunk declares more bytes than the file holds to what is there, and FFmpeg decodes a FLAC cut
at a frame boundary to the frames before the cut, without a word. The header is therefore read here:

- WAV (RIFF, big-endian RIFX, RF64): promised frames = the data chunk's declared size / the block align of
  the ``fmt `` chunk (RF64: the 64-bit size of the ``ds64`` chunk). The frames the file holds are the
  whole frames of the bytes that follow the data chunk header, so a cut WAV shows without decoding. The
  sizes 0xFFFFFFFF and 0, which writers that cannot seek back leave in place, declare no length.
- FLAC: promised frames = STREAMINFO's total samples (0: unknown, no promise). An ID3v2 tag before
  ``fLaC`` is skipped. A cut shows only when decoding: fewer frames than promised.
- Any other format (OGG, MP3, MP4...) returns None: its header gives no exact length to check against.
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Optional, Union

from .errors import AudioError

NO_LENGTH = (0, 0xFFFFFFFF)  # data sizes of a WAV written without seeking back
RIFF_MAGIC = {b"RIFF": "<", b"RIFX": ">", b"RF64": "<"}  # the byte order of each


@dataclass(frozen=True)
class Promise:
    """The length a header declares: ``frames`` at ``sampling_rate``; for WAV also ``held_frames``, the
    whole frames that the bytes after the header hold (None for FLAC: known only by decoding)."""

    format: str  # "WAV" or "FLAC"
    frames: int
    sampling_rate: int
    held_frames: Optional[int]

    @property
    def seconds(self) -> float:
        return self.frames / self.sampling_rate


def _syncsafe(data: bytes) -> int:
    return (data[0] << 21) | (data[1] << 14) | (data[2] << 7) | data[3]


def _flac(f: BinaryIO) -> Optional[Promise]:
    start = f.read(10)
    if start[:3] == b"ID3" and len(start) == 10:  # ID3v2: 10-byte header (+10-byte footer when flagged)
        f.seek(10 + _syncsafe(start[6:10]) + (10 if start[5] & 0x10 else 0))
    else:
        f.seek(0)
    head = f.read(4 + 4 + 34)  # "fLaC", a metadata block header, STREAMINFO (always the first block)
    if len(head) < 42 or head[:4] != b"fLaC" or head[4] & 0x7F != 0:
        return None
    packed = int.from_bytes(head[18:26], "big")  # rate (20 bits), channels (3), bits (5), total samples (36)
    rate, total = packed >> 44, packed & ((1 << 36) - 1)
    return Promise("FLAC", total, rate, None) if total and rate else None


def _wav(f: BinaryIO, size: int) -> Optional[Promise]:
    head = f.read(12)
    if len(head) < 12 or head[:4] not in RIFF_MAGIC or head[8:12] != b"WAVE":
        return None
    order = RIFF_MAGIC[head[:4]]
    block_align = rate = None
    ds64_data_size = None
    while True:
        chunk = f.read(8)
        if len(chunk) < 8:
            return None  # no data chunk: nothing to hold a decode to (the decoders will refuse the file)
        kind, declared = chunk[:4], struct.unpack(order + "I", chunk[4:])[0]
        if kind == b"data":
            break
        body_start = f.tell()
        if kind == b"fmt " and declared >= 16:
            _, _, rate, _, block_align = struct.unpack(order + "HHIIH", f.read(14))
        elif kind == b"ds64" and declared >= 16:
            ds64_data_size = struct.unpack(order + "QQ", f.read(16))[1]
        f.seek(body_start + declared + (declared & 1))  # chunks are padded to an even size
    if head[:4] == b"RF64" and declared == 0xFFFFFFFF and ds64_data_size is not None:
        declared = ds64_data_size
    elif declared in NO_LENGTH:
        return None
    if not block_align or not rate:
        return None
    available = max(0, size - f.tell())
    return Promise("WAV", declared // block_align, rate, min(declared, available) // block_align)


def read_promise(source: Union[str, os.PathLike, bytes, bytearray]) -> Optional[Promise]:
    """The length a WAV or FLAC header promises (a path or the file's bytes); None for other formats."""
    try:
        if isinstance(source, (bytes, bytearray)):
            f, size = io.BytesIO(source), len(source)
        else:
            f, size = open(source, "rb"), os.path.getsize(source)
        with f:
            promise = _wav(f, size)
            if promise is None:
                f.seek(0)
                promise = _flac(f)
            return promise
    except (struct.error, OSError):
        return None  # unreadable, or a header too broken to parse: the decoders say what is wrong


def check_held(promise: Optional[Promise], what: str) -> None:
    """AudioError when a WAV holds fewer frames than its header promises (no decoding needed)."""
    if promise is not None and promise.held_frames is not None and promise.held_frames < promise.frames:
        raise AudioError(
            f"{what}: truncated WAV: its header promises {promise.frames} frames "
            f"({promise.seconds:.3f} s), the file holds {promise.held_frames} "
            f"({promise.held_frames / promise.sampling_rate:.3f} s)"
        )


def check_decoded(promise: Optional[Promise], frames: int, rate: int, what: str = "") -> None:
    """AudioError (its message starting with ``what``, when given) when a decode gave fewer frames than the
    header promises.

    At the header's rate a decode must give at least the promised frames. When the decoder resampled
    (datasets' ``Audio(sampling_rate=...)``), the promise scales to ``floor(frames * rate / header rate)``:
    resamplers round the output length up or to nearest (measured with FFmpeg: 32,003 samples for 88,207
    frames at 44.1 kHz -> 16 kHz, exactly 32,002.5; 727 for 1,001 at 22.05 -> 16 kHz, exactly 726.3).
    """
    if promise is None:
        return
    expected = promise.frames * rate // promise.sampling_rate
    if frames < expected:
        scaled = (
            ""
            if rate == promise.sampling_rate
            else f" at {rate} Hz ({promise.frames} at the header's {promise.sampling_rate} Hz)"
        )
        prefix = f"{what}: " if what else ""
        raise AudioError(
            f"{prefix}decoded {frames} of the {expected} frames its {promise.format} header "
            f"promises{scaled}: the file is truncated"
        )
