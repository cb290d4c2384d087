"""A run's speed in the field's units: samples per second and the real-time factor, per run and per condition.

Definitions (the ones other harnesses publish, so a run can be placed beside them):

- ``samples_per_s``: outputs generated per wall second.
- ``real_time_factor``: seconds of audio the model was given per wall second (higher is faster; the Open ASR
  Leaderboard calls it RTFx, the inverse of ASR's "processing time / audio length"). The audio counted is what was
  sent (``audio.seconds`` of each record: after a cut to ``max_audio_s``; 0 for a condition without audio, whose
  factor is then None rather than 0).

Per run: the sessions that generated something, their outputs and audio over the generation-loop seconds of the
slowest process (start-up and model loading left out, as ``items_per_s`` in each session). Per condition: the
condition's outputs and audio over the generation seconds attributed to its records (``timings.generate_s``, each
request's share of its batch); with several processes these are one process's seconds, so a condition's rate is
per process. Records without timings (imported predictions) give no speed: None with the reason.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence


def _rate(count: float, seconds: float) -> Optional[float]:
    return round(count / seconds, 3) if count and seconds > 0 else None


def _audio_seconds(record: Mapping[str, Any]) -> float:
    audio = record.get("audio")
    seconds = audio.get("seconds") if isinstance(audio, Mapping) else None
    return float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0


def session_audio_seconds(records: Iterable[Mapping[str, Any]]) -> float:
    """Seconds of audio sent for these records (the units one session ran)."""
    return round(sum(_audio_seconds(r) for r in records), 3)


def speed_summary(records: Sequence[Mapping[str, Any]], sessions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """run.json's ``speed`` block from the gathered records and the sessions (each with ``ran``,
    ``generation_s`` and ``audio_s``)."""
    timed = [s for s in sessions if s.get("ran") and isinstance(s.get("generation_s"), (int, float))]
    ran = sum(s["ran"] for s in timed)
    wall = sum(s["generation_s"] for s in timed)
    # Sessions recorded before audio seconds were (older run.json files) are left out of the factor only.
    with_audio = [s for s in timed if isinstance(s.get("audio_s"), (int, float))]
    audio, audio_wall = sum(s["audio_s"] for s in with_audio), sum(s["generation_s"] for s in with_audio)
    by_condition: dict[str, dict[str, Any]] = {}
    for record in records:
        generate_s = (record.get("timings") or {}).get("generate_s")
        if not isinstance(generate_s, (int, float)) or isinstance(generate_s, bool):
            continue
        entry = by_condition.setdefault(str(record.get("condition")), {"samples": 0, "generate_s": 0.0, "audio_s": 0.0})
        entry["samples"] += 1
        entry["generate_s"] += generate_s
        entry["audio_s"] += _audio_seconds(record)
    for entry in by_condition.values():
        entry["generate_s"], entry["audio_s"] = round(entry["generate_s"], 3), round(entry["audio_s"], 3)
        entry["samples_per_s"] = _rate(entry["samples"], entry["generate_s"])
        entry["real_time_factor"] = _rate(entry["audio_s"], entry["generate_s"])
    unavailable = None if ran and wall > 0 else "no session of this folder generated outputs (imported or resumed only)"
    return {
        "samples_per_s": _rate(ran, wall),
        "real_time_factor": _rate(audio, audio_wall),
        "samples": ran,
        "generation_s": round(wall, 3),
        "audio_s": round(audio, 3),
        "by_condition": by_condition,
        "unavailable": unavailable,
        "definition": "samples_per_s = outputs / wall s of the generation loop; real_time_factor = audio s "
        "sent / wall s (RTFx, higher is faster); per condition: over the seconds attributed "
        "to its records (one process's)",
    }


def speed_line(speed: Optional[Mapping[str, Any]]) -> Optional[str]:
    """One printed line: the run's samples/s and real-time factor, then each condition's."""
    if not speed or speed.get("samples_per_s") is None:
        return None
    factor = speed.get("real_time_factor")
    parts = [
        f"{speed['samples_per_s']:.3f} samples/s"
        + (f", real-time factor {factor:.2f} (audio s per wall s)" if factor is not None else "")
    ]
    for name, entry in sorted((speed.get("by_condition") or {}).items()):
        if entry.get("samples_per_s") is None:
            continue
        rtf = entry.get("real_time_factor")
        parts.append(f"{name} {entry['samples_per_s']:.3f}/s" + (f" RTF {rtf:.2f}" if rtf is not None else ""))
    return "speed: " + "; ".join(parts)


__all__ = ["session_audio_seconds", "speed_line", "speed_summary"]
