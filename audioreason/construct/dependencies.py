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

Long recordings and small windows: when the whole segment index does not fit the role's context (a local
model's window less its reply budget, ``Calls.prompt_fits``; an endpoint's is taken to fit), it is read in
stretches of consecutive segments, each as long as fits and overlapping the previous by ``OVERLAP``
segments so that neighbours across a boundary can still be linked. Each stretch is asked the question above
about its own segments; a last "merge" call is shown every stretch's global context and speakers and answers
with the recording's global context and one speaker registry (a speaker heard in several stretches is one
entry naming each stretch's id; a stretch's speaker the merge leaves out stays a speaker of its own). The
dependencies are the stretches' together, a pair and kind given twice kept once. The caption's provenance
records the stretches (``dependencies.stretches``; empty when the index was read whole).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .records import DEPENDENCY_KINDS, span_text
from .schema_check import strict_object, text
from .transcribe import CaptionStepFailed

TOPIC_CHARS, GENRE_CHARS, ARC_CHARS, TONE_CHARS = 120, 40, 240, 60
DESCRIPTION_CHARS, ROLE_CHARS, LINK_CHARS = 160, 40, 160
MAX_SPEAKERS, MAX_LINKS, SAMPLE_SENTENCES = 12, 12, 2
OVERLAP = 2  # segments shared by consecutive stretches of a long index
DEPENDENCY_ROLE = "segmenter"

SYSTEM = (
    "You analyse the structure of a long audio recording from its segment index and the speakers heard in each "
    "segment. Give the recording's overall topic, genre, narrative arc and tone; a registry of its speakers "
    "(merge the per-segment labels that are the same person; give each a description and a role such as host, "
    "guest or narrator; leave the labels empty for a speaker known only from what is said); and the "
    "dependencies between segments: a causal link (what happens in one leads to the other), a contrast "
    "(the two disagree or differ) or a reference (a later segment refers back to an earlier one), always from "
    "the earlier segment to the later one, written 'a -> b'. List only dependencies the segments support."
)


def _context_and_speakers(field: str, member: dict[str, Any], most: int, least: int) -> dict[str, Any]:
    """The global context's fields and a speaker list whose entries name ``field`` (members as ``member``)."""
    return {
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
                    field: {
                        "type": "array",
                        "items": member,
                        **({"minItems": least} if least else {}),
                        "maxItems": most,
                    },
                }
            ),
            "maxItems": MAX_SPEAKERS,
        },
    }


def _one_owner(speakers: Sequence[dict[str, Any]], field: str, what: str) -> None:
    """Each name in the speakers' ``field`` lists belongs to one speaker."""
    owner: dict[str, int] = {}
    for k, speaker in enumerate(speakers):
        for name in speaker[field]:
            if name in owner and owner[name] != k:
                raise ValueError(f"{what} {name!r} is given to two speakers ({owner[name] + 1} and {k + 1})")
            owner[name] = k


def dependency_schema(indices: Sequence[int], labels: Sequence[str]):
    from .calls import stage_schema

    label = {"type": "string", "enum": list(labels)} if labels else {"type": "string", "maxLength": 0}
    pairs = [f"{a} -> {b}" for a in indices for b in indices if a < b]
    body = strict_object(
        {
            **_context_and_speakers("labels", label, max(len(labels), 0), 0),
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
        _one_owner(value["speakers"], "labels", "label")
        links = {}
        for link in value["dependencies"]:
            a, b = (int(x) for x in link["segments"].split(" -> "))
            links.setdefault((link["kind"], a, b), {**link, "from_segment": a, "to_segment": b})
        return {**value, "dependencies": list(links.values())}

    return stage_schema("dependencies", body, check=check)


def dependency_messages(
    segments: Sequence[dict[str, Any]], dense: Sequence[dict[str, Any]], of: Optional[int] = None
) -> list[dict[str, str]]:
    """The question about ``segments``; ``of``: how many segments the recording has, when these are a stretch."""
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
    head = "Segment index and speakers:"
    if of is not None:
        first, last = segments[0]["index"], segments[-1]["index"]
        head = (
            f"Segments {first}-{last} of the recording's {of} (a stretch of it; give its topic, genre, arc and "
            f"tone as this stretch shows them, and the dependencies among these segments):"
        )
    user = head + "\n" + fence("\n".join(blocks), "SEGMENTS")[2]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


MERGE_SYSTEM = (
    "You combine analyses of the stretches of one long audio recording into one. Each stretch gives its topic, "
    "genre, narrative arc and tone and the speakers heard in it, each with an id. Give the whole recording's "
    "overall topic, genre, narrative arc and tone, and one registry of its speakers: a speaker who appears in "
    "several stretches is one entry listing each of those ids; every id belongs to at most one entry."
)


def merge_schema(ids: Sequence[str]):
    from .calls import stage_schema

    member = {"type": "string", "enum": list(ids) or [""]}
    fields = _context_and_speakers("ids", member, max(len(ids), 1), 1)
    fields["speakers"]["maxItems"] = MAX_SPEAKERS if ids else 0  # no stretch heard a speaker: none to merge

    def check(value: Any) -> dict[str, Any]:
        _one_owner(value["speakers"], "ids", "id")
        return value

    return stage_schema("dependency_merge", strict_object(fields), check=check)


def merge_messages(stretches: Sequence[tuple[Sequence[dict[str, Any]], dict[str, Any]]]) -> list[dict[str, str]]:
    from audioreason.judges.fence import fence

    blocks = []
    for n, (segs, reply) in enumerate(stretches, 1):
        lines = [
            f"Stretch {n}: segments {segs[0]['index']}-{segs[-1]['index']} "
            f"[{span_text(segs[0]['start'], segs[-1]['end'])}]",
            f"  topic: {reply['topic']}; genre: {reply['genre']}; tone: {reply['tone']}",
            f"  narrative arc: {reply['narrative_arc']}",
        ]
        for k, p in enumerate(reply["speakers"], 1):
            heard = f" (labels {', '.join(p['labels'])})" if p["labels"] else ""
            lines.append(f"  speaker W{n}.{k}: {p['role']}: {p['description']}{heard}")
        blocks.append("\n".join(lines))
    user = "Analyses of the recording's stretches, in order:\n" + fence("\n".join(blocks), "STRETCHES")[2]
    return [{"role": "system", "content": MERGE_SYSTEM}, {"role": "user", "content": user}]


def stretches_of(
    calls: Any, segments: Sequence[dict[str, Any]], dense: Sequence[dict[str, Any]]
) -> list[tuple[int, int]]:
    """[lo, hi) positions of the stretches whose question fits the role (module docstring); one stretch when the
    whole index fits. ``ValueError`` when no stretch gets past the overlap (``OVERLAP`` + 1 segments do not
    fit together)."""
    fits = calls.prompt_fits
    if fits(DEPENDENCY_ROLE, dependency_messages(segments, dense)):
        return [(0, len(segments))]
    out: list[tuple[int, int]] = []
    lo = 0
    while True:
        hi = lo
        while hi < len(segments) and fits(
            DEPENDENCY_ROLE, dependency_messages(segments[lo : hi + 1], dense[lo : hi + 1], len(segments))
        ):
            hi += 1
        if hi <= lo + OVERLAP and hi < len(segments):  # no progress past the overlap: the entries are too long
            raise ValueError(f"segments {lo}-{lo + OVERLAP} do not fit the {DEPENDENCY_ROLE}'s context together")
        out.append((lo, hi))
        if hi == len(segments):
            return out
        lo = hi - OVERLAP


async def analyse_dependencies(
    calls: Any,
    segments: Sequence[dict[str, Any]],
    dense: Sequence[dict[str, Any]],
    recording: str,
    tally: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """``{"topic", "genre", "narrative_arc", "tone", "speakers": [{"id", "description", "role", "labels"}],
    "dependencies": [{"kind", "from_segment", "to_segment", "description"}]}`` (module docstring). ``tally``,
    if given, gets ``stretches``: the [first, last] segment indices of each stretch (empty: read whole)."""
    failed = "dependency analysis"
    try:
        parts = stretches_of(calls, segments, dense)
    except ValueError as err:
        raise CaptionStepFailed(failed, recording, str(err)) from None
    if tally is not None:
        tally["stretches"] = (
            [] if len(parts) == 1 else [[segments[a]["index"], segments[b - 1]["index"]] for a, b in parts]
        )
    replies = []
    for lo, hi in parts:
        segs, caps = segments[lo:hi], dense[lo:hi]
        labels = [p["label"] for caption in caps for p in caption.get("speakers", [])]
        whole = len(parts) == 1
        messages = dependency_messages(segs, caps, None if whole else len(segments))
        item = f"{recording}:links" if whole else f"{recording}:links:{segs[0]['index']}-{segs[-1]['index']}"
        reply = await calls.ask(
            DEPENDENCY_ROLE, dependency_schema([s["index"] for s in segs], labels), messages, item=item
        )
        if reply is None:
            where = "the segments" if whole else f"segments {segs[0]['index']}-{segs[-1]['index']}"
            raise CaptionStepFailed(failed, recording, f"no valid dependency analysis of {where}")
        replies.append((segs, reply))
    if len(replies) == 1:
        context, speakers = replies[0][1], replies[0][1]["speakers"]
    else:
        context, speakers = await _merge(calls, replies, recording)
    links: dict[tuple[str, int, int], dict[str, Any]] = {}
    for _, reply in replies:
        for d in reply["dependencies"]:
            links.setdefault((d["kind"], d["from_segment"], d["to_segment"]), d)
    return {
        "topic": context["topic"].strip(),
        "genre": context["genre"].strip(),
        "narrative_arc": context["narrative_arc"].strip(),
        "tone": context["tone"].strip(),
        "speakers": [
            {
                "id": f"SPK{k + 1}",
                "description": p["description"].strip(),
                "role": p["role"].strip(),
                "labels": list(dict.fromkeys(p["labels"])),
            }
            for k, p in enumerate(speakers)
        ],
        "dependencies": [
            {
                "kind": d["kind"],
                "from_segment": d["from_segment"],
                "to_segment": d["to_segment"],
                "description": d["description"].strip(),
            }
            for d in links.values()
        ],
    }


async def _merge(calls: Any, replies: list, recording: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The merge call over the stretches' replies: (global context, speakers with their labels)."""
    found = {f"W{n}.{k}": p for n, (_, reply) in enumerate(replies, 1) for k, p in enumerate(reply["speakers"], 1)}
    messages = merge_messages(replies)
    if not calls.prompt_fits(DEPENDENCY_ROLE, messages):
        raise CaptionStepFailed("dependency analysis", recording, "the stretches' analyses do not fit one merge")
    merged = await calls.ask(DEPENDENCY_ROLE, merge_schema(list(found)), messages, item=f"{recording}:links:merge")
    if merged is None:
        raise CaptionStepFailed("dependency analysis", recording, "no valid merge of the stretches' analyses")
    speakers = []
    named = set()
    for p in merged["speakers"]:
        ids = list(dict.fromkeys(p["ids"]))
        named.update(ids)
        labels = [label for sid in ids for label in found[sid]["labels"]]
        speakers.append({"description": p["description"], "role": p["role"], "labels": labels})
    speakers += [p for sid, p in found.items() if sid not in named]  # left out by the merge: its own speaker
    return merged, speakers


__all__ = ["DEPENDENCY_ROLE", "OVERLAP", "analyse_dependencies", "dependency_schema", "merge_schema"]
