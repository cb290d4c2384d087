"""The text-prior scorer's other input shapes, turned into its records (dicts): parallel columns (the
``evaluate`` form), the nested ``{model: {item_id: {condition: correctness}}}`` table, JSON Lines text."""

from __future__ import annotations

from typing import Any, Hashable, Mapping, Optional, Sequence

from audioreason.base.jsonl import parse_json_lines


def _column(name: str, values: Optional[Sequence[Any]], n: int, required: bool = False) -> list[Any]:
    if values is None:
        if required:
            raise ValueError(f"'{name}' is required: one value per prediction")
        return [None] * n
    if isinstance(values, (str, bytes)):
        raise ValueError(f"'{name}' must be a list with one value per prediction, got a string")
    values = list(values)
    if len(values) != n:
        raise ValueError(f"'{name}' has {len(values)} values but there are {n} predictions")
    return values


def records_from_columns(
    predictions: Sequence[Any],
    references: Optional[Sequence[Any]] = None,
    *,
    model: Sequence[str],
    item_id: Sequence[Hashable],
    condition: Sequence[str],
    choices: Optional[Sequence[Optional[Sequence[str]]]] = None,
    category: Optional[Sequence[Optional[str]]] = None,
    question: Optional[Sequence[Optional[str]]] = None,
) -> list[dict[str, Any]]:
    """Parallel lists (the ``evaluate`` form) -> records; lengths are checked, each list named."""
    if isinstance(predictions, (str, bytes)) or predictions is None:
        raise ValueError("'predictions' must be a list")
    predictions = list(predictions)
    n = len(predictions)
    columns = {
        "reference": _column("references", references, n),
        "model": _column("model", model, n, required=True),
        "item_id": _column("item_id", item_id, n, required=True),
        "condition": _column("condition", condition, n, required=True),
        "choices": _column("choices", choices, n),
        "category": _column("category", category, n),
        "question": _column("question", question, n),
    }
    return [{"prediction": p, **{k: v[i] for k, v in columns.items()}} for i, p in enumerate(predictions)]


def records_from_nested(
    table: Mapping[str, Mapping[Hashable, Mapping[str, Any]]],
    *,
    categories: Optional[Mapping[Hashable, str]] = None,
    choices: Optional[Mapping[Hashable, Sequence[str]]] = None,
) -> list[dict[str, Any]]:
    """``{model: {item_id: {condition: correctness}}}`` -> records. Correctness is True/False/0/1, or
    None for an errored prediction; ``categories`` and ``choices`` map item ids (choices only serve the
    chance level here, since the predictions are already scored)."""
    records = []
    for model, items in table.items():
        if not isinstance(items, Mapping):
            raise ValueError(
                f"model {model!r}: expected {{item_id: {{condition: correct}}}}, got {type(items).__name__}"
            )
        for item_id, conditions in items.items():
            if not isinstance(conditions, Mapping):
                raise ValueError(
                    f"model {model!r}, item {item_id!r}: expected {{condition: correct}}, "
                    f"got {type(conditions).__name__}"
                )
            for condition, value in conditions.items():
                if isinstance(value, str):
                    raise ValueError(
                        f"model {model!r}, item {item_id!r}, condition {condition!r}: the nested form "
                        "takes correctness values; give raw outputs as records with reference and choices"
                    )
                records.append(
                    {
                        "model": model,
                        "item_id": item_id,
                        "condition": condition,
                        "prediction": value,
                        "category": (categories or {}).get(item_id),
                        "choices": (choices or {}).get(item_id),
                    }
                )
    return records


def records_from_jsonl(text: str) -> list[dict[str, Any]]:
    """Records from JSON Lines text (one record object per line) or from one JSON list of records."""
    import json

    text = text.strip()
    if not text:
        raise ValueError("no records: give one JSON object per line")
    if text.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"records are not valid JSON: {err}") from None
        if not isinstance(records, list):
            raise ValueError("a JSON document of records must be a list of objects")
        return records
    return parse_json_lines(text)
