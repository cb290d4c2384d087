"""`audioreason demo` (the README's main job): the offline cascade on the bundled sample (``apps.demo``), scored and
printed as one table; its arguments, their checks (before any work) and what it prints."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from audioreason.base.errors import UsageError
from audioreason.cli.quiet import quiet as _quiet


def _default_workdir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "audioreason" / "demo"


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


def demo_command(args: argparse.Namespace) -> int:
    _check_demo_paths(args)
    _quiet()
    from audioreason.apps.demo import format_table, run_demo

    result = run_demo(Path(args.workdir), progress=not args.no_progress)
    print(f"audioreason demo: {result['sample']}\n")
    print(format_table(result["rows"]))
    print(
        "\nvalue = accuracy for answers/accuracy rows, mean metric for aria rows, the named rate or score "
        "elsewhere (n/a: unavailable, reason in the last column); unanswered = outputs from which no choice was "
        "extracted. outputs: the offline cascade's own outputs on the 12 items, or a labelled fixture where the "
        "scorer needs what a 135M model cannot give (several models and conditions, AudioSpan items, a capable "
        "judge)."
    )
    if result["aria"].get("note"):
        print(f"aria: {result['aria']['note']}.")
    print(
        "Offline backbones are substitutes for the paper's (ARIA: CLAP, all-mpnet-base-v2, "
        "Qwen2.5-1.5B-Instruct, roberta-large-mnli, word2vec-300): these numbers are not the paper's."
    )
    print(f"Outputs, results.json and items.jsonl: {result['run_folder']}")
    if args.json:
        from audioreason.evaluation.score import json_safe

        payload = {**result, "rows": [asdict(r) for r in result["rows"]]}
        Path(args.json).write_text(json.dumps(json_safe(payload), indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"per-item results written to {args.json}")
    return 0


def add_demo_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run the offline cascade on the bundled sample, score it, print a table")
    demo.add_argument(
        "--workdir",
        default=str(_default_workdir()),
        help="where synthesized demo audio is written (default: %(default)s)",
    )
    demo.add_argument("--json", help="also write rows and per-item results to this JSON file")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(run=demo_command)


__all__ = ["add_demo_parser", "demo_command"]
