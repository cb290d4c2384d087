"""Step 2 of the caption pipeline (AudioSpan, arXiv:2608.26431, §4.2): the "segmenter" role splits the transcript
into contiguous, semantically coherent segments of at most about 5 minutes, each with a title, a summary and
key topics.

What the model is shown: the transcript as numbered lines, one per unit. A unit is a sentence, or a stretch
without speech (a gap of ``GAP_UNIT_S`` or more between sentences, cut into pieces of at most ``GAP_PIECE_S``)
so that music or silence can start or end a segment and no segment has to swallow a long silence. Unit k
spans from its start to the next unit's start (the first from 0 s, the last to the end of the recording), so
segments made of whole units cover the recording without a gap.

What it answers: ``{"segments": [{"first_line", "title", "summary", "key_topics"}]}``, each segment starting at
a line and running to the line before the next segment's first. Contiguity is therefore built into the reply;
``check`` holds the rest: the first segment starts at the first line shown, first lines strictly increase, and
no segment spans more than ``SEGMENT_CAP_S`` seconds (the schema's ``minItems`` asks for at least as many
segments as the cap requires). A reply that breaks a rule is re-asked with the rule it broke (how often, and
whether afresh, is the role's re-ask policy, ``calls``).

A local model's chunk that still gets no valid reply is asked again as its first half (by lines; halved again
while it fails): fewer lines need fewer segments and give fewer ways to break a rule, which is what a small
model needs (measured: SmolLM2-135M failed a 70-line chunk of a 20-minute recording four times). Every answer
is still the segmenter's own; only the question got shorter. The chunk after a halved one is full size again.
An endpoint's chunk is not halved: its model was shown its error and still failed, which points at the role,
and halving would multiply paid calls. A chunk that fails and cannot be halved (an endpoint's, or one line)
makes the recording fail at this step (``CaptionStepFailed``): there is no fallback segmentation.
``segment_transcript(tally=...)`` counts the requests, the halvings and the filled replies (below); the
caption's provenance records them.

Long recordings: the lines are shown in chunks of at most ``CHUNK_CHARS`` characters (a 2-hour transcript
does not fit a small model's context, and a long prompt dilutes a large one's attention). From a chunk that
does not reach the end of the recording, every segment but the last is kept and the next chunk starts at the
last one's first line, so a segment is never cut by a chunk boundary. Two replies are kept whole, so that every
call moves on by a whole chunk: one that puts the chunk in one segment, and one that holds as many segments as
its schema allows (one per ``MIN_SEGMENT_S`` seconds or per line, at most 24). A reply that fills every slot
says the model cuts finer than the bound lets it, and asking its last segment's lines again gets the same kind
of reply (measured: SmolLM2-135M answers one segment per line, filling every reply, and moved on about 10 of a
chunk's 58 lines per call); the calls would grow with the lines rather than the chunks. The last segment of a
filled reply runs to the chunk's end, as the model's reply says.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from .records import span_text
from .transcribe import CaptionStepFailed

SEGMENT_CAP_S = 300.0  # "each capped at about 5 minutes"
GAP_UNIT_S = 30.0
GAP_PIECE_S = 60.0
CHUNK_CHARS = 6000
MIN_SEGMENT_S = 30.0  # the reply may hold at most one segment per this many seconds (a bound, not a rule)
TITLE_CHARS, SUMMARY_CHARS, TOPIC_CHARS, TOPICS = 60, 200, 32, 4
NO_SPEECH = "(no speech)"

SYSTEM = (
    "You split the transcript of a long audio recording into contiguous, semantically coherent segments, "
    "using cues such as topic shifts, speaker changes and narrative transitions. A segment starts at a "
    "numbered line and runs until the next segment's first line. The first segment starts at the first line "
    "shown. No segment may span more than {cap:.0f} seconds of the recording. For each segment give its first "
    "line number, a short title, a one- or two-sentence summary and up to {topics} key topics."
)


def units_of(transcript: Sequence[dict[str, Any]], duration: float) -> list[dict[str, Any]]:
    """The lines shown to the segmenter: sentences and pieces of long gaps, in order, each with its ``extent``
    ([start, next unit's start), the first from 0 and the last to ``duration``)."""
    units: list[dict[str, Any]] = []

    def gap(a: float, b: float, force: bool = False) -> None:
        if b - a < GAP_UNIT_S and not force:
            return
        pieces = max(1, math.ceil((b - a) / GAP_PIECE_S))
        for k in range(pieces):
            units.append({"start": a + (b - a) * k / pieces, "end": a + (b - a) * (k + 1) / pieces, "text": NO_SPEECH})

    reach = 0.0
    for s in transcript:
        gap(reach, s["start"])
        units.append({"start": s["start"], "end": s["end"], "text": s["text"]})
        reach = max(reach, s["end"])
    gap(reach, duration, force=not units)
    for k, unit in enumerate(units):
        following = units[k + 1]["start"] if k + 1 < len(units) else duration
        unit["extent"] = (0.0 if k == 0 else unit["start"], max(following, unit["start"]))
    return units


def chunk_end(units: Sequence[dict[str, Any]], first: int, max_chars: int = CHUNK_CHARS) -> int:
    """One past the last unit of the chunk starting at ``first`` (at least one unit)."""
    used, k = 0, first
    while k < len(units):
        used += len(unit_line(k, units[k])) + 1
        if used > max_chars and k > first:
            break
        k += 1
    return k


def unit_line(k: int, unit: dict[str, Any]) -> str:
    return f"{k}. [{span_text(unit['start'], unit['end'])}] {unit['text']}"


def segment_count_bounds(units: Sequence[dict[str, Any]], first: int, stop: int, duration: float) -> tuple[int, int]:
    """(fewest, most) segments a reply about lines ``first``..``stop - 1`` may hold: the cap's minimum, and one
    per ``MIN_SEGMENT_S`` seconds or per line (at most 24)."""
    low, high = units[first]["extent"][0], (units[stop]["extent"][0] if stop < len(units) else duration)
    need = max(1, math.ceil((high - low) / SEGMENT_CAP_S - 1e-9))
    return need, max(need, min(stop - first, math.ceil((high - low) / MIN_SEGMENT_S), 24))


def segment_schema(units: Sequence[dict[str, Any]], first: int, stop: int, duration: float):
    from .calls import stage_schema

    lines = list(range(first, stop))
    need, most = segment_count_bounds(units, first, stop, duration)
    item = {
        "type": "object",
        "properties": {
            "first_line": {"type": "integer", "enum": lines},
            "title": {"type": "string", "minLength": 1, "maxLength": TITLE_CHARS},
            "summary": {"type": "string", "minLength": 1, "maxLength": SUMMARY_CHARS},
            "key_topics": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": TOPIC_CHARS},
                "minItems": 1,
                "maxItems": TOPICS,
            },
        },
        "required": ["first_line", "title", "summary", "key_topics"],
        "additionalProperties": False,
    }
    body = {
        "type": "object",
        "properties": {"segments": {"type": "array", "items": item, "minItems": need, "maxItems": most}},
        "required": ["segments"],
        "additionalProperties": False,
    }

    def check(value: Any) -> list[dict[str, Any]]:
        found = value["segments"]
        starts = [s["first_line"] for s in found]
        if starts[0] != first:
            raise ValueError(f"the first segment must start at line {first}, the first line shown (got {starts[0]})")
        for a, b in zip(starts, starts[1:]):
            if b <= a:
                raise ValueError(f"segments must start at increasing lines: line {b} follows line {a}")
        out = []
        for k, s in enumerate(found):
            last = starts[k + 1] - 1 if k + 1 < len(starts) else stop - 1
            start = units[s["first_line"]]["extent"][0]
            end = units[last + 1]["extent"][0] if last + 1 < len(units) else duration
            if end - start > SEGMENT_CAP_S + 1e-6:
                raise ValueError(
                    f"the segment starting at line {s['first_line']} spans {end - start:.0f} s (lines "
                    f"{s['first_line']}-{last}), over the {SEGMENT_CAP_S:.0f} s cap: split it"
                )
            out.append({**s, "last_line": last, "start": round(start, 3), "end": round(end, 3)})
        return out

    return stage_schema("segments", body, check=check)


def segment_messages(units: Sequence[dict[str, Any]], first: int, stop: int) -> list[dict[str, str]]:
    from audioreason.judges.fence import fence

    lines = "\n".join(unit_line(k, units[k]) for k in range(first, stop))
    more = "" if stop == len(units) else " The transcript continues after the last line shown."
    user = f"Transcript lines {first}-{stop - 1}:{more}\n" + fence(lines, "TRANSCRIPT")[2]
    return [
        {"role": "system", "content": SYSTEM.format(cap=SEGMENT_CAP_S, topics=TOPICS)},
        {"role": "user", "content": user},
    ]


async def segment_transcript(
    calls: Any,
    transcript: Sequence[dict[str, Any]],
    duration: float,
    recording: str,
    *,
    max_chars: int = CHUNK_CHARS,
    units: Optional[list[dict[str, Any]]] = None,
    tally: Optional[dict[str, int]] = None,
) -> list[dict[str, Any]]:
    """The recording's segments ``[{"index", "start", "end", "title", "summary", "key_topics"}]``, contiguous
    from 0 to ``duration`` (module docstring). ``CaptionStepFailed`` when a chunk that cannot be halved gets no
    valid reply.
    ``tally``, if given, gets ``requests`` (chunks asked, halves included), ``halved`` (chunks that got no
    valid reply and were asked again as their first half) and ``filled`` (replies kept whole because they held
    as many segments as their schema allows)."""
    units = units if units is not None else units_of(transcript, duration)
    counts = tally if tally is not None else {}
    counts.update(requests=0, halved=0, filled=0)
    segments: list[dict[str, Any]] = []
    first, most_lines = 0, len(units)
    while first < len(units):
        full = chunk_end(units, first, max_chars)
        stop = min(full, first + most_lines)
        schema = segment_schema(units, first, stop, duration)
        item = f"{recording}:{first}" + ("" if stop == full else f"-{stop - 1}")  # a half is its own item
        counts["requests"] += 1
        found = await calls.ask("segmenter", schema, segment_messages(units, first, stop), item=item)
        if found is None:
            if not calls.is_local("segmenter"):
                raise CaptionStepFailed(
                    "segmentation", recording, f"no valid segmentation of transcript lines {first}-{stop - 1}"
                )
            if stop - first == 1:
                raise CaptionStepFailed(
                    "segmentation", recording, f"no valid segmentation of transcript line {first}, even asked alone"
                )
            counts["halved"] += 1
            most_lines = (stop - first + 1) // 2
            continue
        most_lines = len(units)
        last_chunk = stop == len(units)
        filled = (
            not last_chunk and len(found) > 1 and len(found) == segment_count_bounds(units, first, stop, duration)[1]
        )
        keep = found if last_chunk or len(found) == 1 or filled else found[:-1]
        counts["filled"] += filled
        for s in keep:
            segments.append(
                {
                    "index": len(segments),
                    "start": s["start"],
                    "end": s["end"],
                    "title": s["title"].strip(),
                    "summary": s["summary"].strip(),
                    "key_topics": [t.strip() for t in s["key_topics"]],
                }
            )
        first = keep[-1]["last_line"] + 1
    return segments


__all__ = ["SEGMENT_CAP_S", "segment_transcript", "units_of"]
