"""Construction Phase 1 on a long recording, offline: the whole caption (default) or its transcription alone.

The recording is ``audioreason.construct.demo_audio.long_recording``: the demo's radio programme (espeak-ng
voices, sound events, a room-noise floor) repeated as varying episodes, written 10 s at a time.

``--steps all`` (default) runs ``audioreason.construct.caption.build_caption`` (what the pipeline calls per
recording) with the offline roles (``roles.offline_roles``): the packaged faster-whisper for asr, the packaged
SmolLM2-135M-Instruct (the demo's ``DEMO_TEXT_MODEL``, ``--text-model``) for the text roles under each stage's
JSON Schema, and the signal-measurement stand-in for the captioner. Its five steps (transcription, semantic
segmentation, acoustic captioning, dependency analysis, assembly) are timed by ``build_caption``'s ``on_step``
hook; after each, the table gives its wall time, this process's peak memory so far and the model calls it
made. Then the counts: segments, evidence records by modality, requests and calls per role (re-asks
included), failed calls. The calls' cache (``Calls``) is in a fresh temporary folder, so every run is cold.
Model load (the language model when ``Calls`` is built, Whisper before step 1) is timed apart; Silero VAD
loads inside step 3.

``--steps transcribe`` reproduces the step-1 table: ``audioreason.construct.transcribe.transcribe_recording``
with the packaged faster-whisper model alone, reading the file in windows of 120 s through the streaming
reader (the file is never decoded whole), memory read after writing the file, after loading the model and
at the end, so the last growth is what transcribing cost. For scale, "whole decode" is what holding the file
as 16 kHz float32 would take.

Memory is this process's own high-water mark (``VmHWM``, see benchmarks/fragments.py); everything runs in
this process. The ground truth gives the sentences each episode speaks: "found" is the share of them that a
transcript sentence overlaps in time, "start error" the median distance between a spoken sentence's start
and that of the first transcript sentence overlapping it (the transcript's sentences are cut at . ? ! and
can join or split the script's).

    .venv/bin/python benchmarks/construct_phase1.py [--steps all|transcribe] [--minutes 120] [--seed 0]
        [--asr packaged:whisper-tiny.en] [--text-model packaged:SmolLM2-135M-Instruct] [--window 120]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

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


def print_rows(rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def audio_length(duration: float) -> str:
    return f"{duration / 3600:.2f} h" if duration >= 3600 else f"{duration / 60:.1f} min"


def transcribe_only(
    args: argparse.Namespace, path: Path, work: Path, truth: dict, written: tuple[float, float]
) -> None:
    """Step 1 alone, the table this script printed before ``--steps all`` existed."""
    from audioreason.backends import load_backend
    from audioreason.construct.transcribe import transcribe_recording

    write_s, written_mb = written

    started = time.perf_counter()
    asr = load_backend("asr", args.asr)
    load_s = time.perf_counter() - started
    loaded_mb, measure = peak_rss_mb()

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
        (work / "transcript.json").write_text(json.dumps(sentences, indent=1))

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
    print_rows(
        [
            ("audio", audio_length(duration)),
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
    )


def stretches_text(stretches: list) -> str:
    return f"{len(stretches)}: " + ", ".join(f"{a}-{b}" for a, b in stretches) if stretches else "none (read whole)"


async def _caption(calls: Any, path: Path, window: float, on_step: Any) -> Any:
    from audioreason.construct.caption import build_caption

    try:
        return await build_caption(calls, path, path.stem, window=window, on_step=on_step)
    finally:
        await calls.aclose()


def whole_phase1(args: argparse.Namespace, path: Path, work: Path, truth: dict, written: tuple[float, float]) -> None:
    """All five steps through ``build_caption``, each timed and measured as it ends."""
    from audioreason.construct.calls import Calls
    from audioreason.construct.records import MODALITIES
    from audioreason.construct.roles import RoleSpec, offline_roles
    from audioreason.construct.transcribe import CaptionStepFailed

    write_s, written_mb = written

    specs = offline_roles(args.text_model)
    specs["asr"] = RoleSpec("asr", "local", {"local": args.asr})
    cache = Path(tempfile.mkdtemp(prefix="audioreason-construct-phase1-cache-"))  # cold: no reply served twice
    try:
        started = time.perf_counter()
        calls = Calls(specs, cache / "calls.sqlite")  # loads the text model
        calls.local_asr()  # loads Whisper now, so step 1's time is transcribing
        load_s = time.perf_counter() - started
        loaded_mb, measure = peak_rss_mb()

        def sent() -> int:
            return sum(calls.calls_made().values())

        marks: list[tuple[str, float, float, int]] = [("", time.perf_counter(), loaded_mb, 0)]

        def on_step(step: str) -> None:
            marks.append((step, time.perf_counter(), peak_rss_mb()[0], sent()))
            print(
                f"{step}: done after {marks[-1][1] - marks[0][1]:.0f} s", file=sys.stderr, flush=True
            )  # a long run's progress

        failed = None
        try:
            caption = asyncio.run(_caption(calls, path, args.window, on_step))
        except CaptionStepFailed as err:  # the steps before it are still measured, and the failed one
            caption, failed = None, err
            on_step(f"{err.step} (failed)")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if args.keep and caption is not None:
        (work / "caption.json").write_text(caption.to_json())

    duration = truth["duration"]
    print(
        f"Phase 1, all five steps, offline: asr {calls.describe('asr')}; text roles {calls.describe('segmenter')}; "
        f"captioner offline stand-in\n"
        f"recording: {duration / 60:g} min of synthesized programme ({truth['episodes']} episodes, "
        f"{len(truth['sentences'])} spoken sentences), {RATE} Hz PCM_16, written in {write_s:.1f} s\n"
        f"memory: {measure} of this process, {written_mb:.0f} MB after writing, {loaded_mb:.0f} MB after loading "
        f"the models ({load_s:.1f} s)\n"
    )
    rows = [("step", "wall s | peak RSS after | model calls")]
    for (_, before, _, calls_before), (step, after, rss, calls_after) in zip(marks, marks[1:]):
        rows.append((step, f"{after - before:7.1f} | {rss:5.0f} MB | {calls_after - calls_before}"))
    total = marks[-1][1] - marks[0][1]
    rows.append(
        (
            "phase 1",
            f"{total:7.1f} | {marks[-1][2]:5.0f} MB | {marks[-1][3]}"
            + ("" if failed else f"  ({duration / total:.2f} audio s per s)"),
        )
    )
    if failed is not None:
        rows.append(("failed", f"step '{failed.step}': {failed.reason}"))
    print_rows(rows)
    print()

    counts = []
    if caption is not None:
        found, start_error = match(truth["sentences"], caption.transcript)
        modalities = Counter(e.modality for e in caption.evidence)
        counts += [
            ("audio", audio_length(duration)),
            ("transcript sentences", f"{len(caption.transcript)}"),
            ("spoken sentences found", f"{found:.1%} (median start error {start_error:.2f} s)"),
            ("segments", f"{len(caption.summary['segments'])}"),
            (
                "segmentation chunks",
                "{requests} asked, {halved} asked again as halves, {filled} replies kept whole (every slot "
                "filled)".format(**caption.provenance["segmentation"]),
            ),
            ("dependency stretches", stretches_text(caption.provenance["dependencies"]["stretches"])),
            ("evidence records", f"{len(caption.evidence)}: " + ", ".join(f"{m} {modalities[m]}" for m in MODALITIES)),
            ("dependencies, speakers", f"{len(caption.summary['dependencies'])}, {len(caption.summary['speakers'])}"),
        ]
    for role, runner in calls.runners.items():
        stats = runner.stats
        if stats.requests:
            counts.append(
                (
                    f"{role} calls",
                    f"{stats.calls} for {stats.requests} requests ({stats.reasks} re-asks, {stats.invalid} invalid, "
                    f"{stats.call_failed} failed calls); {stats.prompt_tokens} prompt + "
                    f"{stats.completion_tokens} completion tokens",
                )
            )
    counts += [
        ("asr", "in process (faster-whisper), no call through Calls"),
        ("captioner", "offline stand-in: signal measurements, no model call"),
        (
            "failed requests",
            f"{len(calls.failures)}" + "".join(f"; {f['stage']} {f['item']}" for f in calls.failures[:5]),
        ),
    ]
    print_rows(counts)


def main() -> None:
    from audioreason.apps.construct_demo import DEMO_TEXT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", choices=("all", "transcribe"), default="all", help="all five steps or step 1")
    parser.add_argument("--minutes", type=float, default=120.0, help="length of the recording (default 2 h)")
    parser.add_argument("--seed", type=int, default=0, help="the recording's seed")
    parser.add_argument("--asr", default="packaged:whisper-tiny.en", help="the asr role's weights")
    parser.add_argument("--text-model", default=DEMO_TEXT_MODEL, help="the text roles' local model (--steps all)")
    parser.add_argument("--window", type=float, default=120.0, help="seconds of audio per recognizer window")
    parser.add_argument("--keep", type=Path, help="write the recording, its truth and the transcript/caption here")
    args = parser.parse_args()
    if args.minutes <= 0:
        parser.error("--minutes must be positive")

    from audioreason.construct.demo_audio import long_recording

    work = args.keep or Path(tempfile.mkdtemp(prefix="audioreason-construct-phase1-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"recording-{args.minutes:g}min.wav"
    try:
        started = time.perf_counter()
        truth = long_recording(path, args.minutes / 60, seed=args.seed)
        written = (time.perf_counter() - started, peak_rss_mb()[0])
        if args.keep:
            (work / "truth.json").write_text(json.dumps(truth, indent=1))
        run = whole_phase1 if args.steps == "all" else transcribe_only
        run(args, path, work, truth, written)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
