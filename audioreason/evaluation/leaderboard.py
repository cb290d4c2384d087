"""A sweep's leaderboard: every headline of every run's results.json in one table (leaderboard.json and
leaderboard.md), read through the same rows `audioreason score` prints (``score.result_rows``), so a
headline here is the number in that run's results.json, with its n, its interval where score recorded
one (with that run's confidence level: runs scored at different ``--confidence`` levels each keep their
own, and the table then names the level in every interval), its unanswered count and its set's failed
outputs. A run that has no results (its scoring failed) is listed with why, never left out. Each row carries
its protocol's short hash; a row whose protocol differs from its benchmark's most common one in anything but
the model names the differing fields (``protocol_differs``, and in the markdown's protocol column), and a row
scored before protocols were recorded says "protocol unknown" (``evaluation.protocol``). Each run's
audio-reliance verdict (``evaluation.reliance``) is listed under ``audio_reliance``, its own section of the
Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

LEADERBOARD_JSON = "leaderboard.json"
LEADERBOARD_MD = "leaderboard.md"


def run_rows(
    folder: Path, model: str, benchmark: str, protocols: Optional[dict[str, Any]] = None
) -> list[dict[str, Any]]:
    """The leaderboard rows of one run folder (its results.json); ``protocols`` gets its protocol block by
    hash (``evaluation.protocol``)."""
    from audioreason.evaluation.protocol import collect_protocol
    from audioreason.evaluation.score import RESULTS_FILE
    from audioreason.evaluation.table import result_rows

    results = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
    sets = results.get("sets", [])
    all_failed = sum(s.get("failed", 0) for s in sets)
    level = (results.get("uncertainty_options") or {}).get("confidence")
    protocol = collect_protocol(results, protocols)
    rows = []
    for row in result_rows(results):
        ci = (row.interval or {}).get("ci95")
        ci = list(ci) if ci and None not in ci else None
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "headline": row.scorer,
                "value": row.value,
                "n": row.n,
                "ci95": ci,
                "interval_method": (row.interval or {}).get("method") if ci else None,
                "confidence": level if ci else None,
                "unanswered": row.unanswered,
                "failed": _set_failed(row.scorer, sets, all_failed),
                "note": row.backbone,
                "protocol": protocol,
            }
        )
    return rows


def _set_failed(label: str, sets: Sequence[Mapping[str, Any]], all_failed: int) -> int:
    """The failed outputs of the set a headline is computed on ("name [condition/template]" when a run has
    several sets); a headline over several sets (the text-prior decomposition) counts all of them."""
    if len(sets) == 1:
        return int(sets[0].get("failed", 0))
    match = re.search(r"\[([^\]/]+)/([^\]]+)\]$", label)
    if match:
        for s in sets:
            if (s.get("condition"), s.get("template")) == match.groups():
                return int(s.get("failed", 0))
    return all_failed


def write_leaderboard(out: Path, runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """leaderboard.json and leaderboard.md under ``out`` from the sweep's runs (in the sweep's order)."""
    from audioreason.evaluation.protocol import mark_rows
    from audioreason.evaluation.reliance import board_entries

    rows: list[dict[str, Any]] = []
    protocols: dict[str, Any] = {}
    unscored = []
    reliance: list[dict[str, Any]] = []  # each run's audio-reliance verdict
    for run in runs:
        folder = out / run["folder"]
        if run.get("scored") == "failed" or not (folder / "results.json").is_file():
            unscored.append(
                {
                    "model": run["model"],
                    "benchmark": run["benchmark"],
                    "reason": run.get("score_error") or "no results.json",
                }
            )
            continue
        rows += run_rows(folder, run["model"], run["benchmark"], protocols)
        reliance += board_entries(
            json.loads((folder / "results.json").read_text(encoding="utf-8")), run["model"], run["benchmark"]
        )
    mark_rows(rows, protocols)
    levels = sorted({r["confidence"] for r in rows if r["confidence"] is not None})
    # one level for the whole table only when every interval has it; else each row says its own
    content = {
        "rows": rows,
        "unscored": unscored,
        "confidence": levels[0] if len(levels) == 1 else None,
        "confidence_levels": levels,
        "protocols": protocols,
        "audio_reliance": reliance,
    }
    (out / LEADERBOARD_JSON).write_text(json.dumps(content, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / LEADERBOARD_MD).write_text(markdown(content), encoding="utf-8")
    return {"json": LEADERBOARD_JSON, "markdown": LEADERBOARD_MD, "rows": len(rows), "unscored": len(unscored)}


def markdown(content: Mapping[str, Any]) -> str:
    from audioreason.evaluation.protocol import protocol_cell

    levels = content["confidence_levels"]
    mixed = len(levels) > 1
    # the label names a level only when every interval has it (none recorded: plain "CI")
    ci = "CI (level per row)" if mixed else f"{levels[0] * 100:g}% CI" if levels else "CI"
    lines = [
        "# Leaderboard",
        "",
        f"Every headline of every run (values on the 0-1 scale; {ci} where the scorer recorded an interval; "
        "unanswered: outputs with no answer found; failed: outputs the model did not give; protocol: the "
        "short hash of what produced the number, the model aside, with the fields that differ from the "
        "benchmark's most common protocol).",
        "",
        f"| model | benchmark | headline | value | {ci} | n | unanswered | failed | protocol |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in content["rows"]:
        value = "n/a" if r["value"] is None else f"{r['value']:.4f}"
        ci = "-" if r["ci95"] is None else f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]"
        if mixed and r["confidence"] is not None:
            ci = f"{r['confidence'] * 100:g}%: {ci}"
        unanswered = "-" if r["unanswered"] is None else str(r["unanswered"])
        cells = [
            r["model"],
            r["benchmark"],
            r["headline"],
            value,
            ci,
            str(r["n"]),
            unanswered,
            str(r["failed"]),
            protocol_cell(r),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    from audioreason.evaluation.reliance import board_markdown

    lines += board_markdown(content.get("audio_reliance") or [])
    if content["unscored"]:
        lines += ["", "Runs without results:", ""]
        lines += [f"- {u['model']} / {u['benchmark']}: {u['reason']}" for u in content["unscored"]]
    return "\n".join(lines) + "\n"


__all__ = ["LEADERBOARD_JSON", "LEADERBOARD_MD", "markdown", "run_rows", "write_leaderboard"]
