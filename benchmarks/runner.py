"""Runner speed: items/s for 1 and 2 processes on the same work, padding waste of length-sorted vs arrival-order
batches, and the share of the generation loop outside the model forward.

Work: ``--items`` real MMAR items (tests/data/MMAR-meta.jsonl) with synthesized clips of 2-25 s (the length
drawn per item from a fixed seed), conditions full and none, template plain, greedy, 16 new tokens, batches
of ``--batch-size``. The model is a random Phi-4-multimodal checkpoint built from a config: "tiny" is the
tests' (hidden 32, 2 layers), "small" a larger language model (hidden 512, 8 layers) whose forward is a
larger share of each item, closer to a real model's. Nothing is downloaded.

1. items/s: ``audioreason run`` as real processes, one process and ``--num-processes 2``, each process with
   ``--threads`` torch threads; items/s = units / generation-loop seconds of the slowest process (run.json),
   so interpreter start-up and model loading are left out. Target: >= 1.8x on 2. Needs two devices on a GPU
   machine (one process per GPU); with one GPU this row is skipped and says so.
2. padding waste: the units planned as the runner plans them, batched in arrival order (item order, audio
   and no-audio requests apart, as the adapters batch them) and length-sorted (the runner's order); waste =
   padded positions / all positions, for prompt tokens (text + audio placeholders, from the run's records)
   and for audio seconds (processors that pad every clip of a batch to the longest).
3. overhead: the same work in this process with ``model.generate`` and the processor call timed. The
   headline is the share of the generation loop spent outside ``model.generate`` (target < 5% at batch
   8): audio decoding, the processor call, records, fsync, batching, whatever of them is not hidden
   behind the model by the runner's prefetch thread (``audioreason.inference.prefetch``). Audio
   decoding and the processor's time (feature extraction, chat template, tokenization) are reported
   beside it; with the prefetch thread they overlap the forward (and compete with it for the CPU).

    .venv/bin/python benchmarks/runner.py [--items 32] [--size tiny|small] [--batch-size 4] [--threads 1]
                                          [--dtype float32] [--keep DIR] [--overhead-only]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's audioreason and the tests' model builders
SIZES = {"tiny": dict(hidden=32, layers=2), "small": dict(hidden=512, layers=8)}
CONDITIONS = ["full", "none"]
NEW_TOKENS = 16


def parameters(folder: Path) -> int:
    from safetensors import safe_open

    total = 0
    for path in folder.glob("*.safetensors"):
        with safe_open(str(path), "pt") as f:
            total += sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys())
    return total


def write_workload(folder: Path, n: int) -> Path:
    """An MMAR raw folder: the first ``n`` real records, each with a synthesized clip of 2-25 s."""
    from audioreason.audio import synthesize_clip, write_audio

    rows = [
        json.loads(line)
        for line in (ROOT / "tests" / "data" / "MMAR-meta.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ][:n]
    seconds = np.random.default_rng(0).uniform(2, 25, len(rows))
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "MMAR-meta.jsonl", "w", encoding="utf-8") as f:
        for row, length in zip(rows, seconds):
            row = {**row, "audio_path": f"./audio/{row['id']}.wav"}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            write_audio(
                folder / row["audio_path"],
                synthesize_clip(row["modality"], float(length), 16000, seed=row["id"]),
                16000,
            )
    return folder


def cli_run(model: Path, data: Path, out: Path, processes: int, args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        "-m",
        "audioreason",
        "run",
        "--model",
        str(model),
        "--benchmark",
        "mmar",
        "--data",
        str(data),
        "--conditions",
        ",".join(CONDITIONS),
        "--templates",
        "plain",
        "--batch-size",
        str(args.batch_size),
        "--max-new-tokens",
        str(NEW_TOKENS),
        "--dtype",
        args.dtype,
        "--out",
        str(out),
        "--no-progress",
    ]
    if processes > 1:
        command += ["--num-processes", str(processes)]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": str(args.threads),
        "PYTHONPATH": str(ROOT),
        "TRANSFORMERS_VERBOSITY": "error",
    }
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"audioreason run failed:\n{done.stderr[-3000:]}")
    return json.loads((out / "run.json").read_text(encoding="utf-8"))


def padding_waste(model: Path, data: Path, records: list[dict], batch_size: int) -> dict[str, tuple[float, float]]:
    """{order: (token waste, audio-second waste)} for arrival-order and length-sorted batches."""
    from audioreason.inference.conditions import AudioPreparer, parse_conditions
    from audioreason.inference.prompts import get_template
    from audioreason.inference.runner import batches, length_sorted, load_items, plan_units

    items = load_items("mmar", str(data))
    units, _ = plan_units(
        items, parse_conditions(CONDITIONS), [get_template("plain")], {"main": str(model)}, AudioPreparer(16000, None)
    )
    by_key = {r["key"]: r for r in records}
    arrival = sorted(units, key=lambda u: (u.role, not u.condition.sends_audio, u.order))

    def waste(ordered, field) -> float:
        used = padded = 0.0
        for batch in batches(ordered, batch_size):
            values = [field(by_key[u.key]) for u in batch]
            used += sum(values)
            padded += max(values) * len(values)
        return 1 - used / padded if padded else 0.0

    tokens = lambda r: r["tokens"]["prompt"]  # noqa: E731
    audio = lambda r: r["audio"]["seconds"]  # noqa: E731
    return {
        order: (waste(units_, tokens), waste(units_, audio))
        for order, units_ in (("arrival order", arrival), ("length-sorted", length_sorted(units)))
    }


def overhead(model: Path, data: Path, out: Path, args: argparse.Namespace) -> dict[str, float]:
    """Per-item seconds: the generation loop, inside model.generate, in the processor, decoding audio."""
    import torch

    from audioreason.inference import DecodingParams
    from audioreason.inference.runner import RunConfig, run
    from audioreason.inference.transformers_audio import TransformersAudioAdapter

    torch.set_num_threads(args.threads)
    adapter = TransformersAudioAdapter(
        str(model), dtype=args.dtype, device="cuda" if torch.cuda.is_available() else None
    )
    from audioreason.inference.runner import ShardWriter

    spent = {"generate": 0.0, "processor": 0.0, "adapter": 0.0, "records": 0.0}

    def timed(name, function):
        def wrapper(*a, **k):
            start = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                spent[name] += time.perf_counter() - start

        return wrapper

    adapter.model.generate = timed("generate", adapter.model.generate)
    adapter.generate = timed("adapter", adapter.generate)
    writes = "write_all" if hasattr(ShardWriter, "write_all") else "write"  # (before the prefetch: write)
    setattr(ShardWriter, writes, timed("records", getattr(ShardWriter, writes)))
    adapter.processor.apply_chat_template = timed("processor", adapter.processor.apply_chat_template)
    if getattr(adapter, "prefetch_processor", None) is not None:  # the copy the prefetch thread calls
        ahead = adapter.prefetch_processor
        ahead.apply_chat_template = timed("processor", ahead.apply_chat_template)
    summary = run(
        RunConfig(
            model=str(model),
            benchmark="mmar",
            data=str(data),
            out=str(out),
            conditions=CONDITIONS,
            templates=["plain"],
            batch_size=args.batch_size,
            decoding=DecodingParams(max_new_tokens=NEW_TOKENS),
            progress=False,
        ),
        {"main": adapter},
    )
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    n = len(records)
    loop = summary["sessions"][-1]["generation_s"]
    audio = sum(r["timings"]["audio_s"] for r in records)
    return {
        "items": n,
        "loop": loop / n,
        "forward": spent["generate"] / n,
        "processor": spent["processor"] / n,
        "outside": (loop - spent["generate"]) / loop,
        "in_adapter": (spent["adapter"] - spent["generate"]) / n,
        "records_s": spent["records"] / n,
        "rest": (loop - spent["adapter"] - spent["records"]) / n,
        "audio": audio / n,
        "records": records,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--keep", type=Path, help="keep the model, data and runs here")
    parser.add_argument("--overhead-only", action="store_true", help="only part 3 (no CLI runs, no padding rows)")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from tiny_audio_models import build_phi4_multimodal

    work = args.keep or Path(tempfile.mkdtemp(prefix="runner-bench-"))
    try:
        model = build_phi4_multimodal(work / "model", **SIZES[args.size])
        data = write_workload(work / "data", args.items)
        units = args.items * len(CONDITIONS)
        devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
        device = f"{devices} x {torch.cuda.get_device_name(0)}" if devices else f"CPU ({os.cpu_count()} cores)"
        measured = overhead(model, data, work / "inprocess", args)
        rows = [
            (
                "work",
                f"{args.items} items x {len(CONDITIONS)} conditions = {units} units, batch {args.batch_size}, "
                f"{NEW_TOKENS} new tokens, model '{args.size}' ({parameters(model) / 1e6:.1f} M parameters), "
                f"{args.dtype}, {device}, {args.threads} thread(s)/process",
            )
        ]
        throughput = {}
        for processes in () if args.overhead_only else (1, 2):
            if devices and processes > devices:
                rows.append((f"items/s, {processes} processes", f"skipped: {devices} GPU(s), one process per GPU"))
                continue
            session = cli_run(model, data, work / f"cli-{processes}", processes, args)["sessions"][-1]
            throughput[processes] = session["items_per_s"]
            rows.append(
                (
                    f"items/s, {processes} process{'es' if processes > 1 else ''}",
                    f"{session['items_per_s']:.2f} ({session['ran']} units in {session['generation_s']:.1f} s)",
                )
            )
        if len(throughput) == 2:
            rows.append(("speed-up on 2 processes (target >= 1.8x)", f"{throughput[2] / throughput[1]:.2f}x"))
        waste = {} if args.overhead_only else padding_waste(model, data, measured["records"], args.batch_size)
        for order, (tokens, seconds) in waste.items():
            rows.append(
                (
                    f"padding waste, {order}",
                    f"{100 * tokens:.1f}% of prompt tokens, {100 * seconds:.1f}% of audio seconds",
                )
            )
        forward = measured["forward"]
        rows += [
            (
                "loop outside model.generate (target < 5% at batch 8)",
                f"{100 * measured['outside']:.1f}% of the generation loop ({1000 * measured['loop']:.1f} ms per item)",
            ),
            (
                "  in the adapter around the forward (processor if not ahead, inputs moved, tokens read)",
                f"{1000 * measured['in_adapter']:.1f} ms per item",
            ),
            ("  records written, fsync", f"{1000 * measured['records_s']:.1f} ms per item"),
            (
                "  the rest of the loop (audio if not ahead, waiting for the prefetch thread, batching)",
                f"{1000 * measured['rest']:.1f} ms per item",
            ),
            ("forward (inside model.generate), per item", f"{1000 * forward:.1f} ms"),
            (
                "audio decoding and cutting per item (prefetch thread, where there is one)",
                f"{1000 * measured['audio']:.1f} ms",
            ),
            (
                "processor per item: features, template, tokens (prefetch thread, where there is one)",
                f"{1000 * measured['processor']:.1f} ms = {100 * measured['processor'] / forward:.1f}% of the forward",
            ),
            ("load average (1 min) at the end", f"{os.getloadavg()[0]:.2f}"),
        ]
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"{name:<{width}}  {value}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
