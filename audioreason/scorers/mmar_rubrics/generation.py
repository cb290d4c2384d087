"""MMAR-Rubrics rubric generation: a judge writes k binary criteria per item from its gold chain of thought
(``thinking``), in MMAR's rubric schema, so an item without a rubric can be scored
(``audioreason.scorers.mmar_rubrics.scorer``). Used by ``audioreason rubrics generate`` (``audioreason.cli.rubrics``)
with the constrained offline judge, whose grammar is ``rubric_schema``'s."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from audioreason.judges import (
    JsonReplySchema,
    Judge,
    JudgeCallError,
    SamplingParams,
    VerdictSchema,
    extract_json_values,
)
from audioreason.judges.runner import DEFAULT_MAX_REASKS

RUBRIC_GEN_SYSTEM_PROMPT = (
    "You write grading rubrics for reasoning about audio. Given a multiple-choice question about an audio "
    "clip, its correct answer and a reference reasoning (the gold chain of thought), write exactly {k} "
    "criteria that a grader can check, one by one, in a test-taker's written reasoning. Each criterion is "
    "binary (0 or 1) and checks one thing the reference reasoning relies on: an acoustic cue that must be "
    "identified, an inference step from that cue, the elimination of a distractor, or the final choice. "
    "Together they should cover the reasoning from the first cue to the answer; the last criterion checks "
    "that the correct choice is selected. Each criterion must be checkable from the text alone, without the "
    "audio, and must not overlap with another.\n"
    "Reply with a JSON list of exactly {k} objects, each "
    '{{"name": "<short distinct title, e.g. Cue Identification: Throat Singing>", '
    '"scoring_point": "Award 1 point if the test-taker ...", '
    '"note": "<one sentence: what ability this criterion assesses>"}}, and nothing else.'
)

RUBRIC_GEN_TEMPLATE = (
    "Question: {question}\n"
    "Choices: {choices}\n"
    "Correct answer: {answer}\n\n"
    "Reference reasoning:\n{thinking}\n\n"
    "Write the {k} criteria as a JSON list only."
)

RUBRIC_GEN_REASK = (
    "Your previous reply could not be used: {error}. Write the rubric again: a JSON list of "
    'exactly {k} objects with distinct "name", "scoring_point" and "note" strings, and '
    "nothing else."
)


def rubric_messages(item: Mapping[str, Any], k: int = 5) -> list[dict[str, str]]:
    """The rubric-generation prompt for one item (question, choices, gold answer, gold CoT)."""
    choices = "; ".join(f"({chr(65 + n)}) {c}" for n, c in enumerate(item.get("choices") or []))
    return [
        {"role": "system", "content": RUBRIC_GEN_SYSTEM_PROMPT.format(k=k)},
        {
            "role": "user",
            "content": RUBRIC_GEN_TEMPLATE.format(
                question=item["question"],
                choices=choices,
                answer=item["answer"],
                thinking=item.get("thinking") or "",
                k=k,
            ),
        },
    ]


RUBRIC_SOURCES = {"question": "question", "answer": "answer", "thinking": "gold CoT (thinking)"}


def check_rubric_sources(items: Sequence[Mapping[str, Any]]) -> None:
    """Raise ValueError naming each item without a question, answer or gold CoT (``thinking``): criteria are
    written from the item's reference reasoning, and without one a judge can only copy the prompt's example."""
    lacking = []
    for n, item in enumerate(items):
        missing = [name for key, name in RUBRIC_SOURCES.items() if not str(item.get(key) or "").strip()]
        if missing:
            lacking.append(f"{item.get('id', f'item {n + 1}')} (no {', no '.join(missing)})")
    if lacking:
        more = f"; and {len(lacking) - 5} more" if len(lacking) > 5 else ""
        raise ValueError(
            f"{len(lacking)} item(s) without what rubric criteria are written from: {'; '.join(lacking[:5])}{more}"
        )


def validate_rubric(value: Any, k: int = 5) -> list[dict[str, Any]]:
    """A decoded reply as an MMAR rubric (``name``, ``scoring_point``, ``note``, ``choices`` [0, 1]);
    raises ValueError with a message fit to send back. The result must also build a ``VerdictSchema``
    (distinct names), so it can be used to judge at once."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else value
    if not isinstance(value, list):
        raise ValueError(f"expected a JSON list of {k} objects, got a JSON {type(value).__name__}")
    if len(value) != k:
        raise ValueError(f"expected exactly {k} criteria, got {len(value)}")
    rubric = []
    for n, obj in enumerate(value, 1):
        if not isinstance(obj, dict):
            raise ValueError(f"item {n} of the list is not a JSON object")
        for key in ("name", "scoring_point"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise ValueError(f'item {n} needs a non-empty string "{key}"')
        note = obj.get("note")
        rubric.append(
            {
                "name": " ".join(obj["name"].split()),
                "scoring_point": obj["scoring_point"].strip(),
                "note": note.strip() if isinstance(note, str) else "",
                "choices": [0, 1],
            }
        )
    VerdictSchema.from_criteria(rubric)  # raises ValueError on repeated names
    return rubric


RUBRIC_FIELD_CHARS = (60, 200, 100)  # the constrained judge's longest name, scoring point and note


def rubric_schema(k: int = 5, field_chars: Sequence[int] = RUBRIC_FIELD_CHARS) -> JsonReplySchema:
    """The rubric reply as a schema: validated by ``validate_rubric``, and, for a constrained judge, held to
    ``judges.constrained.rubric_pattern`` (k objects with name, scoring point and note strings)."""
    from audioreason.judges.constrained import rubric_pattern

    return JsonReplySchema(
        "mmar_rubric",
        lambda value: validate_rubric(value, k),
        f"a JSON list of exactly {k} objects with distinct name, scoring_point and note strings",
        pattern=rubric_pattern(k, *field_chars),
    )


async def _generate_one(
    judge: Judge,
    item: Mapping[str, Any],
    k: int,
    params: Mapping[str, Any],
    max_reasks: int,
    field_chars: Sequence[int] = RUBRIC_FIELD_CHARS,
) -> dict[str, Any]:
    messages = rubric_messages(item, k)
    extra: dict[str, Any] = {}
    if getattr(judge, "constrained", False):  # decode under the rubric grammar, with room for its longest reply
        extra = {"schema": rubric_schema(k, field_chars)}
        params = {**params, "max_tokens": max(int(params.get("max_tokens") or 0), k * (sum(field_chars) + 40))}
    out: dict[str, Any] = {
        "id": str(item.get("id")),
        "status": "call_failed",
        "rubric": None,
        "error": None,
        "replies": [],
        "calls": 0,
    }
    for turn in range(max_reasks + 1):
        try:
            completion = await judge.complete(messages, params, **extra)
        except JudgeCallError as err:
            out["calls"] += err.attempts
            out["status"], out["error"] = "call_failed", str(err)
            return out
        out["calls"] += completion.attempts
        reply = completion.text or ""
        out["replies"].append(reply)
        values, decode_error = extract_json_values(reply)
        errors = []
        for value in values:
            try:
                out.update(status="ok", rubric=validate_rubric(value, k), error=None)
                return out
            except ValueError as err:
                errors.append(str(err))
        error = errors[-1] if errors else f"no JSON found in the reply{f' ({decode_error})' if decode_error else ''}"
        out["status"], out["error"] = "invalid", error
        messages = rubric_messages(item, k) + [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": RUBRIC_GEN_REASK.format(error=error.rstrip("."), k=k)},
        ]
    return out


def generate_rubrics(
    items: Sequence[Mapping[str, Any]],
    judge: Judge,
    *,
    k: int = 5,
    sampling: SamplingParams = SamplingParams(),
    max_reasks: int = DEFAULT_MAX_REASKS,
    field_chars: Sequence[int] = RUBRIC_FIELD_CHARS,
) -> list[dict[str, Any]]:
    """Ask ``judge`` for k binary criteria per item from its gold CoT (``thinking``). Per item: ``id``,
    ``status`` ("ok" | "invalid" | "call_failed"), ``rubric`` (MMAR's schema, or None), ``error``,
    ``replies``, ``calls``. Not cached. Store an ok rubric as ``item["rubric"]`` to score with it.
    A constrained judge (``LocalJudge(constrained=True)``) decodes under ``rubric_schema(k, field_chars)``.
    An item without question, answer or gold CoT is a ValueError before any call (``check_rubric_sources``)."""
    check_rubric_sources(items)

    async def main() -> list[dict[str, Any]]:
        try:
            return list(
                await asyncio.gather(
                    *(_generate_one(judge, it, k, sampling.for_rater(0), max_reasks, field_chars) for it in items)
                )
            )
        finally:
            await judge.aclose()

    return asyncio.run(main())


__all__ = [
    "RUBRIC_FIELD_CHARS",
    "RUBRIC_GEN_REASK",
    "RUBRIC_GEN_SYSTEM_PROMPT",
    "RUBRIC_GEN_TEMPLATE",
    "RUBRIC_SOURCES",
    "check_rubric_sources",
    "generate_rubrics",
    "rubric_messages",
    "rubric_schema",
    "validate_rubric",
]
