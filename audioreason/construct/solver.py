"""The three-level solver of AudioSpan (arXiv:2608.26431) §4.5 / App. B.4: the same multiple-choice candidate
answered with growing context, several independent rollouts per level, so the gates can tell a shortcut from
a question that needs the audio.

- blind: the stem and the four options only;
- text-only: plus the transcript of the segments the candidate cites (the segments of its evidence records;
  all segments when it cites only global records). Not the whole recording's transcript: the question is about
  those segments, a long recording's full transcript would not fit a solver's window, and the full level sees
  the same stretch, so text-only and full differ only by what the dense caption adds to the words;
- full: the dense caption of those segments instead, which holds their time-stamped transcript with speakers
  and paralinguistic cues, the environment and the sound events (a superset of the text-only context).

Every reply gives its reasoning before its letter (the critic reads how a shortcut was found; rubric
generation distils criteria from the full level's reasoning). A call that fails (no reply fitting the schema
after re-asks, or a transport failure: ``calls.ask`` returns None) counts as a wrong answer, and is counted
in ``failed``: the solver did not show that the candidate can be answered.

The levels run in order and stop at the first that rejects (``gates.level_rejects``): a candidate the blind
solver already gives away needs no text-only or full rollouts, which saves their calls; a level that did not
run is None in the result (the gate rule in ``gates.py`` needs only the levels up to the rejection).
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Optional, Sequence

from audioreason.judges.fence import fence

from .calls import stage_schema
from .gates import SOLVER_LEVELS, level_rejects

LETTERS = ("A", "B", "C", "D")
REASONING_CHARS = 500

SYSTEM = (
    "You answer a multiple-choice question about an audio recording. Think step by step, then give the letter "
    "of the one best option. Reply with one JSON object: "
    '{"reasoning": "<your reasoning, short>", "answer": "<A, B, C or D>"}.'
)
CONTEXT_NOTE = {
    "blind": "You cannot hear the recording and have no description of it: answer from the question alone.",
    "text": "You cannot hear the recording; you have the transcript of the relevant part of it.",
    "full": "You cannot hear the recording; you have a detailed description of the relevant part of it: "
    "what is said, by whom and how, the acoustic environment and the sound events, with times in seconds.",
}


def solver_schema(level: str):
    """The reply schema of one solver level (its own stage name, so counts and the cache tell levels apart)."""
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": REASONING_CHARS},
            "answer": {"type": "string", "enum": list(LETTERS)},
        },
        "required": ["reasoning", "answer"],
        "additionalProperties": False,
    }
    return stage_schema(f"solve_{level}", schema)


def cited_segments(caption: Any, evidence_ids: Sequence[str]) -> list[int]:
    """The segments of the cited evidence records, sorted; every segment when only global records are cited."""
    records = caption.evidence_by_id()
    segments = sorted({records[i].segment for i in evidence_ids if i in records and records[i].segment is not None})
    if segments:
        return segments
    return [s["index"] for s in caption.segments]


def question_block(mcq: Mapping[str, Any]) -> str:
    options = "\n".join(f"{LETTERS[k]}. {text}" for k, text in enumerate(mcq["options"]))
    return f"Question: {mcq['question']}\nOptions:\n{options}"


def solver_messages(level: str, mcq: Mapping[str, Any], context: str = "") -> list[dict[str, str]]:
    """The chat messages of one solver level (``context``: the transcript or dense caption text)."""
    parts = [CONTEXT_NOTE[level]]
    if level != "blind":
        label = "TRANSCRIPT" if level == "text" else "DESCRIPTION"
        parts.append(fence(context, label)[2])
    parts.append(question_block(mcq))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def level_context(caption: Any, level: str, segments: Sequence[int], chars: Optional[int] = None) -> str:
    """What solver ``level`` reads besides the question (``chars``: a local model's limit, ``Calls.context_chars``)."""
    if level == "blind":
        return ""
    if level == "text":
        return caption.transcript_text(list(segments), chars)
    return caption.dense_text(list(segments), chars)


async def run_solver(
    calls: Any,
    caption: Any,
    mcq: Mapping[str, Any],
    *,
    rollouts: int,
    item: str,
    evidence: Optional[Sequence[str]] = None,
    segments: Optional[Sequence[int]] = None,
) -> dict[str, Any]:
    """Answer ``mcq`` ({"question", "options" (4), "answer_index"}) at each level ``rollouts`` times.

    Returns ``{"blind" | "text" | "full": [bool per rollout] or None (not run), "replies": {level: [reply or
    None]}, "failed": {level: failed calls}, "rejected_at": the first rejecting level or None}``. ``evidence``
    (the cited ids; default ``mcq["evidence"]``) picks the segments of the text-only and full contexts;
    ``segments`` names them outright instead."""
    if rollouts < 1:
        raise ValueError("the solver needs at least one rollout per level")
    if len(mcq["options"]) != len(LETTERS):
        raise ValueError(f"a solver question has {len(LETTERS)} options, not {len(mcq['options'])}")
    if segments is None:
        segments = cited_segments(caption, evidence if evidence is not None else mcq.get("evidence", ()))
    correct = LETTERS[mcq["answer_index"]]
    result: dict[str, Any] = {level: None for level in SOLVER_LEVELS}
    result.update(replies={}, failed={}, rejected_at=None)
    for level in SOLVER_LEVELS:
        messages = solver_messages(level, mcq, level_context(caption, level, segments, calls.context_chars("solver")))
        schema = solver_schema(level)
        replies = await asyncio.gather(
            *(calls.ask("solver", schema, messages, item=item, rollout=k) for k in range(rollouts))
        )
        result["replies"][level] = list(replies)
        result["failed"][level] = sum(1 for reply in replies if reply is None)
        result[level] = [reply is not None and reply["answer"] == correct for reply in replies]
        if level_rejects(level, result[level]):
            result["rejected_at"] = "unsolvable" if level == "full" else level
            break
    return result


def correct_reasoning(result: Mapping[str, Any], level: str) -> list[str]:
    """The reasoning of the rollouts of ``level`` that answered correctly (rubric distillation, the critic)."""
    replies = result["replies"].get(level) or []
    return [reply["reasoning"] for reply, ok in zip(replies, result[level] or []) if ok]
