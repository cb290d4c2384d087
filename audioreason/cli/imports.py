"""`audioreason import FORMAT FILE --benchmark B --data D --out RUN`: its arguments, their checks (before the
file or the benchmark is read: one line, exit status 2), and what it prints. A file whose content is not the
format named is one line with exit status 1 (``imports.FormatError``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from audioreason.inference.import_formats import FORMATS

SHOWN = 5  # entries printed per list; run.json's source holds them all
PROBLEMS = (
    ("unmatched", "id not in the benchmark, not imported"),
    ("duplicates", "a second row for one output, not imported (the first is kept)"),
    ("empty", "empty prediction, imported as a failed output (wrong, in every denominator)"),
    ("no_prediction", "no prediction field, not imported (the official scorers skip such rows)"),
    ("gold_differs", "the file's answer differs from the benchmark's (imported, scored on the benchmark's)"),
)


class _Usage(Exception):
    pass


def check_import_args(args: argparse.Namespace) -> None:
    from audioreason.data import benchmark_spec
    from audioreason.inference.conditions import expand_condition
    from audioreason.inference.imports import template_entry
    from audioreason.inference.runner import OUTPUTS_FILE, RUN_FILE

    file = Path(args.file).expanduser()
    if not file.is_file():
        raise _Usage(f"{args.file!r} is not a file (give the predictions file)")
    try:
        benchmark_spec(args.benchmark)
        conditions = expand_condition(args.condition)
        template_entry(args.template)
    except ValueError as err:
        raise _Usage(str(err)) from None
    if len(conditions) != 1:
        raise _Usage(
            f"--condition {args.condition!r} names {len(conditions)} conditions; give one (e.g. {conditions[0].name})"
        )
    if args.match != "id" and args.format != "lmms-eval":
        raise _Usage(f"--match {args.match} pairs lmms-eval rows by doc_id; {args.format} rows are matched by id")
    if args.data.startswith((".", "/", "~")) and not Path(args.data).expanduser().exists():
        raise _Usage(f"--data {args.data!r} does not exist")
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise _Usage(f"--out {str(out)!r} is a file; give a folder (it is created if missing)")
    held = [n for n in (RUN_FILE, OUTPUTS_FILE) if (out / n).exists()]
    if held:
        raise _Usage(f"--out {str(out)!r} already holds a run ({', '.join(held)}); give a new folder")


def harness_line(lmms: dict[str, Any]) -> str:
    """lmms-eval's own number beside the official rule's, on the rows that carry lmms-eval's verdict."""
    return (
        f"lmms-eval's {lmms['metric']}: {lmms['lmms_eval_accuracy']:.4f} over {lmms['rows']} rows, "
        f"{lmms['random_guesses']} of them decided by its random guess (no letter found); the official scorer "
        f"on the raw replies: {lmms['official_accuracy']:.4f} (on lmms-eval's filtered replies: "
        f"{lmms['official_on_filtered_accuracy']:.4f}; {lmms['filtered_differs']} filtered replies differ from "
        f"the raw; verdicts differ on {lmms['verdicts_differ']} rows)"
    )


def summary_lines(summary: dict[str, Any]) -> list[str]:
    source, counts = summary["source"], summary["source"]["counts"]
    sets = {(r["name"], role) for role, r in summary["models"].items()}
    lines = [
        f"imported {counts['imported']} of {counts['rows']} rows of {source['file']} ({source['format']}, "
        f"sha256 {source['sha256'][:12]}) as {len(summary['config']['conditions'])} condition(s) of "
        f"{', '.join(sorted(n for n, _ in sets))} on {summary['config']['benchmark']}"
    ]
    if counts["matched_by_doc_order"]:
        lines.append(
            f"matched by doc_id (the position in --data; every target agrees): {counts['matched_by_doc_order']} rows"
        )
    for name, meaning in PROBLEMS:
        entries = source[name]
        if entries:
            shown = ", ".join(f"{e['id']} ({e['where']})" for e in entries[:SHOWN])
            more = f" and {len(entries) - SHOWN} more" if len(entries) > SHOWN else ""
            lines.append(f"{name}: {len(entries)} ({meaning}): {shown}{more}")
    for entry in source["missing"]:
        lines.append(
            f"missing: {len(entry['ids'])} item(s) of the benchmark have no prediction of "
            f"{entry['model']} / {entry['condition']} (counted as missing by score): "
            f"{', '.join(entry['ids'][:SHOWN])}{' ...' if len(entry['ids']) > SHOWN else ''}"
        )
    lmms = source.get("lmms_eval")
    if lmms:
        lines.append(harness_line(lmms))
    for note in source.get("load_warnings") or []:
        lines.append(f"note (the benchmark loader): {note if len(note) <= 300 else note[:300] + ' ...'}")
    if summary["skipped_items"]:
        lines.append(f"skipped at load (--on-missing-audio skip): {len(summary['skipped_items'])} item(s)")
    lines.append(
        f"run folder: {summary['config']['out']} (status {summary['status']}; every list above is in "
        "run.json's source); score it with `audioreason score`"
    )
    return lines


def import_command(args: argparse.Namespace) -> int:
    """The handler: usage errors exit 2, a file not in its format exits 1, each as one line."""
    from audioreason.base.errors import describe_error
    from audioreason.cli.quiet import quiet as _quiet
    from audioreason.inference.imports import FormatError, ImportOptions, NeedsOption, import_predictions

    parser = args.import_parser
    try:
        check_import_args(args)
        _quiet()
        summary = import_predictions(
            ImportOptions(
                args.format,
                args.file,
                args.benchmark,
                args.data,
                args.out,
                args.model,
                args.condition,
                args.template,
                args.on_missing_audio,
                args.match,
            )
        )
    except (_Usage, NeedsOption) as err:
        parser.exit(2, f"audioreason import: error: {err}\n")
    except FormatError as err:
        parser.exit(1, f"audioreason import: error: {err}\n")
    except (OSError, ValueError) as err:  # the benchmark's data cannot be read
        parser.exit(1, f"audioreason import: error: {describe_error(err)}\n")
    print("\n".join(summary_lines(summary)))
    return 0


def add_import_parser(sub: Any) -> None:
    command = sub.add_parser(
        "import",
        help="predictions made elsewhere (JSONL/CSV, MMAR, MMAU, lmms-eval) as a run folder to score",
        description="Turn predictions made elsewhere into a run folder (outputs.jsonl, run.json) that `audioreason "
        "score`, `report` and the explorer read like any other (see docs/import.md). Items are matched "
        "by id; unmatched, duplicate and empty predictions are counted, listed in run.json and printed.",
        epilog="exit status: 0 done; 1 the file is not in the format named (or the benchmark cannot be read); "
        "2 a usage error",
    )
    command.add_argument("format", metavar="FORMAT", choices=FORMATS, help=f"one of {', '.join(FORMATS)}")
    command.add_argument("file", metavar="FILE", help="the predictions file")
    command.add_argument(
        "--benchmark",
        required=True,
        help="mmar, mmau-test-mini or audiospan (mmau_test_mini, the datasets builder's name, is the same benchmark)",
    )
    command.add_argument("--data", required=True, help="the benchmark's folder (as `audioreason run --data`)")
    command.add_argument("--out", required=True, help="the run folder to write (new)")
    command.add_argument("--model", help="the model's name, for rows that name none")
    command.add_argument("--condition", default="full", help="the condition, for rows that name none (default full)")
    command.add_argument(
        "--template",
        help="the audioreason template the predictions were made with, if one was "
        "(default: external, a prompt made elsewhere)",
    )
    command.add_argument(
        "--on-missing-audio",
        choices=("keep", "skip", "raise"),
        default="keep",
        help="a raw folder's items whose audio is missing: keep (default: scoring the text needs "
        "none), skip (left out, listed) or raise",
    )
    command.add_argument(
        "--match",
        choices=("id", "doc-order"),
        default="id",
        help="lmms-eval: pair rows with items by the id they log (default), or by doc_id as the "
        "position in --data, accepted only if every row's target is that item's answer",
    )
    command.set_defaults(run=import_command, import_parser=command)


__all__ = ["add_import_parser", "check_import_args", "harness_line", "import_command", "summary_lines"]
