"""What every adapter does to a request's inputs before its model sees them: the shared option checks, the
clip at the adapter's rate (never longer than its limit), and extra content parts placed in the last user
message."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..audio import AudioError, load_audio
from .base import AudioInput


def check_audio_options(max_audio_s: Optional[float], sampling_rate: int) -> None:
    """The shared checks of every adapter's ``max_audio_s`` (None or > 0 s) and ``sampling_rate`` (> 0 Hz)."""
    if isinstance(sampling_rate, bool) or not isinstance(sampling_rate, int) or sampling_rate <= 0:
        raise ValueError(f"sampling_rate must be a positive integer (Hz), got {sampling_rate!r}")
    if max_audio_s is not None and (
        isinstance(max_audio_s, bool) or not isinstance(max_audio_s, (int, float)) or not 0 < max_audio_s < math.inf
    ):
        raise ValueError(f"max_audio_s must be None or a positive number of seconds, got {max_audio_s!r}")


def samples_at(audio: AudioInput, sampling_rate: int, max_audio_s: Optional[float]) -> np.ndarray:
    """The clip's samples at ``sampling_rate`` (resampled if needed), refusing a clip longer than
    ``max_audio_s``: the runner cuts clips to an adapter's limit, so a longer one is a caller's error that
    must not be cut, or sent, quietly here. Raises ``AudioError``."""
    if max_audio_s is not None and audio.seconds > max_audio_s:
        raise AudioError(
            f"the clip is {audio.seconds:.3f} s, longer than this model's max_audio_s of "
            f"{max_audio_s:g} s (the runner cuts clips to it and records the cut)"
        )
    samples, _ = load_audio((audio.array, audio.sampling_rate), sampling_rate)
    return samples


def last_user_index(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the last user message; ``ValueError`` when there is none to carry the input."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    raise ValueError("the messages have no user message to carry the input")


def with_user_content(
    messages: Sequence[Mapping[str, Any]], parts: Sequence[Mapping[str, Any]], position: str = "first"
) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose last user message carries ``parts`` before (``"first"``) or after
    (``"last"``) its own content, which becomes a text part if it was a string."""
    out = [dict(m) for m in messages]
    message = out[last_user_index(out)]
    content = message.get("content")
    own = list(content) if isinstance(content, (list, tuple)) else [{"type": "text", "text": str(content or "")}]
    message["content"] = [*parts, *own] if position == "first" else [*own, *parts]
    return out


def with_text_before_user(messages: Sequence[Mapping[str, Any]], text: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose last user message (a string) starts with ``text`` and a blank line."""
    out = [dict(m) for m in messages]
    message = out[last_user_index(out)]
    content = message.get("content")
    if not isinstance(content, str):
        raise ValueError(f"a text model's messages carry strings, got user content of type {type(content).__name__}")
    message["content"] = f"{text}\n\n{content}"
    return out


__all__ = ["check_audio_options", "last_user_index", "samples_at", "with_text_before_user", "with_user_content"]
