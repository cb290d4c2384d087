"""Command line: `audioreason demo` (the README's main job) and `audioreason prompt`."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Optional, Sequence


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
    from .inference.command import add_run_parser  # `audioreason run`: a model over a benchmark

    add_run_parser(sub)
    prompt = sub.add_parser("prompt", help="print the ARIA four-step CoT prompt for a question")
    prompt.add_argument("question")
    prompt.add_argument("choices", nargs="+")
    prompt.set_defaults(run=_prompt)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as err:
        parser.exit(2, f"audioreason {args.command}: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
