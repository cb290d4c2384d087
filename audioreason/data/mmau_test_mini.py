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

The records are normalised by ``records`` (no ``datasets``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from datasets import Value

from .builder import BenchmarkBuilder
from .features import benchmark_features
from .records import MMAU_METADATA, scan_mmau
from .scan import SourceScan

METADATA_FILE = MMAU_METADATA

FEATURES = benchmark_features(
    {
        "dataset": Value("string"),
        "task": Value("string"),
        "split": Value("string"),
        "category": Value("string"),
        "sub-category": Value("string"),
        "difficulty": Value("string"),
    }
)

CITATION = """@inproceedings{sakshi2025mmau,
  title     = {{MMAU}: A Massive Multi-Task Audio Understanding and Reasoning Benchmark},
  author    = {Sakshi, S and Tyagi, Utkarsh and Kumar, Sonal and Seth, Ashish and Selvakumar, Ramaneswaran
               and Nieto, Oriol and Duraiswami, Ramani and Ghosh, Sreyan and Manocha, Dinesh},
  booktitle = {The Thirteenth International Conference on Learning Representations},
  year      = {2025}
}"""


class MMAUTestMiniBuilder(BenchmarkBuilder):
    """Builds MMAU test-mini from its raw folder (``data_dir``) into the common schema, split "test"."""

    BENCHMARK = "mmau_test_mini"
    FEATURES = FEATURES
    DEFAULT_METADATA_FILE = METADATA_FILE
    DESCRIPTION = (
        "MMAU test-mini: 1,000 multiple-choice audio understanding and reasoning questions over "
        "sound, speech and music (the split of MMAU with public answers)."
    )
    HOMEPAGE = "https://sakshi113.github.io/mmau_homepage/"
    LICENSE = "cc-by-nc-4.0"
    CITATION = CITATION

    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        return scan_mmau(root, options["metadata_file"])
