"""What every model adapter takes and gives: the one interface between the runner and a model.

An adapter turns a batch of ``GenerationRequest`` (chat messages plus, optionally, one mono audio clip) into
one ``Generation`` per request, in order. It never raises for one bad request: a request that cannot be
served comes back with ``error`` set (counted by the runner), so one item cannot take a batch down.

    adapter.generate([GenerationRequest(messages, audio), ...], DecodingParams()) -> [Generation, ...]

Messages are OpenAI-style chat messages with text content only; the audio travels beside them and each
adapter places it where its model expects it (a processor's audio slot, an ``input_audio`` content part, a
transcript for a cascade). ``audio=None`` means no audio input at all (the "none" and "tb" conditions): an
adapter must not substitute silence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class AudioInput:
    """One clip as the model receives it: mono float32 samples in [-1, 1] at ``sampling_rate``.

    ``source_seconds`` is the length of the clip before any cut; ``truncated`` says the runner cut it to
    the model's maximum audio duration (its leading prefix was kept)."""

    array: np.ndarray = field(repr=False)
    sampling_rate: int
    source_seconds: float
    truncated: bool = False

    @property
    def seconds(self) -> float:
        return len(self.array) / float(self.sampling_rate)


@dataclass(frozen=True)
class GenerationRequest:
    """One model call: chat messages (text) and an optional clip. ``key`` identifies the output in shards."""

    key: str
    messages: Sequence[Mapping[str, Any]]
    audio: Optional[AudioInput] = None


@dataclass(frozen=True)
class DecodingParams:
    """Greedy by default (the papers' setting). ``temperature`` > 0 samples, seeded by ``seed``."""

    max_new_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    seed: Optional[int] = 0

    def __post_init__(self) -> None:
        if not isinstance(self.max_new_tokens, int) or isinstance(self.max_new_tokens, bool) or self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a positive integer, got {self.max_new_tokens!r}")
        number = lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)  # noqa: E731
        if not number(self.temperature) or not 0.0 <= self.temperature < float("inf"):
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if not number(self.top_p) or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        # None: unseeded. torch.manual_seed takes -2**63 .. 2**64 - 1.
        if self.seed is not None and (
            not isinstance(self.seed, int) or isinstance(self.seed, bool) or not -(2**63) <= self.seed < 2**64
        ):
            raise ValueError(f"seed must be an integer (or null), got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return float(self.temperature) == 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Generation:
    """What the model produced for one request. ``text`` is None exactly when ``error`` is set."""

    text: Optional[str]
    prompt_tokens: Optional[int] = 0  # None: the server reported no counts for this reply
    completion_tokens: Optional[int] = 0
    finish_reason: Optional[str] = None  # "stop" | "length" | None
    error: Optional[str] = None
    seconds: float = 0.0  # wall time attributed to this request (its share of the batch)
    # What the adapter records beside the text for this item (e.g. a cascade's transcript, an API call's
    # attempts and retried errors); JSON-serialisable, written with the output.
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class ModelAdapter(Protocol):
    """A model behind the one interface.

    ``name``: the model's identity in outputs (weights or endpoint model name; never a URL or a key).
    ``description``: what produced the outputs, for results files (e.g. "Qwen/Qwen2-Audio-7B-Instruct,
    bfloat16, sdpa"). ``max_audio_s``: the longest clip the model takes (None: no limit); the runner cuts
    longer clips to their leading prefix and records the cut. ``sampling_rate``: the rate clips are
    delivered at. ``takes_audio``: False for text-only models (the "tb" condition)."""

    name: str
    description: str
    max_audio_s: Optional[float]
    sampling_rate: int
    takes_audio: bool

    def generate(self, requests: Sequence[GenerationRequest], decoding: DecodingParams) -> list[Generation]: ...


__all__ = ["AudioInput", "DecodingParams", "Generation", "GenerationRequest", "ModelAdapter"]
