"""The text-prior scorer's records: each one checked (fields, condition, prediction kind, duplicates, per-item
consistency) and each prediction scored correct, wrong or errored (``score_prediction``; raw outputs through the
core's hybrid extractor). A record's condition is one of ``TEXT_PRIOR_KINDS`` or a fragment ``frag:N:k``, in
the one condition grammar (``audioreason.text.conditions``)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping, Optional, Sequence

from audioreason.text.answers import as_correctness, extract_hybrid, is_gold
from audioreason.text.conditions import Condition, parse_condition

CORRECT, WRONG, ERROR = "correct", "wrong", "error"
ERROR_METHODS = ("unanswered", "judge_error", "judge_invalid")  # extraction outcomes that are errors
TEXT_PRIOR_KINDS = ("full", "none", "tb")  # the conditions besides fragments that the paper compares


@dataclass(frozen=True)
class Record:
    row: int
    model: str
    item_id: Hashable
    condition: Condition
    prediction: Any
    reference: Optional[str] = None
    choices: Optional[tuple[str, ...]] = None
    category: Optional[str] = None
    question: str = ""

    @property
    def where(self) -> str:
        return f"row {self.row} (model {self.model!r}, item {self.item_id!r}, condition {str(self.condition)!r})"


@dataclass(frozen=True)
class Outcome:
    status: str  # CORRECT, WRONG or ERROR
    method: str  # "given" (a correctness), "no_prediction", or the extraction method
    choice: Optional[str] = None  # the extracted choice text, for raw outputs


def prediction_kind(value: Any) -> str:
    """'correctness', 'raw' or 'error' (None); ValueError for anything else."""
    if value is None:
        return "error"
    if isinstance(value, str):
        return "raw"
    if as_correctness(value) is not None:
        return "correctness"
    raise ValueError(
        f"a prediction must be True/False/0/1 (correctness), a raw output string, or None "
        f"(errored), got {type(value).__name__} {value!r}"
    )


def prediction_column_kind(predictions: Sequence[Any]) -> str:
    """'correctness' or 'raw' for a column holding one kind (None entries allowed), 'error' when every
    entry is None. ValueError names the first invalid entry, or the first row that mixes kinds (a
    column stored by ``evaluate`` has one type; the records form accepts mixed rows)."""
    first: Optional[tuple[int, str]] = None
    for row, value in enumerate(predictions):
        try:
            kind = prediction_kind(value)
        except ValueError as err:
            raise ValueError(f"prediction {row}: {err}") from None
        if kind == "error":
            continue
        if first is None:
            first = (row, kind)
        elif kind != first[1]:
            raise ValueError(
                f"prediction {row} is a {kind} value but prediction {first[0]} is a {first[1]} value: "
                "give one kind per call (or pass mixed records to "
                "audioreason.scorers.text_prior.scorer.score_text_prior)"
            )
    return first[1] if first else "error"


def _normalise_record(row: int, raw: Mapping[str, Any]) -> Record:
    if not isinstance(raw, Mapping):
        raise ValueError(f"row {row}: a record must be a dict, got {type(raw).__name__}")
    unknown = set(raw) - {"model", "item_id", "condition", "prediction", "reference", "choices", "category", "question"}
    if unknown:
        raise ValueError(
            f"row {row}: unknown field(s) {sorted(unknown)}; expected model, item_id, condition, "
            "prediction and optionally reference, choices, category, question"
        )
    for key in ("model", "item_id", "condition"):
        if raw.get(key) is None:
            raise ValueError(f"row {row}: '{key}' is missing")
    model, item_id = raw["model"], raw["item_id"]
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"row {row}: model must be a non-empty string, got {model!r}")
    try:
        hash(item_id)
        # NaN (pandas' missing value) never equals itself: each row would silently be an item of its own.
        usable = not (isinstance(item_id, numbers.Real) and not math.isfinite(item_id))
    except TypeError:
        usable = False
    if not usable:
        raise ValueError(
            f"row {row} (model {model!r}): item_id must be a string or number (not NaN or infinite), got {item_id!r}"
        )
    try:
        condition = parse_condition(raw["condition"], TEXT_PRIOR_KINDS)
    except ValueError as err:
        raise ValueError(f"row {row} (model {model!r}, item {item_id!r}): {err}") from None
    choices = raw.get("choices")
    if choices is not None:
        if isinstance(choices, str) or not all(isinstance(c, str) for c in choices) or not len(choices):
            raise ValueError(
                f"row {row} (model {model!r}, item {item_id!r}): choices must be a non-empty list "
                f"of strings, got {choices!r}"
            )
        choices = tuple(choices)
    reference, category, question = raw.get("reference"), raw.get("category"), raw.get("question") or ""
    for key, value in (("reference", reference), ("category", category), ("question", question)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"row {row} (model {model!r}, item {item_id!r}): {key} must be a string, got {value!r}")
    record = Record(row, model, item_id, condition, raw.get("prediction"), reference, choices, category, question)
    try:
        kind = prediction_kind(record.prediction)
    except ValueError as err:
        raise ValueError(f"{record.where}: {err}") from None
    if kind == "raw":
        if choices is None or reference is None:
            raise ValueError(
                f"{record.where}: a raw output needs the item's choices and its gold reference "
                "(or give the correctness as True/False)"
            )
        if reference.strip() not in {c.strip() for c in choices}:
            raise ValueError(
                f"{record.where}: the gold reference {reference!r} is not one of the choices {list(choices)}"
            )
    return record


def validate_records(records: Iterable[Mapping[str, Any]]) -> list[Record]:
    """Normalise and check every record: fields, condition grammar, prediction kind, duplicates,
    and per-item consistency of category and number of choices. ValueError names the row."""
    out: list[Record] = []
    seen: dict[tuple, int] = {}
    item_category: dict[Hashable, tuple[Optional[str], int]] = {}
    item_n_choices: dict[Hashable, tuple[int, int]] = {}
    for row, raw in enumerate(records):
        record = _normalise_record(row, raw)
        key = (record.model, record.item_id, record.condition)
        if key in seen:
            raise ValueError(f"{record.where} duplicates row {seen[key]}: one prediction per (model, item, condition)")
        seen[key] = row
        if record.category is not None:
            previous = item_category.setdefault(record.item_id, (record.category, row))
            if previous[0] != record.category:
                raise ValueError(
                    f"{record.where}: category {record.category!r} differs from {previous[0]!r} "
                    f"given for the same item in row {previous[1]}"
                )
        if record.choices is not None:
            previous_n = item_n_choices.setdefault(record.item_id, (len(record.choices), row))
            if previous_n[0] != len(record.choices):
                raise ValueError(
                    f"{record.where}: {len(record.choices)} choices, but row {previous_n[1]} gives "
                    f"{previous_n[0]} for the same item"
                )
        out.append(record)
    if not out:
        raise ValueError("no records to score")
    return out


def score_prediction(record: Record, judge: Optional[Callable] = None) -> Outcome:
    """Correct / wrong / error for one record (raw outputs through ``extract_hybrid``)."""
    kind = prediction_kind(record.prediction)
    if kind == "error":
        return Outcome(ERROR, "no_prediction")
    if kind == "correctness":
        return Outcome(CORRECT if as_correctness(record.prediction) else WRONG, "given")
    extracted = extract_hybrid(record.prediction, record.choices, question=record.question, judge=judge)
    if extracted.method in ERROR_METHODS:
        return Outcome(ERROR, extracted.method)
    return Outcome(CORRECT if is_gold(extracted, record.reference) else WRONG, extracted.method, extracted.choice)
