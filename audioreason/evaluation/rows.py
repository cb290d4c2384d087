"""A printed table's row and the notes the rows share (``evaluation.table`` prints them; each scorer's
declaration builds its own rows from its results entries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass
class Row:
    scorer: str
    value: Optional[float]  # on the one scale of every scorer, 0-1 (audioreason.base.scale); None: unavailable
    n: int
    backbone: str
    unanswered: Optional[int] = None
    source: str = ""  # where the scored outputs came from (the demo: its model, or "fixture")
    interval: Optional[Mapping[str, Any]] = None  # the value's uncertainty entry (results.json's schema)


def interval_text(interval: Optional[Mapping[str, Any]]) -> str:
    """ "[lo, hi]" to 4 decimals, or "-" when there is no interval (none computed, or unavailable)."""
    ci = (interval or {}).get("ci95")
    return "-" if not ci or any(v is None for v in ci) else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def outputs_note(entry: Mapping[str, Any]) -> str:
    missing = f", missing {entry['missing']}" if entry.get("missing") else ""
    return f"failed outputs {entry.get('failed', entry.get('failed_outputs', 0))}{missing}"


def interval(entry: Mapping[str, Any], name: str) -> Optional[Mapping[str, Any]]:
    return (entry.get("uncertainty") or {}).get(name)


def mode(result: Mapping[str, Any]) -> str:
    """The reasoning mode ARIA assigned, or why there is none."""
    if result.get("reasoning_mode"):
        return result["reasoning_mode"]
    return (
        "none (the profile matches none of the paper's modes)"
        if result.get("aria_complete")
        else "not assigned (ARIA incomplete)"
    )


def judge_note(entry: Mapping[str, Any], judged: int) -> str:
    if entry.get("headline_unavailable"):
        return f"unavailable: {entry['headline_unavailable']}"
    spread = (entry.get("rater_spread") or {}).get("sd")
    from audioreason.judges.base import offline_judge_label

    # An in-process judge is named by its label (weights and constraint), any other by its model name.
    who = offline_judge_label(entry) or f"judge {', '.join(entry.get('judges') or [])}"
    return (
        f"{who}, {entry.get('raters')} rater(s); judged {judged}, "
        f"failed {entry.get('n_failed')}; rater spread (mean SD across raters) "
        f"{'n/a' if spread is None else f'{spread:.4f}'}"
    )


LISTED_IDS = 10  # item ids a table note names before it points to results.json for the rest


def left_out_note(entry: Mapping[str, Any]) -> str:
    """ "; N item(s) without rubric criteria left out: ids" when the set had any (results.json lists them all)."""
    ids = entry.get("no_rubric_ids") or []
    if not ids:
        return ""
    more = f" and {len(ids) - LISTED_IDS} more (results.json lists all)" if len(ids) > LISTED_IDS else ""
    return f"; {len(ids)} item(s) without rubric criteria left out: {', '.join(ids[:LISTED_IDS])}{more}"


__all__ = ["LISTED_IDS", "Row", "interval", "interval_text", "judge_note", "left_out_note", "mode", "outputs_note"]
