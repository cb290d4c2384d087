"""Native QA's last two steps (AudioSpan, arXiv:2608.26431 §4.3 steps 5-6): rubric generation for a kept
candidate and task assembly into the AudioSpan loader's item form, with the options shuffled so the correct
position is balanced across the run.

Rubric: the generator recasts the MCQ as an open-ended question and distils essential / supporting criteria
from the full solver's reasoning paths (the rollouts that answered correctly), with a reference answer. Each
criterion cites some of the candidate's evidence ids; its ``time_range`` is the span of those records (start of
the earliest, end of the latest), null when it cites none.

Balance: ``PositionCycle`` hands out the correct option's position. The items are taken in blocks of four
consecutive items; each block gets its own permutation of the four positions, drawn from ``seed_of(seed,
block)``. After n items every position has been used floor(n/4) or floor(n/4) + 1 times, and no position is
predictable from the item's place in the run. One cycle is shared by the whole run (``native_candidates``'s
``positions``); the run replays it in the same order on resume, since every stage re-runs from cached replies.
The distractors keep a seeded order (``seed_of(candidate id, "options")``) around the correct one.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Optional, Sequence

from audioreason.judges.fence import fence

from .calls import stage_schema
from .records import seed_of
from .solver import correct_reasoning

POSITIONS = 4
CRITERIA_MIN, CRITERIA_MAX = 2, 6


class PositionCycle:
    """Correct-answer positions, balanced in blocks of four (module docstring). ``issued``: positions already
    handed out (to continue a cycle)."""

    def __init__(self, seed: Any, issued: int = 0):
        self.seed, self.issued = str(seed), int(issued)

    def position(self, index: int) -> int:
        block, k = divmod(index, POSITIONS)
        order = list(range(POSITIONS))
        random.Random(seed_of("positions", self.seed, block)).shuffle(order)
        return order[k]

    def next(self) -> int:
        value = self.position(self.issued)
        self.issued += 1
        return value


def place_answer(options: Sequence[str], answer_index: int, position: int, seed: int) -> list[str]:
    """The options with the correct one at ``position`` and the distractors in a seeded order around it."""
    distractors = [text for k, text in enumerate(options) if k != answer_index]
    random.Random(seed).shuffle(distractors)
    return distractors[:position] + [options[answer_index]] + distractors[position:]


def shuffled_view(mcq: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """``mcq`` with its options in a seeded random order and ``answer_index`` following (the solver's view, so
    the gates do not see where the generator put the answer)."""
    order = list(range(len(mcq["options"])))
    random.Random(seed).shuffle(order)
    return {**mcq, "options": [mcq["options"][k] for k in order], "answer_index": order.index(mcq["answer_index"])}


# ---------------------------------------------------------------------- rubric generation


def rubric_schema(cited: Sequence[str]):
    def check(value: Mapping[str, Any]) -> dict[str, Any]:
        if not value["open_question"].strip() or not value["reference_answer"].strip():
            raise ValueError("the open question and the reference answer must not be empty")
        criteria, seen = [], set()
        for n, c in enumerate(value["criteria"], start=1):
            text = " ".join(c["text"].split())
            if not text:
                raise ValueError(f"criterion {n} is empty")
            if text.lower() in seen:
                continue  # a criterion written twice is one criterion (a small model repeats itself)
            seen.add(text.lower())
            if c["localization"] and not c["evidence"]:
                raise ValueError(f"criterion {n} asks for a time but cites no evidence record to take it from")
            criteria.append({**c, "text": text, "evidence": list(dict.fromkeys(c["evidence"]))})
        if len(criteria) < CRITERIA_MIN:
            raise ValueError(f"the rubric needs at least {CRITERIA_MIN} different criteria")
        if not any(c["importance"] == "essential" for c in criteria):
            raise ValueError("at least one criterion must be essential")
        return {
            "open_question": value["open_question"].strip(),
            "reference_answer": value["reference_answer"].strip(),
            "criteria": criteria,
        }

    criterion = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 200},
            "importance": {"type": "string", "enum": ["essential", "supporting"]},
            "evidence": {"type": "array", "items": {"type": "string", "enum": list(cited)}, "maxItems": 3},
            "localization": {"type": "boolean"},
        },
        "required": ["text", "importance", "evidence", "localization"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {
            "open_question": {"type": "string", "maxLength": 300},
            "reference_answer": {"type": "string", "maxLength": 500},
            "criteria": {"type": "array", "items": criterion, "minItems": CRITERIA_MIN, "maxItems": CRITERIA_MAX},
        },
        "required": ["open_question", "reference_answer", "criteria"],
        "additionalProperties": False,
    }
    return stage_schema("rubric", schema, check, version="2")  # 2: repeats are dropped, not refused


RUBRIC_SYSTEM = (
    "You turn a multiple-choice question about an audio recording into an open-ended question with a grading "
    "rubric. Rewrite the stem so it can be answered without options. Write a reference answer that states the "
    "correct answer and the times (MM:SS) it rests on. Distil the points that the solvers' reasoning paths share "
    "and that the answer needs into criteria: 'essential' for points a correct answer must contain, 'supporting' "
    "for points that strengthen it. Each criterion cites the evidence ids it checks; set localization true when "
    "it asks for a time. Reply with one JSON object: "
    '{"open_question": "...", "reference_answer": "...", "criteria": [{"text": "...", "importance": '
    '"essential", "evidence": ["<id>"], "localization": false}, ...]}.'
)


def rubric_messages(mcq: Mapping[str, Any], evidence_lines: str, reasonings: Sequence[str]) -> list[dict]:
    options = "\n".join(f"- {text}" for text in mcq["options"])
    paths = "\n\n".join(f"Path {k + 1}: {text}" for k, text in enumerate(reasonings)) or "(none)"
    user = "\n\n".join(
        [
            f"Question: {mcq['question']}\nOptions:\n{options}\nCorrect answer: {mcq['options'][mcq['answer_index']]}",
            "Evidence records the question rests on:\n" + fence(evidence_lines, "EVIDENCE")[2],
            "Reasoning paths of solvers that answered correctly:\n" + fence(paths, "REASONING")[2],
        ]
    )
    return [{"role": "system", "content": RUBRIC_SYSTEM}, {"role": "user", "content": user}]


async def generate_rubric(
    calls: Any, caption: Any, mcq: Mapping[str, Any], solver_result: Mapping[str, Any], *, item: str
):
    """The generator's ``{"open_question", "reference_answer", "criteria"}`` or None (a counted failure)."""
    records = caption.evidence_by_id()
    lines = "\n".join(records[i].line() for i in mcq["evidence"])
    messages = rubric_messages(mcq, lines, correct_reasoning(solver_result, "full"))
    return await calls.ask("generator", rubric_schema(mcq["evidence"]), messages, item=item)


def time_range(caption: Any, ids: Sequence[str]) -> Optional[list[float]]:
    """[earliest start, latest end] of the records ``ids`` (seconds), None for no ids."""
    if not ids:
        return None
    records = caption.evidence_by_id()
    return [min(records[i].start for i in ids), max(records[i].end for i in ids)]


# ---------------------------------------------------------------------- task assembly


def assemble_items(
    caption: Any,
    candidate: Mapping[str, Any],
    rubric: Mapping[str, Any],
    *,
    position: int,
    provenance: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The candidate's MCQ and OEQ items (loader raw layout, sharing ``pair_id``), the MCQ's correct option at
    ``position``."""
    mcq, cid = candidate["mcq"], candidate["id"]
    choices = place_answer(mcq["options"], mcq["answer_index"], position, seed_of(cid, "options"))
    common = {
        "recording_id": caption.recording_id,
        "cognitive_level": candidate["level"],
        "dimension": candidate["dimension"],
        "pair_id": cid,
        "evidence": list(mcq["evidence"]),
        "provenance": dict(provenance),
    }
    mcq_item = {
        "id": f"{cid}-mcq",
        "format": "MCQ",
        "question": mcq["question"],
        "choices": choices,
        "answer": mcq["options"][mcq["answer_index"]],
        **common,
    }
    criteria = [
        {
            "text": c["text"],
            "importance": c["importance"],
            "time_range": time_range(caption, c["evidence"]),
            "localization": bool(c["localization"]),
        }
        for c in rubric["criteria"]
    ]
    oeq_item = {
        "id": f"{cid}-oeq",
        "format": "OEQ",
        "question": rubric["open_question"],
        "reference_answer": rubric["reference_answer"],
        "rubric": criteria,
        **common,
    }
    return [mcq_item, oeq_item]


def position_counts(items: Sequence[Mapping[str, Any]]) -> list[int]:
    """How many MCQ items have their answer at each position (A, B, C, D)."""
    counts = [0] * POSITIONS
    for item in items:
        if item.get("format") == "MCQ":
            counts[item["choices"].index(item["answer"])] += 1
    return counts
