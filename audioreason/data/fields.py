"""Normalising the fields of raw metadata records into the common schema, reporting every problem into the
build's ``ValidationReport`` (shared by the MMAR, MMAU and AudioSpan builders)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from .audio_files import AudioFiles
from .validation import ValidationReport


def as_text(value: Any) -> Optional[str]:
    """None stays None; strings are kept as-is; numbers become their string form."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def check_choices(
    item_id: str,
    choices: Any,
    answer: Optional[str],
    report: ValidationReport,
    *,
    require_answer_in_choices: bool = True,
) -> tuple[list[str], int]:
    """(choices as a list of strings, answer_index), reporting duplicates and a missing answer.

    Duplicate choices are kept (scorers compare choice text, so either copy is correct) and
    answer_index is then the FIRST matching index.
    """
    if choices is None:
        choices = []
    if not isinstance(choices, (list, tuple)):
        report.add("invalid_value", item_id, f"choices is a {type(choices).__name__}, not a list")
        choices = [choices]
    texts = []
    for c in choices:
        if not isinstance(c, str):
            report.add("invalid_value", item_id, f"choice {c!r} is not a string (stored as text)")
        texts.append(as_text(c) if c is not None else "")
    seen, dupes = set(), []
    for c in texts:
        if c in seen and c not in dupes:
            dupes.append(c)
        seen.add(c)
    if dupes:
        report.add("duplicate_choices", item_id, "; ".join(repr(d) for d in dupes))
    index = texts.index(answer) if answer is not None and answer in texts else -1
    if index < 0 and texts and require_answer_in_choices:
        report.add("answer_not_in_choices", item_id, f"answer {answer!r} not in {texts!r}")
    return texts, index


def category_text(item_id: str, value: Any, report: ValidationReport) -> Optional[str]:
    """A category as one string; a list is joined with "|" (MMAR's multi-value convention), reported."""
    if isinstance(value, list):
        texts = [as_text(v) for v in value if v is not None]
        report.add("list_typed_category", item_id, f"{value!r} stored as {'|'.join(texts)!r}")
        return "|".join(texts)
    return as_text(value)


def core_fields(
    raw: Any, row: int, audio_files: AudioFiles, report: ValidationReport, audio_field: str
) -> Optional[dict[str, Any]]:
    """The common-schema fields of one metadata record (id, audio, audio_path, question, choices, answer,
    answer_index; audio = the file's real path when it lies inside the raw folder and a reader opens its
    header, else None), with every problem reported. A record that is not an object is reported and
    skipped (None)."""
    if not isinstance(raw, Mapping):
        report.add("invalid_value", f"row-{row}", f"record is a {type(raw).__name__}, not an object (not built)")
        report.add("skipped", f"row-{row}", "not an object")
        return None
    item_id = record_id(raw, row, report)
    question = required_text(raw, "question", item_id, report)
    answer = required_text(raw, "answer", item_id, report)
    choices, answer_index = check_choices(item_id, raw.get("choices"), answer, report)
    if not choices:
        report.add("missing_field", item_id, "choices")
    audio_path = as_text(raw.get(audio_field))
    audio: Optional[str] = None
    if not audio_path:
        report.add("missing_field", item_id, audio_field)
        report.add("missing_audio", item_id, f"no {audio_field}")
    else:
        path, _ = audio_files.check(item_id, audio_path)
        audio = None if path is None else str(path)
    return {
        "id": item_id,
        "audio": audio,
        "audio_path": audio_path,
        "question": question,
        "choices": choices,
        "answer": answer,
        "answer_index": answer_index,
    }


def record_id(raw: Mapping[str, Any], row: int, report: ValidationReport, key: str = "id") -> str:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        fallback = f"row-{row}"
        report.add("missing_field", fallback, f"no {key!r}; the item is named by its row")
        return fallback
    return as_text(value)


def required_text(raw: Mapping[str, Any], key: str, item_id: str, report: ValidationReport) -> str:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        report.add("missing_field", item_id, key)
        return "" if value is None else value
    if not isinstance(value, str):
        report.add("invalid_value", item_id, f"{key} is a {type(value).__name__} (stored as text)")
    return as_text(value)
