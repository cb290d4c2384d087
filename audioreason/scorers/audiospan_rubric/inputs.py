"""The AudioSpan Rubric's inputs as the evaluate module (``metrics/audiospan_rubric``) is given them, read into
what the scorer takes: the item each row names, an item written as JSON text, precomputed verdicts written as
JSON text; and ``score_inputs``, scoring with those verdicts or else with a judge."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.scorers.audiospan_rubric.scorer import AudioSpanRubricScorer, score_verdicts

# The options that apply to precomputed verdicts (the others configure the judge).
VERDICT_OPTIONS = ("aggregation", "tolerance_s", "span_tolerance_s")
NO_JUDGE = "audiospan_rubric needs judge_model=... (or judge=, ensemble=, verdicts=)"


def item_names(references: Sequence[Any], item_id: Optional[Sequence[Any]]) -> list:
    """What names each row's item: its ``item_id`` where one is given, else its reference."""
    return [r if item_id is None or item_id[i] is None else item_id[i] for i, r in enumerate(references)]


def items_from_json(references: Sequence[str]) -> list[dict]:
    """The items when each reference is an item written as JSON text (no ``items=`` given)."""
    try:
        return [json.loads(r) for r in references]
    except json.JSONDecodeError as err:
        raise ValueError("without items=..., each reference must be the item as a JSON string") from err


def verdicts_from_json(items: Sequence[Mapping[str, Any]], verdicts: Sequence[Any]) -> list:
    """One verdicts entry per item, read from its JSON text (a list or dict is taken as it is); a text that is
    not JSON is a ValueError naming the item. ``score_verdicts`` validates what they hold."""
    if len(verdicts) != len(items):
        raise ValueError(f"{len(items)} items but {len(verdicts)} verdict lists")
    parsed = []
    for item, entry in zip(items, verdicts):
        try:
            parsed.append(json.loads(entry) if isinstance(entry, str) else entry)
        except json.JSONDecodeError as err:
            raise ValueError(f"item {item.get('id')!r}: verdicts entry is not JSON ({err})") from None
    return parsed


def score_inputs(
    items: Sequence[Mapping[str, Any]],
    responses: Sequence[Optional[str]],
    *,
    verdicts: Optional[Sequence[Any]],
    mcq_correct: Any,
    return_items: bool,
    options: dict[str, Any],
    judge: Callable[[], Any],
) -> dict[str, Any]:
    """The report of ``items``: from the precomputed ``verdicts`` when given (no judge is called; of
    ``options``, only ``VERDICT_OPTIONS`` apply), else by ``AudioSpanRubricScorer(judge(), **options)``
    (``judge()`` takes its client options out of ``options`` first)."""
    if verdicts is not None:
        parsed = verdicts_from_json(items, verdicts)
        given = {k: options[k] for k in VERDICT_OPTIONS if k in options}
        return score_verdicts(items, parsed, responses, mcq_correct=mcq_correct, return_items=return_items, **given)
    made = judge()
    scorer = AudioSpanRubricScorer(made, **options)
    return scorer.score(items, responses, mcq_correct=mcq_correct, return_items=return_items)
