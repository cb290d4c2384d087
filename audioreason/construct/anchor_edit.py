"""The edit of an anchor chain (AudioSpan, arXiv:2608.26431, §4.4 step 1 and App. B.3): which operation a
recording receives and with which settings, the second pass of anchor selection, and the anchored file.

Operation. Every recording gets one of addition, deletion and modification, and a variant where the operation has
one (deletion: silence | noise; modification: loudness | speed). The choice is a function of a key: with the
run's recording ids (``run_ids``) the key is the recording's rank when the run's ids are ordered by
``seed_of(id, "anchor-operation")``, so the run's operations differ in count by at most one and each operation's
two variants too (rank r: operation r mod 3, variant (r div 3) mod 2); without them it is the seed itself, which
balances them in expectation. Either way the same recording and run give the same choice on every rerun.

Settings are drawn in App. B.3's ranges from ``seed_of(recording_id, "anchor-parameters")``: an addition's
signal-to-noise ratio uniformly in 6-10 dB (one decimal); a loudness change of 8-12 dB (one decimal), raised or
lowered; a playback speed factor of 1.5-3 (two decimals), faster or slower (the slower factor is its inverse).

Second pass (``place_in_segments``): ``audioreason.audio.placement.place_windows`` inside the shortlisted caption
segments (``Segment(id=str(index))``), over speech, one window per segment. The number of positions is drawn from
``seed_of(recording_id, "anchor-count")`` between 1 and the shortlist's length; when that many windows do not fit,
one fewer is tried, down to one, and each failure is kept as a note.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence

from audioreason.audio.anchor_manifest import ATTRIBUTES, DELETION_MODES, OPERATIONS, manifest_json
from audioreason.audio.placement import PlacementError, PlacementRules, Segment, SpeechFraction, Window, place_windows

from .records import Caption, seed_of

ANCHORED_DIR = "audio/anchored"
VARIANTS = {"addition": (None,), "deletion": DELETION_MODES, "modification": ATTRIBUTES}


def operation_key(recording_id: str, run_ids: Optional[Sequence[str]] = None) -> int:
    """The key the operation is read from: the recording's balanced rank within ``run_ids``, or its seed."""
    if run_ids is None:
        return seed_of(recording_id, "anchor-operation")
    ids = sorted(set(run_ids) | {recording_id}, key=lambda r: (seed_of(r, "anchor-operation"), r))
    return ids.index(recording_id)


def choose_operation(recording_id: str, run_ids: Optional[Sequence[str]] = None) -> tuple[str, Optional[str]]:
    """(operation, variant): variant is the deletion mode, the modified attribute, or None for addition."""
    key = operation_key(recording_id, run_ids)
    operation = OPERATIONS[key % 3]
    variants = VARIANTS[operation]
    return operation, variants[(key // 3) % len(variants)]


def draw_parameters(recording_id: str, operation: str, variant: Optional[str]) -> dict[str, Any]:
    """The manifest fields of the operation (``new_manifest`` keywords), drawn in App. B.3's ranges."""
    import numpy as np

    rng = np.random.default_rng(seed_of(recording_id, "anchor-parameters"))
    if operation == "addition":
        return {"snr_db": round(float(rng.uniform(6.0, 10.0)), 1)}
    if operation == "deletion":
        return {"deletion_mode": variant}
    sign = 1.0 if rng.integers(2) else -1.0
    if variant == "loudness":
        return {"attribute": "loudness", "gain_db": sign * round(float(rng.uniform(8.0, 12.0)), 1)}
    factor = round(float(rng.uniform(1.5, 3.0)), 2)
    return {"attribute": "speed", "speed_factor": factor if sign > 0 else 1.0 / factor}


def caption_segments(caption: Caption, indexes: Optional[Sequence[int]] = None) -> list[Segment]:
    """The caption's segments (all, or those of ``indexes``) as placement segments, id = str(index)."""
    chosen = None if indexes is None else {int(i) for i in indexes}
    return [
        Segment(str(s["index"]), float(s["start"]), float(s["end"]))
        for s in caption.segments
        if chosen is None or s["index"] in chosen
    ]


def length_problem(duration: float, length: Optional[float], rules: PlacementRules) -> Optional[str]:
    """Why no window can fit this recording at all (the length rules alone), or None."""
    cap = min(rules.max_seconds, rules.max_fraction * duration)
    if cap < rules.min_seconds:
        return (
            f"too short: windows of at least {rules.min_seconds:g} s may be at most {cap:.3f} s in a "
            f"{duration:.1f} s recording (max_fraction {rules.max_fraction:g})"
        )
    if length is not None and not rules.min_seconds <= length <= cap:
        return f"the {length:.3f} s event clip breaks the length rules ({rules.min_seconds:g} to {cap:.3f} s)"
    return None


def usable_segments(
    caption: Caption, duration: float, length: Optional[float], rules: PlacementRules = PlacementRules()
) -> list[int]:
    """Indexes of the segments whose part clear of the opening and close can hold a window (placement's rule)."""
    edge = max(rules.edge_seconds, rules.edge_fraction * duration)
    shortest = length if length is not None else rules.min_seconds
    out = []
    for seg in caption_segments(caption):
        lo, hi = max(seg.start, edge), min(seg.end, duration - edge)
        if hi - lo >= shortest:
            out.append(int(seg.id))
    return out


def position_count(recording_id: str, shortlisted: int) -> int:
    """How many positions to place: 1..``shortlisted``, drawn from the recording id."""
    if shortlisted < 1:
        raise ValueError("the shortlist is empty")
    return 1 + seed_of(recording_id, "anchor-count") % min(shortlisted, 3)


def place_in_segments(
    caption: Caption,
    shortlist: Sequence[int],
    speech: SpeechFraction,
    duration: float,
    *,
    count: int,
    length: Optional[float] = None,
    rules: PlacementRules = PlacementRules(),
) -> tuple[list[Window], list[str]]:
    """(windows in time order, notes on the counts that did not fit). PlacementError when not even one fits."""
    segments = caption_segments(caption, shortlist)
    seed = seed_of(caption.recording_id, "anchor-place")
    notes: list[str] = []
    for n in range(min(count, len(segments)), 0, -1):
        try:
            return place_windows(duration, n, speech, seed=seed, segments=segments, length=length, rules=rules), notes
        except PlacementError as err:
            notes.append(f"{n} position(s) in segments {sorted(int(s.id) for s in segments)}: {err}")
    raise PlacementError("; ".join(notes) or "no shortlisted segment to place in")


def _relative(path: os.PathLike | str, folder: Path) -> str:
    """``path`` relative to ``folder`` when inside it (what a benchmark's manifest records), else absolute."""
    path = Path(os.path.realpath(path))
    root = Path(os.path.realpath(folder))
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def write_anchored(
    caption: Caption,
    audio_path: os.PathLike | str,
    bench_dir: os.PathLike | str,
    operation: str,
    fields: dict[str, Any],
    windows: Sequence[Window],
    *,
    clip: Optional[os.PathLike | str] = None,
) -> dict[str, Any]:
    """Write ``BENCH/audio/anchored/<recording_id>.wav`` (``anchor_recording``) and return the completed manifest,
    its source, output and clip paths relative to BENCH (as the AudioSpan loader reads edits.jsonl), in its written
    form (``manifest_json``)."""
    from audioreason.audio.anchor_files import anchor_recording

    bench = Path(bench_dir)
    rid = caption.recording_id
    output = bench / ANCHORED_DIR / f"{rid}.wav"
    done = anchor_recording(
        audio_path,
        output,
        operation,
        [[w.start, w.end] for w in windows],
        clip=clip,
        recording_id=rid,
        seed=seed_of(rid, "anchor-noise") % (2**31),
        segments=[w.segment for w in windows],
        **fields,
    )
    done["source"]["path"] = _relative(audio_path, bench)
    done["output"]["path"] = f"{ANCHORED_DIR}/{rid}.wav"
    if done.get("event_clip"):
        done["event_clip"]["path"] = _relative(clip, bench)
    return json.loads(manifest_json(done))  # as written: keys in schema order, no None values


__all__ = [
    "ANCHORED_DIR",
    "caption_segments",
    "choose_operation",
    "draw_parameters",
    "length_problem",
    "operation_key",
    "place_in_segments",
    "position_count",
    "usable_segments",
    "write_anchored",
]
