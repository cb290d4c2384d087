"""Construction Phase 1, step 1 on a long recording: the sentence-level transcript of a 2-hour file, offline.

The recording is ``audioreason.construct.demo_audio.long_recording``: the demo's radio programme (espeak-ng
voices, sound events, a room-noise floor) repeated as varying episodes, written 10 s at a time. The transcript
is ``audioreason.construct.transcribe.transcribe_recording`` with the packaged faster-whisper model (the "asr"
role's offline default), which reads the file in windows of 120 s through the streaming reader: the file is
never decoded whole. Everything runs in this process; memory is its own high-water mark (``VmHWM``, see
benchmarks/fragments.py), read after writing the file, after loading the model and at the end, so the last
step's growth is what transcribing cost. For scale, "whole decode" is what holding the file as 16 kHz float32
would take.

The ground truth gives the sentences each episode speaks: "found" is the share of them that a transcript
sentence overlaps in time, "start error" the median distance between a spoken sentence's start and that of
the first transcript sentence overlapping it (the transcript's sentences are cut at . ? ! and can join or
split the script's).

    .venv/bin/python benchmarks/construct_phase1.py [--minutes 120] [--seed 0] [--asr packaged:whisper-tiny.en]
                                                    [--window 120] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fragments import peak_rss_mb  # noqa: E402  (one implementation)

RATE = 16000


def match(truth: list[dict], found: list[dict]) -> tuple[float, float]:
    """(share of ``truth`` sentences overlapped by a ``found`` one, median start error of those, in s)."""
    errors = []
    for sentence in truth:
        hit = next((f for f in found if f["start"] < sentence["end"] and f["end"] > sentence["start"]), None)
        if hit is not None:
            errors.append(abs(hit["start"] - sentence["start"]))
    errors.sort()
    median = errors[len(errors) // 2] if errors else float("nan")
    return len(errors) / max(len(truth), 1), median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=120.0, help="length of the recording (default 2 h)")
    parser.add_argument("--seed", type=int, default=0, help="the recording's seed")
    parser.add_argument("--asr", default="packaged:whisper-tiny.en", help="the asr role's weights")
    parser.add_argument("--window", type=float, default=120.0, help="seconds of audio per recognizer window")
    parser.add_argument("--keep", type=Path, help="write the recording, its truth and the transcript here")
    args = parser.parse_args()
    if args.minutes <= 0:
        parser.error("--minutes must be positive")

    from audioreason.backends import load_backend
    from audioreason.construct.demo_audio import long_recording
    from audioreason.construct.transcribe import transcribe_recording

    work = args.keep or Path(tempfile.mkdtemp(prefix="audioreason-construct-phase1-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"recording-{args.minutes:g}min.wav"
    try:
        started = time.perf_counter()
        truth = long_recording(path, args.minutes / 60, seed=args.seed)
        write_s = time.perf_counter() - started
        written_mb, measure = peak_rss_mb()

        started = time.perf_counter()
        asr = load_backend("asr", args.asr)
        load_s = time.perf_counter() - started
        loaded_mb, _ = peak_rss_mb()

        windows: list[tuple[float, float]] = []
        started = time.perf_counter()
        sentences = asyncio.run(
            transcribe_recording(
                path, asr=asr, recording=path.stem, window=args.window, on_window=lambda a, b: windows.append((a, b))
            )
        )
        transcribe_s = time.perf_counter() - started
        peak_mb, _ = peak_rss_mb()
        if args.keep:
            (work / "truth.json").write_text(json.dumps(truth, indent=1))
            (work / "transcript.json").write_text(json.dumps(sentences, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    duration = truth["duration"]
    read = sum(b - a for a, b in windows)
    found, start_error = match(truth["sentences"], sentences)
    whole_mb = duration * RATE * 4 / 2**20
    print(
        f"Phase 1 step 1 (transcription), offline: {asr.description}\n"
        f"recording: {duration / 60:g} min of synthesized programme ({truth['episodes']} episodes, "
        f"{len(truth['sentences'])} spoken sentences), {RATE} Hz PCM_16, written in {write_s:.1f} s\n"
        f"memory: {measure} of this process; whole decode of the file would be {whole_mb:.0f} MB\n"
    )
    rows = [
        ("audio", f"{duration / 3600:.2f} h" if duration >= 3600 else f"{duration / 60:.1f} min"),
        ("windows read", f"{len(windows)} ({read / duration:.2f}x the audio, {args.window:g}-s windows)"),
        ("model load", f"{load_s:.1f} s"),
        ("wall time", f"{transcribe_s:.1f} s"),
        ("audio s per s", f"{duration / transcribe_s:.2f}"),
        ("peak RSS after writing", f"{written_mb:.0f} MB"),
        ("peak RSS after model load", f"{loaded_mb:.0f} MB"),
        ("peak RSS at the end", f"{peak_mb:.0f} MB (+{peak_mb - loaded_mb:.0f} MB transcribing)"),
        ("transcript sentences", f"{len(sentences)}"),
        ("spoken sentences found", f"{found:.1%} (median start error {start_error:.2f} s)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
