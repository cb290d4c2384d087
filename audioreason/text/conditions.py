"""Input conditions: the one ``Condition`` type and the grammar of one condition's name, shared by the runner
(``audioreason.inference.conditions``, which sends the audio each one names) and the text-prior scorer
(``audioreason.scorers.text_prior``, which reads a record's condition). Case-insensitive, surrounding spaces
ignored::

    condition := "full" | "none" | "tb" | "anchored" | "silence" | "shuffled"
               | "frag:" N ":" k                 N, k decimal integers, N >= 2, 0 <= k < N

full = the clip as given; none = no audio input at all (not silence); tb = the model's text-only backbone;
anchored = the item's anchored recording; silence and shuffled = the audio-reliance check (silence as long as
the clip, another item's clip); frag:N:k = the k-th (0-based) of N equal-duration fragments
(``audioreason.audio.fragments``). A caller accepts a subset of the kinds (``parse_condition(text, kinds)``):
the text-prior scorer takes full, none, tb and fragments. A run's request may also name ``frag`` or ``frag:N``,
which expand to several conditions: that grammar is the runner's (``inference.conditions.expand_condition``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

CHECK_KINDS = ("silence", "shuffled")  # the audio-reliance check's conditions, beside full
KINDS = ("full", "none", "tb", "anchored", *CHECK_KINDS)  # every kind without numbers (frag has N and k)
AUDIO_KINDS = ("full", "frag", "anchored", *CHECK_KINDS)  # the kinds that send audio to the model
_FRAGMENT = re.compile(r"^frag:(\d+):(\d+)$")


@dataclass(frozen=True, order=True)
class Condition:
    kind: str  # full | none | tb | frag | anchored | silence | shuffled
    n: Optional[int] = None  # fragments per clip (frag only)
    k: Optional[int] = None  # fragment index, 0-based (frag only)

    @property
    def name(self) -> str:
        return f"frag:{self.n}:{self.k}" if self.kind == "frag" else self.kind

    def __str__(self) -> str:
        return self.name

    @property
    def sends_audio(self) -> bool:
        return self.kind in AUDIO_KINDS


def parse_condition(text: Any, kinds: Sequence[str] = KINDS) -> Condition:
    """One condition's name (the grammar above) -> its Condition; ``kinds``: the kinds without numbers the
    caller accepts (fragments are always accepted). A Condition passes through. ValueError says what is
    wrong."""
    if isinstance(text, Condition):
        return text
    if not isinstance(text, str):
        raise ValueError(f"condition must be a string, got {type(text).__name__} {text!r}")
    norm = text.strip().lower()
    if norm in kinds:
        return Condition(norm)
    m = _FRAGMENT.match(norm)
    if not m:
        names = ", ".join(repr(kind) for kind in kinds)
        raise ValueError(f"unknown condition {text!r}: use {names} or 'frag:N:k' (e.g. 'frag:3:0')")
    n, k = int(m.group(1)), int(m.group(2))
    if n < 2:
        raise ValueError(f"condition {text!r}: N must be >= 2 (N = 1 is the full clip)")
    if k >= n:
        raise ValueError(f"condition {text!r}: fragment index k={k} out of range 0..{n - 1}")
    return Condition("frag", n, k)


def fragment_condition(n: int, k: int) -> str:
    """The condition name of fragment k of N, e.g. ``fragment_condition(3, 0) == 'frag:3:0'``."""
    return str(parse_condition(f"frag:{n}:{k}"))


__all__ = ["AUDIO_KINDS", "CHECK_KINDS", "KINDS", "Condition", "fragment_condition", "parse_condition"]
