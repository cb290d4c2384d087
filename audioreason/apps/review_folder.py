"""A construction folder as the review app reads it: the items in review order, the stretches of audio each one
cites, those stretches cut from the recordings, and the decisions of ``review.jsonl``.

The folder is AudioSpan's raw layout as ``audioreason construct`` writes it (``audioreason.data.audiospan``
describes it): ``metadata/native.jsonl`` and ``metadata/anchor.jsonl`` (our field names; a letter answer and
letter-keyed options are read as the builder reads them), ``metadata/edits.jsonl``, ``audio/original/<rec>.<ext>``
and ``audio/anchored/<rec>.<ext>``, ``captions/<rec>.json`` (its ``evidence`` records: id, start, end, modality,
content) and ``review.jsonl`` (``audioreason.data.review``).

Review order (AudioSpan App. B.4: the open-ended version is checked first, then the multiple-choice one): native
items by pair, the OEQ before the MCQ, in the order the file first names each pair; then each anchor chain by link.

What an item cites (``stretches``): its rubric criteria's time ranges, the times written in its reference answer,
and its evidence records' start-end from the caption (a global record, the whole recording, is no stretch); a
native MCQ also cites what its OEQ pair cites, and an anchor item the times of its edit in the original (the
state before the edit; only when the anchored copy keeps the original's length). Each is widened by ``MARGIN_S``
on both sides, held inside the recording, overlapping ones merged, and a stretch is cut at ``MAX_STRETCH_S``. An
anchor item also has its edit's positions in the anchored copy (``anchor_stretches``). A stretch is cut from the
file by ``audioreason.audio.stream.iter_blocks`` (only that stretch is decoded) into a WAV under ``clips_dir``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from audioreason.audio.errors import AudioError
from audioreason.audio.io import write_audio
from audioreason.audio.stream import audio_info, iter_blocks
from audioreason.base.jsonl import DataFileError, read_json_file, read_json_objects
from audioreason.data.catalog import ANCHOR_FILE, ANCHORED_DIR, AUDIO_EXTENSIONS, EDITS_FILE, NATIVE_FILE, ORIGINAL_DIR
from audioreason.data.review import REVIEW_FILE, Decision, fixed_item, latest_decisions, read_review
from audioreason.text.timestamps import clock, find_timestamps, parse_record_span

from .scratch import Scratch

SCRATCH = Scratch("review")  # the clips cut for the players (and the example folder), removed at exit

MARGIN_S = 3.0  # seconds of context on each side of a cited stretch
MAX_STRETCH_S = 300.0  # a stretch is cut at 5 min (about one segment, App. B.1)
_LETTER = re.compile(r"^\s*\(?\s*([A-Za-z])\s*[\).:]?\s*$")


@dataclass(frozen=True)
class Stretch:
    """[start, end] seconds of a recording and what points there ("criterion 2", an evidence id...)."""

    start: float
    end: float
    label: str

    def describe(self) -> str:
        return f"{clock(self.start)}-{clock(self.end)}: {self.label}"


def _choices(raw: Any) -> list[str]:
    if isinstance(raw, Mapping):
        return [str(raw[k]) for k in sorted(raw, key=str)]
    return [str(c) for c in raw] if isinstance(raw, list) else []


def _span(value: Any) -> Optional[list[float]]:
    try:
        return parse_record_span(value)
    except ValueError:
        return None


def _item(raw: Mapping[str, Any], source: str, row: int) -> dict[str, Any]:
    """A record as the app shows it: our field names, options as a list, the answer as option text."""
    choices = _choices(raw.get("choices"))
    answer = None if raw.get("answer") is None else str(raw["answer"])
    letter = _LETTER.match(answer or "")
    if answer not in choices and letter and 0 <= ord(letter.group(1).upper()) - ord("A") < len(choices):
        answer = choices[ord(letter.group(1).upper()) - ord("A")]
    rubric = [
        {
            "text": str(c.get("text", "")) if isinstance(c, Mapping) else str(c),
            "importance": c.get("importance") if isinstance(c, Mapping) else None,
            "time_range": _span(c.get("time_range")) if isinstance(c, Mapping) else None,
        }
        for c in raw.get("rubric") or []
    ]
    fmt = str(raw.get("format") or ("MCQ" if choices else "OEQ")).upper()
    return {
        "id": str(raw.get("id") or f"{source}:row-{row}"),
        "source": source,
        "recording_id": str(raw.get("recording_id") or ""),
        "format": "MCQ" if fmt in ("MCQ", "MULTIPLE_CHOICE") or source == "anchor" else "OEQ",
        "cognitive_level": raw.get("cognitive_level"),
        "dimension": raw.get("dimension"),
        "question": str(raw.get("question") or ""),
        "choices": choices,
        "answer": answer,
        "reference_answer": raw.get("reference_answer"),
        "rubric": rubric,
        "evidence": [str(e) for e in raw.get("evidence") or []],
        "pair_id": raw.get("pair_id"),
        "chain_id": (raw.get("chain_id") or raw.get("recording_id")) if source == "anchor" else None,
        "link_position": raw.get("link_position"),
        "operation": raw.get("operation"),
        "edit_manifest": raw.get("edit_manifest"),
        "audio_file": raw.get("audio_file"),
    }


def _review_order(native: list[dict[str, Any]], anchor: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pairs: dict[str, list[dict[str, Any]]] = {}
    for item in native:
        pairs.setdefault(str(item["pair_id"] or item["id"]), []).append(item)
    chains: dict[str, list[dict[str, Any]]] = {}
    for item in anchor:
        chains.setdefault(str(item["chain_id"]), []).append(item)
    ordered = [it for group in pairs.values() for it in sorted(group, key=lambda it: it["format"] != "OEQ")]
    for links in chains.values():
        ordered += sorted(links, key=lambda it: it["link_position"] if isinstance(it["link_position"], int) else 9)
    return ordered


def _merged(spans: list[tuple[float, float, str]], duration: Optional[float]) -> list[Stretch]:
    """Spans widened by MARGIN_S, held inside [0, duration], overlapping ones merged, each cut at MAX_STRETCH_S."""
    widened = []
    for start, end, label in spans:
        lo, hi = max(0.0, start - MARGIN_S), end + MARGIN_S
        if duration is not None:
            lo, hi = min(lo, duration), min(hi, duration)
        widened.append((lo, hi, label))
    out: list[list[Any]] = []
    for lo, hi, label in sorted(widened):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
            if label not in out[-1][2]:
                out[-1][2].append(label)
        else:
            out.append([lo, hi, [label]])
    return [Stretch(lo, min(hi, lo + MAX_STRETCH_S), ", ".join(labels)) for lo, hi, labels in out if hi > lo]


class ReviewFolder:
    """The items of a construction folder in review order, their audio stretches and the review's decisions."""

    def __init__(self, root: Any, clips_dir: Any = None):
        self.root = Path(root).expanduser().resolve()
        sources = [(s, self.root / f) for s, f in (("native", NATIVE_FILE), ("anchor", ANCHOR_FILE))]
        if not any(path.is_file() for _, path in sources):
            raise FileNotFoundError(
                f"{self.root} is not a construction folder: it has neither {NATIVE_FILE} nor {ANCHOR_FILE}"
            )
        read = {s: read_json_objects(p)[0] if p.is_file() else [] for s, p in sources}
        items = {s: [_item(raw, s, n) for n, (_, raw) in enumerate(rows)] for s, rows in read.items()}
        self.items = _review_order(items["native"], items["anchor"])
        self.index = {item["id"]: n for n, item in enumerate(self.items)}
        edits_path = self.root / EDITS_FILE
        self.edits = {
            str(raw.get("recording_id")): raw
            for _, raw in (read_json_objects(edits_path)[0] if edits_path.is_file() else [])
        }
        self.review_path = self.root / REVIEW_FILE
        self.clips_dir = Path(clips_dir) if clips_dir else SCRATCH.folder("clips")
        self._captions: dict[str, tuple[dict[str, Any], str]] = {}

    # -- decisions ---------------------------------------------------------------------------------
    def decisions(self) -> dict[str, Decision]:
        """The holding decision per item id, read afresh (another reviewer may have appended)."""
        return latest_decisions(read_review(self.review_path))

    def progress(self) -> tuple[int, int]:
        """(items with a decision, items)."""
        decided = self.decisions()
        return sum(1 for item in self.items if item["id"] in decided), len(self.items)

    def shown(self, n: int) -> tuple[dict[str, Any], Optional[Decision]]:
        """Item ``n`` (0-based) as it stands: with its holding fix applied, and that decision (None: undecided)."""
        item = self.items[n]
        decision = self.decisions().get(item["id"])
        if decision is not None and decision.decision == "fix":
            try:
                return fixed_item(item, decision), decision
            except DataFileError:
                return item, decision  # a fix that no longer fits: shown as generated (the builder names the line)
        return item, decision

    # -- captions and audio ------------------------------------------------------------------------
    def caption(self, recording_id: str) -> tuple[dict[str, Any], str]:
        """(the evidence records by id, a note: "" or why there are none) of a recording's caption."""
        if recording_id not in self._captions:
            path = self.root / "captions" / f"{recording_id}.json"
            records, note = {}, ""
            try:
                caption = read_json_file(path) if path.is_file() else None
                if caption is None:
                    note = f"no caption file captions/{recording_id}.json"
                else:
                    records = {str(e["id"]): e for e in caption.get("evidence") or [] if isinstance(e, Mapping)}
            except (DataFileError, KeyError, AttributeError) as err:
                note = f"captions/{recording_id}.json cannot be read: {err}"
            self._captions[recording_id] = (records, note)
        return self._captions[recording_id]

    def audio_path(self, item: Mapping[str, Any], anchored: bool = False) -> Optional[Path]:
        """The original recording (or its anchored copy) of an item: its own ``audio_file`` for its own source,
        else the first ``<rec>.<ext>`` there; None when missing or outside the folder."""
        folder = ANCHORED_DIR if anchored else ORIGINAL_DIR
        candidates = [self.root / folder / f"{item['recording_id']}{ext}" for ext in AUDIO_EXTENSIONS]
        if item.get("audio_file") and anchored == (item["source"] == "anchor"):
            candidates.insert(0, self.root / str(item["audio_file"]))
        for path in candidates:
            resolved = path.resolve()
            if resolved.is_file() and resolved.is_relative_to(self.root):
                return resolved
        return None

    def duration(self, path: Optional[Path]) -> Optional[float]:
        """The file's duration from its header; None for no file or one no reader opens."""
        try:
            return None if path is None else audio_info(path).duration
        except AudioError:
            return None

    def stretches(self, item: Mapping[str, Any]) -> list[Stretch]:
        """The stretches of the original recording that ``item`` cites (its OEQ pair's too, for a native MCQ)."""
        cited = [item]
        if item["source"] == "native" and item["format"] == "MCQ" and item.get("pair_id"):
            cited += [it for it in self.items if it["pair_id"] == item["pair_id"] and it["id"] != item["id"]]
        records, _ = self.caption(item["recording_id"])
        spans: list[tuple[float, float, str]] = []
        for source in cited:
            tag = "" if source is item else " (OEQ)"
            for k, criterion in enumerate(source["rubric"], 1):
                if criterion["time_range"]:
                    spans.append((*criterion["time_range"], f"criterion {k}{tag}"))
            for t in find_timestamps(str(source.get("reference_answer") or "")):
                start, end = t if isinstance(t, tuple) else (t, t)
                spans.append((start, end, f"reference answer{tag}"))
            for evidence_id in source["evidence"]:
                record = records.get(evidence_id)
                if record is not None and record.get("modality") != "global":
                    span = _span([record.get("start"), record.get("end")])
                    if span:
                        spans.append((*span, f"{evidence_id}{tag}"))
        duration = self.duration(self.audio_path(item))
        if item["source"] == "anchor" and duration is not None:
            edited = self.duration(self.audio_path(item, anchored=True))
            if edited is not None and abs(edited - duration) < 0.01:  # same timeline: the positions before the edit
                for k, (start, end, _) in enumerate(self._positions(item), 1):
                    spans.append((start, end, f"anchor position {k}, before the edit"))
        return _merged(spans, duration)

    def manifest(self, item: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
        manifest = item.get("edit_manifest") or self.edits.get(item["recording_id"])
        return manifest if isinstance(manifest, Mapping) else None

    def _positions(self, item: Mapping[str, Any]) -> list[tuple[float, float, str]]:
        manifest = self.manifest(item) if item["source"] == "anchor" else None
        spans = [_span(position) for position in (manifest or {}).get("positions") or []]
        return [(s[0], s[1], f"anchor position {k} ({clock(s[0])}-{clock(s[1])})") for k, s in enumerate(spans, 1) if s]

    def anchor_stretches(self, item: Mapping[str, Any]) -> list[Stretch]:
        """An anchor item's edit positions in the anchored copy, each widened by MARGIN_S (each on its own)."""
        duration = self.duration(self.audio_path(item, anchored=True))
        return [stretch for span in self._positions(item) for stretch in _merged([span], duration)]

    def clip(self, item: Mapping[str, Any], stretch: Stretch, anchored: bool = False) -> Optional[str]:
        """A WAV of ``stretch`` cut from the item's recording (or anchored copy), cached; None when there is no
        readable file."""
        path = self.audio_path(item, anchored)
        if path is None:
            return None
        stat = path.stat()  # a changed file is cut afresh
        key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{stretch.start}|{stretch.end}"
        key = hashlib.sha256(key.encode()).hexdigest()[:16]
        out = self.clips_dir / f"{'anchored' if anchored else 'original'}-{key}.wav"
        if not out.is_file():
            try:
                rate = audio_info(path).sampling_rate
                blocks = list(iter_blocks(path, 30.0, start=stretch.start, stop=stretch.end))
            except AudioError:  # damaged: the page says the recording cannot be played
                return None
            write_audio(out, np.concatenate(blocks) if blocks else np.zeros(1, np.float32), rate)
        return str(out)


__all__ = ["MARGIN_S", "MAX_STRETCH_S", "ReviewFolder", "Stretch"]
