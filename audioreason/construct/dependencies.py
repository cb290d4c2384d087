"""Step 4 of the caption pipeline (AudioSpan, arXiv:2608.26431, §4.2): dependency analysis by a language model,
here the "segmenter" role (the model that split the transcript reads the same material at the same level;
the generator is kept for questions so that its lessons and prompts stay apart from the caption).

The model sees the segment index (times, titles, summaries, key topics) and, per segment, the speakers the
captioner heard (their piece-local labels and voice descriptions; none offline) with a few of their
sentences. It answers with the global context (topic, genre, narrative arc, tone), a speaker registry (each
speaker's description, role and the captioner labels that are this speaker) and cross-segment dependencies
(kind causal, contrast or reference, from an earlier segment to a later one, with a description).

A dependency names its pair of segments as one of the strings ``"a -> b"`` with a < b (an ``enum`` of the
schema), so that the direction rule is part of the grammar a constrained model decodes under; a pair and kind
given twice is kept once. ``check``: a captioner label belongs to at most one registered speaker. Registry ids
are assigned here, ``SPK1``, ``SPK2``, ... in the reply's order. A reply that still fails makes the recording
fail at this step.
"""

from __future__ import annotations

from typing import Any, Sequence

from .records import DEPENDENCY_KINDS, span_text
from .schema_check import strict_object, text
from .transcribe import CaptionStepFailed

TOPIC_CHARS, GENRE_CHARS, ARC_CHARS, TONE_CHARS = 120, 40, 240, 60
DESCRIPTION_CHARS, ROLE_CHARS, LINK_CHARS = 160, 40, 160
MAX_SPEAKERS, MAX_LINKS, SAMPLE_SENTENCES = 12, 12, 2

SYSTEM = (
    "You analyse the structure of a long audio recording from its segment index and the speakers heard in each "
    "segment. Give the recording's overall topic, genre, narrative arc and tone; a registry of its speakers "
    "(merge the per-segment labels that are the same person; give each a description and a role such as host, "
    "guest or narrator; leave the labels empty for a speaker known only from what is said); and the "
    "dependencies between segments: a causal link (what happens in one leads to the other), a contrast "
    "(the two disagree or differ) or a reference (a later segment refers back to an earlier one), always from "
    "the earlier segment to the later one, written 'a -> b'. List only dependencies the segments support."
)


def dependency_schema(indices: Sequence[int], labels: Sequence[str]):
    from .calls import stage_schema

    label = {"type": "string", "enum": list(labels)} if labels else {"type": "string", "maxLength": 0}
    pairs = [f"{a} -> {b}" for a in indices for b in indices if a < b]
    body = strict_object(
        {
            "topic": text(TOPIC_CHARS, 1),
            "genre": text(GENRE_CHARS, 1),
            "narrative_arc": text(ARC_CHARS, 1),
            "tone": text(TONE_CHARS, 1),
            "speakers": {
                "type": "array",
                "items": strict_object(
                    {
                        "description": text(DESCRIPTION_CHARS, 1),
                        "role": text(ROLE_CHARS, 1),
                        "labels": {"type": "array", "items": label, "maxItems": max(len(labels), 0)},
                    }
                ),
                "maxItems": MAX_SPEAKERS,
            },
            "dependencies": {
                "type": "array",
                "items": strict_object(
                    {
                        "kind": {"type": "string", "enum": list(DEPENDENCY_KINDS)},
                        "segments": {"type": "string", "enum": pairs or ["none"]},
                        "description": text(LINK_CHARS, 1),
                    }
                ),
                "maxItems": min(MAX_LINKS, len(pairs)),
            },
        }
    )

    def check(value: Any) -> dict[str, Any]:
        owner: dict[str, int] = {}
        for k, speaker in enumerate(value["speakers"]):
            for name in speaker["labels"]:
                if name in owner and owner[name] != k:
                    raise ValueError(f"label {name!r} is given to two speakers ({owner[name] + 1} and {k + 1})")
                owner[name] = k
        links = {}
        for link in value["dependencies"]:
            a, b = (int(x) for x in link["segments"].split(" -> "))
            links.setdefault((link["kind"], a, b), {**link, "from_segment": a, "to_segment": b})
        return {**value, "dependencies": list(links.values())}

    return stage_schema("dependencies", body, check=check)


def dependency_messages(segments: Sequence[dict[str, Any]], dense: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    from audioreason.judges.fence import fence

    blocks = []
    for seg, caption in zip(segments, dense):
        lines = [
            f"Segment {seg['index']} [{span_text(seg['start'], seg['end'])}] {seg['title']}: {seg['summary']} "
            f"(key topics: {', '.join(seg['key_topics'])})"
        ]
        for speaker in caption.get("speakers", []):
            said = [t["text"] for t in caption["transcript"] if t["speaker"] == speaker["label"]][:SAMPLE_SENTENCES]
            quoted = " / ".join(f'"{t}"' for t in said)
            lines.append(f"  speaker {speaker['label']}: {speaker['voice']}" + (f"; says {quoted}" if quoted else ""))
        if not caption.get("speakers"):
            lines.append("  (no speaker labels for this segment)")
        blocks.append("\n".join(lines))
    user = "Segment index and speakers:\n" + fence("\n".join(blocks), "SEGMENTS")[2]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def analyse_dependencies(
    calls: Any, segments: Sequence[dict[str, Any]], dense: Sequence[dict[str, Any]], recording: str
) -> dict[str, Any]:
    """``{"topic", "genre", "narrative_arc", "tone", "speakers": [{"id", "description", "role", "labels"}],
    "dependencies": [{"kind", "from_segment", "to_segment", "description"}]}`` (module docstring)."""
    labels = [p["label"] for caption in dense for p in caption.get("speakers", [])]
    schema = dependency_schema([s["index"] for s in segments], labels)
    reply = await calls.ask("segmenter", schema, dependency_messages(segments, dense), item=f"{recording}:links")
    if reply is None:
        raise CaptionStepFailed("dependency analysis", recording, "no valid dependency analysis of the segments")
    return {
        "topic": reply["topic"].strip(),
        "genre": reply["genre"].strip(),
        "narrative_arc": reply["narrative_arc"].strip(),
        "tone": reply["tone"].strip(),
        "speakers": [
            {
                "id": f"SPK{k + 1}",
                "description": p["description"].strip(),
                "role": p["role"].strip(),
                "labels": list(dict.fromkeys(p["labels"])),
            }
            for k, p in enumerate(reply["speakers"])
        ],
        "dependencies": [
            {
                "kind": d["kind"],
                "from_segment": d["from_segment"],
                "to_segment": d["to_segment"],
                "description": d["description"].strip(),
            }
            for d in reply["dependencies"]
        ],
    }


__all__ = ["analyse_dependencies", "dependency_schema"]
