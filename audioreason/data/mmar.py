"""MMAR (Ma et al., NeurIPS 2025 Datasets and Benchmarks): 1,000 audio reasoning MCQs with gold CoT
and the five-criterion MMAR-Rubrics.

Raw layout (as the MMAR release ships it)::

    <root>/MMAR-meta.jsonl      one JSON object per line (fields below)
    <root>/audio/<name>.wav     the file each record's ``audio_path`` names ("./audio/<name>.wav"),
                                relative to <root>; for 46 items <name> is not the id

Record fields: id, audio_path, question, choices (2 to 6 strings), answer (one of the choices),
modality, category, sub-category, language (null, "en", "zh|en", ...), source, url, timestamp,
thinking (gold CoT), cue (list of strings), rubric (five {name, scoring_point, note, choices}).

Every field is kept under its MMAR name (``sub-category`` keeps its hyphen, so code written against
MMAR-meta.jsonl reads dataset items unchanged). The records are normalised by ``records`` (no ``datasets``).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Union

import datasets
from datasets import List, Value

from audioreason.base.jsonl import parse_json_lines

from ..audio.io import write_audio
from ..audio.synth import synthesize_clip
from .audio_files import resolve_inside
from .builder import BenchmarkBuilder
from .features import benchmark_features
from .records import MMAR_METADATA, scan_mmar
from .scan import SourceScan

METADATA_FILE = MMAR_METADATA

RUBRIC_CRITERION = {
    "name": Value("string"),
    "scoring_point": Value("string"),
    "note": Value("string"),
    "choices": List(Value("int32")),
}

FEATURES = benchmark_features(
    {
        "modality": Value("string"),
        "category": Value("string"),
        "sub-category": Value("string"),
        "language": Value("string"),
        "source": Value("string"),
        "url": Value("string"),
        "timestamp": Value("string"),
        "thinking": Value("string"),
        "cue": List(Value("string")),
        "rubric": List(RUBRIC_CRITERION),
    }
)

CITATION = """@inproceedings{ma2025mmar,
  title     = {{MMAR}: A Challenging Benchmark for Deep Reasoning in Speech, Audio, Music, and Their Mix},
  author    = {Ma, Ziyang and Ma, Yinghao and Zhu, Yanqiao and Yang, Chen and Chao, Yi-Wen and Xu, Ruiyang
               and Chen, Wenxi and Chen, Yuanzhe and Chen, Zhuo and Cong, Jian and others},
  booktitle = {The Thirty-ninth Annual Conference on Neural Information Processing Systems
               Datasets and Benchmarks Track},
  year      = {2025}
}"""


class MMARBuilder(BenchmarkBuilder):
    """Builds MMAR from its raw folder (``data_dir``) into the common schema, split "test"."""

    BENCHMARK = "mmar"
    FEATURES = FEATURES
    DEFAULT_METADATA_FILE = METADATA_FILE
    DESCRIPTION = (
        "MMAR: 1,000 multiple-choice audio reasoning questions over speech, sound, music and "
        "their mix, with gold chain-of-thought and MMAR-Rubrics criteria."
    )
    HOMEPAGE = "https://github.com/ddlBoJack/MMAR"
    LICENSE = "cc-by-nc-4.0"
    CITATION = CITATION

    def scan_source(self, root: Path, options: Mapping[str, Any]) -> SourceScan:
        return scan_mmar(root, options["metadata_file"])


def demo_metadata() -> list[dict[str, Any]]:
    """The demo's 12 MMAR records (real metadata, CC BY-NC 4.0), bundled with the package."""
    text = (resources.files("audioreason") / "resources" / "demo" / "mmar_sample.jsonl").read_text("utf-8")
    return parse_json_lines(text, "mmar_sample.jsonl")


def write_raw_folder(
    records: list[Mapping[str, Any]], root: Union[str, Path], *, seconds: float = 3.0, sampling_rate: int = 16000
) -> Path:
    """Write an MMAR raw folder for ``records``: MMAR-meta.jsonl and one synthesized clip per record.

    The clip is ``synthesize_clip(modality, seconds, sampling_rate, seed=id)`` (MMAR audio is not
    redistributable), written at the record's audio_path; existing files are kept. An audio_path that
    leads outside ``root`` is an AudioPathError, raised before anything is written.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    paths = [resolve_inside(root, record["audio_path"]) for record in records]  # all checked before writing
    with open(root / METADATA_FILE, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    for record, path in zip(records, paths):
        if not path.exists():
            write_audio(
                path, synthesize_clip(record["modality"], seconds, sampling_rate, seed=record["id"]), sampling_rate
            )
    return root


def build_demo_dataset(
    workdir: Union[str, Path], *, seconds: float = 3.0, sampling_rate: int = 16000, audio_backend: str = "auto"
) -> datasets.Dataset:
    """The demo sample through the MMAR builder: 12 real MMAR items with synthesized audio.

    Writes ``<workdir>/MMAR-meta.jsonl`` and ``<workdir>/audio/<id>.wav`` (the same clips the demo
    synthesized before, so its numbers do not move), builds with the datasets cache under
    ``<workdir>/datasets_cache``, and returns the "test" split (12 items, demo order). Its
    validation report is empty (checked by the tests).
    """
    workdir = Path(workdir)
    write_raw_folder(demo_metadata(), workdir, seconds=seconds, sampling_rate=sampling_rate)
    builder = MMARBuilder(data_dir=str(workdir), cache_dir=str(workdir / "datasets_cache"), audio_backend=audio_backend)
    return builder.build()
