"""The tiny construction folder the review Space opens with when it is given none: one synthesized 40 s recording
(a speech-like voice, a burst of band-limited noise from 20 s, music from 30 s), its anchored copy (a 1 kHz beep
added at 8-9 s and 24-25 s), its caption's evidence records, one native question as an OEQ and an MCQ sharing
its pair id, and one anchor chain of three links. The audio is generated (``audioreason.audio.synth``), nothing is
downloaded; the texts describe that audio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from audioreason.audio.io import write_audio
from audioreason.audio.synth import synthesize_clip

RATE = 16000
RECORDING = "example-001"
BEEPS = ([8.0, 9.0], [24.0, 25.0])

EVIDENCE = [
    {
        "id": "s00.speech.000",
        "segment": 0,
        "start": 2.0,
        "end": 7.5,
        "modality": "speech",
        "content": "A single voice speaks in short syllables with a rising pitch.",
    },
    {
        "id": "s00.env",
        "segment": 0,
        "start": 0.0,
        "end": 20.0,
        "modality": "environment",
        "content": "A quiet room; no background noise under the voice.",
    },
    {
        "id": "s01.sound.000",
        "segment": 1,
        "start": 20.0,
        "end": 30.0,
        "modality": "sound",
        "content": "Bursts of hiss-like noise replace the voice.",
    },
    {
        "id": "s01.sound.001",
        "segment": 1,
        "start": 30.0,
        "end": 40.0,
        "modality": "sound",
        "content": "A short melody of plucked harmonic notes closes the recording.",
    },
    {
        "id": "g.000",
        "segment": None,
        "start": 0.0,
        "end": 40.0,
        "modality": "global",
        "content": "A synthetic test recording: voice, then noise, then music.",
    },
]

NATIVE = [
    {
        "id": f"{RECORDING}/native/P/oeq",
        "pair_id": f"{RECORDING}/native/P",
        "format": "OEQ",
        "question": "What sound replaces the voice in the middle of the recording, and when does it begin?",
        "reference_answer": "From about 00:20 bursts of hiss-like noise replace the voice.",
        "rubric": [
            {
                "text": "Names noise bursts as the sound",
                "importance": "essential",
                "time_range": None,
                "localization": False,
            },
            {
                "text": "Places its start near 00:20",
                "importance": "essential",
                "time_range": [20.0, 21.0],
                "localization": True,
            },
            {
                "text": "Notes that the voice stops",
                "importance": "supporting",
                "time_range": [18.0, 20.0],
                "localization": False,
            },
        ],
        "evidence": ["s01.sound.000", "s00.speech.000"],
    },
    {
        "id": f"{RECORDING}/native/P/mcq",
        "pair_id": f"{RECORDING}/native/P",
        "format": "MCQ",
        "question": "What sound replaces the voice in the middle of the recording?",
        "choices": ["A second voice", "Bursts of noise", "A melody", "Silence"],
        "answer": "Bursts of noise",
        "evidence": ["s01.sound.000"],
    },
]

ANCHOR = [
    {
        "link_position": 1,
        "question": "How many times does a beep occur, and where is the first one?",
        "choices": [
            "Twice; first near 00:08",
            "Twice; first near 00:35",
            "Three times; first near 00:08",
            "Once; near 00:24",
        ],
        "answer": "Twice; first near 00:08",
        "evidence": [],
    },
    {
        "link_position": 2,
        "question": "What is heard around the second beep?",
        "choices": ["The voice", "Noise bursts", "The melody", "Silence"],
        "answer": "Noise bursts",
        "evidence": ["s01.sound.000"],
    },
    {
        "link_position": 3,
        "question": "How does the material at the second beep relate to the closing melody?",
        "choices": [
            "It gives way to the melody at 00:30",
            "It repeats the melody",
            "It answers the voice",
            "No clear relation",
        ],
        "answer": "It gives way to the melody at 00:30",
        "evidence": ["s01.sound.000", "s01.sound.001"],
    },
]


def _audio() -> tuple[np.ndarray, np.ndarray]:
    voice = synthesize_clip("speech", 20.0, RATE, seed=RECORDING)
    noise = synthesize_clip("sound", 10.0, RATE, seed=RECORDING)
    music = synthesize_clip("music", 10.0, RATE, seed=RECORDING)
    original = np.concatenate([voice, noise, music]).astype(np.float32)
    anchored = original.copy()
    for start, end in BEEPS:
        a, b = int(start * RATE), int(end * RATE)
        anchored[a:b] = np.clip(anchored[a:b] + 0.4 * np.sin(2 * np.pi * 1000 * np.arange(b - a) / RATE), -1, 1)
    return original, anchored


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_example_folder(root: Any) -> Path:
    """Write the example construction folder into ``root`` (created); returns it."""
    root = Path(root)
    original, anchored = _audio()
    write_audio(root / "audio" / "original" / f"{RECORDING}.wav", original, RATE)
    write_audio(root / "audio" / "anchored" / f"{RECORDING}.wav", anchored, RATE)
    common = {"recording_id": RECORDING, "language": "en", "duration_tier": "S", "genre": "synthetic"}
    levels = {1: "perception", 2: "understanding", 3: "reasoning"}
    native = [{**common, "cognitive_level": "perception", "dimension": "recognition", **row} for row in NATIVE]
    anchor = [
        {
            **common,
            "id": f"{RECORDING}/anchor/{row['link_position']}",
            "chain_id": f"{RECORDING}/chain",
            "cognitive_level": levels[row["link_position"]],
            "operation": "addition",
            **row,
        }
        for row in ANCHOR
    ]
    _write_jsonl(root / "metadata" / "native.jsonl", native)
    _write_jsonl(root / "metadata" / "anchor.jsonl", anchor)
    manifest = {
        "recording_id": RECORDING,
        "operation": "addition",
        "positions": [list(b) for b in BEEPS],
        "event_category": "beep",
        "snr_db": 8.0,
    }
    _write_jsonl(root / "metadata" / "edits.jsonl", [manifest])
    caption = {
        "recording_id": RECORDING,
        "duration": 40.0,
        "audio_file": f"audio/original/{RECORDING}.wav",
        "evidence": EVIDENCE,
    }
    (root / "captions").mkdir(parents=True, exist_ok=True)
    (root / "captions" / f"{RECORDING}.json").write_text(json.dumps(caption, indent=1), encoding="utf-8")
    return root


__all__ = ["write_example_folder"]
