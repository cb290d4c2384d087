"""The validation report of a benchmark build: every problem found in a raw folder is an ``Issue`` of a
documented kind, counted and listed by item id. Nothing is dropped without a ``skipped`` issue naming it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

ISSUE_KINDS: dict[str, str] = {
    "missing_audio": "the audio file the metadata names does not exist",
    "unreadable_audio": "the audio file exists but no reader opens its header (treated as missing by the policy)",
    "audio_outside_root": (
        "the audio path leads outside the raw folder (../, an absolute path elsewhere, a symlink "
        "out): refused, never read or exported (treated as missing by the policy)"
    ),
    "answer_not_in_choices": "the answer text equals no choice (kept, answer_index = -1)",
    "duplicate_choices": "the same choice text occurs more than once (kept as-is)",
    "list_typed_category": "category given as a list (stored as one string, elements joined by '|')",
    "repeated_id": "the id occurs on more than one record",
    "missing_field": "a required field is absent or empty",
    "invalid_value": "a field has a value outside its documented set or type (kept as given where possible)",
    "skipped": "the record is not in the dataset (by the on_missing_audio / on_repeated_id policy, or the review)",
    # AudioSpan
    "unmapped_field": "a released field name that neither the schema nor FIELD_ALIASES knows (not stored)",
    "alias_conflict": "both a field and one of its aliases are present (the canonical name wins)",
    "conflicting_value": "item and recording (or edit manifest) metadata disagree (the item wins)",
    "answer_given_as_letter": "the MCQ answer was an option letter, mapped to the option text",
    "inferred_value": "a field was absent and was derived (e.g. format from the presence of choices)",
    "incomplete_chain": "an anchor chain lacks exactly one question at each of positions 1, 2, 3",
    "incomplete_native_set": "a recording lacks exactly one P, U and R question in a native format",
    "unexpected_choice_count": "an AudioSpan MCQ without exactly four options",
    "missing_rubric": "an open-ended item without rubric criteria",
    "missing_edit_manifest": "an anchor item whose recording has no edit manifest",
    # Human review (review.jsonl, audioreason.data.review)
    "review_rejected": "an item rejected in human review (left out)",
    "review_chain_dropped": "an anchor item left out with its chain: another link of the chain was rejected in review",
    "review_fixed": "an item fixed in human review (the fixed fields are named)",
    "review_unknown_item": "a review decision for an id that no item has (not applied)",
}


@dataclass(frozen=True)
class Issue:
    kind: str
    item_id: str
    detail: str = ""


@dataclass
class ValidationReport:
    """Everything the builder found while reading a raw folder, with counts and ids per kind.

    ``rows`` is the number of records read, ``built`` the number of items in the built dataset (for
    AudioSpan: in the chosen config). Nothing is dropped without a ``skipped`` issue naming it.
    """

    benchmark: str
    source: str
    rows: int = 0
    built: int = 0
    audio_backend: str = ""
    audio_backend_reason: str = ""
    issues: list[Issue] = field(default_factory=list)
    # The human review's totals (decisions, superseded, accepted, fixed, rejected, chain_dropped, unreviewed,
    # unknown) when the folder has a review.jsonl (audioreason.data.review); empty otherwise.
    review: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, item_id: str, detail: str = "") -> None:
        if kind not in ISSUE_KINDS:
            raise ValueError(f"unknown issue kind {kind!r}")
        self.issues.append(Issue(kind, str(item_id), detail))

    def counts(self) -> dict[str, int]:
        """Issues per kind, in ISSUE_KINDS order."""
        out: dict[str, int] = {}
        for kind in ISSUE_KINDS:
            n = sum(1 for i in self.issues if i.kind == kind)
            if n:
                out[kind] = n
        return out

    def ids(self, kind: str) -> list[str]:
        """Item ids with an issue of ``kind``, in the order found (an id may repeat)."""
        return [i.item_id for i in self.issues if i.kind == kind]

    def of_kind(self, kind: str) -> list[Issue]:
        return [i for i in self.issues if i.kind == kind]

    @property
    def ok(self) -> bool:
        return not self.issues

    def summary(self, max_ids: int = 8) -> str:
        """A few lines a person can read: totals, then one line per kind with the first ids."""
        lines = [
            f"{self.benchmark}: {self.rows} records read from {self.source}, {self.built} items built"
            + (f" (audio: {self.audio_backend})" if self.audio_backend else "")
        ]
        if self.review:
            lines.append("  review: " + ", ".join(f"{n} {what}" for what, n in self.review.items()))
        for kind, n in self.counts().items():
            ids = list(dict.fromkeys(self.ids(kind)))
            shown = ", ".join(ids[:max_ids]) + (f", ... (+{len(ids) - max_ids})" if len(ids) > max_ids else "")
            lines.append(f"  {kind}: {n} ({ISSUE_KINDS[kind]}): {shown}")
        if self.ok:
            lines.append("  no issues")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "source": self.source,
            "rows": self.rows,
            "built": self.built,
            "audio_backend": self.audio_backend,
            "audio_backend_reason": self.audio_backend_reason,
            "counts": self.counts(),
            "review": dict(self.review),
            "issues": [{"kind": i.kind, "id": i.item_id, "detail": i.detail} for i in self.issues],
        }

    def write_json(self, path: Union[str, os.PathLike]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        return path


class BenchmarkValidationError(ValueError):
    """A raw folder failed a policy (missing audio, repeated ids). ``.report`` has everything found."""

    def __init__(self, message: str, report: ValidationReport):
        super().__init__(message)
        self.report = report
