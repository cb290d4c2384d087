"""``audioreason report RESULTS... -o report.html``: one self-contained HTML file (figures as inline SVG, no
script, no font or file fetched from anywhere) and the same tables as Markdown beside it (``report.md``).

Sections: where the numbers come from (runs, scoring options, versions); the tables of every scorer; the
figures; the audio-reliance check of each run (``report.reliance``); the validity statistics of ARIA-Rubrics §4 when
the results hold one scorer's numbers for several
(model, benchmark) pairs (``audioreason.analysis.validity_report``); with two or more scored runs, their
comparison (a leaderboard marking neighbours not significantly different, and ``audioreason compare`` per
pair); what did not run and why.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from audioreason.scorers.registry import ACCURACY, DECLARATIONS

from .figures import Figure, correlation_heatmap, draw_all
from .load import Entry, Results, load_results, reading, unique
from .scale import fraction
from .tables import TABLES, Table, all_tables, comparison_tables, harness_table, markdown, not_run_table

VALIDITY_SCORERS = ("aria", "mmar_rubrics", "accuracy")  # validity_report reads these scorers' measures

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1200px;color:#222;
padding:0 1rem;line-height:1.4}
h1{font-size:1.6rem}h2{font-size:1.25rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.82rem;margin:.5rem 0 1rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f5f5f5}
figure{margin:1rem 0 2rem;border:1px solid #eee;padding:.5rem}figure svg{max-width:100%;height:auto}
figcaption{font-size:.75rem;color:#444}figcaption li{margin:0}.note{font-size:.8rem;color:#555}
.unavailable{color:#999}
"""


def _validity_inputs(entries: Sequence[Entry]) -> tuple[list[dict[str, Any]], Optional[str]]:
    """validity_report's input: one result per (model, benchmark); Full-condition sets when a model has
    several; None and the reason when the results cannot support it."""
    from ..analysis import MEASURES

    keyed: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        if e.benchmark:
            keyed.setdefault((e.model, e.benchmark), []).append(e)
    chosen = []
    for key, group in keyed.items():
        if len(group) > 1:
            group = [e for e in group if e.condition in (None, "full")]
        if len(group) != 1:
            return [], (
                f"{key[0]} on {key[1]} has {len(group)} results (conditions or templates); the statistics "
                "need one per (model, benchmark)"
            )
        # the measures on the 0-1 scale, as the tables read them (a result written in percent included)
        result = group[0].result
        scaled = {m: fraction(v, group[0].scorer, m, result) for m, v in result.items() if m in MEASURES}
        chosen.append({"model": key[0], "benchmark": key[1], "result": {**result, **scaled}})
    if len(chosen) < 2:
        return [], f"needs results of at least two (model, benchmark) pairs with a benchmark named; got {len(chosen)}"
    return chosen, None


def validity_section(results: Results) -> tuple[Optional[Table], Optional[Figure], list[str]]:
    """The statistics table, the correlation heatmap and notes (why a statistic is missing)."""
    from ..analysis import validity_report

    notes = []
    for scorer in VALIDITY_SCORERS:
        entries = results.of(scorer)
        if not entries:
            continue
        inputs, reason = _validity_inputs(entries)
        if reason:
            notes.append(f"{scorer}: validity statistics not computed: {reason}")
            continue
        try:
            report = validity_report(inputs)
        except ValueError as err:
            notes.append(f"{scorer}: validity statistics not computed: {err}")
            continue
        rows = [
            [
                s.get("measure") or "",
                s["name"],
                _stat(s.get("value")),
                _stat(s.get("p_value")),
                "" if not s.get("ci") else f"[{_stat(s['ci'][0])}, {_stat(s['ci'][1])}]",
                str(s.get("n") or ""),
                s.get("unavailable") or "",
                s.get("inputs") or "",
            ]
            for s in report["statistics"]
        ]
        notes += [f"{n['statistic']}: {n['reason']}" for n in report["not_applicable"]] + report["warnings"]
        table = Table(
            "validity",
            f"Validity statistics of the {scorer} results (ARIA-Rubrics §4)",
            ["measure", "statistic", "value", "p", "95% interval", "n", "unavailable", "inputs"],
            rows,
        )
        described = (
            f"{scorer} measures of {len(report['models'])} models on {', '.join(report['benchmarks'])}: "
            f"one value per (model, benchmark)"
        )
        later = [s for s in VALIDITY_SCORERS[VALIDITY_SCORERS.index(scorer) + 1 :] if results.of(s)]
        notes += [f"{s}: validity statistics not shown (the report shows one scorer's: {scorer}'s)" for s in later]
        return table, correlation_heatmap(report["correlation_matrix"], described), notes
    return None, None, notes


def _stat(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.3f}"


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"unavailable" if c == "n/a" else ""}">{html.escape(c)}</td>' for c in row)
        + "</tr>"
        for row in table.rows
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in table.notes)
    return (
        f'<section id="table-{table.key}"><h3>{html.escape(table.title)}</h3><table><tr>{head}</tr>{body}'
        f"</table>" + (f'<ul class="note">{notes}</ul>' if notes else "") + "</section>"
    )


def _html_figure(figure: Figure) -> str:
    caption = "".join(f"<li>{html.escape(line)}</li>" for line in figure.caption)
    return (
        f'<figure id="figure-{figure.key}"><h3>{html.escape(figure.title)}</h3>{figure.svg}'
        f"<figcaption><ul>{caption}</ul></figcaption></figure>"
    )


def _runs_html(results: Results) -> str:
    rows = []
    for run in results.runs:
        options = run.get("options") or {}
        judge = options.get("judge") or {}
        rows.append(
            [
                run.get("model"),
                run.get("benchmark"),
                run.get("description") or run.get("adapter"),
                run.get("status"),
                str((run.get("counts") or {}).get("written", "")),
                f"backbones {options.get('aria_backbones')}; judge {judge.get('model') or judge.get('judge')}; "
                f"extraction {options.get('extraction')}",
                run.get("scored"),
                run.get("source"),
            ]
        )
    table = Table(
        "runs",
        "Runs",
        ["model", "benchmark", "adapter", "status", "outputs", "scoring options", "scored", "results file"],
        [[str(c) if c is not None else "" for c in r] for r in rows],
    )
    return _html_table(table) if rows else ""


# Each section's heading: accuracy's, then the one each scorer's declaration gives.
SECTION_TITLES = {
    ACCURACY: "Accuracy",
    **{section.name: section.title for declaration in DECLARATIONS for section in declaration.results},
}


def render(results: Results, title: str = "audioreason report") -> tuple[str, str, dict[str, Any]]:
    """(HTML, Markdown, summary) of a report on ``results``: one section per scorer (its figures, then its
    tables), then the validity statistics and what did not run."""
    tables, figures = all_tables(results), draw_all(results)
    validity_table, heatmap, validity_notes = validity_section(results)
    from ..analysis.compare import compare_runs

    compared, compare_notes = comparison_tables(results, compare_runs)
    skipped, harness = not_run_table(results), harness_table(results)
    made = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    from ..version import __version__

    models = unique(e.model for e in results.entries)
    intro = (
        f"{len(results.entries)} results of {len(models)} model(s) ({', '.join(models)}) from "
        f"{len(results.sources)} file(s); scorers: {', '.join(results.scorers()) or 'none'}. Made {made} by "
        f"audioreason {__version__}."
    )
    sections, md = [], [f"# {title}\n\n{intro}\n\n" + "".join(f"- {s}\n" for s in results.sources)]
    md += [markdown(harness)] if harness is not None else []
    for scorer in results.scorers():
        own_figures = [f for s, f in figures if s == scorer]
        own_tables = [t for s, t in tables if s == scorer]
        sections.append(
            f'<section id="{scorer}"><h2>{html.escape(SECTION_TITLES[scorer])}</h2>'
            + "".join(map(_html_figure, own_figures))
            + "".join(map(_html_table, own_tables))
            + "</section>"
        )
        md += [markdown(t) for t in own_tables]
        md += [f"Figure (HTML report): {f.title}\n" for f in own_figures]
    from .reliance import reliance_table

    reliance = reliance_table(results)
    if reliance is not None:
        sections.append(
            f'<section id="audio_reliance"><h2>{html.escape(reliance.title)}</h2>{_html_table(reliance)}</section>'
        )
        md.append(markdown(reliance))
    if validity_table is not None or validity_notes:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in validity_notes)
        sections.append(
            '<section id="validity"><h2>Validity statistics (ARIA-Rubrics §4)</h2>'
            + (_html_figure(heatmap) if heatmap is not None else "")
            + (_html_table(validity_table) if validity_table is not None else "")
            + (f'<ul class="note">{notes}</ul>' if notes else "")
            + "</section>"
        )
        md += [markdown(validity_table)] if validity_table is not None else []
        md += ["\n".join(f"- {n}" for n in validity_notes) + "\n"] if validity_notes else []
    if compared or compare_notes:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in compare_notes)
        sections.append(
            '<section id="comparison"><h2>Comparison of runs (audioreason compare)</h2>'
            + "".join(map(_html_table, compared))
            + (f'<ul class="note">{notes}</ul>' if notes else "")
            + "</section>"
        )
        md += [markdown(t) for t in compared] + (
            ["\n".join(f"- {n}" for n in compare_notes) + "\n"] if compare_notes else []
        )
    if skipped is not None:
        sections.append(_html_table(skipped))
        md.append(markdown(skipped))
    nav = " · ".join(f'<a href="#{s}">{html.escape(SECTION_TITLES[s])}</a>' for s in results.scorers())
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>"
        f'<nav>{nav}</nav><ul class="note">'
        + "".join(f"<li>{html.escape(s)}</li>" for s in results.sources)
        + "</ul>"
        + _runs_html(results)
        + (_html_table(harness) if harness is not None else "")
        + "".join(sections)
        + "</body></html>"
    )
    all_figures = [f for _, f in figures] + ([heatmap] if heatmap is not None else [])
    all_tables_ = (
        [t for _, t in tables] + compared + [t for t in (harness, validity_table, skipped, reliance) if t is not None]
    )
    summary = {
        "entries": len(results.entries),
        "scorers": results.scorers(),
        "figures": [f.key for f in all_figures],
        "tables": [t.key for t in all_tables_],
        "not_run": results.not_run,
        "validity_notes": validity_notes,
    }
    return page, "\n".join(md), summary


def build_report(
    paths: Union[str, Path, Sequence[Union[str, Path]]],
    out: Union[str, Path],
    markdown_out: Optional[Union[str, Path]] = None,
    title: str = "audioreason report",
) -> dict[str, Any]:
    """Write the HTML report to ``out`` and its tables to ``markdown_out`` (default: ``out`` with .md);
    returns what was written (figures, tables, what did not run)."""
    results = load_results(paths)
    if not results.entries:
        raise ValueError(
            "the results hold no scorer result (every scorer was not applicable or unavailable: "
            + "; ".join(f"{n['scorer']}: {n['reason']}" for n in results.not_run)
            + ")"
        )
    for entry in results.entries:  # a field of the wrong type: one line naming its file, before any figure
        with reading(entry.source):
            for scorer, make in TABLES:
                if scorer == entry.scorer:
                    make([entry])
    with reading(", ".join(results.sources)):
        page, md, summary = render(results, title)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    md_path = Path(markdown_out) if markdown_out else out.with_suffix(".md")
    md_path.write_text(md, encoding="utf-8")
    return {**summary, "html": str(out), "markdown": str(md_path)}


__all__ = ["build_report", "render", "validity_section"]
