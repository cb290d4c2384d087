"""Evidence verification (AudioSpan, arXiv:2608.26431, §4.3 step 3 and §4.5): every evidence record a candidate
cites is re-checked against its own stretch of audio, read alone from the file; the candidate passes only when
none is refuted.

Before any audio is read, an id the caption does not hold is refuted ("unknown evidence id"), and so is a
record whose time range does not lie inside the recording (start below 0, end past the duration by more than
``TIME_TOLERANCE_S``, or start after end). A candidate that cites nothing does not pass.

With an audio-language model (``calls.has_audio_model("verifier")``): the record's stretch (``PAD_S`` either
side, clipped to the recording) goes to the "verifier" role with the record's content, which answers
``{"verdict": "confirmed" | "refuted", "reason"}``. A cross-segment record goes as the audio of its two
segments (two clips in one request), a global record as its range (the whole recording); where that is longer than the
verifier's audio limit (its endpoint preset's, else ``MAX_AUDIO_S``) the record is left unchecked
(``confirmed: None``, the method says why). A verifier reply that still fails its schema refutes the record:
an unchecked claim is not a confirmed one.

Offline (no audio-language model), what can be verified honestly:
  * speech: the stretch is re-transcribed by the ASR role and the record's quoted words are looked up in it.
    Rule: the words of three or more characters (all words when there are none) of the quoted text, as a set;
    confirmed when at least ``SPEECH_RECALL`` (0.5) of them are heard. This confirms that these words are
    spoken in that stretch; it does not check the speaker or the cues in the record.
  * sound: the stretch is read with ``CONTEXT_S`` on either side; confirmed when the loudest 50 ms frame inside
    the range is at least ``offline_audio.EVENT_DB`` (10 dB) above the 10th-percentile frame level of the
    context around it (of the stretch itself when there is no context) and above -70 dBFS, and, when the
    record states a peak level in dBFS, that level is within ``LEVEL_TOLERANCE_DB`` of the one measured. This
    confirms that an event of energy is there; it does not check what the label says the source is.
  * environment: the noise floor of the stretch is measured and compared with the level the record states
    (within ``FLOOR_TOLERANCE_DB``); a description that states no level cannot be checked (None).
  * cross-segment and global records are derived from the caption, not heard at a time: they cannot be
    checked against audio offline and are returned with ``confirmed: None`` and method "unchecked offline:
    derived record". They do not fail the candidate; construction.json says how many were left unchecked.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any, Iterable, Optional, Union

import numpy as np

from .offline_audio import EVENT_DB, EVENT_MIN_DBFS, FRAME_SECONDS, RATE, frame_levels, noise_floor, read_span
from .records import Caption, Evidence, span_text

TIME_TOLERANCE_S = 0.05
PAD_S = 0.5
CONTEXT_S = 2.0
MAX_AUDIO_S = 600.0
SPEECH_RECALL = 0.5
LEVEL_TOLERANCE_DB = 3.0
FLOOR_TOLERANCE_DB = 1.0
REASON_CHARS = 300
DERIVED = ("cross-segment", "global")
_QUOTED = re.compile(r'"(.*)"', re.DOTALL)
_WORD = re.compile(r"[^\W_]+")
_PEAK = re.compile(r"peak (-?\d+(?:\.\d+)?) dBFS")
_FLOOR = re.compile(r"noise floor (-?\d+(?:\.\d+)?) dBFS")

SYSTEM = (
    "You check one record of an audio caption against the audio. Listen to the clip and decide whether the "
    "record is true of what is heard in it: 'confirmed' when it is, 'refuted' when any part of it is wrong or "
    "cannot be heard. Give a short reason."
)


def _result(record_id: str, confirmed: Optional[bool], method: str, detail: str) -> dict[str, Any]:
    return {"id": record_id, "confirmed": confirmed, "method": method, "detail": detail}


def words(text: str) -> set[str]:
    """The words a speech record is checked by: those of 3+ characters, lower-cased (all when none is)."""
    found = [w for w in _WORD.findall(text.lower())]
    long = {w for w in found if len(w) >= 3}
    return long or set(found)


def quoted(content: str) -> str:
    """What a speech record says was spoken: its quoted text, else the whole content."""
    match = _QUOTED.search(content)
    return match.group(1) if match else content


def word_recall(record: str, heard: str) -> float:
    wanted = words(record)
    return len(wanted & words(heard)) / len(wanted) if wanted else 0.0


def _verdict_schema():
    from .calls import stage_schema

    body = {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["confirmed", "refuted"]},
            "reason": {"type": "string", "minLength": 1, "maxLength": REASON_CHARS},
        },
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    }
    return stage_schema("verify", body)


# ---------------------------------------------------------------------- offline checks
async def _speech_offline(calls: Any, caption: Caption, record: Evidence, path: Any) -> dict[str, Any]:
    a, b = max(0.0, record.start - PAD_S), min(caption.duration, record.end + PAD_S)
    samples = await asyncio.to_thread(read_span, path, a, b)
    asr = calls.local_asr()
    if asr is not None:
        heard = (await asyncio.to_thread(asr.transcribe, samples)).text
    else:
        from .transcribe import endpoint_recognizer

        found = await endpoint_recognizer(calls, f"{caption.recording_id}:verify:{record.id}")(samples, a)
        if found is None:
            return _result(record.id, False, "offline: ASR re-transcription", "no usable re-transcription (counted)")
        heard = " ".join(t for _, _, t in found)
    recall = word_recall(quoted(record.content), heard)
    confirmed = recall >= SPEECH_RECALL
    detail = (
        f"word recall {recall:.2f} (needs {SPEECH_RECALL}) against the re-transcription of {span_text(a, b)}: {heard!r}"
    )
    return _result(record.id, confirmed, "offline: ASR re-transcription", detail)


def _sound_offline(record: Evidence, path: Any, duration: float) -> dict[str, Any]:
    a, b = max(0.0, record.start - CONTEXT_S), min(duration, record.end + CONTEXT_S)
    levels = frame_levels(read_span(path, a, b))
    times = a + np.arange(len(levels)) * FRAME_SECONDS
    inside = (times + FRAME_SECONDS > record.start) & (times < record.end)
    if not inside.any():
        inside[np.argmin(np.abs(times - record.start))] = True
    context = levels[~inside]
    floor = noise_floor(context if len(context) * FRAME_SECONDS >= 0.25 else levels)
    peak = float(levels[inside].max())
    confirmed = peak >= floor + EVENT_DB and peak >= EVENT_MIN_DBFS
    detail = f"peak {peak:.1f} dBFS inside, {peak - floor:.1f} dB above the floor around it ({floor:.1f} dBFS)"
    stated = _PEAK.search(record.content)
    if stated and abs(float(stated.group(1)) - peak) > LEVEL_TOLERANCE_DB:
        confirmed = False
        detail += f"; the record states a peak of {stated.group(1)} dBFS"
    return _result(
        record.id, confirmed, "offline: signal measurement (energy event; the source is not checked)", detail
    )


def _environment_offline(record: Evidence, path: Any, duration: float) -> dict[str, Any]:
    method = "offline: signal measurement (noise floor)"
    stated = _FLOOR.search(record.content)
    if stated is None:
        return _result(record.id, None, method, "unchecked offline: the description states no measured level")
    floor = noise_floor(frame_levels(read_span(path, record.start, min(record.end, duration))))
    confirmed = abs(floor - float(stated.group(1))) <= FLOOR_TOLERANCE_DB
    return _result(record.id, confirmed, method, f"measured floor {floor:.1f} dBFS, stated {stated.group(1)} dBFS")


# ---------------------------------------------------------------------- the verifier model
def _stretches(caption: Caption, record: Evidence) -> list[tuple[float, float]]:
    target = next((d for d in caption.summary.get("dependencies", []) if d.get("id") == record.id), None)
    if record.modality == "cross-segment" and target is not None:
        a, b = caption.segment_of(target["from_segment"]), caption.segment_of(target["to_segment"])
        return [(a["start"], a["end"]), (b["start"], b["end"])]
    if record.modality in DERIVED:  # a global record, or a cross-segment one without its dependency entry
        return [(record.start, min(record.end, caption.duration))]
    return [(max(0.0, record.start - PAD_S), min(caption.duration, record.end + PAD_S))]


async def _model_check(calls: Any, caption: Caption, record: Evidence, path: Any) -> dict[str, Any]:
    stretches = _stretches(caption, record)
    limit = calls.max_audio_s("verifier") or MAX_AUDIO_S
    total = sum(b - a for a, b in stretches)
    method = f"verifier: {calls.describe('verifier')}"
    if total > limit:
        return _result(
            record.id, None, method, f"unchecked: {total:.0f} s of audio is over the verifier's {limit:g} s limit"
        )
    parts, where = [], []
    for k, (a, b) in enumerate(stretches, 1):
        samples = await asyncio.to_thread(read_span, path, a, b)
        parts.append(calls.audio_part("verifier", samples, RATE))
        where.append(f"clip {k}: {span_text(a, b)} of the recording")
    relative = f"{span_text(record.start - stretches[0][0], record.end - stretches[0][0])} of clip 1"
    text = (
        f"Audio: {'; '.join(where)}. The record ({record.modality}), about {relative}:\n{record.content}\n"
        "Is this record true of the audio?"
    )
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": parts + [{"type": "text", "text": text}]},
    ]
    reply = await calls.ask("verifier", _verdict_schema(), messages, item=f"{caption.recording_id}:{record.id}")
    if reply is None:
        return _result(record.id, False, method, "no valid verdict from the verifier (counted)")
    return _result(record.id, reply["verdict"] == "confirmed", method, reply["reason"].strip())


# ---------------------------------------------------------------------- entry point
def _out_of_range(record: Evidence, duration: float) -> bool:
    return record.start < 0 or record.start > record.end or record.end > duration + TIME_TOLERANCE_S


async def check_record(calls: Any, caption: Caption, record: Evidence, path: Any) -> dict[str, Any]:
    """One record's verdict (module docstring)."""
    if _out_of_range(record, caption.duration):
        return _result(
            record.id,
            False,
            "time range",
            f"time range {record.start:g}-{record.end:g} s is outside the recording (0-{caption.duration:g} s)",
        )
    if calls.has_audio_model("verifier"):
        return await _model_check(calls, caption, record, path)
    if record.modality in DERIVED:
        return _result(
            record.id, None, "unchecked offline: derived record", "derived from the caption, not heard at a time"
        )
    if record.modality == "speech":
        return await _speech_offline(calls, caption, record, path)
    if record.modality == "sound":
        return await asyncio.to_thread(_sound_offline, record, path, caption.duration)
    return await asyncio.to_thread(_environment_offline, record, path, caption.duration)


async def verify_evidence(
    calls: Any, caption: Caption, ids: Iterable[str], audio_path: Union[str, os.PathLike]
) -> dict[str, Any]:
    """``{"passed": bool, "records": [{"id", "confirmed": True | False | None, "method", "detail"}]}`` for the
    cited ``ids`` (module docstring): passed when at least one id is cited and none is refuted; ``None``
    (unchecked: a derived record offline, or audio over the verifier's limit) does not fail it."""
    known = caption.evidence_by_id()
    records = []
    for record_id in dict.fromkeys(ids):
        record = known.get(record_id)
        if record is None:
            records.append(_result(str(record_id), False, "lookup", "unknown evidence id"))
            continue
        try:
            records.append(await check_record(calls, caption, record, audio_path))
        except (OSError, ValueError, KeyError) as err:  # AudioError is a ValueError; KeyError: a missing segment
            records.append(_result(record_id, False, "error", f"cannot be checked: {type(err).__name__}: {err}"))
    passed = bool(records) and all(r["confirmed"] is not False for r in records)
    return {"passed": passed, "records": records}


__all__ = ["SPEECH_RECALL", "check_record", "quoted", "verify_evidence", "word_recall"]
