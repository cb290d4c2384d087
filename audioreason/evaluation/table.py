"""The table `audioreason score`, `evaluate` and the demo print: one row per headline number of a results dict
(``audioreason.evaluation.score``), with its interval, unanswered count, n and backbone. The rows of the
accuracy section are built here; every scorer's own rows by its declaration (``scorers.registry``)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from audioreason.evaluation.rows import Row, interval_text
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.rows import outputs_note as _outputs_note
from audioreason.scorers.registry import DECLARATIONS


def format_table(rows: Sequence[Row], confidence: float = 0.95) -> str:
    """A plain-text table: scorer, value (0-1, 4 decimals), its interval, unanswered (count of n), n,
    [outputs,] backbone. The outputs column appears when a row names its source."""
    sources = any(r.source for r in rows)
    header = (
        ("scorer", "value", f"{confidence * 100:g}% CI", "unanswered", "n")
        + (("outputs",) if sources else ())
        + ("backbone",)
    )
    body = []
    for r in rows:
        value = "n/a" if r.value is None else f"{r.value:.4f}"
        unanswered = "-" if r.unanswered is None else f"{r.unanswered} of {r.n}"
        body.append(
            (r.scorer, value, interval_text(r.interval), unanswered, str(r.n))
            + ((r.source,) if sources else ())
            + (r.backbone,)
        )
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    fmt = lambda line: "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])


def result_rows(results: Mapping[str, Any]) -> list[Row]:
    """The headline numbers of a results dict as table rows (set label in brackets when a run has several)."""
    several = len(results.get("sets", [])) > 1
    rows: list[Row] = []

    def label(name: str, entry: Mapping[str, Any]) -> str:
        if not several or "condition" not in entry:
            return name
        return f"{name} [{entry['condition']}/{entry['template']}]"

    for name, section in results["scorers"].items():
        if section["status"] != "ok":
            rows.append(Row(name, None, 0, f"{section['status'].replace('_', ' ')}: {section['reason']}"))
            continue
        builder = _ROW_BUILDERS[name]
        official_shown = set()  # accuracy: the official scorer's row once per set, before its rules' rows
        for entry in section["results"]:
            if name == "accuracy" and "official_scorer_accuracy" in entry:
                key = (entry["model"], entry["condition"], entry["template"], entry["template_hash"])
                if key not in official_shown:
                    official_shown.add(key)
                    rows.append(_official_scorer_row(entry, lambda n, e=entry: label(n, e)))
            rows += builder(entry, lambda n, e=entry: label(n, e))
    return rows + reliance_rows(results)


def reliance_rows(results: Mapping[str, Any]) -> list[Row]:
    """The audio-reliance check's rows (``evaluation.reliance``): the share of outputs that changed under
    silence or shuffled audio, with the verdict beside it, and the accuracy under each condition."""
    section = results.get("audio_reliance") or {}
    entries = section.get("results", []) if section.get("status") == "ok" else []
    rows = []
    for e in entries:
        suffix = f" [{e['template']}]" if len(entries) > 1 else ""
        changed = e["changed"]["either"]
        rows.append(
            Row(
                f"audio reliance: outputs changed (silence or shuffled){suffix}",
                changed["share"],
                e["n"],
                f"verdict: {e['verdict']}: {e['reason']}",
                interval=changed["uncertainty"],
            )
        )
        for condition, acc in (e.get("accuracy") or {}).items():
            rows.append(
                Row(
                    f"audio reliance: accuracy under {condition}{suffix}",
                    acc["accuracy"],
                    acc["n"],
                    f"rule {e['rule']}; the {e['checked_items']} checked items",
                    interval=acc["uncertainty"],
                )
            )
    return rows


def _accuracy_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    note = f"{entry['rule_description']}; {_outputs_note(entry)}"
    return [
        Row(
            label(f"answers: {entry['rule']}"),
            entry["accuracy"],
            entry["n"],
            note,
            entry["unanswered"],
            interval=_interval(entry, "accuracy"),
        )
    ]


def _official_scorer_row(entry: Mapping[str, Any], label: Callable[[str], str]) -> Row:
    return Row(
        label("accuracy: official MMAR/MMAU scorer"),
        entry["official_scorer_accuracy"],
        entry["n"],
        "the official string match on the whole raw reply, as MMAU evaluation.py and MMAR "
        f"code/evaluation.py read it (rule-based, no model); {_outputs_note(entry)}",
        interval=_interval(entry, "official_scorer_accuracy"),
    )


_ROW_BUILDERS = {
    "accuracy": _accuracy_rows,
    **{r.name: r.rows for declaration in DECLARATIONS for r in declaration.results},
}


__all__ = ["Row", "format_table", "interval_text", "reliance_rows", "result_rows"]
