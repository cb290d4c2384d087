"""The Native QA pipeline of AudioSpan (arXiv:2608.26431) §4.3, App. B.2 and B.4, for one recording.

Per cognitive level (perception, understanding, reasoning):

1. direction selection: the generator reads the summary view and the level's part of Table 4
   (``question_space``) and picks ``per_level`` directions, each with its dimension and target segments;
2. question generation, one candidate per direction: from the summary view and the target segments' dense
   captions the generator writes a stem, four options, the correct one and the evidence ids it used (ids of
   the target segments' dense records, and cross-segment records from them); the memory bank's lessons for
   this level, from candidates generated before this one, are in the prompt;
3. evidence verification: every cited record re-checked against its stretch of audio
   (``verify.verify_evidence``); the candidate passes when none is refuted (a record that cannot be checked,
   such as a derived record offline, is listed as unchecked and does not fail it);
4. adversarial refinement: the three-level solver (``solver.run_solver``) on a seeded shuffle of the options,
   the gate rule of ``gates.solver_verdict``; a shortcut rejection goes to the critic, whose lesson enters the
   bank;
5. rubric generation and 6. task assembly for kept candidates (``native_items``).

Candidates run one after another in ``order``: the bank a prompt sees then depends only on earlier
candidates, so a rerun asks the same requests and the call cache answers them (solver rollouts run
concurrently inside a level). Every candidate, kept or not, is returned as its record (the shared layout of
``candidates.jsonl``); a kept one carries its MCQ and OEQ items under ``"items"``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from audioreason.judges.fence import fence

from .calls import stage_schema
from .gates import new_candidate
from .memory import MemoryBank
from .native_items import PositionCycle, assemble_items, generate_rubric, shuffled_view
from .question_space import LEVEL_LETTER, LEVEL_ORDER, dimensions, space_text
from .records import seed_of
from .screening import screen

OPTION_CHARS, QUESTION_CHARS, DIRECTION_CHARS = 120, 300, 200
MIN_QUESTION_CHARS = 10  # in the schema too: a small model copying the prompt's "..." must write on
MAX_TARGETS, MAX_CITED = 3, 6
DENSE_MODALITIES = ("speech", "sound", "environment")
# An option that points at other options stops being true once the options are shuffled.
_REFERS_TO_OPTIONS = re.compile(r"\b(of the above|options? [a-d]\b|[a-d] and [a-d]\b)", re.IGNORECASE)
LEVEL_GUIDE = {
    "perception": "what can be heard: who speaks, what sounds occur, when and how often",
    "understanding": "what the content means within a stretch: intent, stance, structure, summaries",
    "reasoning": "why and how parts relate across the recording: causes, references, contradictions",
}


# ---------------------------------------------------------------------- 1. direction selection


def direction_schema(caption: Any, level: str, count: int):
    indices = [s["index"] for s in caption.segments]

    def check(value: Mapping[str, Any]) -> list[dict[str, Any]]:
        out, seen = [], set()
        for n, d in enumerate(value["directions"], start=1):
            text = " ".join(d["direction"].split())
            if not text or text.lower() in seen:
                raise ValueError(f"direction {n} is empty or repeats another")
            if len(set(d["segments"])) != len(d["segments"]):
                raise ValueError(f"direction {n} names a segment twice")
            seen.add(text.lower())
            out.append({"dimension": d["dimension"], "direction": text, "segments": sorted(d["segments"])})
        return out

    item = {
        "type": "object",
        "properties": {
            "dimension": {"type": "string", "enum": list(dimensions(level))},
            "direction": {"type": "string", "maxLength": DIRECTION_CHARS},
            "segments": {
                "type": "array",
                "items": {"type": "integer", "enum": indices},
                "minItems": 1,
                "maxItems": min(MAX_TARGETS, len(indices)),
            },
        },
        "required": ["dimension", "direction", "segments"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"directions": {"type": "array", "items": item, "minItems": count, "maxItems": count}},
        "required": ["directions"],
        "additionalProperties": False,
    }
    return stage_schema("directions", schema, check)


def direction_messages(caption: Any, level: str, count: int, chars: Optional[int] = None) -> list[dict[str, str]]:
    """``chars``: the caption views' length limit of a local model (``Calls.context_chars``)."""
    system = (
        "You plan questions about a long audio recording that can only be answered by listening to it. "
        f"For the {level} level ({LEVEL_GUIDE[level]}), choose {count} different question directions. Use the "
        "question space as inspiration, adapt or combine directions to this recording, and for each name its "
        "dimension and the 1-3 segments (by index) whose content it targets. Reply with one JSON object: "
        '{"directions": [{"dimension": "...", "direction": "...", "segments": [0]}, ...]}.'
    )
    user = space_text(level) + "\n\nSummary of the recording:\n" + fence(caption.summary_text(chars), "SUMMARY")[2]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# ---------------------------------------------------------------------- 2. question generation


def citable_ids(caption: Any, segments: list[int]) -> list[str]:
    """What a question targeting ``segments`` may cite: their dense records and the cross-segment records that
    start from them."""
    return [
        e.id
        for e in caption.evidence
        if e.segment in segments and (e.modality in DENSE_MODALITIES or e.modality == "cross-segment")
    ]


def question_schema(caption: Any, allowed: list[str]):
    records = caption.evidence_by_id()

    def check(value: Mapping[str, Any]) -> dict[str, Any]:
        question = " ".join(value["question"].split())
        options = [" ".join(o.split()) for o in value["options"]]
        if len(question) < MIN_QUESTION_CHARS:
            raise ValueError("the question stem is empty or too short")
        if any(not o for o in options) or len({o.lower() for o in options}) != len(options):
            raise ValueError("the four options must be non-empty and all different")
        if any(_REFERS_TO_OPTIONS.search(o) for o in options):
            raise ValueError("an option refers to other options ('all of the above', 'A and B'): options are shuffled")
        cited = list(dict.fromkeys(value["evidence"]))  # an id listed twice is one citation (kept in order)
        unknown = [i for i in cited if i not in records]
        if unknown:
            raise ValueError(f"evidence id {unknown[0]!r} does not exist in this caption")
        outside = [i for i in cited if i not in allowed]
        if outside:
            raise ValueError(f"evidence id {outside[0]!r} is not a record of the targeted segments")
        if not any(records[i].modality in DENSE_MODALITIES for i in cited):
            raise ValueError("cite at least one speech, sound or environment record the answer rests on")
        return {"question": question, "options": options, "answer_index": value["answer_index"], "evidence": cited}

    ids = {"type": "string", "enum": list(allowed)} if len(allowed) <= 500 else {"type": "string", "maxLength": 40}
    schema = {
        "type": "object",
        "properties": {
            "evidence": {"type": "array", "items": ids, "minItems": 1, "maxItems": MAX_CITED},
            "question": {"type": "string", "minLength": MIN_QUESTION_CHARS, "maxLength": QUESTION_CHARS},
            "options": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": OPTION_CHARS},
                "minItems": 4,
                "maxItems": 4,
            },
            "answer_index": {"type": "integer", "enum": [0, 1, 2, 3]},
        },
        "required": ["evidence", "question", "options", "answer_index"],
        "additionalProperties": False,
    }
    return stage_schema("question", schema, check)


QUESTION_SYSTEM = (
    "You write one multiple-choice question about an audio recording, from its caption. The question must need "
    "the audio: not answerable from general knowledge, from the wording of the question, or from the words "
    "spoken alone. Write a stem and four options of similar length and specificity, all plausible for this "
    "recording, exactly one correct; give the index (0-3) of the correct option and cite the ids of the caption "
    "records the answer rests on. Reply with one JSON object: "
    '{"evidence": ["<id>", ...], "question": "...", "options": ["...", "...", "...", "..."], "answer_index": 0}.'
)


def question_messages(
    caption: Any, direction: Mapping[str, Any], level: str, lessons: str, chars: Optional[int] = None
) -> list[dict]:
    parts = [
        f"Level: {level} ({LEVEL_GUIDE[level]}). Dimension: {direction['dimension']}.",
        f"Direction: {direction['direction']}",
        "Recording summary:\n" + fence(caption.summary_text(chars), "SUMMARY")[2],
        "Detailed caption of the targeted segments (each line starts with its evidence id):\n"
        + fence(caption.dense_text(direction["segments"], chars), "CAPTION")[2],
    ]
    if lessons:
        parts.append(lessons)
    return [{"role": "system", "content": QUESTION_SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


# ---------------------------------------------------------------------- the pipeline


def _new_candidate(caption: Any, level: str, k: int, order: int, direction: Optional[Mapping]) -> dict[str, Any]:
    cid = f"{caption.recording_id}-native-{LEVEL_LETTER[level]}{k + 1}"
    dimension = direction["dimension"] if direction else None
    provenance = {"direction": dict(direction) if direction else None}
    return new_candidate(cid, "native", caption.recording_id, level, dimension, order, provenance)


def _reject(candidate: dict[str, Any], at: str, reason: str) -> dict[str, Any]:
    candidate.update(outcome="rejected", rejected_at=at, reason=reason)
    return candidate


async def _one_candidate(calls, caption, audio_path, candidate, direction, *, rollouts, bank, positions, roles):
    level, cid, order = candidate["level"], candidate["id"], candidate["order"]
    lessons = bank.prompt_text("native", level, before=order) if bank is not None else ""
    shown = bank.for_prompt("native", level, before=order) if bank is not None else []
    candidate["provenance"]["lessons_in_prompt"] = len(shown)
    allowed = citable_ids(caption, direction["segments"])
    if not allowed:
        return _reject(candidate, "generation", "the targeted segments have no evidence records to cite")
    messages = question_messages(caption, direction, level, lessons, calls.context_chars("generator"))
    mcq = await calls.ask("generator", question_schema(caption, allowed), messages, item=cid)
    if mcq is None:
        return _reject(candidate, "generation", "no question fitting the schema and checks (see the call failures)")
    candidate.update(mcq=mcq, evidence=list(mcq["evidence"]))

    view = shuffled_view(mcq, seed_of(cid, "solver"))
    result = await screen(calls, caption, audio_path, candidate, view, rollouts=rollouts, bank=bank)
    if result is None:
        return candidate

    rubric = await generate_rubric(calls, caption, view, result, item=cid)
    if rubric is None:
        return _reject(candidate, "rubric", "no rubric fitting the schema and checks (see the call failures)")
    provenance = {
        "pipeline": "native",
        "candidate": cid,
        "direction": direction["direction"],
        "roles": roles,
        "captioner_mode": caption.provenance.get("captioner_mode"),
        "evidence_check": [
            {"id": r["id"], "confirmed": r["confirmed"], "method": r["method"]}
            for r in candidate["provenance"]["evidence_check"]
        ],
        "gates": {k: candidate["gates"][k] for k in ("blind", "text", "full")},
    }
    candidate["items"] = assemble_items(caption, candidate, rubric, position=positions.next(), provenance=provenance)
    candidate.update(outcome="kept", rejected_at=None, reason="passed every gate")
    return candidate


async def native_candidates(
    calls: Any,
    caption: Any,
    audio_path: Any,
    *,
    per_level: int,
    rollouts: int,
    bank: Optional[MemoryBank],
    order_start: int,
    positions: Optional[PositionCycle] = None,
    levels: tuple[str, ...] = LEVEL_ORDER,
) -> list[dict[str, Any]]:
    """Every native candidate of one recording (``per_level`` per cognitive level, in order ``order_start``,
    ``order_start + 1``...), as candidate records; kept ones carry their two items under ``"items"``.
    ``positions``: the run's answer-position cycle (default: one for this recording alone); ``levels``: the
    cognitive levels to write (default all three, in Table 4's order)."""
    if per_level < 1:
        raise ValueError("per_level must be at least 1")
    if not caption.segments:
        raise ValueError(f"caption {caption.recording_id} has no segments to target")
    unknown = [level for level in levels if level not in LEVEL_ORDER]
    if unknown:
        raise ValueError(f"unknown cognitive level {unknown[0]!r}")
    positions = positions if positions is not None else PositionCycle(caption.recording_id)
    roles = {role: calls.describe(role) for role in ("generator", "verifier", "solver", "critic")}
    out, order = [], order_start
    for level in levels:
        messages = direction_messages(caption, level, per_level, calls.context_chars("generator"))
        item = f"{caption.recording_id}-native-{LEVEL_LETTER[level]}"
        directions = await calls.ask("generator", direction_schema(caption, level, per_level), messages, item=item)
        for k in range(per_level):
            direction = directions[k] if directions else None
            candidate = _new_candidate(caption, level, k, order, direction)
            order += 1
            if direction is None:
                out.append(_reject(candidate, "generation", "direction selection failed (see the call failures)"))
                continue
            out.append(
                await _one_candidate(
                    calls,
                    caption,
                    audio_path,
                    candidate,
                    direction,
                    rollouts=rollouts,
                    bank=bank,
                    positions=positions,
                    roles=roles,
                )
            )
    return out
