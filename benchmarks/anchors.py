"""Anchoring speed and memory: a 2-hour 16 kHz mono 16-bit WAV anchored with each operation at 3 positions
(AudioSpan App. B.3), read and written in blocks, then verified against its manifest.

The input is written a minute at a time (``fragments.write_long_wav``, the same signal as the fragments
benchmark). Each operation runs ``apply_manifest`` in a fresh worker process (this file with ``--worker``)
that measures itself: wall time and its own peak resident memory (``VmHWM`` of /proc/self/status, not
``ru_maxrss``, which a child started by fork+exec inherits from its parent; see benchmarks/fragments.py),
printed as one JSON line. ``verify_anchored`` runs in a second worker, measured the same way. Targets (the
issue): under 1/100 of real time and under 300 MB peak for the anchoring.

    .venv/bin/python benchmarks/anchors.py [--hours 2] [--rate 16000] [--keep DIR]

Positions: 3 spans of 5 s at 20, 60 and 100 minutes (scaled with --hours). The input is loud (a tone
and noise at -13 dBFS RMS, 0.45 peak), so the added event is a 3-s 400 Hz square-wave buzzer (crest factor
1) at 6 dB SNR: event and signal then sum below full scale, and no sample is clipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from fragments import peak_rss_mb, write_long_wav  # this folder: the same input writer and peak reader

ROOT = Path(__file__).resolve().parents[1]  # the worker imports this checkout's audioreason
OPERATIONS = {
    "addition": ("addition", {"event_category": "buzzer", "snr_db": 6.0}),
    "deletion (silence)": ("deletion", {"deletion_mode": "silence"}),
    "deletion (noise)": ("deletion", {"deletion_mode": "noise", "seed": 1}),
    "modification (loudness -10 dB)": ("modification", {"attribute": "loudness", "gain_db": -10.0}),
    "modification (speed x2)": ("modification", {"attribute": "speed", "speed_factor": 2.0}),
}


def worker(task: str, name: str, source: str, out: str, clip: str, hours: float) -> dict:
    """Apply (``task="apply"``) or verify one operation in this process and measure it."""
    from audioreason.audio.anchor_files import anchor_recording, verify_anchored
    from audioreason.audio.anchor_manifest import read_manifest, write_manifest

    start = time.perf_counter()
    if task == "apply":
        op, fields = OPERATIONS[name]
        scale = hours / 2
        starts = [20 * 60 * scale, 60 * 60 * scale, 100 * 60 * scale]
        positions = [[s, None] if op == "addition" else [s, s + 5.0] for s in starts]
        manifest = anchor_recording(source, out, op, positions, clip=clip if op == "addition" else None, **fields)
        write_manifest(manifest, out + ".json")
        stats = {"clipped": manifest["output"]["clipped_samples"]}
    else:
        report = verify_anchored(read_manifest(out + ".json"), clip=clip)
        stats = {
            "ok": report["ok"],
            "outside_differing": report["outside_differing"],
            "measured": [c["measured"] for c in report["positions"]],
        }
    elapsed = time.perf_counter() - start
    peak, measure = peak_rss_mb()
    return {"seconds": elapsed, "peak_rss_mb": peak, "peak_rss_measure": measure, **stats}


def run_worker(*args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, __file__, "--worker", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the worker failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        task, name, source, out, clip, hours = sys.argv[2:8]
        print(json.dumps(worker(task, name, source, out, clip, float(hours))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--rate", type=int, default=16000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep the files")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="audioreason-anchors-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        import soundfile as sf

        source = work / "long.wav"
        total = write_long_wav(source, args.hours * 3600, args.rate)
        t = np.arange(3 * args.rate) / args.rate
        sf.write(
            str(work / "buzzer.wav"),
            (0.5 * np.sign(np.sin(2 * np.pi * 400 * t))).astype(np.float32),
            args.rate,
            subtype="PCM_16",
        )
        print(
            f"input: {source.stat().st_size / 1e6:.0f} MB PCM_16 WAV, {total} samples ({args.hours:g} h at "
            f"{args.rate} Hz); 3 positions per operation"
        )
        real_time = args.hours * 3600
        rows = [("operation", "apply s", "x real time", "peak MB", "clipped", "verify s", "verify peak MB", "verified")]
        ok = True
        for n, name in enumerate(OPERATIONS):
            out = str(work / f"anchored-{n}.wav")
            applied = run_worker("apply", name, str(source), out, str(work / "buzzer.wav"), str(args.hours))
            checked = run_worker("verify", name, str(source), out, str(work / "buzzer.wav"), str(args.hours))
            ratio = applied["seconds"] / real_time
            ok = ok and ratio < 0.01 and applied["peak_rss_mb"] < 300 and checked["ok"]
            rows.append(
                (
                    name,
                    f"{applied['seconds']:.2f}",
                    f"{ratio:.5f}",
                    f"{applied['peak_rss_mb']:.0f}",
                    str(applied["clipped"]),
                    f"{checked['seconds']:.2f}",
                    f"{checked['peak_rss_mb']:.0f}",
                    str(checked["ok"]),
                )
            )
            Path(out).unlink()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        print(
            f"peak memory: {applied['peak_rss_measure']} of each worker process; targets < 0.01 x real time and "
            "< 300 MB for apply"
        )
        print("targets met" if ok else "TARGETS MISSED")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
