"""The raw metadata records of MMAR and MMAU test-mini in the common schema (``features``), with every problem
reported, and the scan of a raw folder into them. No ``datasets`` import: the builders (``mmar``,
``mmau_test_mini``) build a Dataset from the scan, and ``catalog.text_items`` hands the same items to a command
that reads only their text. Each benchmark's layout and fields are described in its builder's module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from audioreason.base.jsonl import parse_json_lines, read_json_lines

from .audio_files import AudioFiles
from .fields import as_text, category_text, core_fields
from .scan import SourceScan, scan_metadata_file
from .validation import ValidationReport

# The common fields first, then each benchmark's own, in the order of its FEATURES (tests check they agree).
CORE_FIELDS = ("id", "audio", "audio_path", "question", "choices", "answer", "answer_index")

MMAR_METADATA = "MMAR-meta.jsonl"
MMAR_FIELDS = CORE_FIELDS + (
    "modality",
    "category",
    "sub-category",
    "language",
    "source",
    "url",
    "timestamp",
    "thinking",
    "cue",
    "rubric",
)
# Optional string fields: absent is stored as None (MMAR's own `language` is null for 320 items).
_MMAR_TEXT = ("modality", "sub-category", "language", "source", "url", "timestamp", "thinking")

MMAU_METADATA = "mmau-test-mini.json"
MMAU_FIELDS = CORE_FIELDS + ("dataset", "task", "split", "category", "sub-category", "difficulty")
_MMAU_TEXT = ("dataset", "task", "split", "sub-category", "difficulty")


# ---------------------------------------------------------------------------------------------
# MMAR
# ---------------------------------------------------------------------------------------------


def read_mmar(path: Path) -> list[Any]:
    """The JSON lines of an MMAR metadata file (blank lines skipped; a bad line is an error with its number)."""
    return read_json_lines(path)


def _rubric(item_id: str, value: Any, report: ValidationReport) -> list[dict[str, Any]]:
    if value is None:
        report.add("missing_field", item_id, "rubric")
        return []
    if not isinstance(value, list):
        report.add("invalid_value", item_id, f"rubric is a {type(value).__name__}, not a list")
        return []
    criteria = []
    for n, c in enumerate(value):
        if not isinstance(c, Mapping):
            report.add("invalid_value", item_id, f"rubric[{n}] is not an object")
            continue
        options = c.get("choices")
        if not isinstance(options, list) or not all(isinstance(o, int) and not isinstance(o, bool) for o in options):
            report.add("invalid_value", item_id, f"rubric[{n}].choices {options!r} is not a list of integers")
            options = [o for o in options if isinstance(o, int)] if isinstance(options, list) else []
        for key in ("name", "scoring_point"):
            if not c.get(key):
                report.add("missing_field", item_id, f"rubric[{n}].{key}")
        criteria.append(
            {
                "name": as_text(c.get("name")),
                "scoring_point": as_text(c.get("scoring_point")),
                "note": as_text(c.get("note")),
                "choices": options,
            }
        )
    return criteria


def _record(
    raw: Any,
    row: int,
    audio_files: AudioFiles,
    report: ValidationReport,
    audio_field: str,
    text_fields: tuple[str, ...],
) -> Optional[dict[str, Any]]:
    """The common fields, a benchmark's optional text fields and its category (a list joined by "|")."""
    item = core_fields(raw, row, audio_files, report, audio_field)
    if item is not None:
        for key in text_fields:
            item[key] = as_text(raw.get(key))
        item["category"] = category_text(item["id"], raw.get("category"), report)
    return item


def normalize_mmar(raw: Any, row: int, audio_files: AudioFiles, report: ValidationReport) -> Optional[dict[str, Any]]:
    """One MMAR record in the common schema (audio = the checked file's real path, or None); issues
    go to ``report``."""
    item = _record(raw, row, audio_files, report, "audio_path", _MMAR_TEXT)
    if item is None:
        return None
    cue = raw.get("cue")
    if cue is None:
        cue = []
    elif not isinstance(cue, list):
        report.add("invalid_value", item["id"], f"cue is a {type(cue).__name__}, not a list (stored as one cue)")
        cue = [cue]
    item["cue"] = [as_text(c) for c in cue]
    item["rubric"] = _rubric(item["id"], raw.get("rubric"), report)
    return {key: item[key] for key in MMAR_FIELDS}


def scan_mmar(root: Path, metadata_file: str = MMAR_METADATA) -> SourceScan:
    return scan_metadata_file(
        "mmar",
        root,
        metadata_file,
        read_mmar,
        normalize_mmar,
        "MMAR",
        f"expected {MMAR_METADATA} in the raw folder, with the audio under ./audio/",
    )


# ---------------------------------------------------------------------------------------------
# MMAU test-mini
# ---------------------------------------------------------------------------------------------


def read_mmau(path: Path) -> list[Any]:
    """The records of an MMAU metadata file: a JSON array (or, tolerated, JSON lines)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return parse_json_lines(text, str(path))  # not a JSON array: JSON lines, tolerated
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of records, got a {type(data).__name__}")
    return data


def normalize_mmau(raw: Any, row: int, audio_files: AudioFiles, report: ValidationReport) -> Optional[dict[str, Any]]:
    """One MMAU record in the common schema (audio = the checked file's real path, or None); issues
    go to ``report``."""
    item = _record(raw, row, audio_files, report, "audio_id", _MMAU_TEXT)
    return None if item is None else {key: item[key] for key in MMAU_FIELDS}  # the schema's order


def scan_mmau(root: Path, metadata_file: str = MMAU_METADATA) -> SourceScan:
    return scan_metadata_file(
        "mmau_test_mini",
        root,
        metadata_file,
        read_mmau,
        normalize_mmau,
        "MMAU test-mini",
        f"expected {MMAU_METADATA} in the raw folder, with the audio under ./test-mini-audios/",
    )


__all__ = [
    "CORE_FIELDS",
    "MMAR_FIELDS",
    "MMAR_METADATA",
    "MMAU_FIELDS",
    "MMAU_METADATA",
    "normalize_mmar",
    "normalize_mmau",
    "read_mmar",
    "read_mmau",
    "scan_mmar",
    "scan_mmau",
]
