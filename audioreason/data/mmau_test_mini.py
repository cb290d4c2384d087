"""MMAU test-mini (Sakshi et al., ICLR 2025): 1,000 multiple-choice questions over sound, speech and
music, the public-answer split of MMAU.

Raw layout (as the MMAU release ships it)::

    <root>/mmau-test-mini.json                 a JSON array of records (fields below)
    <root>/test-mini-audios/<id>.wav           the file each record's ``audio_id`` names
                                               ("./test-mini-audios/<id>.wav"), relative to <root>

Record fields: id, audio_id, question, choices, answer, dataset (source corpus), task (sound / speech /
music), split ("test-mini"), category, sub-category, difficulty (easy / medium / hard).

Schema decisions (the release is irregular in two ways; both are reported, never hidden):
- ``audio_id`` holds a path, so it is stored as the common ``audio_path``.
- ``category`` is a string on 987 items and a one-element list (["Reasoning"]) on 13. It is stored
  as one string (a list's elements joined by "|", MMAR's convention for multi-valued fields), so
  per-category breakdowns group cleanly; the report lists the 13 ids under list_typed_category.
- 27 items repeat a choice text. They are kept as released (scorers compare choice *text*, so either
  copy counts) with answer_index the first match, and listed under duplicate_choices.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional

from datasets import Value

from audioreason.base.jsonl import parse_json_lines
from .audio_files import AudioFiles
from .builder import BenchmarkBuilder, SourceScan
from .features import benchmark_features
from .fields import as_text, category_text, core_fields
from .validation import ValidationReport

METADATA_FILE = "mmau-test-mini.json"

FEATURES = benchmark_features({
    "dataset": Value("string"),
    "task": Value("string"),
    "split": Value("string"),
    "category": Value("string"),
    "sub-category": Value("string"),
    "difficulty": Value("string"),
})

_TEXT_FIELDS = ("dataset", "task", "split", "sub-category", "difficulty")

CITATION = """@inproceedings{sakshi2025mmau,
  title     = {{MMAU}: A Massive Multi-Task Audio Understanding and Reasoning Benchmark},
  author    = {Sakshi, S and Tyagi, Utkarsh and Kumar, Sonal and Seth, Ashish and Selvakumar, Ramaneswaran
               and Nieto, Oriol and Duraiswami, Ramani and Ghosh, Sreyan and Manocha, Dinesh},
  booktitle = {The Thirteenth International Conference on Learning Representations},
  year      = {2025}
}"""


def read_metadata(path: Path) -> list[Any]:
    """The records of an MMAU metadata file: a JSON array (or, tolerated, JSON lines)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return parse_json_lines(text, str(path))  # not a JSON array: JSON lines, tolerated
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of records, got a {type(data).__name__}")
    return data


def normalize_record(raw: Any, row: int, audio_files: AudioFiles,
                     report: ValidationReport) -> Optional[dict[str, Any]]:
    """One MMAU record in the common schema (audio = the checked file's real path, or None); issues
    go to ``report``."""
    item = core_fields(raw, row, audio_files, report, "audio_id")
    if item is None:
        return None
    item_id = item["id"]
    for key in _TEXT_FIELDS:
        item[key] = as_text(raw.get(key))
    item["category"] = category_text(item_id, raw.get("category"), report)
    # Keep the schema's field order (category sits between split and sub-category).
    return {key: item[key] for key in FEATURES}


class MMAUTestMiniBuilder(BenchmarkBuilder):
    """Builds MMAU test-mini from its raw folder (``data_dir``) into the common schema, split "test"."""

    BENCHMARK = "mmau_test_mini"
    FEATURES = FEATURES
    DEFAULT_METADATA_FILE = METADATA_FILE
    DESCRIPTION = ("MMAU test-mini: 1,000 multiple-choice audio understanding and reasoning questions over "
                   "sound, speech and music (the split of MMAU with public answers).")
    HOMEPAGE = "https://sakshi113.github.io/mmau_homepage/"
    LICENSE = "cc-by-nc-4.0"
    CITATION = CITATION

    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        return self.scan_metadata_file(root, options, read_metadata, normalize_record, "MMAU test-mini",
                                       f"expected {METADATA_FILE} in the raw folder, with the audio under "
                                       "./test-mini-audios/")
