"""The generator's prompts and reply schemas of the Anchor QA pipeline (AudioSpan, arXiv:2608.26431, §4.4 and
App. B.3): anchor selection's first pass (the summary view in, 1-3 segments with their related segments out)
and the chain's understanding and reasoning links (the positions' records and the dense captions of the
segments involved in, the option layout of ``anchor_options`` out); and the caption as the anchor's full solver
level reads it, headed by the anchor's ground truth."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from audioreason.audio.anchor_questions import trace_phrase
from audioreason.judges.fence import fence

from .anchor_options import chain_json_schema, check_chain
from .calls import stage_schema
from .records import Caption, span_text

REASON_CHARS = 300
MAX_RELATED = 4
MAX_DENSE_SEGMENTS = 6


# ---------------------------------------------------------------------- 1. selection, pass 1
def selection_schema(caption: Caption, eligible: Sequence[int]):
    """Pass 1's reply: 1-3 distinct eligible segments, each with 1-4 other segments it relates to."""
    indices = [int(s["index"]) for s in caption.segments]

    def check(value: Mapping[str, Any]) -> list[dict[str, Any]]:
        out, seen = [], set()
        for n, a in enumerate(value["anchors"], start=1):
            seg = a["segment"]
            if seg not in indices:
                raise ValueError(f"anchor {n}: segment {seg} does not exist (segments: {indices})")
            if seg not in eligible:
                raise ValueError(f"anchor {n}: segment {seg} cannot hold an anchor; choose among {list(eligible)}")
            if seg in seen:
                raise ValueError(f"anchor {n}: segment {seg} is chosen twice")
            related = list(dict.fromkeys(a["related_segments"]))
            unknown = [r for r in related if r not in indices]
            if unknown:
                raise ValueError(f"anchor {n}: related segment {unknown[0]} does not exist (segments: {indices})")
            related = [r for r in related if r != seg]
            if not related:
                raise ValueError(f"anchor {n}: name at least one OTHER segment that segment {seg} relates to")
            seen.add(seg)
            out.append({"segment": seg, "related_segments": related, "reason": " ".join(a["reason"].split())})
        return out

    entry = {
        "type": "object",
        "properties": {
            "segment": {"type": "integer", "enum": list(eligible)},
            "related_segments": {
                "type": "array",
                "items": {"type": "integer", "enum": indices},
                "minItems": 1,
                "maxItems": MAX_RELATED,
            },
            "reason": {"type": "string", "maxLength": REASON_CHARS},
        },
        "required": ["segment", "related_segments", "reason"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"anchors": {"type": "array", "items": entry, "minItems": 1, "maxItems": min(3, len(eligible))}},
        "required": ["anchors"],
        "additionalProperties": False,
    }
    return stage_schema("anchor_segments", schema, check)


def selection_messages(caption: Caption, eligible: Sequence[int], chars: Optional[int] = None) -> list[dict[str, str]]:
    """``chars``: the caption views' length limit of a local model (``Calls.context_chars``)."""
    system = (
        "You choose where to plant acoustic anchors (an added sound, a silenced or muffled stretch, or a change of "
        "volume or speed) in a long recording. Questions will then ask what is being discussed at an anchor and "
        "how that content relates to other parts of the recording. Choose 1 to 3 segments (by index) that carry "
        "rich semantic content (a key claim, decision, story turn or argument) AND relate to other segments (a "
        "cause or effect elsewhere, a contrast, a later reference back). For each, list the other segments it "
        "relates to and give the reason in one sentence. Choose only among the eligible segments "
        f"{list(eligible)} (the others are too close to the opening or close of the recording). Reply with one "
        'JSON object: {"anchors": [{"segment": 0, "related_segments": [2], "reason": "..."}]}.'
    )
    user = "Summary of the recording:\n" + fence(caption.summary_text(chars), "SUMMARY")[2]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ---------------------------------------------------------------------- 3. chain generation
def context_segments(caption: Caption, positions: Sequence[Any], shortlist: Sequence[Mapping[str, Any]]) -> list[int]:
    """The positions' segments, then the segments related to them (the shortlist's and the summary's
    dependencies), at most ``MAX_DENSE_SEGMENTS``."""
    own = list(dict.fromkeys(p.segment for p in positions))
    related: list[int] = []
    for entry in shortlist:
        if entry["segment"] in own:
            related += entry["related_segments"]
    for dep in caption.summary.get("dependencies") or []:
        ends = (dep.get("from_segment"), dep.get("to_segment"))
        if ends[0] in own or ends[1] in own:
            related += [e for e in ends if e is not None]
    known = {int(s["index"]) for s in caption.segments}
    ordered = list(dict.fromkeys(own + [int(r) for r in related if int(r) in known]))
    return ordered[: max(MAX_DENSE_SEGMENTS, len(own))]


def citable(caption: Caption, segments: Sequence[int]) -> list[str]:
    return [
        e.id
        for e in caption.evidence
        if (e.segment in segments and e.modality in ("speech", "sound", "environment")) or e.modality == "cross-segment"
    ]


def chain_schema(caption: Caption, positions: Sequence[Any], k: int, ids: Sequence[str]):
    return stage_schema(
        "chain_questions", chain_json_schema(len(positions), ids), lambda v: check_chain(v, caption, positions, k)
    )


CHAIN_SYSTEM = (
    "You write two linked multiple-choice questions about an edited audio recording, from its caption. The edit "
    "(the anchor) occurs at one or more positions; a first question (already written) asks the listener to count "
    "the occurrences and locate occurrence N. Write:\n"
    "1. understanding: what is being discussed or happening at occurrence N. Four options: one per occurrence, "
    "each the real content at that occurrence (set position to its occurrence number and cite the caption "
    "records at it); the remaining options are foils (position 0): plausible content from elsewhere in the "
    "recording that no occurrence carries.\n"
    "2. reasoning: how the content at occurrence N relates to another part of the recording. Three options: one "
    "per occurrence, a TRUE relation (cause or effect, contrast, or later reference) between that occurrence's "
    "content and another segment (cite records of that other segment or cross-segment records); the remaining "
    "options are false relations (position 0). A fourth option, 'no clear relation', is added for you.\n"
    "Both stems must name occurrence N by its number and describe the anchor, never the answer. Options of "
    "similar length and specificity, each understandable on its own. Reply with one JSON object: "
    '{"understanding": {"question": "...", "options": [{"text": "...", "position": 1, "evidence": ["<id>"]}, ...]}, '
    '"reasoning": {"question": "...", "options": [...]}}.'
)


def chain_messages(
    caption: Caption,
    manifest: Mapping[str, Any],
    positions: Sequence[Any],
    k: int,
    shortlist: Sequence[Mapping[str, Any]],
    segments: Sequence[int],
    lessons: str,
    chars: Optional[int] = None,
) -> list[dict[str, str]]:
    records = caption.evidence_by_id()
    lines = [
        f"The anchor: {trace_phrase(manifest)}. It occurs {len(positions)} time(s); the questions ask about "
        f"occurrence {k} (occurrences are counted in time order). Times are in the original recording.",
    ]
    for p in positions:
        lines.append(f"Occurrence {p.number}: segment {p.segment}, {span_text(p.start, p.end)}. Records at it:")
        lines += [f"  {records[i].line()}" for i in p.local]
    for entry in shortlist:
        lines.append(f"Segment {entry['segment']} relates to {entry['related_segments']}: {entry['reason']}")
    parts = [
        "Summary of the recording:\n" + fence(caption.summary_text(chars), "SUMMARY")[2],
        "\n".join(lines),
        "Detailed caption of the segments involved (each line starts with its evidence id):\n"
        + fence(caption.dense_text(segments, chars), "CAPTION")[2],
    ]
    if lessons:
        parts.append(lessons)
    return [{"role": "system", "content": CHAIN_SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


class WithAnchors:
    """The caption as the anchor solver reads it: the dense view headed by the anchor's ground truth."""

    def __init__(self, caption: Caption, note: str):
        self._caption, self._note = caption, note

    def __getattr__(self, name: str) -> Any:
        return getattr(self._caption, name)

    def dense_text(self, segments: Sequence[int], max_chars: Optional[int] = None) -> str:
        return self._note + "\n\n" + self._caption.dense_text(segments, max_chars)


def anchor_note(manifest: Mapping[str, Any], positions: Sequence[Any]) -> str:
    where = "; ".join(f"occurrence {p.number} at {span_text(p.start, p.end)} (segment {p.segment})" for p in positions)
    return (
        f"The recording was edited: {trace_phrase(manifest)}, occurring {len(positions)} time(s): {where}. The "
        "description below is of the unedited recording, in its timeline."
    )


__all__ = [
    "CHAIN_SYSTEM",
    "WithAnchors",
    "anchor_note",
    "chain_messages",
    "chain_schema",
    "citable",
    "context_segments",
    "selection_messages",
    "selection_schema",
]
