"""Results as a person would rather look at them: ``audioreason report RESULTS... -o report.html`` writes one
self-contained HTML file (tables and matplotlib figures as inline SVG) and the tables as Markdown.
Layer 10 (ARCHITECTURE.md): it may import layers 0-9 (the scored results of ``audioreason.evaluation``).

    from audioreason.report import build_report, load_results
    build_report(["runs/q2a", "runs/salmonn/results.json", "aria_output.json"], "report.html")

``load`` reads the results (``audioreason score`` output or any scorer's own output), ``scale`` is the one
place that knows each number's scale and formats it, ``tables`` and ``figures`` draw them, ``build`` puts the
page together (with ARIA-Rubrics §4's validity statistics when the results allow them). The explorer Space's
per-item views of a run: ``run_view`` reads a run folder or bundle, ``runs`` opens runs (checked), ``leaderboard``
is its table of headlines, ``item_table`` its rows per output (two runs compared), ``item_page`` one output's page,
``bundles`` a run packed for a Space and uploads unpacked within caps.
"""

from .build import build_report, render
from .load import Entry, Results, ResultsError, detect_scorer, load_results

__all__ = ["Entry", "Results", "ResultsError", "build_report", "detect_scorer", "load_results", "render"]
