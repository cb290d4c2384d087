"""ARIA M1 memory: peak resident memory of embedding one audio file, from 1 minute to 10 hours.

For each length a deterministic 16 kHz PCM_16 WAV is written one minute at a time (10 hours never sit in
memory), then each M1 audio mode embeds it in a fresh worker process (this file, run with ``--worker``)
that measures itself and prints one JSON line:

- ``whole``: the default, the paper's whole audio (consecutive 10-s windows, duration-weighted);
- ``random_crop``: the option, one seeded 10-s crop;
- ``fused``: a fused CLAP checkpoint (``enable_fusion``), CLAP's own long-audio fusion.

The model is a tiny random CLAP with the real feature extractor (48 kHz, 10-s windows, 64 mel bins, hop
480): the audio path (reading, resampling, windows, mel features, batches) is the paper's, only the
transformer is small, so the numbers show what the audio costs. Peak RSS is the worker's own high-water
mark (``VmHWM``, see benchmarks/fragments.py for why not ``ru_maxrss``); "model loaded" is its VmHWM
before the file is read, so the difference is what embedding the file cost. The worker's address space is
capped (``--memory-cap-gb``), so a path that decodes the whole file fails with MemoryError instead of
driving the machine out of memory; such a row reads "MemoryError". For scale, the last column gives what
a whole-file decode holds: the 48 kHz float32 clip plus the float64 copy the feature extractor makes.

    .venv/bin/python benchmarks/aria_memory.py [--minutes 1,10,60,600] [--modes whole,random_crop,fused]
                                               [--batch-size 16] [--memory-cap-gb 8] [--keep DIR]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fragments import peak_rss_mb, write_long_wav  # noqa: E402  (one implementation of each)

ROOT = Path(__file__).resolve().parents[1]  # the worker imports this checkout's audioreason
MODES = ("whole", "random_crop", "fused")
RATE = 16000


def tiny_clap(fused: bool):
    """A ClapBackend: a small random CLAP transformer behind CLAP's real feature extractor (its defaults are
    laion/clap-htsat-unfused's: 48 kHz, 10 s, 64 mel bins, hop 480, FFT 1024)."""
    from types import SimpleNamespace

    import torch
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel

    from audioreason.backends.clap import ClapBackend

    torch.manual_seed(0)
    config = ClapConfig(
        text_config=dict(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=37,
            max_position_embeddings=80,
            pad_token_id=1,
        ),
        audio_config=dict(
            hidden_size=32,
            num_mel_bins=64,
            spec_size=256,
            patch_size=4,
            patch_stride=(4, 4),
            depths=[1, 1],
            num_attention_heads=[2, 2],
            window_size=4,
            patch_embeds_hidden_size=16,
            projection_hidden_size=32,
            enable_fusion=fused,
        ),
        projection_dim=16,
    )
    processor = SimpleNamespace(feature_extractor=ClapFeatureExtractor())  # audio only: no tokenizer needed
    return ClapBackend(ClapModel(config), processor, f"tiny random CLAP ({'fused' if fused else 'unfused'})")


def worker(path: str, mode: str, batch_size: int, cap_gb: float) -> dict:
    """Embed ``path`` with one M1 mode in this process; its timings and peak memory."""
    limit = int(cap_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    clap = tiny_clap(fused=mode == "fused")
    model_loaded, measure = peak_rss_mb()
    start = time.perf_counter()
    try:
        vec = clap.embed_sources([path], "random_crop" if mode == "random_crop" else "whole", batch_size)[0]
        outcome = type(vec).__name__ if isinstance(vec, Exception) else f"embedding of {len(vec)} values"
    except MemoryError:
        outcome = "MemoryError"
    seconds = time.perf_counter() - start
    peak, _ = peak_rss_mb()
    return {
        "seconds": seconds,
        "outcome": outcome,
        "model_loaded_mb": model_loaded,
        "peak_rss_mb": peak,
        "measure": measure,
    }


def run_worker(path: Path, mode: str, batch_size: int, cap_gb: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(path), mode, str(batch_size), str(cap_gb)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return {"outcome": f"worker failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"}
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        path, mode, batch_size, cap_gb = sys.argv[2:6]
        print(json.dumps(worker(path, mode, int(batch_size), float(cap_gb))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", default="1,10,60,600", help="lengths of the files, in minutes")
    parser.add_argument("--modes", default=",".join(MODES), help=f"some of {', '.join(MODES)}")
    parser.add_argument("--batch-size", type=int, default=16, help="windows per CLAP batch (the scorer's default)")
    parser.add_argument("--memory-cap-gb", type=float, default=8.0, help="address-space cap of each worker")
    parser.add_argument("--keep", type=Path, help="write the files into this folder and keep them")
    args = parser.parse_args()
    minutes = [float(m) for m in args.minutes.split(",") if m]
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown modes {unknown}; choose from {MODES}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="audioreason-aria-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"M1 memory: one {RATE} Hz PCM_16 WAV per length, embedded in a fresh worker per mode and length "
        f"(batch of {args.batch_size} windows, address space capped at {args.memory_cap_gb:g} GB)\n"
    )
    header = (
        f"{'audio':>8}  {'mode':<11}  {'model loaded':>12}  {'peak RSS':>9}  {'cost':>8}  {'time':>7}  "
        f"{'whole decode':>12}  outcome"
    )
    print(header)
    try:
        for m in minutes:
            path = work / f"{m:g}min.wav"
            if not path.exists():
                write_long_wav(path, m * 60, RATE)
            whole_mb = m * 60 * 48000 * (4 + 8) / 2**20  # float32 clip + the extractor's float64 copy
            for mode in modes:
                s = run_worker(path, mode, args.batch_size, args.memory_cap_gb)
                label = f"{m / 60:g} h" if m >= 60 else f"{m:g} min"
                if "peak_rss_mb" not in s:
                    print(
                        f"{label:>8}  {mode:<11}  {'':>12}  {'':>9}  {'':>8}  {'':>7}  "
                        f"{whole_mb:>9.0f} MB  {s['outcome']}"
                    )
                    continue
                print(
                    f"{label:>8}  {mode:<11}  {s['model_loaded_mb']:>9.0f} MB  {s['peak_rss_mb']:>6.0f} MB  "
                    f"{s['peak_rss_mb'] - s['model_loaded_mb']:>5.0f} MB  {s['seconds']:>6.1f}s  "
                    f"{whole_mb:>9.0f} MB  {s['outcome']}",
                    flush=True,
                )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
