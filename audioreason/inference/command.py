"""`audioreason run`: its arguments, their checks (before any model or data is loaded: one-line errors, exit
status 2), and ``--num-processes N``, which re-runs the command under
``accelerate launch --multi_gpu --num_processes N`` (gloo on a CPU-only machine)."""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..cli import UsageError, _quiet


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def check_run_args(args: argparse.Namespace) -> None:
    """Every argument checked before any model or data is loaded; sets ``args.decoding``."""
    from ..data import benchmark_spec
    from .base import DecodingParams
    from .conditions import parse_conditions
    from .prompts import parse_templates
    from .runner import ADAPTERS
    from .transformers_audio import PRESETS

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


def command_line(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """The `run` arguments as given (defaults left out), without --num-processes: what each launched process gets."""
    out = ["run"]
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "num_processes"):
            continue
        value = getattr(args, action.dest, None)
        if isinstance(action, argparse._StoreTrueAction):
            out += [action.option_strings[0]] if value else []
        elif value is not None and value != action.default:
            out += [action.option_strings[0], str(value)]
    return out


def launch(args: argparse.Namespace, parser: argparse.ArgumentParser, processes: int) -> int:
    """Re-run this command under `accelerate launch` with ``processes`` processes."""
    with socket.socket() as probe:  # a free port for the process group, so parallel runs never collide
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes",
               str(processes), "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(port), "-m", "audioreason", *command_line(args, parser)]
    return subprocess.run(command, check=False).returncode


def run_command(args: argparse.Namespace) -> int:
    """The `run` handler; a UsageError ends it here as one line on stderr with exit status 2 (also when the
    command line module runs as ``python -m audioreason.cli``, whose own UsageError class is another object)."""
    try:
        return _run_command(args)
    except UsageError as err:
        args.run_parser.exit(2, f"audioreason run: error: {err}\n")


def _run_command(args: argparse.Namespace) -> int:
    check_run_args(args)
    if args.num_processes and args.num_processes > 1:
        return launch(args, args.run_parser, args.num_processes)
    _quiet()
    from .runner import RunConfig, run

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
    if summary:  # the main process only
        counts = summary["counts"]
        print(f"audioreason run: {counts['ok']} outputs, {counts['failed']} failed, "
              f"{sum(counts['not_applicable'].values())} not applicable, {counts['truncated']} truncated, "
              f"{counts['resumed']} already done -> {Path(args.out) / 'outputs.jsonl'}")
    return 0


def add_run_parser(sub: Any) -> None:
    """The `run` subcommand on the main parser's subparsers."""
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
    run.set_defaults(run=run_command, run_parser=run)


__all__ = ["add_run_parser", "check_run_args", "command_line", "run_command"]
