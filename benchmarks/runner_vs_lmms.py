"""The runner against lmms-eval end to end: the same random Qwen2-Audio folder, the same MMAR items and prompt,
greedy decoding, at batch 1 and batch 8; wall time from process start to exit (its outputs written), start-up,
and how many outputs are identical.

lmms-eval is not a dependency of audioreason and is never imported here: install it in a virtualenv of its
own and pass that environment's Python (``--lmms-python``). The numbers in docs/speed.md come from
lmms-eval 0.7.3 installed beside this project's pins of torch, transformers, datasets and accelerate (and a
filelock before 4.0: lmms-eval's evaluator imports ``filelock._api``, which 4.x no longer has)::

    python3 -m venv /tmp/lmms-venv
    /tmp/lmms-venv/bin/pip install --no-deps lmms-eval==0.7.3
    /tmp/lmms-venv/bin/pip install torch==2.13.0 transformers==5.24.0 accelerate==1.15.0 datasets==5.2.0 \\
        evaluate==0.4.6 numpy==2.4.6 huggingface-hub==2.4.0 pyarrow==26.0.1 soundfile==0.14.0 loguru jinja2 \\
        pydantic pytz pandas sacrebleu tenacity dill pillow librosa pytablewriter filelock==3.20.3
    .venv/bin/python benchmarks/runner_vs_lmms.py --lmms-python /tmp/lmms-venv/bin/python

Work: ``--items`` MMAR records (tests/data/MMAR-meta.jsonl) with synthesized clips of 2-25 s (as
benchmarks/runner.py), condition ``full``, template ``plain``, ``--new-tokens`` new tokens, greedy. The model
is the tests' tiny random Qwen2-Audio (tests/tiny_audio_models.py), float32 on the CPU, so the model's own
work is cheap and what each harness does around it shows. lmms-eval reads the same items from a local JSON
task (``--include_path``): its prompt is the ``plain`` template's text as audioreason renders it, its audio the
same WAV files (read with soundfile, float32, as audioreason's decoder gives them at 16 kHz).

lmms-eval 0.7.3's ``qwen2_audio`` model sends its inputs to ``"cuda"`` when ``device_map=auto`` (the only setting
that lets it load on a CPU); on a machine without CUDA the launcher this script writes maps that one move,
``BatchFeature.to("cuda")``, to the CPU. Nothing else of lmms-eval is changed.

Timed, per round and batch size, alternating which harness goes first: ``audioreason run`` (``python -m
audioreason.cli run --adapter transformers``) and ``lmms_eval`` (``--log_samples``), each a fresh process
writing a fresh folder; then start-up alone in each environment: the imports a run needs and the model build
(processor and weights). Round 0 warms the caches (datasets, the OS file cache) and is not counted; the
table has medians over ``--rounds`` rounds and the ratios of those medians.

    .venv/bin/python benchmarks/runner_vs_lmms.py --lmms-python PATH [--items 16] [--rounds 3]
                                                  [--batch-sizes 1,8] [--new-tokens 16] [--threads 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]
TASK = "audioreason_mmar_plain"

TASK_YAML = """\
task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {items}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_audio
doc_to_text: "{{{{prompt}}}}"
doc_to_target: answer
generation_kwargs:
  max_new_tokens: {new_tokens}
  temperature: 0
  do_sample: false
  num_beams: 1
process_results: !function utils.process_results
metric_list:
  - metric: exact
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0.0
"""

TASK_UTILS = """\
import soundfile


def doc_to_audio(doc):
    samples, rate = soundfile.read(doc["audio_file"], dtype="float32", always_2d=False)
    return [{"array": samples, "sampling_rate": rate}]


def process_results(doc, results):
    return {"exact": float(results[0].strip() == doc["answer"])}
"""

# Run with the lmms-eval environment's Python: lmms_eval's CLI, its one move to "cuda" kept on a CPU machine.
LAUNCHER = """\
import runpy, sys

import torch
from transformers import BatchFeature

if not torch.cuda.is_available():
    _to = BatchFeature.to

    def _cpu_to(self, *args, **kwargs):
        return _to(self, *("cpu" if a == "cuda" else a for a in args), **kwargs)

    BatchFeature.to = _cpu_to
sys.argv[0] = "lmms_eval"
runpy.run_module("lmms_eval", run_name="__main__", alter_sys=True)
"""

# Start-up alone: the imports a run needs, then the model build (processor, weights). argv: model folder.
# Start-up alone (argv: the model folder): the imports a run needs, then the model build (processor, weights).
# Both import transformers' processor and Qwen2-Audio classes in the import phase (lmms-eval's model module
# does so at its top, audioreason's adapter inside the build), so "model build" is the same work for both.
AUDIOREASON_STARTUP = """\
import sys, time
t0 = time.perf_counter()
import audioreason.cli, audioreason.cli.run, audioreason.data, audioreason.inference.runner
import audioreason.inference.transformers_audio as ta, accelerate, datasets, torch
from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration
audioreason.cli.build_parser()
t1 = time.perf_counter()
ta.TransformersAudioAdapter(sys.argv[1], device="cpu")
print(t1 - t0, time.perf_counter() - t1)
"""
LMMS_STARTUP = """\
import sys, time
t0 = time.perf_counter()
import lmms_eval.__main__, lmms_eval.evaluator, accelerate, datasets, torch
from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration
from lmms_eval.models.simple.qwen2_audio import Qwen2_Audio
t1 = time.perf_counter()
Qwen2_Audio(pretrained=sys.argv[1], device="cpu", device_map="auto")
print(t1 - t0, time.perf_counter() - t1)
"""


def write_lmms_task(folder: Path, raw: Path, new_tokens: int) -> list[str]:
    """The lmms-eval task folder for the raw MMAR folder's items; returns the item ids in task order."""
    from audioreason.inference.prompts import get_template
    from audioreason.inference.runner import load_items

    template = get_template("plain")
    items = load_items("mmar", str(raw))
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "items.jsonl", "w", encoding="utf-8") as f:
        for item in items:
            (message,) = template.messages(item)
            f.write(
                json.dumps(
                    {
                        "id": item["id"],
                        "prompt": message["content"],
                        "answer": item["answer"],
                        "audio_file": str(raw / "audio" / f"{item['id']}.wav"),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    (folder / f"{TASK}.yaml").write_text(
        TASK_YAML.format(task=TASK, items=folder / "items.jsonl", new_tokens=new_tokens), encoding="utf-8"
    )
    (folder / "utils.py").write_text(TASK_UTILS, encoding="utf-8")
    (folder / "launch_lmms.py").write_text(LAUNCHER, encoding="utf-8")
    return [item["id"] for item in items]


def timed(command: list[str], env: dict[str, str], what: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{what} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return seconds, done.stdout


def run_audioreason(model: Path, raw: Path, out: Path, batch: int, args, env) -> tuple[float, dict[str, str]]:
    command = [
        sys.executable,
        "-m",
        "audioreason.cli",
        "run",
        "--adapter",
        "transformers",
        "--model",
        str(model),
        "--benchmark",
        "mmar",
        "--data",
        str(raw),
        "--conditions",
        "full",
        "--templates",
        "plain",
        "--batch-size",
        str(batch),
        "--max-new-tokens",
        str(args.new_tokens),
        "--out",
        str(out),
        "--no-progress",
    ]
    seconds, _ = timed(command, env, "audioreason run")
    records = [json.loads(line) for line in (out / "outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    return seconds, {r["id"]: r["output"] for r in records}


def run_lmms(model: Path, task: Path, ids: list[str], out: Path, batch: int, args, env) -> tuple[float, dict[str, str]]:
    command = [
        args.lmms_python,
        str(task / "launch_lmms.py"),
        "--model",
        "qwen2_audio",
        "--model_args",
        f"pretrained={model},device=cpu,device_map=auto",
        "--tasks",
        TASK,
        "--include_path",
        str(task),
        "--batch_size",
        str(batch),
        "--log_samples",
        "--output_path",
        str(out),
    ]
    seconds, _ = timed(command, env, "lmms_eval")
    (samples,) = out.rglob(f"*_samples_{TASK}.jsonl")
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    # 0.7.3 logs the reply as filtered_resps; the task has no filter, so that is the raw reply unchanged
    return seconds, {ids[int(r["doc_id"])]: r["filtered_resps"] for r in rows}


def startup(python: str, script: str, model: Path, env) -> tuple[float, float, float]:
    """(imports + model build, imports, model build) seconds, timed inside the process."""
    _, printed = timed([python, "-c", script, str(model)], env, f"start-up probe ({python})")
    imports, build = (float(x) for x in printed.split()[-2:])
    return imports + build, imports, build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lmms-python", required=True, help="the Python of a virtualenv with lmms-eval installed")
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (after one warm-up round)")
    parser.add_argument("--batch-sizes", default="1,8")
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each process")
    parser.add_argument("--keep", type=Path, help="keep the model, data and outputs here")
    args = parser.parse_args()
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    os.environ["HF_HUB_OFFLINE"] = "1"
    from runner import write_workload
    from tiny_audio_models import build_qwen2_audio

    work = args.keep or Path(tempfile.mkdtemp(prefix="runner-vs-lmms-"))
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OMP_NUM_THREADS": str(args.threads),
        "PYTHONPATH": str(ROOT),
        "TRANSFORMERS_VERBOSITY": "error",
        "HF_HOME": str(work / "hf"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    lmms_env = {**env, "PYTHONPATH": ""}
    try:
        model = build_qwen2_audio(work / "model")
        raw = write_workload(work / "data", args.items)
        task = work / "lmms_task"
        ids = write_lmms_task(task, raw, args.new_tokens)
        walls: dict[tuple[str, int], list[float]] = {}
        starts: dict[str, list[tuple[float, float, float]]] = {"audioreason": [], "lmms-eval": []}
        same: dict[int, tuple[int, int]] = {}
        for round_ in range(args.rounds + 1):
            for batch in sizes:
                out = work / "runs" / f"r{round_}-b{batch}"
                pair = [
                    ("audioreason", lambda: run_audioreason(model, raw, out / "audioreason", batch, args, env)),
                    ("lmms-eval", lambda: run_lmms(model, task, ids, out / "lmms", batch, args, lmms_env)),
                ]
                outputs = {}
                for name, call in pair if (round_ + batch) % 2 == 0 else pair[::-1]:
                    seconds, outputs[name] = call()
                    if round_:
                        walls.setdefault((name, batch), []).append(seconds)
                ours, theirs = outputs["audioreason"], outputs["lmms-eval"]
                matches = sum(ours.get(i) == theirs.get(i) for i in ids)  # the fewest of any round
                same[batch] = (min(matches, same.get(batch, (matches,))[0]), len(ids))
            for name, python, script in (
                ("audioreason", sys.executable, AUDIOREASON_STARTUP),
                ("lmms-eval", args.lmms_python, LMMS_STARTUP),
            ):
                probe = startup(python, script, model, env if name == "audioreason" else lmms_env)
                if round_:
                    starts[name].append(probe)
        median = statistics.median
        print(
            f"work: {args.items} MMAR items, condition full, template plain, {args.new_tokens} new tokens, greedy, "
            f"tiny random Qwen2-Audio, float32, CPU ({os.cpu_count()} cores), {args.threads} torch thread(s); "
            f"medians of {args.rounds} rounds after a warm-up"
        )
        print(f"{'':<28}{'audioreason':>12}{'lmms-eval':>12}{'ratio':>8}   (ratio: lmms-eval / audioreason)")
        for batch in sizes:
            a, b = median(walls[("audioreason", batch)]), median(walls[("lmms-eval", batch)])
            print(
                f"{f'end to end, batch {batch} (s)':<28}{a:>12.2f}{b:>12.2f}{b / a:>7.2f}x   "
                f"outputs identical: {same[batch][0]}/{same[batch][1]}"
            )
        for i, label in enumerate(("start-up (s)", "  imports (s)", "  model build (s)")):
            a, b = (median(p[i] for p in starts[n]) for n in ("audioreason", "lmms-eval"))
            print(f"{label:<28}{a:>12.2f}{b:>12.2f}{b / a:>7.2f}x")
        if len(sizes) > 1:
            for batch in sizes[1:]:
                base = sizes[0]
                print(
                    f"batch {batch} vs batch {base}, same harness: audioreason "
                    f"{median(walls[('audioreason', base)]) / median(walls[('audioreason', batch)]):.2f}x, "
                    f"lmms-eval {median(walls[('lmms-eval', base)]) / median(walls[('lmms-eval', batch)]):.2f}x"
                )
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
