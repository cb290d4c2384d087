"""The benchmarks by short name, what marks a raw folder of each, and the text-only read of a raw folder.

``text_items("mmar", folder)`` returns the items the MMAR builder would build from a raw MMAR (or MMAU
test-mini) folder, field for field, with the same validation report and policies, audio left undecoded as
``{"bytes": None, "path": ...}``: what a command that reads only the items' text (``audioreason score`` with
text scorers, ``audioreason import``) needs, without ``datasets``, its Arrow cache or an audio decoder.
AudioSpan (configs, audio anchored at build time), Hub-ready folders and Hub ids go through ``load``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Union

from .records import MMAR_METADATA, MMAU_METADATA, scan_mmar, scan_mmau
from .scan import SourceScan, apply_policies, check_policies, raise_on_policies
from .validation import ValidationReport

# AudioSpan's raw metadata files and audio folders (audiospan.py describes the layout; the review app reads it too).
NATIVE_FILE = "metadata/native.jsonl"
ANCHOR_FILE = "metadata/anchor.jsonl"
EDITS_FILE = "metadata/edits.jsonl"
ORIGINAL_DIR = "audio/original"
ANCHORED_DIR = "audio/anchored"
AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac", ".webm")


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    raw_markers: tuple[str, ...]  # any of these files marks a raw folder
    scan: Optional[Callable[[Path, str], SourceScan]] = None  # the text-only read of a raw folder, if it has one


BENCHMARKS: dict[str, BenchmarkSpec] = {
    "mmar": BenchmarkSpec("mmar", (MMAR_METADATA,), scan_mmar),
    "mmau_test_mini": BenchmarkSpec("mmau_test_mini", (MMAU_METADATA,), scan_mmau),
    "audiospan": BenchmarkSpec("audiospan", (NATIVE_FILE, ANCHOR_FILE)),
}
NAME_ALIASES = {
    "mmau": "mmau_test_mini",
    "mmau-test-mini": "mmau_test_mini",
    "mmau_testmini": "mmau_test_mini",
    "mmau-mini": "mmau_test_mini",
    "audio_span": "audiospan",
}


def benchmark_spec(name: str) -> BenchmarkSpec:
    key = name.strip().lower()
    key = NAME_ALIASES.get(key, key)
    if key not in BENCHMARKS:
        raise ValueError(
            f"unknown benchmark {name!r}: choose one of mmar, mmau-test-mini, audiospan "
            "(mmau_test_mini, the datasets builder's name, is mmau-test-mini)"
        )
    return BENCHMARKS[key]


def is_raw_folder(name: str, folder: Union[str, os.PathLike]) -> bool:
    return any((Path(folder) / marker).is_file() for marker in benchmark_spec(name).raw_markers)


def reads_text_only(name: str, folder: Union[str, os.PathLike]) -> bool:
    """Whether ``text_items`` reads this folder: a raw folder of a benchmark with a text-only read."""
    return (
        benchmark_spec(name).scan is not None
        and Path(folder).expanduser().is_dir()
        and is_raw_folder(name, Path(folder).expanduser())
    )


def text_items(
    name: str,
    folder: Union[str, os.PathLike],
    *,
    on_missing_audio: str = "raise",
    on_repeated_id: str = "raise",
    metadata_file: Optional[str] = None,
) -> tuple[list[dict[str, Any]], ValidationReport]:
    """(the items, the validation report) of a raw MMAR or MMAU test-mini folder, as its builder builds them
    (the policies as ``load_benchmark``'s; a "raise" policy that fails is the same BenchmarkValidationError)."""
    spec = benchmark_spec(name)
    if spec.scan is None:
        raise ValueError(f"{spec.name} has no text-only read; load it with load_benchmark")
    check_policies(on_missing_audio, on_repeated_id)
    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"{spec.name} raw folder not found: {root}")
    scan = spec.scan(root, metadata_file or spec.raw_markers[0])
    report = scan.report
    items = apply_policies(scan.items, report, on_missing_audio, on_repeated_id)
    report.built = len(items)
    raise_on_policies(report, root, on_missing_audio, on_repeated_id)
    for item in items:  # the value a Dataset row gives with Audio(decode=False)
        if item["audio"] is not None:
            item["audio"] = {"bytes": None, "path": item["audio"]}
    return items, report


__all__ = [
    "BENCHMARKS",
    "BenchmarkSpec",
    "NAME_ALIASES",
    "benchmark_spec",
    "is_raw_folder",
    "reads_text_only",
    "text_items",
]
