"""The understanding and reasoning links of an anchor chain (AudioSpan, arXiv:2608.26431, §4.4 step 2 and App. B.3
"Chain construction"): the generator's reply schema, the checks that make its answer right by construction, and
the two items.

The asked occurrence k (1..n, in time order) is the perception item's. The layout of the options:

- understanding: four options, one per position i (``position`` i) giving the real content found there, each
  citing at least one caption record at that position (``AnchorPosition.local``: the records of its segment that
  overlap the window widened by ``CONTEXT_S``), so a miscount that reindexes "the Nth" occurrence lands on
  another position's genuine material; the other 4 - n are foils (``position`` 0), e.g. content from elsewhere
  in the recording that no position carries;
- reasoning: three written options, one per position i with a cross-segment relation of that position's content
  (citing at least one record of another segment or a cross-segment record), the other 3 - n false relations
  (``position`` 0); ``NO_RELATION`` is added as the fourth, so a position carried over wrong selects a true but
  misattributed relation.

The correct option of each is the one whose ``position`` is k: the check refuses a reply unless every position
1..n has exactly one option and every foil is ``position`` 0. Options are shuffled by the recording's seed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from audioreason.audio.anchor_manifest import manifest_json

from .records import Caption, seed_of

CONTEXT_S = 15.0  # a position's own records: those overlapping its window widened by this much each side
NEAREST = 2  # records taken when none overlaps: the nearest of its segment
QUESTION_CHARS = 300
OPTION_CHARS = 200
MAX_CITED = 4
NO_RELATION = "No clear relation: this part does not connect to anything elsewhere in the recording."
ORDINALS = {1: "first", 2: "second", 3: "third"}
LINK = {"understanding": (2, "interpretation"), "reasoning": (3, "relational")}


@dataclass(frozen=True)
class AnchorPosition:
    """Occurrence ``number`` (1-based, time order): its segment, its window in the original and edited
    timelines, and the ids of the caption records at it."""

    number: int
    segment: int
    start: float
    end: float
    edited_start: float
    edited_end: float
    local: tuple[str, ...]


def local_records(caption: Caption, segment: int, start: float, end: float) -> tuple[str, ...]:
    """Ids of the speech and sound records of ``segment`` overlapping [start - CONTEXT_S, end + CONTEXT_S]; when
    none does, the ``NEAREST`` records of the segment closest to the window."""
    records = [e for e in caption.evidence if e.segment == segment and e.modality in ("speech", "sound")]
    near = [e for e in records if e.end > start - CONTEXT_S and e.start < end + CONTEXT_S]
    if not near:
        near = sorted(records, key=lambda e: max(start - e.end, e.start - end, 0.0))[:NEAREST]
    return tuple(e.id for e in sorted(near, key=lambda e: (e.start, e.id)))


def anchor_positions(caption: Caption, manifest: Mapping[str, Any]) -> list[AnchorPosition]:
    """The completed manifest's positions with their caption records."""
    out = []
    for n, p in enumerate(manifest["positions"], start=1):
        segment = int(p["segment"])
        start, end = float(p["original_start"]), float(p["original_end"])
        out.append(
            AnchorPosition(
                n, segment, start, end, float(p["start"]), float(p["end"]), local_records(caption, segment, start, end)
            )
        )
    return out


def _option_schema(n: int, ids: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 3, "maxLength": OPTION_CHARS},
            "position": {"type": "integer", "enum": list(range(n + 1))},
            "evidence": {"type": "array", "items": {"type": "string", "enum": list(ids)}, "maxItems": MAX_CITED},
        },
        "required": ["text", "position", "evidence"],
        "additionalProperties": False,
    }


def chain_json_schema(n: int, ids: Sequence[str]) -> dict[str, Any]:
    """The reply schema for ``n`` positions, citing only ``ids`` (the records shown to the generator)."""

    def question(options: int) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 10, "maxLength": QUESTION_CHARS},
                "options": {"type": "array", "items": _option_schema(n, ids), "minItems": options, "maxItems": options},
            },
            "required": ["question", "options"],
            "additionalProperties": False,
        }

    return {
        "type": "object",
        "properties": {"understanding": question(4), "reasoning": question(3)},
        "required": ["understanding", "reasoning"],
        "additionalProperties": False,
    }


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def mentions_occurrence(question: str, k: int) -> bool:
    """Whether a stem names occurrence ``k`` (its number or ordinal word)."""
    return bool(re.search(rf"\b{k}\b|\b{k}(st|nd|rd|th)\b|\b{ORDINALS[k]}\b", question.lower()))


def check_chain(
    value: Mapping[str, Any], caption: Caption, positions: Sequence[AnchorPosition], k: int
) -> dict[str, Any]:
    """The reply, cleaned, or ValueError naming what breaks the option layout (see the module docstring)."""
    n = len(positions)
    records = caption.evidence_by_id()
    out: dict[str, Any] = {}
    for level, written in (("understanding", 4), ("reasoning", 3)):
        block = value[level]
        question = " ".join(block["question"].split())
        if not mentions_occurrence(question, k):
            raise ValueError(f"the {level} question must name occurrence {k} (the one the perception link asks)")
        options = [
            {
                "text": " ".join(o["text"].split()),
                "position": o["position"],
                "evidence": list(dict.fromkeys(o["evidence"])),
            }
            for o in block["options"]
        ]
        texts = [_norm(o["text"]) for o in options] + ([_norm(NO_RELATION)] if level == "reasoning" else [])
        if len(set(texts)) != len(texts):
            raise ValueError(f"the {level} options repeat one another (or the fixed no-relation option)")
        for i in range(1, n + 1):
            count = sum(1 for o in options if o["position"] == i)
            if count != 1:
                raise ValueError(f"the {level} options give occurrence {i} {count} times; each occurrence exactly once")
        if sum(1 for o in options if o["position"] == 0) != written - n:
            raise ValueError(f"the {level} question needs {written - n} foil option(s) (position 0)")
        for o in options:
            unknown = [i for i in o["evidence"] if i not in records]
            if unknown:
                raise ValueError(f"{level}: evidence {', '.join(unknown)} does not exist in the caption")
            if o["position"] == 0:
                continue
            p = positions[o["position"] - 1]
            if level == "understanding" and not set(o["evidence"]) & set(p.local):
                raise ValueError(
                    f"understanding: the option for occurrence {p.number} must cite a record at it "
                    f"({', '.join(p.local)})"
                )
            elsewhere = [
                i for i in o["evidence"] if records[i].modality == "cross-segment" or records[i].segment != p.segment
            ]
            if level == "reasoning" and not elsewhere:
                raise ValueError(
                    f"reasoning: the relation for occurrence {p.number} (segment {p.segment}) must cite a record of "
                    "another segment or a cross-segment record"
                )
        out[level] = {"question": question, "options": options}
    return out


def chain_item(
    level: str,
    block: Mapping[str, Any],
    k: int,
    *,
    recording_id: str,
    item_id: str,
    manifest: Mapping[str, Any],
    answer_position: Optional[int] = None,
) -> dict[str, Any]:
    """The link's item in the loader's anchor.jsonl form, options shuffled by the recording's seed (the correct one
    moved to ``answer_position`` when given: the run's balanced cycle); ``evidence`` lists the correct option's
    records first, then the others'; ``option_sources`` (in ``provenance``) keeps the position behind each
    choice."""
    position, dimension = LINK[level]
    options = list(block["options"])
    if level == "reasoning":
        options.append({"text": NO_RELATION, "position": 0, "evidence": []})
    order = np.random.default_rng(seed_of(recording_id, "anchor-shuffle", level)).permutation(len(options))
    options = [options[i] for i in order]
    if answer_position is not None:
        correct = next(o for o in options if o["position"] == k)
        others = [o for o in options if o is not correct]
        options = others[:answer_position] + [correct] + others[answer_position:]
    answer_index = next(i for i, o in enumerate(options) if o["position"] == k)
    cited = list(options[answer_index]["evidence"]) + [e for o in options for e in o["evidence"]]
    return {
        "id": item_id,
        "recording_id": recording_id,
        "chain_id": recording_id,
        "link_position": position,
        "cognitive_level": level,
        "dimension": dimension,
        "format": "MCQ",
        "question": block["question"],
        "choices": [o["text"] for o in options],
        "answer": options[answer_index]["text"],
        "answer_index": answer_index,
        "operation": manifest["operation"],
        "edit_manifest": json.loads(manifest_json(manifest)),
        "evidence": list(dict.fromkeys(cited)),
        "provenance": {"option_sources": [{"position": o["position"], "evidence": o["evidence"]} for o in options]},
    }


def mcq_of(item: Mapping[str, Any]) -> dict[str, Any]:
    """The solver's and critic's view of an item: question, options, answer_index, evidence."""
    return {
        "question": item["question"],
        "options": list(item["choices"]),
        "answer_index": item["answer_index"],
        "evidence": list(item.get("evidence") or []),
    }


def occurrence_for(recording_id: str, n: int, given: Optional[int] = None) -> int:
    """The occurrence the chain asks about: ``given`` or 1..n drawn from the recording id."""
    k = given if given is not None else 1 + seed_of(recording_id, "anchor-occurrence") % n
    if not 1 <= k <= n:
        raise ValueError(f"occurrence {k} is not among the {n} positions")
    return k


__all__ = [
    "AnchorPosition",
    "CONTEXT_S",
    "NO_RELATION",
    "anchor_positions",
    "chain_item",
    "chain_json_schema",
    "check_chain",
    "local_records",
    "mcq_of",
    "mentions_occurrence",
    "occurrence_for",
]
