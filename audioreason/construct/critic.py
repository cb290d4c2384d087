"""The critic of AudioSpan (arXiv:2608.26431) §4.5 / App. B.4: when a solver gate flags a candidate, the critic
reads how the blind or text-only solver reached the right answer, names the shortcut it exploited from the
fixed catalogue (``memory.SHORTCUTS``, an enum in the reply schema) and writes a lesson, stored in the memory
bank under that name for the pipeline the candidate came from.

The critic runs on the shortcut gates only (rejected at ``"blind"`` or ``"text"``): an unsolvable candidate or
one whose evidence failed was not solved by a shortcut, so the catalogue has no name for it.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from audioreason.judges.fence import fence

from .calls import stage_schema
from .memory import SHORTCUT_MEANINGS, SHORTCUTS, Lesson, MemoryBank
from .solver import LETTERS, correct_reasoning, question_block

LESSON_CHARS = 300
CRITIC_GATES = ("blind", "text")
GATE_WORDS = {
    "blind": "without any access to the recording (question and options only)",
    "text": "from the transcript alone, without hearing the recording",
}


def _check(value: Mapping[str, Any]) -> dict[str, str]:
    lesson = " ".join(value["lesson"].split())
    if len(lesson) < 10:
        raise ValueError("the lesson is empty or too short: state what to avoid in one sentence")
    return {"shortcut": value["shortcut"], "lesson": lesson}


CRITIC_SCHEMA = stage_schema(
    "critic",
    {
        "type": "object",
        "properties": {
            "shortcut": {"type": "string", "enum": list(SHORTCUTS)},
            "lesson": {"type": "string", "maxLength": LESSON_CHARS},
        },
        "required": ["shortcut", "lesson"],
        "additionalProperties": False,
    },
    _check,
)


def critic_messages(mcq: Mapping[str, Any], gate: str, reasonings: list[str]) -> list[dict[str, str]]:
    catalogue = "\n".join(f"- {name}: {SHORTCUT_MEANINGS[name]}" for name in SHORTCUTS)
    paths = "\n\n".join(f"Solver {k + 1}: {text}" for k, text in enumerate(reasonings)) or "(no reasoning kept)"
    system = (
        "You review multiple-choice questions written about audio recordings. A question is only good if it "
        "cannot be answered without hearing the recording. This one was answered correctly "
        f"{GATE_WORDS[gate]}. Name the shortcut the solvers used, from this catalogue:\n{catalogue}\n"
        "Then write one lesson: a concrete rule for the question writer that would have prevented it. Reply "
        'with one JSON object: {"shortcut": "<a catalogue name>", "lesson": "<one sentence>"}.'
    )
    user = (
        f"{question_block(mcq)}\nCorrect answer: {LETTERS[mcq['answer_index']]}\n\n"
        + fence(paths, "SOLVER-REASONING")[2]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def critique(
    calls: Any,
    mcq: Mapping[str, Any],
    solver_result: Mapping[str, Any],
    *,
    pipeline: str,
    level: str,
    candidate_id: str,
    order: int,
    bank: Optional[MemoryBank] = None,
) -> Optional[dict[str, str]]:
    """The critic's ``{"shortcut", "lesson"}`` for a candidate a shortcut gate rejected (stored in ``bank``),
    or None: the candidate was not rejected at a shortcut gate, or the critic's call failed (counted by
    ``calls``)."""
    gate = solver_result.get("rejected_at")
    if gate not in CRITIC_GATES:
        return None
    messages = critic_messages(mcq, gate, correct_reasoning(solver_result, gate))
    reply = await calls.ask("critic", CRITIC_SCHEMA, messages, item=candidate_id)
    if reply is None:
        return None
    if bank is not None:
        bank.add(Lesson(pipeline, level, reply["shortcut"], reply["lesson"], candidate_id, order))
    return dict(reply)
