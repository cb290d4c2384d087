"""Fragmenting speed and memory: a 2-hour 16 kHz mono WAV cut into all 14 fragments (N = 2..5).

The input is written in blocks (2 h of audio never sits in memory), then ``fragment_audio`` runs in a
fresh child process so that its peak resident memory (``ru_maxrss`` of the child) is its own and not
the writer's. Prints seconds, the fraction of real time, peak RSS and the tracemalloc peak of Python
allocations (numpy buffers included), then removes every file. Targets (the issue): under 1/100 of
real time and under 300 MB peak.

    .venv/bin/python benchmarks/fragments.py [--hours 2] [--rate 16000] [--source-rate 44100]
                                             [--subtype FLOAT] [--keep DIR]

``--source-rate`` writes the input at another rate, so the streaming resampler is timed too.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def write_long_wav(path: Path, seconds: float, rate: int, block_seconds: int = 60) -> int:
    """A deterministic PCM_16 WAV (a gliding tone plus noise), written one minute at a time."""
    import soundfile as sf

    total = int(round(seconds * rate))
    rng = np.random.default_rng(0)
    with sf.SoundFile(str(path), "w", samplerate=rate, channels=1, format="WAV", subtype="PCM_16") as out:
        for start in range(0, total, block_seconds * rate):
            t = np.arange(start, min(start + block_seconds * rate, total)) / rate
            tone = 0.3 * np.sin(2 * np.pi * (220 + 20 * np.sin(2 * np.pi * t / 600)) * t)
            out.write((tone + 0.05 * rng.standard_normal(len(t))).astype(np.float32))
    return total


def _child(path: str, out_dir: str, rate: int, subtype: str, queue: mp.Queue) -> None:
    import tracemalloc

    from audioreason.audio.fragments import fragment_audio

    tracemalloc.start()
    start = time.perf_counter()
    result = fragment_audio(path, out_dir, ns=(2, 3, 4, 5), sampling_rate=rate, subtype=subtype)
    elapsed = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    queue.put({"seconds": elapsed, "fragments": len(result.fragments), "skipped": len(result.skipped),
               "total_samples": result.total_samples, "traced_peak_mb": traced_peak / 2**20,
               "bytes_written": sum(f.path.stat().st_size for f in result.fragments),
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--rate", type=int, default=16000)
    parser.add_argument("--source-rate", type=int, help="rate of the input file (default: --rate, no resampling)")
    parser.add_argument("--subtype", default="FLOAT", help="fragment WAV subtype: FLOAT (lossless) or PCM_16")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep the files")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="audioreason-fragments-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        source = work / "long.wav"
        t0 = time.perf_counter()
        source_rate = args.source_rate or args.rate
        total = write_long_wav(source, args.hours * 3600, source_rate)
        print(f"input: {source.stat().st_size / 1e6:.0f} MB PCM_16 WAV, {total} samples "
              f"({args.hours:g} h at {source_rate} Hz), written in {time.perf_counter() - t0:.1f} s; "
              f"fragments at {args.rate} Hz")
        context = mp.get_context("spawn")
        queue = context.Queue()
        child = context.Process(target=_child, args=(str(source), str(work / "fragments"), args.rate,
                                                      args.subtype, queue))
        child.start()
        stats = queue.get()
        child.join()
        real_time = args.hours * 3600
        rows = [
            ("fragments written (N=2..5)", f"{stats['fragments']} ({stats['skipped']} skipped)", ""),
            ("output", f"{stats['bytes_written'] / 1e6:.0f} MB {args.subtype} WAV", ""),
            ("wall time", f"{stats['seconds']:.1f} s", ""),
            ("x real time", f"{stats['seconds'] / real_time:.5f}", "target < 0.01"),
            ("peak RSS (child process)", f"{stats['peak_rss_mb']:.0f} MB", "target < 300 MB"),
            ("tracemalloc peak", f"{stats['traced_peak_mb']:.1f} MB", "Python + numpy allocations"),
        ]
        width = max(len(r[0]) for r in rows)
        value_width = max(len(r[1]) for r in rows)
        for name, value, note in rows:
            print(f"{name.ljust(width)}  {value.ljust(value_width)}  {note}".rstrip())
        ok = stats["seconds"] / real_time < 0.01 and stats["peak_rss_mb"] < 300
        print("targets met" if ok else "TARGETS MISSED")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
