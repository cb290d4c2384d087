"""Command line: `audioreason demo` (the README's main job), `audioreason run` (a model over a benchmark) and
`audioreason prompt`."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional, Sequence


def _default_workdir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "audioreason" / "demo"


def _quiet() -> None:
    """Model-loading progress bars and library chatter would bury the table."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    import datasets

    datasets.disable_progress_bars()
    warnings.filterwarnings("ignore", category=FutureWarning)


class UsageError(Exception):
    """A command-line argument that cannot work; printed as one line, exit status 2."""


def _check_demo_paths(args: argparse.Namespace) -> None:
    """Refuse, before any work, a workdir that is a file and a --json target whose folder is missing."""
    workdir = Path(args.workdir).expanduser()
    if workdir.exists() and not workdir.is_dir():
        raise UsageError(f"--workdir {str(workdir)!r} is a file; give a folder (it is created if missing)")
    if args.json:
        target = Path(args.json).expanduser()
        if target.is_dir():
            raise UsageError(f"--json {str(target)!r} is a folder; give a file path")
        if not target.parent.is_dir():
            raise UsageError(f"--json {str(target)!r}: the folder {str(target.parent)!r} does not exist")


def _demo(args: argparse.Namespace) -> int:
    _check_demo_paths(args)
    _quiet()
    from .demo import format_table, run_demo

    result = run_demo(Path(args.workdir))
    print(f"audioreason demo: {result['sample']}\n")
    print(format_table(result["rows"]))
    print("\nvalue = accuracy for answers/accuracy rows, share of complete parses for the cot row, mean "
          "metric for aria rows, the named rate or score elsewhere (n/a: unavailable, reason in the last "
          "column); unanswered = outputs from which no choice was extracted. Rows after mmar_rubrics use the "
          "small samples their last column names.")
    if result["aria"].get("note"):
        print(f"aria: {result['aria']['note']}.")
    print("Offline backbones are substitutes for the paper's (ARIA: CLAP, all-mpnet-base-v2, "
          "Qwen2.5-1.5B-Instruct, roberta-large-mnli, word2vec-300): these numbers are not the paper's.")
    if args.json:
        payload = {**result, "rows": [asdict(r) for r in result["rows"]]}
        Path(args.json).write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"per-item results written to {args.json}")
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from .cot import build_cot_prompt

    try:
        print(build_cot_prompt(args.question, args.choices))
    except ValueError as err:
        raise UsageError(str(err)) from None
    return 0


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _check_run_args(args: argparse.Namespace) -> None:
    """Every argument of `run` checked before any model or data is loaded (one-line errors)."""
    from .data import benchmark_spec
    from .inference.base import DecodingParams
    from .inference.conditions import parse_conditions
    from .inference.prompts import parse_templates
    from .inference.runner import ADAPTERS
    from .inference.transformers_audio import PRESETS

    try:
        benchmark_spec(args.benchmark)
        conditions = parse_conditions(_comma_list(args.conditions))
        if args.templates:
            parse_templates(_comma_list(args.templates))
        args.decoding = DecodingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                                       top_p=args.top_p, seed=args.seed)
    except ValueError as err:
        raise UsageError(str(err)) from None
    for name in ("limit", "batch_size", "num_processes"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.max_audio_s is not None and not args.max_audio_s > 0:
        raise UsageError(f"--max-audio-s must be positive, got {args.max_audio_s}")
    for option, kind in (("--adapter", args.adapter), ("--tb-adapter", args.tb_adapter)):
        if kind not in ADAPTERS:
            raise UsageError(f"{option} {kind!r} is not one of {', '.join(ADAPTERS)}")
    if args.preset is not None and args.preset not in PRESETS:
        raise UsageError(f"--preset {args.preset!r} is not one of {', '.join(PRESETS)}")
    if any(c.kind == "tb" for c in conditions) and not args.tb_model:
        raise UsageError("the tb condition needs --tb-model (a text LM: the audio model's original backbone)")
    for option, value in (("--model", args.model), ("--tb-model", args.tb_model), ("--data", args.data)):
        if value and value.startswith((".", "/", "~")) and not Path(value).expanduser().exists():
            raise UsageError(f"{option} {value!r} does not exist")
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; give a folder (it is created if missing)")
    if args.num_processes and args.num_processes > 1 and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UsageError("--num-processes launches accelerate itself; inside `accelerate launch` leave it out")


def _launch(argv: Sequence[str], processes: int) -> int:
    """Re-run this command under `accelerate launch` with ``processes`` processes (gloo on CPU)."""
    import socket
    import subprocess

    rest, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--num-processes":
            skip = True
        elif not arg.startswith("--num-processes="):
            rest.append(arg)
    with socket.socket() as probe:  # a free port for the process group, so parallel runs never collide
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes",
               str(processes), "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(port), "-m", "audioreason", *rest]
    return subprocess.run(command, check=False).returncode


def _run(args: argparse.Namespace) -> int:
    _check_run_args(args)
    if args.num_processes and args.num_processes > 1:
        return _launch(args.argv, args.num_processes)
    _quiet()
    from .inference.runner import RunConfig, run

    options = {"preset": args.preset, "dtype": args.dtype, "device_map": args.device_map,
               "attn_implementation": args.attn_implementation, "max_audio_s": args.max_audio_s}
    config = RunConfig(model=args.model, benchmark=args.benchmark, data=args.data, out=args.out,
                       conditions=_comma_list(args.conditions),
                       templates=_comma_list(args.templates) if args.templates else None,
                       benchmark_config=args.config, limit=args.limit, batch_size=args.batch_size,
                       adapter=args.adapter, tb_model=args.tb_model, tb_adapter=args.tb_adapter,
                       model_options={k: v for k, v in options.items() if v is not None}, decoding=args.decoding,
                       fragment_cache=args.fragment_cache, progress=not args.no_progress)
    try:
        summary = run(config)
    except ValueError as err:  # a resume into another run's folder, an unusable model/adapter combination
        raise UsageError(str(err)) from None
    if summary:
        counts = summary["counts"]
        print(f"audioreason run: {counts['ok']} outputs, {counts['failed']} failed, "
              f"{sum(counts['not_applicable'].values())} not applicable, {counts['truncated']} truncated, "
              f"{counts['resumed']} already done -> {Path(args.out) / 'outputs.jsonl'}")
    return 0


def _add_run_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="run a model over a benchmark: per-item outputs, resumable, Accelerate-ready",
                         description="Run a model over a benchmark and write per-item outputs (see the README, "
                                     "Running models). Under `accelerate launch -m audioreason run ...` the items "
                                     "are split across processes.")
    run.add_argument("--model", required=True, help="a preset name (e.g. qwen2-audio), a Hub id or a checkpoint folder")
    run.add_argument("--benchmark", required=True, help="mmar, mmau-test-mini or audiospan")
    run.add_argument("--data", required=True, help="the benchmark's raw folder, Hub-ready folder or Hub id")
    run.add_argument("--config", help="benchmark config (AudioSpan: all, native_mcq, native_oeq, anchor)")
    run.add_argument("--conditions", default="full",
                     help="comma-separated: full, none, tb, anchored, frag, frag:N, frag:N:k (default: full)")
    run.add_argument("--templates", help="comma-separated: aria_cot, aria_plain, audiospan, plain "
                                         "(default: plain for MMAR/MMAU, audiospan for AudioSpan)")
    run.add_argument("--limit", type=int, help="the first N items only")
    run.add_argument("--batch-size", type=int, default=1)
    run.add_argument("--num-processes", type=int, help="launch accelerate with N processes (--multi_gpu; gloo on CPU)")
    run.add_argument("--out", required=True, help="output folder (outputs.jsonl, run.json, shards/); a rerun resumes")
    run.add_argument("--adapter", default="transformers", help="transformers (default) or text-lm")
    run.add_argument("--preset", help="the transformers preset when --model is a checkpoint (default: from config.json)")
    run.add_argument("--tb-model", help="text LM for the tb condition (the audio model's original backbone)")
    run.add_argument("--tb-adapter", default="text-lm")
    run.add_argument("--dtype", default="auto", choices=("auto", "float32", "float16", "bfloat16"))
    run.add_argument("--device-map", help="e.g. auto: spread one model over this machine's GPUs (1 process)")
    run.add_argument("--attn-implementation", help="sdpa, flash_attention_2 or eager")
    run.add_argument("--max-audio-s", type=float, help="cut audio to this many leading seconds (below the preset's)")
    run.add_argument("--max-new-tokens", type=int, default=1024)
    run.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    run.add_argument("--top-p", type=float, default=1.0)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--fragment-cache", help="where fragments are kept (default: <out>/fragments)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(run=_run)


def main(argv: Optional[Sequence[str]] = None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="audioreason", description=__doc__)
    parser.add_argument("--version", action="version", version=f"audioreason {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run every scorer on the bundled sample and print a table")
    demo.add_argument("--workdir", default=str(_default_workdir()),
                      help="where synthesized demo audio is written (default: %(default)s)")
    demo.add_argument("--json", help="also write rows and per-item results to this JSON file")
    demo.set_defaults(run=_demo)
    prompt = sub.add_parser("prompt", help="print the ARIA four-step CoT prompt for a question")
    prompt.add_argument("question")
    prompt.add_argument("choices", nargs="+")
    prompt.set_defaults(run=_prompt)
    _add_run_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return args.run(args)
    except UsageError as err:
        parser.exit(2, f"audioreason {args.command}: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
