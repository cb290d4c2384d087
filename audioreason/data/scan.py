"""What a builder reads from a raw folder before any ``datasets`` work: the scan of one metadata file into
normalized items and a validation report, and the missing-audio and repeated-id policies applied to them.

It imports no ``datasets``: the builders (``builder``) turn the scan into a Dataset, and ``catalog.text_items``
returns the same items directly to a command that reads only their text (``audioreason score``, ``import``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from .audio_files import AudioFiles
from .validation import BenchmarkValidationError, ValidationReport

MISSING_AUDIO_POLICIES = ("raise", "skip", "keep")
REPEATED_ID_POLICIES = ("raise", "keep", "first")


@dataclass
class SourceScan:
    """What a builder read from a raw folder: normalized items (audio = absolute path or None)."""

    items: list[dict[str, Any]]
    report: ValidationReport
    files: list[Path]  # metadata files, for the fingerprint
    audio_files: list[Path]  # every audio path inside the root that an item names, present or not


def check_policies(on_missing_audio: str, on_repeated_id: str) -> None:
    for policy, value, allowed in (
        ("on_missing_audio", on_missing_audio, MISSING_AUDIO_POLICIES),
        ("on_repeated_id", on_repeated_id, REPEATED_ID_POLICIES),
    ):
        if value not in allowed:
            raise ValueError(f"{policy} must be one of {allowed}, got {value!r}")


def scan_metadata_file(
    benchmark: str,
    root: Path,
    metadata_file: str,
    read: Callable[[Path], list],
    normalize: Callable[..., Optional[dict]],
    title: str,
    layout: str,
) -> SourceScan:
    """The scan of a benchmark with one metadata file (MMAR, MMAU): read it, normalise each record into the
    schema (``normalize(raw, row, audio_files, report)`` reports problems and returns None for a record it
    drops; its audio goes through ``AudioFiles.check``), and list the audio files the items name."""
    metadata = root / metadata_file
    if not metadata.is_file():
        raise FileNotFoundError(f"{title} metadata not found: {metadata} ({layout})")
    report = ValidationReport(benchmark, str(metadata))
    records = read(metadata)
    report.rows = len(records)
    audio_files = AudioFiles(root, report)
    items = [it for row, raw in enumerate(records) if (it := normalize(raw, row, audio_files, report)) is not None]
    return SourceScan(items, report, [metadata], audio_files.candidates)


def apply_policies(
    items: list[dict[str, Any]], report: ValidationReport, on_missing_audio: str, on_repeated_id: str
) -> list[dict[str, Any]]:
    """The items kept by the policies; every repeated id and every skipped item goes to ``report``."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item["id"]] = counts.get(item["id"], 0) + 1
    # The report lists repeated ids once per extra record, whatever the policy.
    seen: set[str] = set()
    kept = []
    for item in items:
        if counts[item["id"]] > 1 and item["id"] in seen:
            report.add("repeated_id", item["id"], f"{counts[item['id']]} records")
            if on_repeated_id == "first":
                report.add("skipped", item["id"], "repeated id (on_repeated_id='first')")
                continue
        seen.add(item["id"])
        kept.append(item)
    out = []
    for item in kept:
        if item["audio"] is None and on_missing_audio == "skip":
            report.add("skipped", item["id"], "missing, unreadable or refused audio (on_missing_audio='skip')")
            continue
        out.append(item)
    return out


def raise_on_policies(report: ValidationReport, root: Path, on_missing_audio: str, on_repeated_id: str) -> None:
    """BenchmarkValidationError listing every item a "raise" policy refuses."""
    problems = []
    missing = report.of_kind("missing_audio") + report.of_kind("unreadable_audio")
    outside = report.of_kind("audio_outside_root")
    if on_missing_audio == "raise":
        if outside:
            problems.append(
                f"{len(outside)} audio paths lead outside the raw folder and were refused, never "
                "read (on_missing_audio='raise'; 'skip' builds the rest):\n"
                + "\n".join(f"  {i.item_id}: {i.detail}" for i in outside)
            )
        if missing:
            problems.append(
                f"{len(missing)} audio files are missing or unreadable (on_missing_audio='raise'; "
                "use 'skip' to build the rest or 'keep' for items without audio):\n"
                + "\n".join(f"  {i.item_id}: {i.detail}" for i in missing)
            )
    if on_repeated_id == "raise" and report.of_kind("repeated_id"):
        repeated = list(dict.fromkeys(report.ids("repeated_id")))
        problems.append(
            f"{len(repeated)} ids occur on more than one record (on_repeated_id='raise'; "
            f"use 'keep' or 'first'): {', '.join(repeated)}"
        )
    if problems:
        raise BenchmarkValidationError(
            f"{report.benchmark} raw folder {root} failed validation:\n" + "\n".join(problems), report
        )


__all__ = [
    "MISSING_AUDIO_POLICIES",
    "REPEATED_ID_POLICIES",
    "SourceScan",
    "apply_policies",
    "check_policies",
    "raise_on_policies",
    "scan_metadata_file",
]
