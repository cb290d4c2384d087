"""Human review of a built benchmark: the decisions of ``<root>/review.jsonl`` and their effect on the items.

AudioSpan (arXiv:2608.26431) §4.5 and App. B.4: every item that clears the automatic gates is reviewed against
the audio and accepted, given a minor fix (a stem, an option or a criterion tightened) or rejected when a factual
error leaves it beyond repair. ``review.jsonl`` is the log of those decisions, one JSON object a line::

    {"item_id": "rec1/native/P/mcq", "decision": "accept", "reviewer": "ann", "time": "2026-01-05T10:00:00Z"}
    {"item_id": "rec1/native/U/oeq", "decision": "reject", "reason": "the cited laugh is not in the audio",
     "time": "..."}
    {"item_id": "rec1/native/R/mcq", "decision": "fix", "time": "...",
     "fixes": {"question": "Why does the host ...?", "choices": {"2": "Because ..."}}}

- ``item_id`` (the item's id) and ``decision`` (accept | fix | reject) are required, and so is ``time`` (ISO 8601,
  as the app writes it); ``reviewer`` is optional; ``reason`` is required for a reject (optional otherwise).
- ``fixes`` (only with, and required for, fix): any of ``question`` (the new stem), ``choices`` ({option index:
  new text}; an index is 0-based, "0".."N", or an option letter "A".."Z"), ``rubric`` ({criterion index, 0-based:
  new criterion text}; its importance and time range stay) and ``reference_answer``. A fix keeps the gold answer
  consistent: an MCQ's answer is its correct option's text, so fixing that option's text fixes the answer with
  it; an OEQ's answer repeats its reference answer, so fixing the reference fixes the answer.
- The file is an append-only log: for an item, the decision on the LATEST line wins (file order; a later fix
  replaces an earlier one whole, it does not stack). ``time`` is kept for the record, not used for ordering.
- A line that is not a decision of this shape is a ``DataFileError`` naming the file and line. A decision that
  does not fit its item (an option index the item lacks, options on an open-ended item, two options made equal)
  is one too, raised when it is applied. A decision for an id that is not among the items is counted and listed
  (``ReviewCounts.unknown``), never silently dropped.

``apply_review(items, decisions)`` leaves rejected items out, applies fixes and counts everything. Anchor chains
are scored as a whole (the chain score credits the longest correct prefix of its three links, §3.2 Eq. 3): an
item with a ``chain_id`` whose chain has a rejected link is left out with its chain (``ReviewCounts.chain_dropped``).
Writing a decision (the app's writer, append + fsync) is ``review_log``'s.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from audioreason.base.jsonl import DataFileError, json_type, read_json_objects

from .validation import ValidationReport

REVIEW_FILE = "review.jsonl"
DECISIONS = ("accept", "fix", "reject")
FIX_FIELDS = ("question", "choices", "rubric", "reference_answer")
RECORD_FIELDS = ("item_id", "decision", "reason", "fixes", "reviewer", "time")


@dataclass(frozen=True)
class Fixes:
    """A fix decision's edits: new texts by field; ``choices`` and ``rubric`` map a 0-based index to its new text."""

    question: Optional[str] = None
    choices: Mapping[int, str] = field(default_factory=dict)
    rubric: Mapping[int, str] = field(default_factory=dict)
    reference_answer: Optional[str] = None

    def fields(self) -> list[str]:
        """The fields this fix changes, in FIX_FIELDS order."""
        return [name for name in FIX_FIELDS if getattr(self, name)]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.fields():
            value = getattr(self, name)
            out[name] = {str(k): v for k, v in sorted(value.items())} if isinstance(value, Mapping) else value
        return out


@dataclass(frozen=True)
class Decision:
    """One line of review.jsonl; ``where`` (file:line, or "" for a decision not read from a file) names it."""

    item_id: str
    decision: str
    time: str
    reason: str = ""
    fixes: Optional[Fixes] = None
    reviewer: Optional[str] = None
    where: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"item_id": self.item_id, "decision": self.decision}
        if self.reason:
            out["reason"] = self.reason
        if self.fixes is not None:
            out["fixes"] = self.fixes.to_dict()
        if self.reviewer:
            out["reviewer"] = self.reviewer
        out["time"] = self.time
        return out


@dataclass
class ReviewCounts:
    """What a review did to a set of items: ids per outcome (in item order; ``unknown`` in file order)."""

    decisions: int = 0  # decisions read (every line)
    superseded: int = 0  # decisions replaced by a later one for the same item
    accepted: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    chain_dropped: list[str] = field(default_factory=list)  # left out: another link of the chain was rejected
    unreviewed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # decided, but no such item

    def counts(self) -> dict[str, int]:
        return {
            "decisions": self.decisions,
            "superseded": self.superseded,
            "accepted": len(self.accepted),
            "fixed": len(self.fixed),
            "rejected": len(self.rejected),
            "chain_dropped": len(self.chain_dropped),
            "unreviewed": len(self.unreviewed),
            "unknown": len(self.unknown),
        }


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _text(record: Mapping[str, Any], key: str, where: str, required: bool) -> Optional[str]:
    value = record.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        got = "nothing" if key not in record else ("a blank string" if isinstance(value, str) else json_type(value))
        raise DataFileError(f"{where}: {key!r} must be a non-empty string, got {got}")
    return value.strip()


def _index(key: Any, where: str, name: str, letters: bool) -> int:
    text = str(key).strip()
    if text.isdigit():
        return int(text)
    if letters and len(text) == 1 and text.isalpha():
        return ord(text.upper()) - ord("A")
    allowed = "a 0-based index or an option letter" if letters else "a 0-based index"
    raise DataFileError(f"{where}: fixes.{name} key {key!r} is not {allowed}")


def _edits(value: Any, where: str, name: str, letters: bool) -> dict[int, str]:
    if not isinstance(value, Mapping) or not value:
        raise DataFileError(f"{where}: fixes.{name} must be a non-empty object {{index: new text}}")
    out: dict[int, str] = {}
    for key, text in value.items():
        index = _index(key, where, name, letters)
        if not isinstance(text, str) or not text.strip():
            raise DataFileError(f"{where}: fixes.{name}[{key!r}] must be a non-empty string")
        if index in out:
            raise DataFileError(f"{where}: fixes.{name} gives index {index} twice")
        out[index] = text.strip()
    return out


def _fixes(value: Any, where: str) -> Fixes:
    if not isinstance(value, Mapping) or not value:
        raise DataFileError(f"{where}: a fix needs 'fixes', a non-empty object with any of {list(FIX_FIELDS)}")
    unknown = sorted(set(value) - set(FIX_FIELDS))
    if unknown:
        raise DataFileError(f"{where}: fixes has unknown fields {unknown} (known: {list(FIX_FIELDS)})")
    return Fixes(
        question=_text(value, "question", f"{where}: fixes", False),
        choices=_edits(value["choices"], where, "choices", True) if "choices" in value else {},
        rubric=_edits(value["rubric"], where, "rubric", False) if "rubric" in value else {},
        reference_answer=_text(value, "reference_answer", f"{where}: fixes", False),
    )


def parse_decision(record: Any, where: str = "") -> Decision:
    """One decision from its JSON object; a DataFileError naming ``where`` (file:line) says what is wrong."""
    where = where or "review decision"
    if not isinstance(record, Mapping):
        raise DataFileError(f"{where}: expected a JSON object, got {json_type(record)}")
    unknown = sorted(set(record) - set(RECORD_FIELDS))
    if unknown:
        raise DataFileError(f"{where}: unknown fields {unknown} (a decision has {list(RECORD_FIELDS)})")
    item_id = _text(record, "item_id", where, True)
    decision = record.get("decision")
    if decision not in DECISIONS:
        raise DataFileError(f"{where}: decision must be one of {list(DECISIONS)}, got {decision!r}")
    reason = _text(record, "reason", where, decision == "reject") or ""
    if decision == "fix":
        fixes = _fixes(record.get("fixes"), where)
    elif record.get("fixes") is not None:
        raise DataFileError(f"{where}: 'fixes' goes with decision 'fix' only, not {decision!r}")
    else:
        fixes = None
    time = _text(record, "time", where, True)
    try:
        datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        raise DataFileError(f"{where}: time {time!r} is not an ISO 8601 date and time") from None
    reviewer = _text(record, "reviewer", where, False)
    return Decision(item_id, decision, time, reason, fixes, reviewer, where)


def read_review(path: Union[str, os.PathLike]) -> list[Decision]:
    """Every decision of a review.jsonl, in file order ([] when the file does not exist). A last line without its
    newline (a writer stopped mid-line) is not a decision and is never read."""
    path = Path(path)
    if not path.is_file():
        return []
    records, _torn = read_json_objects(path, torn_last=True)
    return [parse_decision(record, f"{path}:{number}") for number, record in records]


def latest_decisions(decisions: Iterable[Decision]) -> dict[str, Decision]:
    """The decision that holds for each item: its latest (in the order given)."""
    out: dict[str, Decision] = {}
    for decision in decisions:
        out.pop(decision.item_id, None)  # the dict keeps the order of the holding decisions
        out[decision.item_id] = decision
    return out


# ----------------------------------------------------------------------------------------------
# Applying
# ----------------------------------------------------------------------------------------------


def _gold_index(item: Mapping[str, Any], choices: list[str]) -> Optional[int]:
    index = item.get("answer_index")
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(choices):
        return index
    answer = item.get("answer")
    return choices.index(answer) if answer in choices else None


def fixed_item(item: Mapping[str, Any], decision: Decision) -> dict[str, Any]:
    """A copy of ``item`` (fields question, choices, answer, answer_index?, reference_answer, rubric) with the
    decision's fixes applied and its gold answer kept consistent; a DataFileError naming the decision's line when
    a fix does not fit the item."""
    fixes = decision.fixes
    out = dict(item)
    if fixes is None:
        return out
    where = f"{decision.where or 'review decision'}: fix of {decision.item_id}"
    choices = list(item.get("choices") or [])
    if fixes.question:
        out["question"] = fixes.question
    if fixes.choices:
        if not choices:
            raise DataFileError(f"{where}: fixes options, but the item has none (an open-ended item?)")
        gold = _gold_index(item, choices)
        for index, text in fixes.choices.items():
            if index >= len(choices):
                raise DataFileError(f"{where}: option index {index}, but the item has {len(choices)} options")
            choices[index] = text
        if len(set(choices)) < len(choices):
            raise DataFileError(f"{where}: the fixed options repeat a text ({choices}); options must differ")
        out["choices"] = choices
        if gold is not None:
            out["answer"] = choices[gold]  # the correct option's text, fixed or not
    if fixes.rubric:
        rubric = [dict(c) if isinstance(c, Mapping) else {"text": c} for c in item.get("rubric") or []]
        for index, text in fixes.rubric.items():
            if index >= len(rubric):
                raise DataFileError(
                    f"{where}: criterion index {index}, but the item has {len(rubric)} "
                    + ("criterion" if len(rubric) == 1 else "criteria")
                )
            rubric[index]["text"] = text
        out["rubric"] = rubric
    if fixes.reference_answer:
        if choices and not item.get("reference_answer"):
            raise DataFileError(f"{where}: fixes the reference answer of a multiple-choice item that has none")
        if not choices and item.get("answer") == item.get("reference_answer"):
            out["answer"] = fixes.reference_answer  # an open-ended item's answer repeats its reference
        out["reference_answer"] = fixes.reference_answer
    return out


def apply_review(
    items: Iterable[Mapping[str, Any]], decisions: Union[Mapping[str, Decision], Iterable[Decision]]
) -> tuple[list[dict[str, Any]], ReviewCounts]:
    """(the items the review keeps, fixed where a fix holds; what it did). ``decisions``: every decision in file
    order (the latest per item holds) or the holding ones by item id. A rejected item is left out, and so is every
    item of an anchor chain (same ``chain_id``) with a rejected link: the chain is scored as a whole."""
    items = list(items)
    counts = ReviewCounts()
    if isinstance(decisions, Mapping):
        holding = dict(decisions)
        counts.decisions = len(holding)
    else:
        every = list(decisions)
        holding = latest_decisions(every)
        counts.decisions, counts.superseded = len(every), len(every) - len(holding)
    ids = {item["id"] for item in items}
    counts.unknown = [item_id for item_id in holding if item_id not in ids]
    rejected_chains = {
        item["chain_id"]
        for item in items
        if item.get("chain_id") and getattr(holding.get(item["id"]), "decision", None) == "reject"
    }
    kept = []
    for item in items:
        decision = holding.get(item["id"])
        verdict = decision.decision if decision is not None else None
        if verdict == "reject":
            counts.rejected.append(item["id"])
            continue
        if item.get("chain_id") in rejected_chains:
            counts.chain_dropped.append(item["id"])
            continue
        if verdict == "fix":
            kept.append(fixed_item(item, decision))
            counts.fixed.append(item["id"])
            continue
        (counts.accepted if verdict == "accept" else counts.unreviewed).append(item["id"])
        kept.append(dict(item))
    return kept, counts


def review_items(
    items: list[dict[str, Any]], path: Union[str, os.PathLike], report: ValidationReport
) -> list[dict[str, Any]]:
    """A builder's review step: ``apply_review`` of the decisions in ``path`` to its scanned items, every outcome
    filed in its validation report (review_rejected, review_chain_dropped and skipped for each item left out,
    review_fixed, review_unknown_item) and the totals in ``report.review``."""
    decisions = read_review(path)
    holding = latest_decisions(decisions)
    kept, counts = apply_review(items, decisions)
    chains = {item["id"]: item.get("chain_id") for item in items}
    for item_id in counts.rejected:
        report.add("review_rejected", item_id, holding[item_id].reason)
        report.add("skipped", item_id, f"rejected in review ({holding[item_id].where})")
    for item_id in counts.chain_dropped:
        report.add("review_chain_dropped", item_id, f"chain {chains[item_id]} has a rejected link")
        report.add("skipped", item_id, f"its chain {chains[item_id]} has a link rejected in review")
    for item_id in counts.fixed:
        report.add("review_fixed", item_id, ", ".join(holding[item_id].fixes.fields()))
    for item_id in counts.unknown:
        report.add("review_unknown_item", item_id, f"decided at {holding[item_id].where}; no item has this id")
    report.review = counts.counts()
    for item in kept:
        decision = holding.get(item["id"])
        if decision is not None and "extra" in item:
            item["extra"] = _noted(item["extra"], decision)
    return kept


def _noted(extra: Optional[str], decision: Decision) -> str:
    """An item's ``extra`` JSON with its holding decision under "review" (decision, fixed fields, reviewer, time)."""
    kept = json.loads(extra) if extra else {}
    note: dict[str, Any] = {"decision": decision.decision, "time": decision.time}
    if decision.fixes is not None:
        note["fixed"] = decision.fixes.fields()
    if decision.reviewer:
        note["reviewer"] = decision.reviewer
    kept["review"] = note
    return json.dumps(kept, ensure_ascii=False, sort_keys=True)


__all__ = [
    "DECISIONS",
    "Decision",
    "FIX_FIELDS",
    "Fixes",
    "REVIEW_FILE",
    "ReviewCounts",
    "apply_review",
    "fixed_item",
    "latest_decisions",
    "parse_decision",
    "read_review",
    "review_items",
]
