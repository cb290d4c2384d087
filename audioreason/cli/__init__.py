"""Command line: `audioreason demo` (the README's main job), `audioreason run`, `score` and `evaluate` (a model
over a benchmark, its outputs scored: audioreason.cli.run), `audioreason prompt` and
`audioreason anchor` (make, apply, verify and question: AudioSpan anchored audio from manifests).
Layer 12, the top (ARCHITECTURE.md): it may import every layer; nothing inside the package imports it."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from audioreason.base.errors import DataError, UsageError, describe_error
from audioreason.base.jsonl import DataFileError


def build_parser() -> argparse.ArgumentParser:
    """The `audioreason` parser with every subcommand (tests walk it: every option has help text). Each command's
    arguments and handler are in a module of their own here, registered in the order `--help` lists them."""
    from audioreason.version import __version__

    parser = argparse.ArgumentParser(prog="audioreason", description=__doc__)
    parser.add_argument("--version", action="version", version=f"audioreason {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="on an error, show the Python traceback instead of the one-line message"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    from audioreason.cli.demo import add_demo_parser

    add_demo_parser(sub)  # `audioreason demo`: the offline cascade on the bundled sample, one table
    from audioreason.cli.run import add_evaluate_parser, add_run_parser, add_score_parser

    add_run_parser(sub)  # `audioreason run`: a model over a benchmark
    add_score_parser(sub)  # `audioreason score RUN_DIR`: every scorer that fits, on a run folder
    add_evaluate_parser(sub)  # `audioreason evaluate`: run, then score
    from audioreason.cli.imports import add_import_parser

    add_import_parser(sub)  # `audioreason import FORMAT FILE`: predictions made elsewhere as a run folder
    from audioreason.cli.prompt import add_prompt_parser

    add_prompt_parser(sub)  # `audioreason prompt QUESTION CHOICE...`: the ARIA four-step CoT prompt
    from audioreason.cli.anchor import add_anchor_parser

    add_anchor_parser(sub)  # `audioreason anchor make|apply|verify|question`: AudioSpan anchored audio
    from audioreason.cli.construct import add_construct_parser

    add_construct_parser(sub)  # `audioreason construct RECORDINGS --out BENCH`: an AudioSpan-style benchmark
    from audioreason.apps.spaces import add_space_parser
    from audioreason.cli.compare import add_compare_parser
    from audioreason.cli.report import add_report_parser

    add_report_parser(sub)  # `audioreason report RESULTS... -o report.html`
    add_compare_parser(sub)  # `audioreason compare RUN_A RUN_B`: paired differences on the shared items
    add_space_parser(sub)  # `audioreason space build NAME OUT`: a Hugging Face Space folder of an app
    from audioreason.cli.rubrics import add_rubrics_parser

    add_rubrics_parser(sub)  # `audioreason rubrics generate ITEMS -o OUT`: MMAR criteria from the gold CoT
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = " ".join(filter(None, [args.command, getattr(args, "anchor_command", None)]))
    try:
        return args.run(args)
    except UsageError as err:
        parser.exit(2, f"audioreason {command}: error: {err}\n")
    except DataError as err:
        parser.exit(3, f"audioreason {command}: error: {err}\n")
    except DataFileError as err:  # a damaged input file: its message names the file (and line); exit status 1
        parser.exit(1, f"audioreason {command}: error: {err}\n")
    except Exception as err:  # any other failure: one line and status 1; the traceback only when asked
        if args.debug:
            raise
        parser.exit(
            1,
            f"audioreason {command}: error: {describe_error(err)} (audioreason --debug {command} "
            "... shows the traceback)\n",
        )


if __name__ == "__main__":
    sys.exit(main())
