"""Sweep start-up: one `audioreason evaluate` process per benchmark vs one `evaluate --config sweep.yaml`.

Work: a tiny random Phi-4-multimodal checkpoint (the tests' builder; ``--size small`` for the larger one of
benchmarks/runner.py), ``--items`` MMAR items (tests/data/MMAR-meta.jsonl) and as many MMAU test-mini items
(tests/data/mmau-test-mini.json), each with a synthesized 3 s clip; conditions full and none, template plain,
greedy, 8 new tokens, the accuracy scorer. Nothing is downloaded.

1. before: `audioreason evaluate` once per benchmark, as separate processes (each pays the imports, the
   model load and the dataset build), wall time of each and in all;
2. after: one `audioreason evaluate --config sweep.yaml` over both benchmarks (the model built once), wall
   time, and what it recorded (model load seconds, the runs' generation-loop seconds, each run's time outside
   its generation loop and its scoring time: what a run still pays that the sweep does not pay once).
Both write fresh folders and build their datasets in caches of their own, after one warm-up import of the
libraries; the outputs of the two are compared (same texts).

    python benchmarks/sweep.py [--items 4] [--size tiny|small] [--threads 1] [--keep DIR]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
SIZES = {"tiny": dict(hidden=32, layers=2), "small": dict(hidden=512, layers=8)}
COMMON = [
    "--conditions",
    "full,none",
    "--templates",
    "plain",
    "--max-new-tokens",
    "8",
    "--scorers",
    "accuracy",
    "--no-progress",
]


def write_data(work: Path, n: int) -> dict[str, Path]:
    from audioreason.audio import synthesize_clip, write_audio
    from audioreason.data.mmar import demo_metadata, write_raw_folder

    mmar = write_raw_folder(demo_metadata()[:n], work / "mmar")
    records = json.loads((ROOT / "tests" / "data" / "mmau-test-mini.json").read_text("utf-8"))[:n]
    for record in records:
        write_audio(work / "mmau" / record["audio_id"], synthesize_clip("sound", 3.0, 16000, seed=record["id"]), 16000)
    (work / "mmau" / "mmau-test-mini.json").write_text(json.dumps(records), encoding="utf-8")
    return {"mmar": mmar, "mmau-test-mini": work / "mmau"}


def timed(command: list[str], threads: int, datasets_cache: Path) -> float:
    """Wall seconds of one CLI process; each arm builds its datasets in its own cache (neither reuses the
    other's build)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": str(threads),
        "PYTHONPATH": str(ROOT),
        "TRANSFORMERS_VERBOSITY": "error",
        "HF_DATASETS_CACHE": str(datasets_cache),
    }
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "audioreason", *command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def texts(folder: Path) -> list[tuple[str, str, str]]:
    return [
        (r["id"], r["condition"], r["output"])
        for r in map(json.loads, (folder / "outputs.jsonl").read_text(encoding="utf-8").splitlines())
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    from tiny_audio_models import build_phi4_multimodal

    work = args.keep or Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    try:
        model = build_phi4_multimodal(work / "model", **SIZES[args.size])
        data = write_data(work, args.items)
        rows = [
            (
                "work",
                f"model '{args.size}', 2 benchmarks x {args.items} items x 2 conditions = "
                f"{4 * args.items} units, {args.threads} thread(s)",
            )
        ]
        # Warm the OS file cache (torch, transformers, datasets) so that the first arm does not pay it alone.
        subprocess.run([sys.executable, "-c", "import torch, transformers, datasets, accelerate"], check=True)
        separate = {}
        for benchmark, folder in data.items():
            separate[benchmark] = timed(
                [
                    "evaluate",
                    "--model",
                    str(model),
                    "--benchmark",
                    benchmark,
                    "--data",
                    str(folder),
                    "--out",
                    str(work / "separate" / benchmark),
                    *COMMON,
                ],
                args.threads,
                work / "datasets-before",
            )
            rows.append((f"before: `evaluate` on {benchmark} (own process)", f"{separate[benchmark]:.1f} s"))
            generation = json.loads((work / "separate" / benchmark / "run.json").read_text())["sessions"][-1][
                "generation_s"
            ]
            rows.append(
                ("  its start-up and scoring (wall minus generation loop)", f"{separate[benchmark] - generation:.1f} s")
            )
        rows.append(("before: both benchmarks", f"{sum(separate.values()):.1f} s"))
        config = work / "sweep.yaml"
        config.write_text(
            "\n".join(
                [
                    f"out: {work / 'swept'}",
                    "models:",
                    f"  - {{name: tiny, model: {model}}}",
                    "benchmarks:",
                    *[f"  - {{benchmark: {b}, data: {f}}}" for b, f in data.items()],
                    "conditions: [full, none]",
                    "templates: [plain]",
                    "decoding: {max_new_tokens: 8}",
                    # as the separate runs (a sweep's default checks 24 items: more units, other outputs)
                    "audio_check: 0",
                    "score: {scorers: [accuracy]}",
                ]
            )
            + "\n",
            encoding="utf-8",
        )
        swept = timed(["evaluate", "--config", str(config), "--no-progress"], args.threads, work / "datasets-after")
        record = json.loads((work / "swept" / "sweep.json").read_text(encoding="utf-8"))
        loops = [
            json.loads((work / "swept" / r["folder"] / "run.json").read_text())["sessions"][-1]["generation_s"]
            for r in record["runs"]
        ]
        rows += [
            ("after: one sweep over both (one process)", f"{swept:.1f} s"),
            ("  model built (once)", f"{record['runs'][0]['model_load_s']:.1f} s"),
            ("  generation loops of its two runs", " + ".join(f"{s:.1f}" for s in loops) + " s"),
            (
                "  each run's own start-up (run minus generation loop)",
                " + ".join(f"{r['outside_generation_s']:.2f}" for r in record["runs"]) + " s",
            ),
            ("  each run's scoring", " + ".join(f"{r['score_s']:.2f}" for r in record["runs"]) + " s"),
            ("saved", f"{sum(separate.values()) - swept:.1f} s ({100 * (1 - swept / sum(separate.values())):.0f}%)"),
        ]
        same = all(texts(work / "separate" / b) == texts(work / "swept" / "tiny" / b) for b in data)
        rows.append(("outputs identical (separate vs sweep)", "yes" if same else "NO"))
        rows.append(("load average (1 min) at the end", f"{os.getloadavg()[0]:.2f}"))
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"{name:<{width}}  {value}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
