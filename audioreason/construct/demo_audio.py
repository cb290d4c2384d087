"""Synthesized long recordings for ``audioreason construct --demo`` and the Phase 1 benchmark.

``synthesize_recording`` renders the radio programme of ``demo_script`` (espeak-ng voices, numpy sound events,
a low room-noise floor) into a 16-bit WAV of a little over three minutes and returns its ground truth: every
sentence and event with its time, the segment boundaries, the speakers and the cross-segment links.
``long_recording`` writes hours of audio the same way, one 10-s block at a time, repeating the programme as
episodes that vary (pauses, voice levels, the events' pitch, count and length, the noise floor): memory does not
grow with the length. The same seed always gives the same bytes, and the long recording's first episode is the
short recording.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Union

import numpy as np

from audioreason.base.errors import UsageError

from . import demo_sounds
from .demo_script import DEPENDENCIES, SECTIONS, SPEAKERS, Line
from .records import seed_of

RATE = 16000
BLOCK_SECONDS = 10.0
SPEECH_PEAK = 0.3  # each sentence's peak; the events are placed at the same peak
NOISE_RMS = 0.002  # white room noise, -54 dBFS ...
HUM_AMPLITUDE = 0.0015  # ... and a 60 Hz mains hum under it
NOISE_FLOOR_RMS = float(np.hypot(NOISE_RMS, HUM_AMPLITUDE / np.sqrt(2)))  # -52.9 dBFS
Seed = Union[int, str]


def _rng(*parts: object) -> np.random.Generator:
    return np.random.default_rng(seed_of(*parts))


def espeak(text: str, voice: str, speed: int, rate: int = RATE) -> np.ndarray:
    """espeak-ng's reading of ``text`` (mono float32 at ``rate``, peak 1, silence at both ends cut)."""
    from audioreason.audio.io import load_audio

    exe = shutil.which("espeak-ng")
    if exe is None:
        raise UsageError("the demo recording is spoken by espeak-ng, which is not installed: apt-get install espeak-ng")
    done = subprocess.run([exe, "-v", voice, "-s", str(speed), "--stdout", text], capture_output=True)
    data = done.stdout
    at = data.find(b"data", 12)
    if done.returncode != 0 or data[:4] != b"RIFF" or at < 0:
        raise RuntimeError(f"espeak-ng -v {voice} failed: {done.stderr.decode(errors='replace').strip()[:200]}")
    source_rate = int.from_bytes(data[24:28], "little")
    pcm = np.frombuffer(data[at + 8 :], "<i2").astype(np.float32) / 32768.0
    if source_rate != rate:
        pcm, _ = load_audio((pcm, source_rate), rate)
    loud = np.flatnonzero(np.abs(pcm) > 0.01 * np.abs(pcm).max())
    pad = int(0.01 * rate)
    pcm = pcm[max(loud[0] - pad, 0) : loud[-1] + pad]
    return pcm / np.abs(pcm).max()


def _speeds(seed: Seed) -> dict[str, int]:
    """Each speaker's words per minute for ``seed``: the script's speed within +-6%."""
    rng = _rng("demo-speeds", seed)
    return {s.id: int(round(s.speed * (1 + rng.uniform(-0.06, 0.06)))) for s in SPEAKERS.values()}


def _pieces(speeds: dict[str, int], rate: int) -> dict[tuple[str, str], np.ndarray]:
    """(speaker, text) -> its espeak-ng clip, every line of the script rendered once."""
    lines = [item for section in SECTIONS for item in section.items if isinstance(item, Line)]
    return {
        (ln.speaker, ln.text): espeak(ln.text, SPEAKERS[ln.speaker].voice, speeds[ln.speaker], rate) for ln in lines
    }


@dataclass(frozen=True)
class _Placed:
    start: int  # frame inside the episode
    clip: np.ndarray
    gain: float


def _episode(pieces: dict, rng: np.random.Generator, rate: int, vary: bool) -> tuple[list[_Placed], dict, int]:
    """One programme laid out: what plays where, its ground truth (seconds inside the episode), its frames."""
    placed: list[_Placed] = []
    truth = {"segments": [], "sentences": [], "events": []}
    gains = {s: 10 ** (rng.uniform(-3, 3) / 20) if vary else 1.0 for s in SPEAKERS}
    t = int(rng.uniform(0.8, 1.2) * rate)
    for index, section in enumerate(SECTIONS):
        if index:
            t += int(rng.uniform(1.5, 2.5) * rate)
        first, previous = t, None
        for item in section.items:
            if isinstance(item, Line):
                if previous is not None:
                    low, high = (0.35, 0.75) if previous == item.speaker else (0.6, 1.1)
                    t += int(rng.uniform(low, high) * rate)
                clip, gain = pieces[(item.speaker, item.text)], SPEECH_PEAK * gains[item.speaker]
                record = {"text": item.text, "speaker": item.speaker, "voice": SPEAKERS[item.speaker].voice}
                kind, previous = "sentences", item.speaker
            else:
                t += int(rng.uniform(0.6, 0.9) * rate) if previous is not None else 0
                clip, description = demo_sounds.make(item.label, rate, rng if vary else None)
                gain = SPEECH_PEAK * (10 ** (rng.uniform(-2, 2) / 20) if vary else 1.0)
                record = {"label": item.label, "description": description}
                kind, previous = "events", "sound"
            placed.append(_Placed(t, clip, gain))
            truth[kind].append({"start": t / rate, "end": (t + len(clip)) / rate, **record, "segment": index})
            t += len(clip)
        speakers = sorted({it.speaker for it in section.items if isinstance(it, Line)})
        truth["segments"].append(
            {"index": index, "start": first / rate, "end": t / rate, "title": section.title, "speakers": speakers}
        )
    t += int(rng.uniform(1.0, 1.5) * rate)
    return placed, truth, t


def _render(
    placed: list[_Placed], frames: int, first_frame: int, noise: np.random.Generator, rate: int, block: int
) -> Iterator[np.ndarray]:
    """An episode's samples, ``block`` frames at a time: the noise floor plus every clip that overlaps."""
    for b0 in range(0, frames, block):
        b1 = min(b0 + block, frames)
        n = np.arange(first_frame + b0, first_frame + b1)
        out = NOISE_RMS * noise.standard_normal(b1 - b0) + HUM_AMPLITUDE * np.sin(2 * np.pi * 60 * n / rate)
        for p in placed:
            lo, hi = max(p.start, b0), min(p.start + len(p.clip), b1)
            if lo < hi:
                out[lo - b0 : hi - b0] += p.gain * p.clip[lo - p.start : hi - p.start]
        yield out


def _shift(records: list[dict], offset: float, episode: int, end: float) -> list[dict]:
    """Records moved by ``offset`` seconds, tagged with their episode; those ending after ``end`` left out."""
    moved = [
        {**r, "start": round(r["start"] + offset, 4), "end": round(r["end"] + offset, 4), "episode": episode}
        for r in records
    ]
    return [r for r in moved if r["end"] <= end + 1e-9]


def _write(path: Union[str, os.PathLike], seed: Seed, rate: int, frames: Optional[int]) -> dict:
    """Write episodes of the programme until ``frames`` (None: exactly one episode); the ground truth."""
    from audioreason.audio.io import wav_writer

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    speeds = _speeds(seed)
    pieces = _pieces(speeds, rate)
    noise = _rng("demo-noise", seed)
    block = int(BLOCK_SECONDS * rate)
    truth = {"segments": [], "sentences": [], "events": []}
    written, episode = 0, 0
    with wav_writer(path, rate) as out:
        while frames is None or written < frames:
            placed, parts, length = _episode(pieces, _rng("demo-episode", seed, episode), rate, vary=episode > 0)
            take = length if frames is None else min(length, frames - written)
            end = (written + take) / rate
            for key in truth:
                truth[key] += _shift(parts[key], written / rate, episode, end)
            for samples in _render(placed, take, written, noise, rate, block):
                out.write(np.clip(samples, -1.0, 1.0))
            written += take
            episode += 1
            if frames is None:
                break
    for number, segment in enumerate(truth["segments"]):
        segment["index"] = number  # segments numbered through the whole file; "episode" says which programme
    return {
        "audio_file": path.name,
        "duration": written / rate,
        "frames": written,
        "rate": rate,
        "seed": seed,
        "episodes": episode,
        "noise_floor_rms": NOISE_FLOOR_RMS,
        "speakers": [
            {"id": s.id, "voice": s.voice, "speed": speeds[s.id], "description": s.description, "role": s.role}
            for s in SPEAKERS.values()
        ],
        **truth,
        "dependencies": [dict(d) for d in DEPENDENCIES] if episode == 1 else [],
    }


def synthesize_recording(path: Union[str, os.PathLike], *, seed: Seed = 0, rate: int = RATE) -> dict:
    """Write the demo programme (3 to 3.5 min, 16-bit mono WAV at ``rate``) to ``path``; its ground truth.

    The truth holds ``duration`` (s), ``speakers`` (id, espeak-ng voice, speed, description, role),
    ``segments`` (index, start, end, title, speakers), ``sentences`` (start, end, text, speaker, voice, segment),
    ``events`` (start, end, label, description, segment) and the cross-segment ``dependencies`` (kind,
    from_segment, to_segment, description); times in seconds. The same seed gives the same bytes; seeds
    differ in the pauses, the voices' speeds (+-6%) and the noise. Needs espeak-ng (``apt-get install
    espeak-ng``; install.sh installs it).
    """
    return _write(path, seed, rate, None)


def long_recording(path: Union[str, os.PathLike], hours: float, *, seed: Seed = 0, rate: int = RATE) -> dict:
    """Write ``hours`` of audio (exactly ``round(hours * 3600 * rate)`` frames) to ``path`` by streaming.

    The programme repeats as episodes; the first is ``synthesize_recording``'s for the same seed, the others
    vary the pauses, each voice's level (+-3 dB), the events' level, pitch, count and length. Samples are
    made and written 10 s at a time, so memory holds the script's spoken lines (rendered once) and one block,
    whatever the length. The ground truth is ``synthesize_recording``'s with ``episode`` on every record and
    segment, leaving out the records the end of the file cuts; ``dependencies`` is empty (they link segments
    of one episode: see ``demo_script.DEPENDENCIES``).
    """
    if not hours > 0:
        raise ValueError(f"hours must be positive, got {hours!r}")
    return _write(path, seed, rate, int(round(hours * 3600 * rate)))
