"""`audioreason evaluate --config sweep.yaml`: models x benchmarks x conditions x templates in one file.

Each (model, benchmark) pair is its own run folder, ``<out>/<model name>/<benchmark name>``, written and
resumed by the runner exactly as `audioreason run` writes one, then scored as `audioreason score` scores it.
Each model is built once, through the runner's adapter factory (``runner.make_adapter`` with the
adapter's name and the file's options, so any adapter registered in ``runner.ADAPTERS`` works here), and
serves all of its benchmarks, conditions and templates. A model whose runs are all finished with the same
settings is not loaded at all; a run whose results.json was scored with other options, or on other outputs
(a lower limit, a condition dropped: the runner rewrites outputs.jsonl with what the file asks now), is
scored again.
At the end ``leaderboard.json`` and ``leaderboard.md`` list every headline of every run; ``sweep.json``
records each run's folder, what ran this session and how it was scored.

The file's checks: ``inference.sweep_config`` (docs/sweeps.md lists its keys)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from audioreason.cli.sweep_config import SWEEP_FILE, BenchmarkSpec, ModelSpec, Sweep, SweepError, load_sweep

# ------------------------------------------------------------------------------------------------
# Running it
# ------------------------------------------------------------------------------------------------


@dataclass
class PlannedRun:
    model: ModelSpec
    benchmark: BenchmarkSpec
    folder: Path
    units: int  # the units this sweep asks of the run
    done: int  # of those, finished (an output without error) before this session
    current: bool  # run.json says finished with this sweep's settings: nothing to run


def plan_runs(sweep: Sweep) -> list[PlannedRun]:
    """Every (model, benchmark) run with its unit count and what its folder already holds; each benchmark's
    items are read once here (the runner reads them again from the datasets cache)."""
    from audioreason.inference.conditions import AudioPreparer, choose_audio_check, parse_conditions, with_audio_check
    from audioreason.inference.prompts import DEFAULT_TEMPLATES, parse_templates
    from audioreason.inference.runner import load_items_reported, plan_units

    conditions = with_audio_check(parse_conditions(sweep.conditions), sweep.audio_check)
    planned: list[PlannedRun] = []
    per_benchmark = {}
    for b in sweep.benchmarks:
        items, _ = load_items_reported(b.benchmark, b.data, b.config, b.limit, b.on_missing_audio)
        templates = parse_templates(b.templates or [DEFAULT_TEMPLATES[b.benchmark]])
        check = choose_audio_check(
            conditions, [str(i["id"]) for i in items], sweep.audio_check, sweep.audio_check_seed
        )  # the runner's own choice of the checked items
        units, _ = plan_units(items, conditions, templates, {"main": "", "tb": ""}, AudioPreparer(16000, None), check)
        per_benchmark[b.label] = {json.dumps(json.loads(u.key)[1:], ensure_ascii=False) for u in units}
    for m in sweep.models:
        for b in sweep.benchmarks:
            folder = sweep.folder(m, b)
            wanted = per_benchmark[b.label]
            done = len(wanted & _finished_keys(folder))
            planned.append(
                PlannedRun(m, b, folder, len(wanted), done, done == len(wanted) and _same_settings(folder, sweep, m, b))
            )
    return planned


def _finished_keys(folder: Path) -> set[str]:
    """The (condition, template, id) part of each key the folder's shards hold an output for (one folder
    holds one model's outputs: the runner refuses another model there)."""
    from audioreason.inference.runner import SHARD_DIR, read_shards, select_records

    if not (folder / SHARD_DIR).is_dir():
        return set()
    chosen, _ = select_records(read_shards(folder / SHARD_DIR).records)
    return {json.dumps(json.loads(k)[1:], ensure_ascii=False) for k, r in chosen.items() if r.get("error") is None}


def _same_settings(folder: Path, sweep: Sweep, m: ModelSpec, b: BenchmarkSpec) -> bool:
    from audioreason.inference.runner import RUN_FILE, read_run_file

    try:
        previous = read_run_file(folder / RUN_FILE)
    except (OSError, ValueError):
        return False
    settings = lambda config: {k: v for k, v in config.items() if k != "progress"}  # noqa: E731
    return previous.get("status") == "finished" and settings(previous.get("config", {})) == settings(
        _run_config(sweep, m, b, folder).to_dict()
    )


def _run_config(sweep: Sweep, m: ModelSpec, b: BenchmarkSpec, folder: Path, progress: bool = True) -> Any:
    from audioreason.inference.runner import RunConfig

    return RunConfig(
        model=m.model,
        benchmark=b.benchmark,
        data=b.data,
        out=str(folder),
        conditions=sweep.conditions,
        templates=b.templates,
        benchmark_config=b.config,
        limit=b.limit,
        batch_size=sweep.batch_size,
        adapter=m.adapter,
        tb_model=m.tb_model,
        tb_adapter=m.tb_adapter,
        model_options=m.options,
        decoding=sweep.decoding,
        fragment_cache=sweep.fragment_cache,
        on_missing_audio=b.on_missing_audio,
        audio_check=sweep.audio_check,
        audio_check_seed=sweep.audio_check_seed,
        progress=progress,
    )


def build_adapters(sweep: Sweep, m: ModelSpec) -> dict[str, Any]:
    """The model's adapters, once for all its runs, by the runner's factory (the device as the runner
    picks it for one process)."""
    import torch
    from accelerate import PartialState

    from audioreason.inference.conditions import parse_conditions
    from audioreason.inference.runner import make_adapter

    roles = {"tb" if c.kind == "tb" else "main" for c in parse_conditions(sweep.conditions)}
    state = PartialState(cpu=not torch.accelerator.is_available())
    adapters = {}
    if "main" in roles:
        device = None if m.options.get("device_map") else str(state.device)
        adapters["main"] = make_adapter(m.adapter, m.model, device=device, **m.options)
    if "tb" in roles:
        device = None if m.tb_options.get("device_map") else str(state.device)
        adapters["tb"] = make_adapter(m.tb_adapter, m.tb_model, device=device, **m.tb_options)
    return adapters


def run_sweep(sweep: Sweep, *, progress: bool = True, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run, resume and score every (model, benchmark) run, then write the leaderboard. Returns the sweep
    record (also in <out>/sweep.json)."""
    import gc

    from tqdm.auto import tqdm

    from audioreason.evaluation.leaderboard import write_leaderboard
    from audioreason.inference.processes import FolderHold, RunLock, RunLockError
    from audioreason.inference.runner import run as run_one

    sweep.out.mkdir(parents=True, exist_ok=True)
    try:
        lock = RunLock(sweep.out).acquire()
    except RunLockError as err:
        raise SweepError(str(err)) from None
    try:
        planned = plan_runs(sweep)
        total, done = sum(p.units for p in planned), sum(p.done for p in planned)
        say(
            f"sweep: {len(sweep.models)} model(s) x {len(sweep.benchmarks)} benchmark(s) = {len(planned)} runs, "
            f"{total} units, {done} already done -> {sweep.out}"
        )
        bar = tqdm(total=total, initial=done, disable=not progress, unit="unit", desc="sweep", dynamic_ncols=True)
        tell = (lambda text: bar.write(text, file=sys.stdout)) if progress else say  # noqa: E731 (above the bars)
        record = {"config": str(sweep.path), "out": str(sweep.out), "runs": []}
        try:
            for m in sweep.models:
                mine = [p for p in planned if p.model is m]
                adapters = None
                for number, p in enumerate(mine, start=planned.index(mine[0]) + 1):
                    entry = {
                        "model": m.label,
                        "benchmark": p.benchmark.label,
                        "folder": str(p.folder.relative_to(sweep.out)),
                        "units": p.units,
                        "done_before": p.done,
                    }
                    tell(
                        f"sweep [{number}/{len(planned)}] {m.label} / {p.benchmark.label}: {p.units} units, "
                        f"{p.done} done" + ("; finished before, not run" if p.current else "")
                    )
                    ran = 0
                    if not p.current:
                        if adapters is None:
                            started = _clock()
                            adapters = build_adapters(sweep, m)
                            entry["model_load_s"] = round(_clock() - started, 3)
                        hold = FolderHold(p.folder)
                        started = _clock()
                        try:
                            summary = run_one(
                                _run_config(sweep, m, p.benchmark, p.folder, progress), adapters, on_batch=bar.update
                            )
                        finally:
                            hold.release()
                        ran = summary["counts"]["units"] - summary["counts"]["resumed"]
                        entry["counts"] = summary["counts"]
                        entry["run_s"] = round(_clock() - started, 3)
                        # What this run paid besides generating: its own start-up and gathering (the imports
                        # and the model are the sweep's, paid once, in model_load_s).
                        entry["outside_generation_s"] = round(
                            entry["run_s"] - summary["sessions"][-1]["generation_s"], 3
                        )
                    entry["ran"] = ran
                    record["runs"].append(entry)
                    _write_record(sweep.out, record)
                del adapters  # the model leaves memory before its runs are scored (scorers load models too)
                _release_memory(gc)
                for entry, p in zip(record["runs"][-len(mine) :], mine):
                    started = _clock()
                    entry.update(_score(sweep, p.folder, progress=progress))
                    entry["score_s"] = round(_clock() - started, 3)
                    _write_record(sweep.out, record)
        finally:
            bar.close()
        record["leaderboard"] = write_leaderboard(sweep.out, record["runs"])
        _write_record(sweep.out, record)
        return record
    finally:
        lock.release()


def _score(sweep: Sweep, folder: Path, *, progress: bool) -> dict[str, Any]:
    """Score the run unless its results.json holds a scoring of the same outputs (outputs.jsonl as it is now,
    by its sha256: a rerun with a lower limit or fewer conditions rewrites it) with the same options."""
    from dataclasses import replace

    from audioreason.base.checksums import file_sha256
    from audioreason.evaluation.score import RESULTS_FILE, json_safe, score_run
    from audioreason.inference.runner import OUTPUTS_FILE

    options = replace(sweep.score, progress=progress)
    wanted = json.loads(
        json.dumps(json_safe({"options": options.to_dict(), "uncertainty_options": options.uncertainty().to_dict()}))
    )
    results_file = folder / RESULTS_FILE
    if results_file.is_file() and (folder / OUTPUTS_FILE).is_file():
        try:
            previous = json.loads(results_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        run = previous.get("run") if isinstance(previous, dict) else None
        if (
            isinstance(run, dict)
            and run.get("outputs_sha256") == file_sha256(folder / OUTPUTS_FILE)
            and {k: previous.get(k) for k in wanted} == wanted
        ):
            return {"scored": "kept (same outputs, same options)"}
    try:
        score_run(str(folder), options)
    except ValueError as err:  # data that moved, a judge that is not there: this run has no score
        return {"scored": "failed", "score_error": str(err)}
    return {"scored": "now"}


def _release_memory(gc: Any) -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def _clock() -> float:
    import time

    return time.perf_counter()


def _write_record(out: Path, record: dict[str, Any]) -> None:
    import os

    tmp = out / (SWEEP_FILE + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, out / SWEEP_FILE)


# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------

BESIDE_A_SWEEP = ("config", "out", "no_progress", "help")  # evaluate's options that go with --config FILE.yaml


def is_sweep_file(value: Optional[str]) -> bool:
    """--config names a sweep file (.yaml/.yml) rather than a benchmark config (all, native_mcq, ...)."""
    return bool(value) and str(value).lower().endswith((".yaml", ".yml"))


def sweep_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`audioreason evaluate --config SWEEP.yaml [--out DIR] [--no-progress]`. A mistake in the file or an
    option given beside it is a UsageError (one line, exit 2) before any model or data loads. Exit 1 when a
    run could not be scored (named in the leaderboard)."""
    from audioreason.base.errors import UsageError
    from audioreason.cli.quiet import quiet as _quiet

    for action in parser._actions:
        if (
            action.option_strings
            and action.dest not in BESIDE_A_SWEEP
            and getattr(args, action.dest, action.default) != action.default
        ):
            raise UsageError(
                f"{action.option_strings[0]} goes in the sweep file with --config {args.config} "
                "(see docs/sweeps.md); beside it only --out and --no-progress"
            )
    try:
        sweep = load_sweep(args.config, args.out)
    except SweepError as err:
        raise UsageError(str(err)) from None
    _quiet()
    try:
        record = run_sweep(sweep, progress=not args.no_progress)
    except ValueError as err:  # a resume into another run's folder, an adapter refusing an option's value
        raise UsageError(str(err)) from None
    board = sweep.out / record["leaderboard"]["markdown"]
    print()
    print(board.read_text(encoding="utf-8").rstrip())
    print(f"\nleaderboard: {board} and {sweep.out / record['leaderboard']['json']}; runs: {sweep.out}")
    return 1 if record["leaderboard"]["unscored"] else 0


__all__ = ["PlannedRun", "build_adapters", "is_sweep_file", "plan_runs", "run_sweep", "sweep_command"]
