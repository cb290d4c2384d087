"""Step 3 of the caption pipeline (AudioSpan, arXiv:2608.26431, §4.2): each segment's audio is captioned by the
"captioner" role, adding time-stamped acoustic detail beyond the transcript: speakers and their voices,
paralinguistic cues, the environment and non-speech events.

With an audio-language model: the segment is read alone from the file (16 kHz) and sent in pieces of at most
``piece_seconds`` (the segment cap, or the endpoint preset's audio limit when lower), each with the ASR
sentences that start in it, numbered. The reply (``caption_schema``) labels who says each sentence (a label
such as "S1" from its own speaker list, with a voice description) and its paralinguistic cues, describes the
environment and lists the events with times from the piece's start. ``check``: every sentence number is one
shown and given once, every speaker label is one it listed, every event lies inside the piece. A piece whose
reply still fails makes the recording fail at this step (``CaptionStepFailed``).

Speaker labels are local to a piece; they are written ``s{segment:02d}:{label}`` (``s{segment:02d}p{k}:{label}``
when the segment took several pieces) and step 4 maps them onto one registry.

Offline (``calls.has_audio_model("captioner")`` False): ``offline_audio.offline_dense`` measures the signal
instead; see that module.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any, Optional, Sequence, Union

from .offline_audio import RATE, offline_dense, read_span
from .records import span_text
from .schema_check import strict_object, text
from .segment import SEGMENT_CAP_S
from .transcribe import CaptionStepFailed

LABEL_CHARS, VOICE_CHARS, NOTE_CHARS, ENV_CHARS = 24, 200, 160, 300
EVENT_LABEL_CHARS, EVENT_CHARS, MAX_EVENTS, MAX_SPEAKERS = 60, 200, 24, 8

SYSTEM = (
    "You caption the sound of a stretch of an audio recording for a benchmark built from it. Listen to the "
    "clip and add what the transcript does not hold: who speaks each numbered sentence (label each distinct "
    "voice S1, S2, ... and describe it: gender presentation, age range, pitch, accent, manner), the "
    "paralinguistic cues of each sentence (emotion, emphasis, laughter, hesitation, pace), the acoustic "
    "environment (setting, reverberation, background noise, music) and every non-speech sound event with its "
    "start and end in seconds from the start of the clip. Describe only what you hear."
)


def caption_schema(lines: Sequence[int], length: float):
    from .calls import stage_schema

    line = {"type": "integer", "enum": list(lines)} if lines else {"type": "integer", "minimum": 0, "maximum": 0}
    body = strict_object(
        {
            "environment": text(ENV_CHARS),
            "speakers": {
                "type": "array",
                "items": strict_object({"label": text(LABEL_CHARS), "voice": text(VOICE_CHARS)}),
                "maxItems": MAX_SPEAKERS,
            },
            "sentences": {
                "type": "array",
                "items": strict_object(
                    {"line": line, "speaker": text(LABEL_CHARS), "paralinguistic": text(NOTE_CHARS)}
                ),
                "maxItems": len(lines),
            },
            "events": {
                "type": "array",
                "items": strict_object(
                    {
                        "start": {"type": "number"},
                        "end": {"type": "number"},
                        "label": text(EVENT_LABEL_CHARS),
                        "description": text(EVENT_CHARS),
                    }
                ),
                "maxItems": MAX_EVENTS,
            },
        }
    )

    def check(value: Any) -> dict[str, Any]:
        labels = [s["label"].strip() for s in value["speakers"]]
        if len(set(labels)) != len(labels) or "" in labels:
            raise ValueError("speaker labels must be distinct and not empty")
        seen = set()
        for s in value["sentences"]:
            if s["line"] in seen:
                raise ValueError(f"sentence {s['line']} is annotated twice")
            seen.add(s["line"])
            if s["speaker"].strip() and s["speaker"].strip() not in labels:
                raise ValueError(f"sentence {s['line']} names speaker {s['speaker']!r}, not in the speaker list")
        for e in value["events"]:
            if not 0 <= e["start"] <= e["end"] <= length + 0.5:
                raise ValueError(
                    f"event {e['label']!r} at {e['start']}-{e['end']} s lies outside the 0-{length:.1f} s clip"
                )
        return value

    return stage_schema("acoustic", body, check=check)


def _pieces(start: float, end: float, piece_seconds: float) -> list[tuple[float, float]]:
    count = max(1, math.ceil((end - start) / piece_seconds - 1e-9))
    step = (end - start) / count
    return [(start + k * step, end if k == count - 1 else start + (k + 1) * step) for k in range(count)]


async def _caption_piece(
    calls: Any, path: Any, recording: str, segment: int, piece: tuple[float, float], sentences: list[dict[str, Any]]
) -> dict[str, Any]:
    a, b = piece
    samples = await asyncio.to_thread(read_span, path, a, b)
    length = len(samples) / RATE
    listed = (
        "\n".join(f"{k}. [{span_text(s['start'] - a, s['end'] - a)}] {s['text']}" for k, s in enumerate(sentences))
        or "(no speech was transcribed in this clip)"
    )
    prompt = f"The clip is {length:.1f} s long. Transcript sentences (times from the clip's start):\n{listed}"
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [calls.audio_part("captioner", samples, RATE), {"type": "text", "text": prompt}]},
    ]
    schema = caption_schema(list(range(len(sentences))), length)
    reply = await calls.ask("captioner", schema, messages, item=f"{recording}:s{segment:02d}@{a:.3f}")
    if reply is None:
        raise CaptionStepFailed("acoustic captioning", recording, f"no valid caption of {span_text(a, b)}")
    return reply


async def model_dense(
    calls: Any,
    path: Union[str, os.PathLike],
    recording: str,
    segment: dict[str, Any],
    sentences: Sequence[dict[str, Any]],
    piece_seconds: Optional[float] = None,
) -> dict[str, Any]:
    """The dense caption of one segment by the captioner model (module docstring); ``sentences``: the ASR
    sentences starting in it. Same shape as ``offline_audio.offline_dense``, plus ``speakers``."""
    index, start, end = int(segment["index"]), float(segment["start"]), float(segment["end"])
    limit = calls.max_audio_s("captioner")
    piece_seconds = piece_seconds or min(SEGMENT_CAP_S, limit or SEGMENT_CAP_S)
    pieces = _pieces(start, end, piece_seconds)
    groups = [[s for s in sentences if a <= s["start"] < b] for a, b in pieces]
    replies = await asyncio.gather(
        *(_caption_piece(calls, path, recording, index, p, g) for p, g in zip(pieces, groups))
    )
    prefix = [f"s{index:02d}:" if len(pieces) == 1 else f"s{index:02d}p{k}:" for k in range(len(pieces))]
    transcript, events, speakers, environments = [], [], [], []
    for k, ((a, b), group, reply) in enumerate(zip(pieces, groups, replies)):
        notes = {s["line"]: s for s in reply["sentences"]}
        for n, s in enumerate(group):
            note = notes.get(n, {})
            label = (note.get("speaker") or "").strip()
            transcript.append(
                {
                    "start": s["start"],
                    "end": s["end"],
                    "speaker": prefix[k] + label if label else None,
                    "text": s["text"],
                    "paralinguistic": (note.get("paralinguistic") or "").strip(),
                }
            )
        speakers += [{"label": prefix[k] + p["label"].strip(), "voice": p["voice"].strip()} for p in reply["speakers"]]
        events += [
            {
                "start": round(a + e["start"], 3),
                "end": round(min(a + e["end"], b), 3),
                "label": e["label"].strip(),
                "description": e["description"].strip(),
            }
            for e in reply["events"]
        ]
        env = reply["environment"].strip()
        environments.append(env if len(pieces) == 1 else f"{span_text(a, b)}: {env}")
    return {
        "segment": index,
        "start": start,
        "end": end,
        "environment": " ".join(environments),
        "transcript": transcript,
        "events": sorted(events, key=lambda e: (e["start"], e["end"])),
        "speakers": speakers,
    }


async def dense_captions(
    calls: Any, path: Union[str, os.PathLike], recording: str, segments: Sequence[dict[str, Any]], transcript
) -> list[dict[str, Any]]:
    """Every segment's dense caption, by the captioner model or its offline stand-in."""
    groups = [[s for s in transcript if seg["start"] <= s["start"] < seg["end"]] for seg in segments]
    if calls.has_audio_model("captioner"):
        return list(
            await asyncio.gather(*(model_dense(calls, path, recording, s, g) for s, g in zip(segments, groups)))
        )
    return [await asyncio.to_thread(offline_dense, path, s, g) for s, g in zip(segments, groups)]


__all__ = ["caption_schema", "dense_captions", "model_dense"]
