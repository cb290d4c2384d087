"""The report's audio-reliance table: each scored run's check (``evaluation.reliance``), its verdict with the
share of outputs that changed under silence or shuffled audio and the accuracy under each condition, with
their intervals; a run scored without the check is listed as not checked, with why."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .load import Results
from .tables import Table

TITLE = "Audio reliance (did the model use the audio?)"


def _value(entry: Optional[Mapping[str, Any]], field: str) -> str:
    if not entry or entry.get(field) is None:
        return "n/a"
    ci = (entry.get("uncertainty") or {}).get("ci95")
    return f"{entry[field]:.4f}" + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "")


def reliance_table(results: Results) -> Optional[Table]:
    """One row per (run, template) of the check; None when no run says anything about it (bare results)."""
    rows = []
    for run in results.runs:
        section = run.get("audio_reliance")
        if not isinstance(section, Mapping):
            continue
        name = f"{run.get('model')} on {run.get('benchmark')}"
        if section.get("status") != "ok":
            rows.append([name, "", "not checked", "n/a", "n/a", "n/a", "n/a", "0", str(section.get("reason") or "")])
            continue
        for e in section.get("results") or []:
            acc = e.get("accuracy") or {}
            rows.append(
                [
                    name,
                    str(e.get("template")),
                    str(e.get("verdict")),
                    _value((e.get("changed") or {}).get("either"), "share"),
                    *(_value(acc.get(c), "accuracy") for c in ("full", "silence", "shuffled")),
                    str(e.get("n")),
                    str(e.get("reason")),
                ]
            )
    if not rows:
        return None
    return Table(
        "audio_reliance",
        TITLE,
        [
            "run",
            "template",
            "verdict",
            "outputs changed",
            "accuracy full",
            "accuracy silence",
            "accuracy shuffled",
            "n",
            "reason",
        ],
        rows,
        [
            "Checked items run again with silence of the same length and with another item's audio "
            "(audioreason run --audio-check N); audio ignored: no output changed, or the accuracy under "
            "silence lies inside full's interval. [lo, hi]: Wilson intervals."
        ],
    )


__all__ = ["reliance_table"]
