"""The files a construction writes in BENCH, each written whole or not at all (a temporary file, then
``os.replace``), so a construction killed at any point never leaves a half-written file.

    BENCH/audio/original/<recording>.<ext>   the source recordings (hard-linked where the file system allows)
    BENCH/audio/anchored/<recording>.wav     anchored copies (anchor pipeline)
    BENCH/captions/<recording>.json          Phase 1's caption: both views and the evidence records
    BENCH/metadata/native.jsonl, anchor.jsonl, edits.jsonl, recordings.jsonl
                                             the benchmark in the AudioSpan loader's raw layout; written LAST,
                                             and removed when a construction starts, so a construction that did
                                             not finish leaves no folder that loads as a benchmark
    BENCH/candidates.jsonl                   every candidate's final state (gates, outcome, provenance)
    BENCH/rejected.jsonl                     every dropped candidate with the gate and the reason
    BENCH/memory_bank.jsonl                  the critic's lessons
    BENCH/review.jsonl                       human decisions (the review app appends; never written here)
    BENCH/construction.json                  settings, models per role, per-stage counts, the gate table, usage
    BENCH/.cache/calls.sqlite                every model call's reply, by request
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Mapping

METADATA_FILES = ("native.jsonl", "anchor.jsonl", "edits.jsonl", "recordings.jsonl")
CONSTRUCTION_FILE = "construction.json"
CACHE_FILE = ".cache/calls.sqlite"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def clear_metadata(bench: Path) -> None:
    """Remove the benchmark's metadata before a construction runs: until it finishes, nothing loads."""
    for name in METADATA_FILES:
        (bench / "metadata" / name).unlink(missing_ok=True)


def place_original(source: Path, bench: Path, recording_id: str) -> Path:
    """The recording under BENCH/audio/original/<id><ext>: a hard link, else a copy (kept if already there
    with the same size)."""
    target = bench / "audio" / "original" / f"{recording_id}{source.suffix.lower()}"
    if target.exists() and target.stat().st_size == source.stat().st_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
    return target


__all__ = [
    "CACHE_FILE",
    "CONSTRUCTION_FILE",
    "METADATA_FILES",
    "clear_metadata",
    "place_original",
    "write_atomic",
    "write_json",
    "write_jsonl",
]
