"""Fragmenting speed and memory: a 2-hour 16 kHz mono WAV cut into all 14 fragments (N = 2..5).

The input is written in blocks (2 h of audio never sits in memory), then ``fragment_audio`` runs in a
fresh worker process (this file, run with ``--worker``) that measures itself: wall time, its own peak
resident memory and the tracemalloc peak of Python allocations (numpy buffers included), reported as one
JSON line. The parent prints the table and removes every file. Targets (the issue): under 1/100 of real
time and under 300 MB peak.

Peak RSS is the worker's own high-water mark, ``VmHWM`` of /proc/self/status (Linux). Not ``ru_maxrss``:
a process started by fork+exec (subprocess, multiprocessing's spawn) starts with its parent's peak in
``ru_maxrss`` (measured here: a worker whose parent had touched 600 MB reported 627 MB there, 29 MB in
VmHWM). Where /proc is absent the worker falls back to ``ru_maxrss`` and the table says so.

    .venv/bin/python benchmarks/fragments.py [--hours 2] [--rate 16000] [--source-rate 44100]
                                             [--subtype FLOAT] [--keep DIR]

``--source-rate`` writes the input at another rate, so the streaming resampler is timed too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]  # the worker imports this checkout's audioreason


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


def peak_rss_mb() -> tuple[float, str]:
    """(this process's own peak resident memory in MB, how it was read): VmHWM, else ru_maxrss."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024, "VmHWM"
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux, bytes on macOS
    return maxrss / (2**20 if sys.platform == "darwin" else 1024), "ru_maxrss (may include the parent's peak)"


def worker(path: str, out_dir: str, rate: int, subtype: str) -> dict:
    """Run ``fragment_audio`` in this process and measure it; the statistics the parent prints."""
    import tracemalloc

    from audioreason.audio.fragments import fragment_audio

    tracemalloc.start()
    start = time.perf_counter()
    result = fragment_audio(path, out_dir, ns=(2, 3, 4, 5), sampling_rate=rate, subtype=subtype)
    elapsed = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak, measure = peak_rss_mb()
    return {
        "seconds": elapsed,
        "fragments": len(result.fragments),
        "skipped": len(result.skipped),
        "total_samples": result.total_samples,
        "traced_peak_mb": traced_peak / 2**20,
        "bytes_written": sum(f.path.stat().st_size for f in result.fragments),
        "peak_rss_mb": peak,
        "peak_rss_measure": measure,
    }


def run_worker(path: Path, out_dir: Path, rate: int, subtype: str) -> dict:
    """``worker`` in a fresh Python process (this file with --worker); its JSON statistics."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(path), str(out_dir), str(rate), subtype],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the worker failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        path, out_dir, rate, subtype = sys.argv[2:6]
        print(json.dumps(worker(path, out_dir, int(rate), subtype)))
        return
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
        print(
            f"input: {source.stat().st_size / 1e6:.0f} MB PCM_16 WAV, {total} samples "
            f"({args.hours:g} h at {source_rate} Hz), written in {time.perf_counter() - t0:.1f} s; "
            f"fragments at {args.rate} Hz"
        )
        stats = run_worker(source, work / "fragments", args.rate, args.subtype)
        real_time = args.hours * 3600
        rows = [
            ("fragments written (N=2..5)", f"{stats['fragments']} ({stats['skipped']} skipped)", ""),
            ("output", f"{stats['bytes_written'] / 1e6:.0f} MB {args.subtype} WAV", ""),
            ("wall time", f"{stats['seconds']:.1f} s", ""),
            ("x real time", f"{stats['seconds'] / real_time:.5f}", "target < 0.01"),
            (
                "peak RSS (worker process)",
                f"{stats['peak_rss_mb']:.0f} MB",
                f"target < 300 MB; {stats['peak_rss_measure']}",
            ),
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
