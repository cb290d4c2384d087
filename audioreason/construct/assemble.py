"""The finished construction: kept candidates' items as the AudioSpan loader's raw folder, and the summary
that construction.json records (per-stage counts, failures, the gate tables, item counts).

Duration tier (AudioSpan, arXiv:2608.26431, §3.3): S 10-30 min, M 30-60 min, L 60 min and over; a recording
under 10 minutes has no tier (null), since the paper's tiers start there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from . import outputs

TIER_BOUNDS = ((600.0, "S"), (1800.0, "M"), (3600.0, "L"))  # lower bound of each tier, in seconds


def duration_tier(seconds: float) -> Any:
    tier = None
    for low, name in TIER_BOUNDS:
        if seconds >= low:
            tier = name
    return tier


def _recording_row(entry: Mapping[str, Any], bench: Path, language: Any = None) -> dict[str, Any]:
    from audioreason.base.jsonl import read_json_file

    row = {"recording_id": entry["id"], "duration_seconds": entry["duration"]}
    row["duration_tier"] = duration_tier(entry["duration"])
    if language:
        row["language"] = language
    caption_file = bench / "captions" / f"{entry['id']}.json"
    if caption_file.exists():
        summary = read_json_file(caption_file).get("summary") or {}
        for key in ("genre", "topic", "language"):
            if summary.get(key):
                row[key] = summary[key]
    return row


def benchmark_files(
    bench: Path, recordings: Sequence[Mapping[str, Any]], candidates: Sequence[Mapping], *, language: Any = None
) -> None:
    """metadata/native.jsonl, anchor.jsonl, edits.jsonl and recordings.jsonl from the kept candidates."""
    kept = [c for c in candidates if c.get("outcome") == "kept"]
    native = [item for c in kept if c["pipeline"] == "native" for item in c.get("items", [])]
    # the loader finds an anchor item's answer among its choices itself: answer_index is not written
    anchor = [
        {k: v for k, v in item.items() if k != "answer_index"}
        for c in kept
        if c["pipeline"] == "anchor"
        for item in c.get("items", [])
    ]
    # One manifest per anchored recording (the chain's three candidates carry the same one), and only for a
    # chain whose items are written: a link that passed its gates in a broken chain has no item, and the
    # anchored file it would name has been removed.
    by_recording = {
        c["recording_id"]: c["edit_manifest"]
        for c in kept
        if c["pipeline"] == "anchor" and c.get("items") and c.get("edit_manifest")
    }
    edits = list(by_recording.values())
    with_items = {item["recording_id"] for item in native + anchor}
    rows = [
        _recording_row(r, bench, language) for r in recordings if r.get("status") == "done" and r["id"] in with_items
    ]
    metadata = bench / "metadata"
    # recordings and edits first, the two files that mark a raw folder (native, anchor) last
    outputs.write_jsonl(metadata / "recordings.jsonl", rows)
    outputs.write_jsonl(metadata / "edits.jsonl", edits)
    outputs.write_jsonl(metadata / "anchor.jsonl", anchor)
    outputs.write_jsonl(metadata / "native.jsonl", native)


def _counts(candidates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pipeline in ("native", "anchor"):
        rows = [c for c in candidates if c["pipeline"] == pipeline]
        rejected: dict[str, int] = {}
        for c in rows:
            if c["outcome"] != "kept":
                rejected[c.get("rejected_at") or "unknown"] = rejected.get(c.get("rejected_at") or "unknown", 0) + 1
        out[pipeline] = {
            "candidates": len(rows),
            "kept": sum(c["outcome"] == "kept" for c in rows),
            "rejected_at": rejected,
            "items": sum(len(c.get("items", [])) for c in rows if c["outcome"] == "kept"),
        }
    return out


def summary(recordings: Sequence[Mapping], candidates: Sequence[Mapping], bank: Any, calls: Any) -> dict[str, Any]:
    from .gates import gate_table

    return {
        "recordings": list(recordings),
        "recording_counts": {
            status: sum(r.get("status") == status for r in recordings) for status in ("done", "skipped", "failed")
        },
        "counts": _counts(candidates),
        "gate_table": {
            pipeline: gate_table(candidates, pipeline)
            for pipeline in ("native", "anchor")
            if any(c["pipeline"] == pipeline for c in candidates)
        },
        "stages": {role: {stage: dict(n) for stage, n in stages.items()} for role, stages in calls.counts.items()},
        "call_failures": list(calls.failures),
        "memory_bank": bank.counts(),
    }


__all__ = ["benchmark_files", "duration_tier", "summary"]
