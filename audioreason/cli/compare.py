"""`audioreason compare RUN_A RUN_B` (two scored runs on their shared items: paired differences, McNemar,
flipped items; ``analysis.compare``) and `audioreason compare RUN --judges A,B` (one run scored by two judges,
judge against judge; ``analysis.judge_swap``): its arguments, their checks and what it prints."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional

from audioreason.base.errors import UsageError
from audioreason.base.jsonl import DataFileError


def compare_command(args: argparse.Namespace) -> int:
    from audioreason.analysis.compare import compare_runs, format_comparison
    from audioreason.analysis.uncertainty import UncertaintyOptions
    from audioreason.evaluation.score import run_folder_file

    runs = (("RUN_A", args.run_a), ("RUN_B", args.run_b))
    if args.out and Path(args.out).expanduser().is_dir():
        raise UsageError(f"--out {args.out!r} is a folder; give a JSON file path")
    judges = _judge_folders(args)
    if judges:
        runs = (("RUN", args.run_a), ("A", judges[0]), ("B", judges[1]))
    for label, folder in runs:  # the comparison never goes over what a run folder's own machinery reads or writes
        own = run_folder_file(args.out, folder) if args.out else None
        if own:
            raise UsageError(
                f"--out {args.out!r} is {own} of {label} ({folder}), a run folder's own file; write the "
                "comparison elsewhere"
            )
    notes = [note for note in (_live_run_note(label, folder) for label, folder in runs) if note]
    try:
        options = UncertaintyOptions(confidence=args.confidence, resamples=args.resamples, seed=args.seed)
        if judges:
            from audioreason.analysis.judge_swap import format_judge_swap, judge_swap

            comparison = judge_swap(args.run_a, *judges, options, allow_protocol_diff=args.allow_protocol_diff)
            text = "\n".join([*(f"note: {n}" for n in notes), format_judge_swap(comparison)])
        else:
            comparison = compare_runs(
                args.run_a, args.run_b, options, notes, allow_protocol_diff=args.allow_protocol_diff
            )
            text = format_comparison(comparison)
    except DataFileError:  # a damaged results.json or items.jsonl: a data error, exit status 1 (main)
        raise
    except ValueError as err:  # not a scored run, two benchmarks, no shared item, a bad option
        raise UsageError(str(err)) from None
    print(text)
    if args.out:
        Path(args.out).expanduser().write_text(json.dumps(comparison, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"\ncomparison: {args.out}")
    return 0


def _live_run_note(label: str, folder: Any) -> Optional[str]:
    """A note when a run may still be writing ``folder`` (its lock is held): its scores may be older than its
    outputs. Names the holder by pid, host and start (never its command line, which may carry a URL's password)."""
    from audioreason.inference.processes import RunLock

    path = Path(folder).expanduser()
    holder = RunLock(path.parent if path.is_file() else path).live_holder()
    if holder is None:
        return None
    return (
        f"{label} ({folder}) is held by a run that may still be writing it (pid {holder.get('pid')} on host "
        f"{holder.get('host')!r}, started {holder.get('started')}): its results.json may not cover the outputs "
        "written since; compare again after that run has finished and the folder is scored again"
    )


def _judge_folders(args: argparse.Namespace) -> list[str]:
    """`compare RUN --judges A,B`: the two results folders ([] for `compare RUN_A RUN_B`)."""
    from audioreason.cli.score_args import comma_list

    if args.judges is None:
        if args.run_b is None:
            raise UsageError("give two scored runs (RUN_A RUN_B), or one run and its two scorings (RUN --judges A,B)")
        return []
    folders = comma_list(args.judges)
    if args.run_b is not None or len(folders) != 2:
        raise UsageError(
            f"--judges {args.judges!r}: give RUN alone and two results folders of it, --judges A,B "
            "(audioreason score RUN --out A --judge-model X, then --out B --judge-model Y)"
        )
    return folders


def add_compare_parser(sub: Any) -> None:
    compare = sub.add_parser(
        "compare",
        help="two scored runs on their shared items: paired differences, McNemar, flipped items",
        description="Compare two `audioreason score` run folders item by item (see docs/scoring.md, Comparing runs).",
    )
    compare.add_argument(
        "run_a",
        metavar="RUN_A",
        help="a scored run folder (results.json, items.jsonl); with --judges, the run folder both judges scored",
    )
    compare.add_argument(
        "run_b", metavar="RUN_B", nargs="?", help="another scored run folder of the same benchmark (not with --judges)"
    )
    compare.add_argument(
        "--judges",
        metavar="A,B",
        help="judge against judge: RUN_A is a run folder, A and B two results folders of it scored "
        "by different judges (score RUN --out A --judge-model X); agreement per item and per "
        "criterion (Krippendorff's alpha, Cohen's kappa) with bootstrap intervals",
    )
    compare.add_argument(
        "--out",
        help="also write the comparison (flipped item ids included) to this JSON file "
        "(refused inside a compared folder under a name of the run folder's own files)",
    )
    compare.add_argument("--confidence", type=float, default=0.95, help="the intervals' level (default 0.95)")
    compare.add_argument("--resamples", type=int, default=2000, help="paired-bootstrap resamples (default 2000)")
    compare.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    compare.add_argument(
        "--allow-protocol-diff",
        action="store_true",
        help="compare runs whose protocols (results.json's protocol block) differ; without it they "
        "are refused, naming the differing fields",
    )
    compare.set_defaults(run=compare_command)


__all__ = ["add_compare_parser", "compare_command"]
