"""Step 1 of the caption pipeline (AudioSpan, arXiv:2608.26431, §4.2): a sentence-level transcript with
timestamps, read from the recording in windows so that a 2-hour file is never decoded whole.

Streaming: the file is read once, front to back, through ``audio.stream.iter_blocks`` at 16 kHz in blocks of
``READ_SECONDS``; a buffer holds at most one window (``window`` seconds, default 120) plus one block. Each
window goes to the recognizer:

* local (the "asr" role is a faster-whisper model, e.g. the packaged whisper-tiny.en):
  ``WhisperASR.timed_sentences`` with the window's offset added;
* endpoint (any other "asr" role): ``calls.ask("asr", ...)`` with the window as an audio part, asking for the
  sentences as JSON with times relative to the window (checked: inside the window, in order, text present).

Windows and whole sentences: a window's cut can fall inside a sentence, which the recognizer then reads
truncated. So only the sentences that end at least ``guard`` seconds (default 8) before the window's cut are
kept, and the next window starts between the last kept sentence and the one after it. Every sentence is
therefore read whole by exactly one window and no sentence is kept twice, so nothing needs merging or
de-duplicating across windows (a merge would have to match two differently truncated readings of one
sentence). The last window keeps everything. A window where no sentence ends before the guard moves on to
the start of its first sentence when that lies later in the window, else (one sentence longer than the
window) keeps that sentence as read, so every window makes progress; a window without speech moves on by
``window - guard``. The cost is reading the guard band and any unfinished sentence twice: about 10% more
audio than the file holds with the defaults.

Why 120 s: long enough that the re-read share stays small and Whisper, which itself slides over 30 s
windows, has context across its own cuts; short enough that a window is 7.7 MB of samples and an endpoint
request a 3.8 MB 16-bit WAV (under the audio limits of the ASR services we know of). An endpoint whose
limit is lower takes ``window=`` from its caller.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable, Optional, Union

import numpy as np

from audioreason.audio.stream import audio_info, iter_blocks

from .records import stamp

RATE = 16000
WINDOW_SECONDS = 120.0
GUARD_SECONDS = 8.0
READ_SECONDS = 10.0
ONSET_PAD = 0.5  # a window that starts at a sentence starts this much before it (the onset is not clipped)
MIN_STEP = RATE // 4  # a window starts at least 0.25 s after the previous one

Sentence = tuple[float, float, str]
Recognizer = Callable[[np.ndarray, float], Awaitable[Optional[list[Sentence]]]]


class CaptionStepFailed(RuntimeError):
    """A caption step could not be completed for a recording (its model's reply failed after re-asks, or its
    input is unusable); ``step`` names it. The recording is reported as failed at that step."""

    def __init__(self, step: str, recording: str, reason: str):
        super().__init__(f"{recording}: caption step '{step}' failed: {reason}")
        self.step, self.recording, self.reason = step, recording, reason


def _inside(start: float, end: float, low: float, high: float) -> tuple[float, float]:
    start = min(max(low, start), high)
    return start, min(max(start, end), high)


def _next_start(found: list[Sentence], offset: float, cut: float, guard: float, last_kept: Optional[float]) -> float:
    """Where the next window starts given the sentences ``found`` in a window [offset, cut) (module docstring)."""
    if last_kept is not None:
        later = [s for s, _, _ in found if s >= last_kept]
        return (last_kept + later[0]) / 2 if later else last_kept
    if found and found[0][0] - ONSET_PAD > offset + 1.0:
        return found[0][0] - ONSET_PAD
    return cut - guard


async def stream_transcript(
    path: Union[str, os.PathLike],
    recognize: Recognizer,
    *,
    window: float = WINDOW_SECONDS,
    guard: float = GUARD_SECONDS,
    read_seconds: float = READ_SECONDS,
    on_window: Optional[Callable[[float, float], None]] = None,
    name: Optional[str] = None,
) -> list[dict[str, Any]]:
    """The sentences of the recording at ``path`` as ``[{"start", "end", "text"}]`` (seconds in the recording,
    in order), reading it in windows (module docstring). ``recognize(samples, offset)`` returns a window's
    sentences with times in the recording, or None when it failed (then ``CaptionStepFailed``).
    ``on_window(start, end)`` is told each window read (progress, tests); ``name``: the recording in errors."""
    if not 0 < guard < window / 2:
        raise ValueError(f"guard must be positive and under half the window, got {guard} and {window}")
    duration = audio_info(path).duration
    size = int(round(window * RATE))
    blocks = iter_blocks(path, read_seconds, RATE)
    buffer, buffer_start, exhausted, start = np.zeros(0, np.float32), 0, False, 0
    kept: list[dict[str, Any]] = []
    while True:
        while not exhausted and buffer_start + len(buffer) < start + size:
            block = next(blocks, None)
            if block is None:
                exhausted = True
            else:
                buffer = np.concatenate([buffer, block])
        buffer, buffer_start = buffer[start - buffer_start :], start
        piece = buffer[:size]
        if len(piece) == 0:
            break
        offset, cut = start / RATE, (start + len(piece)) / RATE
        last = exhausted and len(buffer) <= size
        if on_window is not None:
            on_window(offset, cut)
        found = await recognize(piece, offset)
        if found is None:
            raise CaptionStepFailed(
                "transcription", name or str(path), f"no usable transcript of {stamp(offset)}-{stamp(cut)}"
            )
        found = sorted(_inside(s, e, offset, min(cut, duration)) + (t.strip(),) for s, e, t in found if t.strip())
        done = found if last else [s for s in found if s[1] <= cut - guard]
        if not last and not done and found and found[0][0] - ONSET_PAD <= offset + 1.0:
            done = found[:1]  # a sentence longer than the window: kept as read, so the stream moves on
        kept += [{"start": round(s, 3), "end": round(e, 3), "text": t} for s, e, t in done]
        if last:
            break
        following = _next_start(found, offset, cut, guard, done[-1][1] if done else None)
        start = max(int(round(following * RATE)), start + MIN_STEP)
    return kept


def local_recognizer(asr: Any) -> Recognizer:
    """A faster-whisper model (``backends.asr.WhisperASR``) as a window recognizer, run in a worker thread."""

    async def recognize(samples: np.ndarray, offset: float) -> list[Sentence]:
        return await asyncio.to_thread(asr.timed_sentences, samples, offset)

    return recognize


def _asr_schema(length: float):
    from .calls import stage_schema

    sentence = {
        "type": "object",
        "properties": {
            "start": {"type": "number"},
            "end": {"type": "number"},
            "text": {"type": "string", "maxLength": 1200},
        },
        "required": ["start", "end", "text"],
        "additionalProperties": False,
    }
    body = {
        "type": "object",
        "properties": {"sentences": {"type": "array", "items": sentence, "maxItems": 200}},
        "required": ["sentences"],
        "additionalProperties": False,
    }

    def check(value: Any) -> list[Sentence]:
        out, previous = [], 0.0
        for i, s in enumerate(value["sentences"]):
            start, end, text = float(s["start"]), float(s["end"]), str(s["text"]).strip()
            if not text:
                raise ValueError(f"sentence {i} has no text")
            if not 0 <= start <= end <= length + 0.5:
                raise ValueError(f"sentence {i} runs {start}-{end} s, outside the clip's 0-{length:.2f} s")
            if start < previous - 0.5:
                raise ValueError(f"sentence {i} starts at {start} s, before the previous one ({previous} s)")
            previous = start
            out.append((start, min(end, length), text))
        return out

    return stage_schema("transcript", body, check=check)


def endpoint_recognizer(calls: Any, recording: str) -> Recognizer:
    """The "asr" role behind ``calls`` (an endpoint) as a window recognizer: the window goes as an audio part
    and the reply is ``{"sentences": [{"start", "end", "text"}]}`` with times from the window's start."""

    async def recognize(samples: np.ndarray, offset: float) -> Optional[list[Sentence]]:
        length = len(samples) / RATE
        prompt = (
            f"Transcribe the speech in this {length:.1f} s audio clip verbatim, one entry per sentence, in order. "
            "Give each sentence's start and end in seconds from the start of the clip. A sentence cut off at "
            "the clip's start or end is given as far as it is heard. Reply with an empty list if nobody speaks."
        )
        messages = [
            {"role": "user", "content": [calls.audio_part("asr", samples, RATE), {"type": "text", "text": prompt}]}
        ]
        found = await calls.ask("asr", _asr_schema(length), messages, item=f"{recording}@{offset:.3f}")
        if found is None:
            return None
        return [(offset + s, offset + e, t) for s, e, t in found]

    return recognize


async def transcribe_recording(
    path: Union[str, os.PathLike],
    *,
    asr: Any = None,
    calls: Any = None,
    recording: Optional[str] = None,
    window: float = WINDOW_SECONDS,
    guard: float = GUARD_SECONDS,
    on_window: Optional[Callable[[float, float], None]] = None,
) -> list[dict[str, Any]]:
    """Step 1 for one recording: with ``asr`` (a loaded faster-whisper ``WhisperASR``) locally, else through
    the "asr" role of ``calls``. Returns ``[{"start", "end", "text"}]``; ``CaptionStepFailed`` when a window
    gets no usable reply."""
    if asr is None and calls is None:
        raise ValueError("transcribe_recording needs a local ASR model or the calls of an ASR endpoint")
    name = recording or str(path)
    recognize = local_recognizer(asr) if asr is not None else endpoint_recognizer(calls, name)
    return await stream_transcript(path, recognize, window=window, guard=guard, on_window=on_window, name=name)


__all__ = [
    "CaptionStepFailed",
    "GUARD_SECONDS",
    "WINDOW_SECONDS",
    "endpoint_recognizer",
    "local_recognizer",
    "stream_transcript",
    "transcribe_recording",
]
