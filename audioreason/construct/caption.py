"""Phase 1 of the construction (AudioSpan, arXiv:2608.26431, §4.2 and App. B.1): one recording in, its structured
caption out, in five steps:

1. speech transcription (``transcribe``): sentences with times, the file read in windows;
2. semantic segmentation (``segment``, the "segmenter" role): contiguous segments of at most about 5 minutes;
3. acoustic captioning (``acoustic``, the "captioner" role, or ``offline_audio``'s measurements offline);
4. dependency analysis (``dependencies``, the "segmenter" role): global context, speaker registry,
   cross-segment dependencies;
5. assembly (``assemble_caption``, here): the summary view, the dense view and the evidence records.

A step that cannot be completed raises ``transcribe.CaptionStepFailed`` naming it; the caller lists the
recording as failed at that step. Every step is deterministic given the model replies (which the call cache
keeps), so building a caption again costs no call.

Evidence records (step 5), ids numbered from 1 in time order within their kind:
  * ``sNN.speech.nnn``: one per transcript sentence of segment NN; content ``speaker: "text" [cues]`` (the
    speaker's registry id, else the captioner's label, else left out; the cues the captioner heard or, offline,
    the measured level and rate);
  * ``sNN.sound.nnn``: one per event, ``label: description``;
  * ``sNN.env``: the segment's environment, over the whole segment;
  * ``x.nnn``: one per dependency, in the order of their segments, its segment the earlier one and its range
    from that segment's start to the later one's end;
  * ``g.001``: topic, genre, tone and narrative arc; ``g.002`` on: one per registered speaker, in registry order
    (over the whole recording, segment None).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence, Union

from audioreason.audio.stream import audio_info

from .acoustic import dense_captions
from .dependencies import DEPENDENCY_ROLE, analyse_dependencies
from .offline_audio import OFFLINE_CAPTIONER
from .records import Caption, Evidence
from .segment import CHUNK_CHARS, SEGMENT_CAP_S, segment_transcript
from .transcribe import GUARD_SECONDS, WINDOW_SECONDS, CaptionStepFailed, transcribe_recording


def _speech_content(line: dict[str, Any]) -> str:
    speaker = f"{line['speaker']}: " if line.get("speaker") else ""
    cues = f" [{line['paralinguistic']}]" if line.get("paralinguistic") else ""
    return f'{speaker}"{line["text"]}"{cues}'


def _registry_names(speakers: Sequence[dict[str, Any]]) -> dict[str, str]:
    return {label: p["id"] for p in speakers for label in p.get("labels", [])}


def assemble_caption(
    recording_id: str,
    duration: float,
    audio_file: str,
    transcript: list[dict[str, Any]],
    segments: list[dict[str, Any]],
    dense: list[dict[str, Any]],
    context: dict[str, Any],
    provenance: dict[str, Any],
) -> Caption:
    """Step 5: both views and the evidence records (module docstring) from the outputs of steps 1-4."""
    names = _registry_names(context["speakers"])
    evidence: list[Evidence] = []
    dense_out = []
    for caption in dense:
        index = caption["segment"]
        lines = [{**t, "speaker": names.get(t["speaker"], t["speaker"])} for t in caption["transcript"]]
        lines.sort(key=lambda t: (t["start"], t["end"]))
        events = sorted(caption["events"], key=lambda e: (e["start"], e["end"]))
        dense_out.append({**caption, "transcript": lines, "events": events})
        evidence.append(
            Evidence(
                f"s{index:02d}.env", index, caption["start"], caption["end"], "environment", caption["environment"]
            )
        )
        for n, t in enumerate(lines, 1):
            evidence.append(
                Evidence(f"s{index:02d}.speech.{n:03d}", index, t["start"], t["end"], "speech", _speech_content(t))
            )
        for n, e in enumerate(events, 1):
            content = f"{e['label']}: {e['description']}" if e["description"] else e["label"]
            evidence.append(Evidence(f"s{index:02d}.sound.{n:03d}", index, e["start"], e["end"], "sound", content))
    by_index = {s["index"]: s for s in segments}
    dependencies = []
    links = sorted(context["dependencies"], key=lambda d: (d["from_segment"], d["to_segment"], d["kind"]))
    for n, d in enumerate(links, 1):
        a, b = by_index[d["from_segment"]], by_index[d["to_segment"]]
        xid = f"x.{n:03d}"
        dependencies.append({"id": xid, **d})
        content = f"{d['kind']} dependency, segment {a['index']} -> segment {b['index']}: {d['description']}"
        evidence.append(Evidence(xid, a["index"], a["start"], b["end"], "cross-segment", content))
    overview = (
        f"Topic: {context['topic']}. Genre: {context['genre']}. Tone: {context['tone']}. "
        f"Narrative arc: {context['narrative_arc']}"
    )
    evidence.append(Evidence("g.001", None, 0.0, duration, "global", overview))
    for n, p in enumerate(context["speakers"], 2):
        heard = sorted({int(label[1:3]) for label in p["labels"]})
        where = f" (heard in segment{'s' if len(heard) > 1 else ''} {', '.join(map(str, heard))})" if heard else ""
        evidence.append(
            Evidence(f"g.{n:03d}", None, 0.0, duration, "global", f"{p['id']} ({p['role']}): {p['description']}{where}")
        )
    summary = {
        "topic": context["topic"],
        "genre": context["genre"],
        "narrative_arc": context["narrative_arc"],
        "tone": context["tone"],
        "speakers": context["speakers"],
        "segments": segments,
        "dependencies": dependencies,
    }
    return Caption(recording_id, duration, audio_file, transcript, summary, dense_out, evidence, provenance)


def _provenance(
    calls: Any, window: float, guard: float, chunks: dict[str, int], links: dict[str, Any]
) -> dict[str, Any]:
    model = calls.has_audio_model("captioner")
    return {
        "asr": calls.describe("asr"),
        "segmenter": calls.describe("segmenter"),
        "captioner": calls.describe("captioner"),
        "captioner_mode": "model" if model else OFFLINE_CAPTIONER,
        "dependency_role": DEPENDENCY_ROLE,
        "transcription": {"window_s": window, "guard_s": guard, "rate": 16000},
        "segmentation": {"cap_s": SEGMENT_CAP_S, "chunk_chars": CHUNK_CHARS, **chunks},
        "dependencies": links,
    }


async def build_caption(
    calls: Any,
    path: Union[str, os.PathLike],
    recording_id: str,
    *,
    audio_file: Optional[str] = None,
    window: float = WINDOW_SECONDS,
    guard: float = GUARD_SECONDS,
    on_step: Optional[Callable[[str], None]] = None,
) -> Caption:
    """The caption of the recording at ``path`` (the five steps of the module docstring). ``audio_file``: the
    path the caption records (relative to the benchmark folder). ``CaptionStepFailed`` names a failed step.
    ``on_step(step)``, if given, is called as each step ends, with its name as ``CaptionStepFailed`` gives it
    ("assembly" for the fifth); benchmarks/construct_phase1.py times the steps by it."""
    done = on_step or (lambda step: None)
    try:
        duration = audio_info(path).duration
    except Exception as err:  # noqa: BLE001 - any unreadable file (AudioError, decoder errors) fails step 1
        raise CaptionStepFailed("transcription", recording_id, f"cannot read the recording: {err}") from None
    asr = calls.local_asr()
    if asr is None:
        limit = calls.max_audio_s("asr")
        window = min(window, limit) if limit else window
        guard = min(guard, window / 4)
    transcript = await transcribe_recording(
        path, asr=asr, calls=calls if asr is None else None, recording=recording_id, window=window, guard=guard
    )
    done("transcription")
    chunks: dict[str, int] = {}
    segments = await segment_transcript(calls, transcript, duration, recording_id, tally=chunks)
    done("segmentation")
    dense = await dense_captions(calls, path, recording_id, segments, transcript)
    done("acoustic captioning")
    links: dict[str, Any] = {}
    context = await analyse_dependencies(calls, segments, dense, recording_id, tally=links)
    done("dependency analysis")
    provenance = _provenance(calls, window, guard, chunks, links)
    caption = assemble_caption(
        recording_id, duration, audio_file or os.fspath(path), transcript, segments, dense, context, provenance
    )
    done("assembly")
    return caption


__all__ = ["CaptionStepFailed", "DEPENDENCY_ROLE", "assemble_caption", "build_caption"]
