"""Records that cross module borders. Plain dataclasses: easy to build in tests, easy to dump as JSON."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

SLOT_NAMES = ("perception", "analysis", "reasoning", "answer")


@dataclass
class CoTSlots:
    """A model output parsed into the four ARIA slots.

    `perception` is the whole Perception section; `entities` and `description` are its two parts.
    A slot that is absent or empty is "" and is listed in `missing`.
    """

    entities: list[str] = field(default_factory=list)
    description: str = ""
    perception: str = ""
    analysis: str = ""
    reasoning: str = ""
    answer: str = ""
    missing: tuple[str, ...] = SLOT_NAMES + ("entities",)
    # How many times each slot header occurred (a model that echoes the template repeats them).
    repeated: dict[str, int] = field(default_factory=dict)
    # Text inside <think> blocks, kept apart; `source` says whether the slots came from the visible
    # text ("output") or, when it held no slot header at all, from the think blocks ("think").
    think: str = ""
    source: str = "output"

    @property
    def complete(self) -> bool:
        """All four slots present and the Perception slot lists at least one entity."""
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["missing"] = list(self.missing)
        return d


@dataclass(frozen=True)
class ExtractedAnswer:
    """The option an extractor chose from a model output, and how it got there.

    `index` is None when the output is unanswered; `method` names the rule that decided
    (e.g. "exact", "substring", "letter", "answer_regex", "content", "judge", "unanswered").
    """

    index: Optional[int]
    method: str
    candidate: Optional[str] = None
    choice: Optional[str] = None

    @property
    def answered(self) -> bool:
        return self.index is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
