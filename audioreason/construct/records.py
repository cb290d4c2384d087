"""The structured caption of one recording and its evidence records (AudioSpan, arXiv:2608.26431, §4.2 step 5
and App. B.1): two views of one caption, both grounded in evidence records.

* the summary view (``Caption.summary_text``): global topic, genre, narrative arc and tone, the speaker registry,
  the segment index and the cross-segment dependencies; it drives direction and anchor selection;
* the dense view (``Caption.dense_text(segments)``): per segment, the acoustic environment, the timestamped
  transcript with speaker and paralinguistic notes, and the discrete audio events; each line starts with the id
  of the evidence record it is, so a generator can cite what it used;
* the evidence records (``Evidence``): one per groundable unit, with a stable readable id
  ``s{segment:02d}.speech.{n:03d}``, ``s{segment:02d}.sound.{n:03d}``, ``s{segment:02d}.env``,
  ``x.{n:03d}`` (cross-segment; its segment is the dependency's ``from_segment``) and ``g.{n:03d}`` (global;
  segment None, the whole recording). Numbers count from 1 (speech and sound records in time order, cross-segment
  records in the order of their segments, global ones in registry order), so the same caption always gives the
  same ids.

On disk a caption is ``captions/<recording_id>.json`` (``Caption.to_dict``); ``Caption.from_dict`` reads one
back and refuses a damaged one with a ``ValueError`` naming what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.text.timestamps import clock

MODALITIES = ("speech", "sound", "environment", "cross-segment", "global")
DEPENDENCY_KINDS = ("causal", "contrast", "reference")
CAPTION_KEYS = ("recording_id", "duration", "audio_file", "transcript", "summary", "dense", "evidence", "provenance")


def seed_of(*parts: Any) -> int:
    """A stable 63-bit seed from ``parts`` (their ``str`` joined by NUL, sha256): the same in every process and
    on every machine, unlike ``hash``."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def stamp(seconds: float) -> str:
    """A time as MM:SS(.s) / HH:MM:SS(.s), rounded to a tenth of a second."""
    return clock(round(float(seconds), 1))


def span_text(start: float, end: float) -> str:
    return f"{stamp(start)}-{stamp(end)}"


CUT_NOTE = "cut to fit a small model's context"  # ends the last line of a cut view (``Calls.ask`` counts them)


def cut_lines(lines: Sequence[str], max_chars: Optional[int] = None) -> str:
    """``lines`` joined, or with ``max_chars`` the first whole lines that fit it and a last line saying how many
    were left out (a local model's prompt; see ``construct.calls.LOCAL_CONTEXT_CHARS``)."""
    if max_chars is None or sum(len(x) + 1 for x in lines) <= max_chars + 1:
        return "\n".join(lines)
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    left = len(lines) - len(kept)
    return "\n".join(kept + [f"[{left} more line(s) not shown: {CUT_NOTE}]"])


@dataclass(frozen=True)
class Evidence:
    """One verifiable fact: its id, segment index (None for a global record), time range in seconds inside the
    recording, modality (one of ``MODALITIES``) and content."""

    id: str
    segment: Optional[int]
    start: float
    end: float
    modality: str
    content: str

    def __post_init__(self) -> None:
        if self.modality not in MODALITIES:
            raise ValueError(f"evidence {self.id}: modality {self.modality!r} is not one of {MODALITIES}")
        if not self.start <= self.end:
            raise ValueError(f"evidence {self.id}: start {self.start} is after end {self.end}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Evidence":
        segment = data["segment"]
        return cls(
            id=str(data["id"]),
            segment=None if segment is None else int(segment),
            start=float(data["start"]),
            end=float(data["end"]),
            modality=str(data["modality"]),
            content=str(data["content"]),
        )

    def line(self) -> str:
        """The record as one prompt line: ``[id] start-end (modality) content``."""
        return f"[{self.id}] {span_text(self.start, self.end)} ({self.modality}) {self.content}"


@dataclass
class Caption:
    """A recording's structured caption; the fields are the JSON file's (see the module docstring)."""

    recording_id: str
    duration: float
    audio_file: str
    transcript: list[dict[str, Any]]
    summary: dict[str, Any]
    dense: list[dict[str, Any]]
    evidence: list[Evidence]
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ids = [e.id for e in self.evidence]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"caption {self.recording_id}: evidence ids repeated: {', '.join(repeated)}")

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        return {
            "recording_id": self.recording_id,
            "duration": self.duration,
            "audio_file": self.audio_file,
            "transcript": self.transcript,
            "summary": self.summary,
            "dense": self.dense,
            "evidence": [e.to_dict() for e in self.evidence],
            "provenance": self.provenance,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Caption":
        if not isinstance(data, Mapping):
            raise ValueError(f"a caption is a JSON object, got {type(data).__name__}")
        missing = [k for k in CAPTION_KEYS if k not in data]
        if missing:
            raise ValueError(f"caption {data.get('recording_id', '?')}: missing {', '.join(missing)}")
        try:
            evidence = [Evidence.from_dict(e) for e in data["evidence"]]
        except (KeyError, TypeError) as err:
            raise ValueError(f"caption {data['recording_id']}: an evidence record lacks {err}") from None
        return cls(
            recording_id=str(data["recording_id"]),
            duration=float(data["duration"]),
            audio_file=str(data["audio_file"]),
            transcript=list(data["transcript"]),
            summary=dict(data["summary"]),
            dense=list(data["dense"]),
            evidence=evidence,
            provenance=dict(data["provenance"]),
        )

    # ------------------------------------------------------------------ lookups
    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}

    @property
    def segments(self) -> list[dict[str, Any]]:
        return list(self.summary.get("segments", []))

    def segment_of(self, index: int) -> dict[str, Any]:
        for seg in self.segments:
            if seg["index"] == index:
                return seg
        raise KeyError(f"caption {self.recording_id} has no segment {index}")

    # ------------------------------------------------------------------ views
    def summary_text(self, max_chars: Optional[int] = None) -> str:
        """The summary view as prompt text (App. B.1, Figure 5), cross-segment and global lines with their ids
        (cut to ``max_chars``, see ``cut_lines``)."""
        s = self.summary
        lines = [
            f"Recording {self.recording_id}, {stamp(self.duration)} long.",
            f"Topic: {s.get('topic', '')}",
            f"Genre: {s.get('genre', '')}",
            f"Narrative arc: {s.get('narrative_arc', '')}",
            f"Tone: {s.get('tone', '')}",
            "Speakers:",
        ]
        lines += [f"- {p['id']} ({p.get('role', '')}): {p.get('description', '')}" for p in s.get("speakers", [])]
        if not s.get("speakers"):
            lines.append("- (none registered)")
        lines.append("Segments:")
        for seg in self.segments:
            topics = ", ".join(seg.get("key_topics", []))
            lines.append(
                f"- Segment {seg['index']} [{span_text(seg['start'], seg['end'])}] {seg.get('title', '')}: "
                f"{seg.get('summary', '')} (key topics: {topics})"
            )
        derived = [e for e in self.evidence if e.modality in ("cross-segment", "global")]
        lines.append("Cross-segment dependencies and global context:")
        lines += [f"- [{e.id}] {e.content}" for e in derived] or ["- (none)"]
        return cut_lines(lines, max_chars)

    def _records_of(self, segment: int) -> list[Evidence]:
        return [e for e in self.evidence if e.segment == segment and e.modality in ("speech", "sound", "environment")]

    def dense_text(self, segments: Iterable[int], max_chars: Optional[int] = None) -> str:
        """The dense view of ``segments`` (App. B.1, Figure 6): per segment its time range and title, then every
        evidence record of it (environment, speech with speaker and paralinguistic notes, sound events) as one
        line prefixed by its id, in time order (cut to ``max_chars``, see ``cut_lines``)."""
        wanted = sorted(set(int(i) for i in segments))
        blocks = []
        for index in wanted:
            seg = self.segment_of(index)
            head = f"Segment {index} [{span_text(seg['start'], seg['end'])}] {seg.get('title', '')}"
            records = sorted(self._records_of(index), key=lambda e: (e.modality != "environment", e.start, e.id))
            blocks.append("\n".join([head] + [e.line() for e in records]))
        return cut_lines("\n\n".join(blocks).split("\n"), max_chars)

    def transcript_text(self, segments: Optional[Sequence[int]] = None, max_chars: Optional[int] = None) -> str:
        """The sentence-level transcript as ``[start-end] text`` lines (no ids, no speakers: what ASR gives),
        all of it or the sentences starting inside ``segments`` (cut to ``max_chars``, see ``cut_lines``)."""
        spans = None
        if segments is not None:
            spans = [(self.segment_of(int(i))["start"], self.segment_of(int(i))["end"]) for i in segments]
        lines = []
        for sentence in self.transcript:
            if spans is not None and not any(a <= sentence["start"] < b for a, b in spans):
                continue
            lines.append(f"[{span_text(sentence['start'], sentence['end'])}] {sentence['text']}")
        return cut_lines(lines, max_chars)


__all__ = ["Caption", "cut_lines", "DEPENDENCY_KINDS", "Evidence", "MODALITIES", "seed_of", "span_text", "stamp"]
