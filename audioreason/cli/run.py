"""`audioreason run`: its arguments, their checks (before any model or data is loaded: one-line errors, exit
status 2), and ``--num-processes N``, which re-runs the command under
``accelerate launch --multi_gpu --num_processes N`` (gloo on a CPU-only machine).

`audioreason score RUN_DIR` scores a run folder (``audioreason.evaluation.score``); `audioreason evaluate` is
`run` then `score` in one command (with `--num-processes N`, the run part is launched under accelerate and
the scoring runs here once every process is done)."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import Any

from audioreason.base.errors import UsageError
from audioreason.base.jsonl import DataFileError
from audioreason.cli.quiet import quiet as _quiet
from audioreason.cli.score_args import add_score_arguments, score_options
from audioreason.cli.score_args import comma_list as _comma_list
from audioreason.cli.served import add_served_arguments, check_served_args


def check_run_args(args: argparse.Namespace) -> None:
    """Every argument checked before any model or data is loaded; sets ``args.decoding``."""
    from audioreason.data import benchmark_spec
    from audioreason.inference.base import DecodingParams
    from audioreason.inference.conditions import parse_conditions, with_audio_check
    from audioreason.inference.prompts import parse_templates
    from audioreason.inference.runner import ADAPTERS
    from audioreason.inference.transformers_audio import PRESETS

    try:
        benchmark_spec(args.benchmark)
        conditions = with_audio_check(parse_conditions(_comma_list(args.conditions)), args.audio_check)
        if args.templates:
            parse_templates(_comma_list(args.templates))
        args.decoding = DecodingParams(
            max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=args.top_p, seed=args.seed
        )
    except ValueError as err:
        raise UsageError(str(err)) from None
    if args.audio_check_seed < 0:
        raise UsageError(f"--audio-check-seed must be a whole number >= 0, got {args.audio_check_seed}")
    for name in ("limit", "batch_size", "num_processes"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.max_audio_s is not None and not args.max_audio_s > 0:
        raise UsageError(f"--max-audio-s must be positive, got {args.max_audio_s}")
    if args.max_audio_s is not None and args.adapter == "transformers":
        check_max_audio_s(args)
    for option, kind in (("--adapter", args.adapter), ("--tb-adapter", args.tb_adapter)):
        if kind not in ADAPTERS:
            raise UsageError(f"{option} {kind!r} is not one of {', '.join(ADAPTERS)}")
    if args.preset is not None and args.preset not in PRESETS:
        raise UsageError(f"--preset {args.preset!r} is not one of {', '.join(PRESETS)}")
    if args.adapter == "transformers" and args.preset is None and args.model and Path(args.model).expanduser().is_dir():
        from audioreason.inference.transformers_audio import (
            resolve_preset,
        )  # a checkpoint folder no preset reads: said before loading

        try:
            resolve_preset(str(Path(args.model).expanduser()), how="give --preset NAME")
        except ValueError as err:
            raise UsageError(f"--model: {err}") from None
    check_served_args(args)
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


def check_max_audio_s(args: argparse.Namespace) -> None:
    """--max-audio-s above what the model's processor keeps, refused from the processor's config alone (where
    the files cannot be read here, e.g. a Hub id offline, the adapter refuses it when it loads)."""
    from audioreason.inference.transformers_audio import checkpoint_cap_s, refuse_above_cap, resolve_preset

    try:
        preset, path = resolve_preset(args.model, args.preset)
        cap = checkpoint_cap_s(path, preset)
    except (OSError, ValueError):
        return
    try:
        refuse_above_cap(args.max_audio_s, cap, preset, what="--max-audio-s ")
    except ValueError as err:
        raise UsageError(f"{err} ({args.model})") from None


def command_line(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """The `run` arguments as given (defaults left out), without --num-processes: what each launched process gets."""
    out = ["run"]
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "num_processes"):
            continue
        value = getattr(args, action.dest, None)
        if isinstance(action, argparse._StoreTrueAction):
            out += [action.option_strings[0]] if value else []
        elif isinstance(value, list):  # an append option (--header)
            for item in value:
                out += [action.option_strings[0], str(item)]
        elif value is not None and value != action.default:
            out += [action.option_strings[0], str(value)]
    return out


def launch(args: argparse.Namespace, parser: argparse.ArgumentParser, processes: int) -> int:
    """Re-run this command under `accelerate launch` with ``processes`` processes (this process holds the
    --out folder's lock for them); they stop when this process is stopped (SIGINT, SIGTERM, or killed)."""
    from audioreason.inference.processes import LAUNCHER_ENV, supervise

    return supervise(launch_command(args, parser, processes), {**os.environ, LAUNCHER_ENV: str(os.getpid())})


def hold_out_folder(args: argparse.Namespace) -> Any:
    """The --out folder's lock for this command (its run, its launched processes, evaluate's scoring): a
    folder a live run writes is refused here, before any model loads."""
    from audioreason.inference.processes import FolderHold, HeldByLauncher, RunLockError

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # a launched process: the runner's main process locks
        return HeldByLauncher(None, None)
    try:
        return FolderHold(Path(args.out).expanduser())
    except RunLockError as err:
        raise UsageError(str(err)) from None


def launch_command(args: argparse.Namespace, parser: argparse.ArgumentParser, processes: int) -> list[str]:
    with socket.socket() as probe:  # a free port for the process group, so parallel runs never collide
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        str(processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port),
        "-m",
        "audioreason",
        *command_line(args, parser),
    ]


def run_command(args: argparse.Namespace) -> int:
    """The `run` handler; a UsageError ends it here as one line on stderr with exit status 2, a DataFileError
    (a damaged run.json or shard) with exit status 1."""
    try:
        return _run_command(args)
    except UsageError as err:
        args.run_parser.exit(2, f"audioreason run: error: {err}\n")
    except DataFileError as err:  # a damaged file the run reads: a data error
        args.run_parser.exit(1, f"audioreason run: error: {err}\n")


def _run_command(args: argparse.Namespace) -> int:
    check_run_args(args)
    hold = hold_out_folder(args)
    try:
        if args.num_processes and args.num_processes > 1:
            return launch(args, args.run_parser, args.num_processes)
        run_from_args(args)
        return 0
    finally:
        hold.release()


def run_from_args(args: argparse.Namespace) -> None:
    """Run the checked `run` arguments in this process and print the counts (main process)."""
    _quiet()
    from audioreason.inference.runner import RunConfig, run

    config = RunConfig(
        model=args.model,
        benchmark=args.benchmark,
        data=args.data,
        out=args.out,
        conditions=_comma_list(args.conditions),
        templates=_comma_list(args.templates) if args.templates else None,
        benchmark_config=args.config,
        limit=args.limit,
        batch_size=args.batch_size,
        adapter=args.adapter,
        tb_model=args.tb_model,
        tb_adapter=args.tb_adapter,
        model_options=args.model_options,
        tb_options=args.tb_options,
        prices=args.prices,
        decoding=args.decoding,
        fragment_cache=args.fragment_cache,
        on_missing_audio=args.on_missing_audio,
        audio_check=args.audio_check,
        audio_check_seed=args.audio_check_seed,
        progress=not args.no_progress,
    )
    from audioreason.judges import JudgeUnavailable

    try:
        summary = run(config)
    except DataFileError:  # a damaged run.json or shard: a data error (exit status 1), not a usage error
        raise
    except ValueError as err:  # a resume into another run's folder, an unusable model/adapter combination
        raise UsageError(str(err)) from None
    except JudgeUnavailable as err:  # a served model's first request refused (401/403/404) or no connection
        raise UsageError(f"{err} (nothing was scored; fix the option and run the command again)") from None
    if summary:  # the main process only
        counts = summary["counts"]
        skipped = counts["skipped_at_load"]
        skipped = f", {skipped} skipped at load (named in run.json)" if skipped else ""
        usage = summary["usage"]["total"]
        cost = summary.get("cost")
        unreported, unrecorded = usage["replies_without_usage"], usage["unrecorded_requests"]
        if usage["retries"] or usage["prompt_tokens"] or unreported or unrecorded:
            leave_out = f"so the token totals{' and the cost' if cost else ''} leave them out"
            print(
                f"usage: {usage['requests_sent']} requests sent ({usage['retries']} retries), "
                f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens, "
                f"{usage['audio_s_sent']:.1f} s of audio"
                + (f"; cost {cost['total']:.4f} {cost['currency']}" if cost else "")
                + (
                    f"; {unreported} replies came without token counts (the server sent none, or unusable ones), "
                    f"{leave_out}"
                    if unreported
                    else ""
                )
                + (
                    f"; {unrecorded} requests were sent but never recorded (a session killed with replies in "
                    f"flight, or a run refused on its first request), {leave_out}"
                    if unrecorded
                    else ""
                )
            )
        from audioreason.inference.speed import speed_line

        speed = speed_line(summary.get("speed"))
        if speed:
            print(speed)
        check = summary.get("audio_check")
        if check:
            print(
                f"audio check: silence and shuffled audio on {check['items']} item(s), seed {check['seed']} "
                f"({len(check['units'])} units, named in run.json)"
            )
        print(
            f"audioreason run: {counts['ok']} outputs, {counts['failed']} failed, "
            f"{sum(counts['not_applicable'].values())} not applicable, {counts['truncated']} truncated, "
            f"{counts['resumed']} already done{skipped} -> {Path(args.out) / 'outputs.jsonl'}"
        )


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """The `run` options (also `evaluate`'s)."""
    run.add_argument(
        "--model",
        help="a preset name (e.g. qwen2-audio), a Hub id or a checkpoint folder; with "
        "--adapter openai the served model's name (required but for --adapter cascade)",
    )
    run.add_argument(
        "--benchmark",
        required=True,
        help="mmar, mmau-test-mini or audiospan (mmau_test_mini, the datasets builder's name, is the same benchmark)",
    )
    run.add_argument("--data", required=True, help="the benchmark's raw folder, Hub-ready folder or Hub id")
    run.add_argument("--config", help="benchmark config (AudioSpan: all, native_mcq, native_oeq, anchor)")
    run.add_argument(
        "--conditions",
        default="full",
        help="comma-separated: full, none, tb, anchored, frag, frag:N, frag:N:k, silence, shuffled "
        "(default: full; silence and shuffled run on the --audio-check items, all without it)",
    )
    run.add_argument(
        "--templates",
        help="comma-separated: aria_cot, aria_plain, audiospan, plain "
        "(default: plain for MMAR/MMAU, audiospan for AudioSpan)",
    )
    run.add_argument("--limit", type=int, help="the first N items only")
    run.add_argument(
        "--batch-size",
        type=int,
        help="units per adapter call (default 1; for --adapter openai "
        "the --concurrency, 8 unless given: the requests sent at once)",
    )
    run.add_argument("--num-processes", type=int, help="launch accelerate with N processes (--multi_gpu; gloo on CPU)")
    run.add_argument("--out", required=True, help="output folder (outputs.jsonl, run.json, shards/); a rerun resumes")
    run.add_argument(
        "--adapter",
        default="transformers",
        help="transformers (default), text-lm, openai (an OpenAI-compatible server: vLLM, hosted "
        "APIs) or cascade (ASR, then a text LM)",
    )
    run.add_argument(
        "--preset", help="the transformers preset when --model is a checkpoint (default: from config.json)"
    )
    run.add_argument("--tb-model", help="text LM for the tb condition (the audio model's original backbone)")
    run.add_argument("--tb-adapter", default="text-lm", help="text-lm (default) or openai (a served text model)")
    run.add_argument(
        "--dtype",
        default="auto",
        choices=("auto", "float32", "float16", "bfloat16"),
        help="the weights' dtype, as transformers' torch_dtype (default: auto)",
    )
    run.add_argument("--device-map", help="e.g. auto: spread one model over this machine's GPUs (1 process)")
    run.add_argument("--attn-implementation", help="sdpa, flash_attention_2 or eager")
    run.add_argument(
        "--max-audio-s",
        type=float,
        help="cut audio to this many leading seconds (below the preset's; above what the "
        "model's processor keeps is refused before it loads)",
    )
    run.add_argument("--max-new-tokens", type=int, default=1024, help="the longest reply in tokens (default 1024)")
    run.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    run.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling, with --temperature > 0 (default 1.0)")
    run.add_argument("--seed", type=int, default=0, help="the decoding seed (default 0; sampling only)")
    run.add_argument("--fragment-cache", help="where fragments are kept (default: <out>/fragments)")
    run.add_argument(
        "--on-missing-audio",
        choices=("raise", "skip", "keep"),
        default="raise",
        help="raw folders: an item whose audio is missing or unreadable at load: raise (default, as "
        "load_benchmark: the run is refused, every such file listed), skip (run the rest; "
        "each skipped item is counted and named in run.json), keep (its audio conditions "
        "fail as counted errors; none and tb run)",
    )
    run.add_argument(
        "--audio-check",
        type=int,
        default=0,
        metavar="N",
        help="the audio-reliance check: N seeded items run again with silence of the same length and "
        "with another item's audio (conditions silence, shuffled; needs full); the score says "
        "whether the outputs depend on the audio. Default 0: off (it costs 2 x N x templates "
        "extra calls)",
    )
    run.add_argument(
        "--audio-check-seed",
        type=int,
        default=0,
        help="which items the check takes and whose audio each is sent under shuffled (default 0)",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_served_arguments(run)


def add_run_parser(sub: Any) -> argparse.ArgumentParser:
    """The `run` subcommand on the main parser's subparsers."""
    run = sub.add_parser(
        "run",
        help="run a model over a benchmark: per-item outputs, resumable, Accelerate-ready",
        description="Run a model over a benchmark and write per-item outputs (see docs/runner.md). "
        "Under `accelerate launch -m audioreason run ...` the items "
        "are split across processes.",
    )
    add_run_arguments(run)
    run.set_defaults(run=run_command, run_parser=run)
    return run


# ---------------------------------------------------------------------------------------------
# score and evaluate
# ---------------------------------------------------------------------------------------------


def _score_and_print(folder: str, options: Any) -> None:
    from audioreason.evaluation.score import ITEMS_FILE, RESULTS_FILE, score_run
    from audioreason.evaluation.table import format_table, result_rows
    from audioreason.inference.runner import OUTPUTS_FILE

    try:
        results = score_run(folder, options)
    except DataFileError:  # a damaged outputs.jsonl or run.json: a data error (exit status 1), not a usage error
        raise
    except ValueError as err:  # a folder that is no run, data that moved
        raise UsageError(str(err)) from None
    run = results["run"]
    print(f"audioreason score: {run['model']} on {run['benchmark']} ({len(results['sets'])} set(s) of outputs)")
    if results.get("duplicates"):
        print(f"duplicates: {results['duplicates']} (records repeated verbatim in {OUTPUTS_FILE}, each scored once)")
    from audioreason.inference.speed import speed_line

    speed = speed_line(run.get("speed"))
    if speed:
        print(speed)
    print()
    print(format_table(result_rows(results), results["uncertainty_options"]["confidence"]))
    from audioreason.evaluation.reliance import reliance_lines

    print("\n" + "\n".join(reliance_lines(results)))
    where = Path(options.out or folder)
    print(f"\nresults: {where / RESULTS_FILE}; per-item table: {where / ITEMS_FILE}")


def score_command(args: argparse.Namespace) -> int:
    try:
        if not Path(args.run_dir).expanduser().is_dir():
            raise UsageError(f"{args.run_dir!r} is not a folder (give the --out folder of `audioreason run`)")
        if args.out and Path(args.out).expanduser().is_file():
            raise UsageError(f"--out {args.out!r} is a file; give a folder")
        try:
            options = score_options(args, data=args.data, out=args.out)
        except ValueError as err:
            raise UsageError(str(err)) from None
        _quiet()
        _score_and_print(args.run_dir, options)
    except UsageError as err:
        args.score_parser.exit(2, f"audioreason score: error: {err}\n")
    except DataFileError as err:  # a damaged outputs.jsonl or run.json: a data error
        args.score_parser.exit(1, f"audioreason score: error: {err}\n")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """`run`, then `score` on its folder; with ``--config FILE.yaml``, a whole sweep (``inference.sweep``)."""
    from audioreason.cli.sweep import is_sweep_file, sweep_command

    try:
        if is_sweep_file(args.config):
            return sweep_command(args, args.evaluate_parser)
        missing = [f"--{name}" for name in ("model", "benchmark", "data", "out") if getattr(args, name) is None]
        if missing:
            raise UsageError(f"the following arguments are required: {', '.join(missing)} (or --config SWEEP.yaml)")
        check_run_args(args)
        try:
            options = score_options(args)
        except ValueError as err:
            raise UsageError(str(err)) from None
        hold = hold_out_folder(args)
        try:
            if args.num_processes and args.num_processes > 1:
                status = launch(args, args.launch_parser, args.num_processes)
                if status:
                    return status
            else:
                run_from_args(args)
            _quiet()
            _score_and_print(args.out, options)
        finally:
            hold.release()
    except UsageError as err:
        args.evaluate_parser.exit(2, f"audioreason evaluate: error: {err}\n")
    except DataFileError as err:  # a damaged file the run or the scoring reads: a data error
        args.evaluate_parser.exit(1, f"audioreason evaluate: error: {err}\n")
    return 0


def add_score_parser(sub: Any) -> None:
    score = sub.add_parser(
        "score",
        help="score a run folder with every scorer that fits: results.json, items.jsonl",
        description="Score the outputs of `audioreason run` (see docs/scoring.md).",
    )
    score.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of `audioreason run`")
    add_score_arguments(score)
    score.add_argument("--data", help="the benchmark's folder, when it is no longer where the run read it")
    score.add_argument("--out", help="where results.json and items.jsonl go (default: RUN_DIR)")
    score.add_argument("--no-progress", action="store_true", help="no progress bars")
    score.set_defaults(run=score_command, score_parser=score)


def add_evaluate_parser(sub: Any) -> None:
    evaluate = sub.add_parser(
        "evaluate",
        help="run a model over a benchmark, then score it (run + score)",
        description="`audioreason run` with these options, then `audioreason score` on "
        "--out (see docs/scoring.md). With --config SWEEP.yaml: "
        "models x benchmarks x conditions from one file, each run resumable, "
        "then a leaderboard (docs/sweeps.md).",
    )
    add_run_arguments(evaluate)
    for action in evaluate._actions:  # not needed with --config SWEEP.yaml (checked in evaluate_command)
        if action.dest in ("model", "benchmark", "data", "out"):
            action.required = False
        if action.dest == "config":
            action.help += "; or a sweep file (SWEEP.yaml, docs/sweeps.md): then only --out and --no-progress"
    add_score_arguments(evaluate, seed_option="--perturbation-seed")
    launch_parser = argparse.ArgumentParser(add_help=False)  # what launched `run` processes are given
    add_run_arguments(launch_parser)
    evaluate.set_defaults(run=evaluate_command, evaluate_parser=evaluate, launch_parser=launch_parser)


__all__ = [
    "add_evaluate_parser",
    "add_run_arguments",
    "add_run_parser",
    "add_score_parser",
    "check_run_args",
    "command_line",
    "evaluate_command",
    "run_command",
    "run_from_args",
    "score_command",
]
