"""One construction, start to finish (AudioSpan, arXiv:2608.26431, §4): recordings in, a benchmark folder out.

For each recording, in name order: its header is read (an unreadable file, or one shorter than
``MIN_RECORDING_S``, is listed with the reason and skipped, never fatal), it is linked under audio/original,
Phase 1 builds its caption (``caption.build_caption``; a caption already written with the same roles is
reused), then Phase 2 runs the native and anchor pipelines over it. Recordings and their candidates run in
order (one running ``order`` across the run), because the critic's memory bank steers later generation: a
candidate's prompt holds only lessons from candidates before it, so a rerun sends the same requests and
every one is served from the cache (``Calls``). At the end the metadata files, candidates, rejections and
``construction.json`` are written (``outputs``).

Resuming is running again: the cache holds every reply paid for, the captions and anchored audio are files,
and the metadata files only appear once a construction has finished.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from audioreason.base.errors import UsageError
from audioreason.version import __version__

from . import outputs
from .roles import ROLES, RoleSpec

AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac", ".webm")
MIN_RECORDING_S = 60.0  # a recording shorter than this has no room for segments and anchors
PATHS = ("native", "anchor")
SCHEMA = "audioreason.construction"


@dataclass
class Settings:
    """What a construction was asked to do (recorded in construction.json)."""

    per_level: int = 2
    rollouts: int = 3
    paths: Sequence[str] = PATHS
    concurrency: Optional[int] = None
    limit_recordings: Optional[int] = None
    max_cost: Optional[float] = None
    event_clips: Optional[str] = None
    language: Optional[str] = None  # the recordings' language (en | zh) for recordings.jsonl; None: unstated
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        if self.per_level < 1:
            raise UsageError(f"--per-level must be at least 1, got {self.per_level}")
        if self.rollouts < 1:
            raise UsageError(f"--rollouts must be at least 1, got {self.rollouts}")
        unknown = [p for p in self.paths if p not in PATHS]
        if unknown or not self.paths:
            raise UsageError(f"--paths takes native and/or anchor, got {','.join(self.paths)}")
        if self.limit_recordings is not None and self.limit_recordings < 1:
            raise UsageError(f"--limit-recordings must be at least 1, got {self.limit_recordings}")
        if self.language is not None and self.language not in ("en", "zh"):
            raise UsageError(f"--language is en or zh (AudioSpan's two), got {self.language!r}")
        if self.max_cost is not None and not self.max_cost > 0:
            raise UsageError(f"--max-cost must be a positive amount, got {self.max_cost}")


def find_recordings(source: Path, limit: Optional[int] = None) -> list[tuple[str, Path]]:
    """(recording id, path) for an audio file or each audio file of a folder (not recursive), by name; the
    id is the file's stem. UsageError for no audio, or two files sharing a stem."""
    if source.is_file():
        files = [source]
    elif source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    else:
        raise UsageError(f"RECORDINGS {str(source)!r} is neither an audio file nor a folder")
    if not files:
        raise UsageError(f"no audio files ({', '.join(AUDIO_SUFFIXES)}) in {source}")
    seen: dict[str, Path] = {}
    for path in files:
        if path.stem in seen:
            raise UsageError(f"{seen[path.stem].name} and {path.name} would both be recording {path.stem!r}")
        seen[path.stem] = path
    found = list(seen.items())
    return found[:limit] if limit else found


def _check_recording(path: Path) -> tuple[Optional[float], Optional[str]]:
    """(duration, None), or (None, why it cannot be used)."""
    from audioreason.audio.errors import AudioError
    from audioreason.audio.stream import audio_info

    try:
        info = audio_info(str(path))
    except (AudioError, OSError, ValueError) as err:
        return None, f"unreadable: {err}"
    if info.duration < MIN_RECORDING_S:
        return None, f"too short: {info.duration:.1f} s (at least {MIN_RECORDING_S:g} s)"
    return info.duration, None


def _progress(total: int, description: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="recording", dynamic_ncols=True, disable=not enabled)


async def _caption(calls: Any, bench: Path, recording_id: str, path: Path, duration: float) -> Any:
    """The recording's caption: the file when it was built by the same roles, else Phase 1."""
    from audioreason.base.jsonl import read_json_file

    from .caption import build_caption
    from .records import Caption

    file = bench / "captions" / f"{recording_id}.json"
    roles = {role: calls.describe(role) for role in ("asr", "segmenter", "captioner")}
    if file.exists():
        caption = Caption.from_dict(read_json_file(file))
        if all(caption.provenance.get(role) == described for role, described in roles.items()):
            return caption
    caption = await build_caption(calls, path, recording_id, audio_file=str(path.relative_to(bench)))
    outputs.write_atomic(file, caption.to_json())
    return caption


class Construction:
    """One run of the pipeline over ``recordings`` into ``bench`` (see the module docstring)."""

    def __init__(
        self,
        recordings: Path,
        bench: Path,
        specs: Mapping[str, RoleSpec],
        settings: Settings,
        *,
        prices: Optional[Mapping[str, Any]] = None,
        progress: bool = True,
        local_backends: Optional[Mapping[str, Any]] = None,
    ):
        settings.check()
        self.recordings = find_recordings(recordings, settings.limit_recordings)
        self.bench, self.specs, self.settings, self.progress = bench, dict(specs), settings, progress
        self.prices = prices
        self.previous = self._previous()
        from .calls import Calls

        self.calls = Calls(
            self.specs,
            bench / outputs.CACHE_FILE,
            concurrency=settings.concurrency,
            prices=prices,
            max_cost=settings.max_cost,
            spent_before=sum(s.get("cost", {}).get("total") or 0.0 for s in self.previous.get("sessions", [])),
            local_backends=local_backends,
        )
        self.record: dict[str, Any] = {}

    def _previous(self) -> dict[str, Any]:
        file = self.bench / outputs.CONSTRUCTION_FILE
        if not file.exists():
            return {}
        from audioreason.base.jsonl import read_json_file

        previous = read_json_file(file)
        return previous if isinstance(previous, dict) and previous.get("schema") == SCHEMA else {}

    async def run(self) -> dict[str, Any]:
        from .anchor import anchor_candidates
        from .memory import MemoryBank
        from .native import native_candidates
        from .native_items import PositionCycle

        started = time.time()
        self.bench.mkdir(parents=True, exist_ok=True)
        outputs.clear_metadata(self.bench)
        self.record = self._header(started, "running")
        outputs.write_json(self.bench / outputs.CONSTRUCTION_FILE, self.record)
        bank = MemoryBank(self.bench / "memory_bank.jsonl")
        positions = PositionCycle("construction")
        recordings, candidates, order = [], [], 0
        bar = _progress(len(self.recordings), "construct", self.progress)
        try:
            reached = False
            for recording_id, source in self.recordings:
                entry = {"id": recording_id, "file": source.name}
                recordings.append(entry)
                duration, problem = _check_recording(source)
                if problem:
                    entry.update(status="skipped", reason=problem)
                    bar.update(1)
                    continue
                entry["duration"] = duration
                if not reached:  # before the first usable recording's work: a refused key stops the run here
                    await self.calls.reach()
                    reached = True
                path = outputs.place_original(source, self.bench, recording_id)
                bar.set_postfix_str(f"{recording_id}: caption")
                caption = await self._caption_or_failure(recording_id, path, duration, entry)
                if caption is None:
                    bar.update(1)
                    continue
                if "native" in self.settings.paths:
                    bar.set_postfix_str(f"{recording_id}: native")
                    found = await native_candidates(
                        self.calls,
                        caption,
                        path,
                        per_level=self.settings.per_level,
                        rollouts=self.settings.rollouts,
                        bank=bank,
                        order_start=order,
                        positions=positions,
                    )
                    candidates += found
                    order += len(found)
                if "anchor" in self.settings.paths:
                    bar.set_postfix_str(f"{recording_id}: anchor")
                    found = await anchor_candidates(
                        self.calls,
                        caption,
                        path,
                        self.bench,
                        rollouts=self.settings.rollouts,
                        bank=bank,
                        order_start=order,
                        event_clips=self.settings.event_clips,
                        run_ids=[rid for rid, _ in self.recordings],  # operations balanced over the run
                        answer_positions=positions,
                    )
                    candidates += found
                    order += len(found)
                entry["status"] = "done"
                bar.update(1)
        except BaseException as err:
            self._finish(started, recordings, candidates, bank, status="failed", error=f"{type(err).__name__}: {err}")
            raise
        finally:
            bar.close()
            await self.calls.aclose()
        return self._finish(started, recordings, candidates, bank, status="complete")

    async def _caption_or_failure(self, recording_id: str, path: Path, duration: float, entry: dict) -> Any:
        from .transcribe import CaptionStepFailed

        try:
            return await _caption(self.calls, self.bench, recording_id, path, duration)
        except CaptionStepFailed as err:
            entry.update(status="failed", reason=str(err))
            return None

    def _header(self, started: float, status: str) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": 1,
            "status": status,
            "library": {"audioreason": __version__},
            "settings": {**asdict(self.settings), "paths": list(self.settings.paths)},
            "roles": {role: {**self.specs[role].public(), "described": self.calls.describe(role)} for role in ROLES},
            "offline_stand_ins": [r for r in ROLES if self.specs[r].kind == "offline"],
            "started": started,
        }

    def _finish(
        self, started: float, recordings: list, candidates: list, bank: Any, *, status: str, error: str = ""
    ) -> dict[str, Any]:
        from .assemble import benchmark_files, summary

        if status == "complete":
            benchmark_files(self.bench, recordings, candidates, language=self.settings.language)
        session = {
            "started": started,
            "finished": time.time(),
            "status": status,
            "calls_made": self.calls.calls_made(),
            "usage": self.calls.usage(),
            "cost": self.calls.cost(),
        }
        record = self._header(started, status)
        record.update(summary(recordings, candidates, bank, self.calls))
        record["sessions"] = list(self.previous.get("sessions", [])) + [session]
        if error:
            record["error"] = error
        outputs.write_jsonl(self.bench / "candidates.jsonl", [_public(c) for c in candidates])
        outputs.write_jsonl(
            self.bench / "rejected.jsonl", [_rejection(c) for c in candidates if c["outcome"] != "kept"]
        )
        outputs.write_json(self.bench / outputs.CONSTRUCTION_FILE, record)
        self.record = record
        return record


def _public(candidate: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in candidate.items() if k != "items"}


def _rejection(candidate: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("id", "pipeline", "recording_id", "level", "order", "rejected_at", "reason", "critic", "gates")
    return {k: candidate.get(k) for k in keys}


__all__ = ["Construction", "MIN_RECORDING_S", "Settings", "find_recordings"]
