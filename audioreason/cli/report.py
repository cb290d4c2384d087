"""`audioreason report RESULTS... -o report.html`: its arguments and handler (the work is ``build.build_report``)."""

from __future__ import annotations

import argparse


def report_command(args: argparse.Namespace) -> int:
    """Write the report. A results file that cannot be read raises ResultsError naming it; the command line
    prints it as one line with exit status 1 (``audioreason --debug report`` shows the traceback)."""
    from audioreason.report.build import build_report

    try:
        summary = build_report(args.results, args.output, args.markdown, args.title)
    except ImportError as err:  # matplotlib is a runtime requirement; an environment without it says so
        raise RuntimeError(f"the figures need matplotlib ({err}); pip install matplotlib==3.11.2") from err
    print(
        f"wrote {summary['html']} ({len(summary['figures'])} figures, {len(summary['tables'])} tables) and "
        f"{summary['markdown']}"
    )
    for skipped in summary["not_run"]:
        print(f"not run: {skipped['scorer']} ({skipped['status']}): {skipped['reason']}")
    return 0


def add_report_parser(sub) -> None:
    report = sub.add_parser("report", help="an HTML report (tables, figures, validity statistics) of scored results")
    report.add_argument(
        "results",
        nargs="+",
        help="results.json files or run folders of `audioreason score`, or any scorer's output saved as JSON",
    )
    report.add_argument("-o", "--output", default="report.html", help="the HTML file (default: %(default)s)")
    report.add_argument("--markdown", help="where the Markdown tables go (default: the output with .md)")
    report.add_argument("--title", default="audioreason report", help="the report's title (default: %(default)s)")
    report.set_defaults(run=report_command)


__all__ = ["add_report_parser", "report_command"]
