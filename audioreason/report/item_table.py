"""The explorer's item table: one row per output (``item_rows``, ``ITEM_COLUMNS``), named by item id, model and
condition, filtered by category, duration tier, anchor operation and reasoning mode (``FILTERS``,
``facet_values``), with whether it is right by each rule (``item_verdicts``). With a ``second`` run, each row
gets that run's verdicts on the same item (``counterpart``, ``same_item``) and the rules on which they differ
(``differing``), optionally only the items where they disagree (``DISAGREE``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .load import unique
from .run_view import OFFICIAL_VERDICT, RunView
from .scale import display

FILTERS = ("category", "duration_tier", "operation", "reasoning_mode")


def _item_facets(view: RunView, row: Mapping[str, Any], modes: Mapping[tuple, Optional[str]]) -> dict[str, str]:
    item = view.items.get(str(row.get("id")), {})
    return {
        "category": str(item.get("category") or ""),
        "duration_tier": str(item.get("duration_tier") or ""),
        "operation": str(item.get("operation") or ""),
        "reasoning_mode": str(modes.get((row.get("model"), row.get("condition"), row.get("template"))) or ""),
    }


ITEM_COLUMNS = [
    "run",
    "item",
    "model",
    "condition",
    "template",
    "category",
    "tier",
    "operation",
    "mode",
    "correct",
    "ARIA",
    "rubric",
    "second run: correct",
    "differs on",
]
DISAGREE = ("benchmark", "any")  # which verdicts a comparison of two runs filters on


@dataclass
class ItemRow:
    """One output in the item table: the run it is in (its index among the views), its key, its cells
    (``ITEM_COLUMNS``) and the key of the same item in the second run of a comparison (None: not there)."""

    run: int
    key: str
    cells: list[str]
    other: Optional[str] = None


def _row(view: RunView, key: str) -> dict[str, Any]:
    """An output's items.jsonl row, or the identifying fields of its record when it was not scored."""
    if key in view.rows:
        return view.rows[key]
    record = view.outputs.get(key, {})
    row = {k: record.get(k) for k in ("key", "id", "model", "condition")}
    row["template"] = (
        (record.get("template") or {}).get("name")
        if isinstance(record.get("template"), Mapping)
        else record.get("template")
    )
    return row


def item_verdicts(view: RunView, key: str) -> dict[str, bool]:
    """Whether an output is right, per rule: each extraction rule it was scored with (items.jsonl), and, on
    MMAR and MMAU, the official scorer's string match on the whole reply: as `audioreason score` recorded it
    (``official_scorer_correct``), or for a run scored before it was recorded, computed here by the same
    function from the output and the item (absent when the item is not at hand)."""
    row = _row(view, key)
    verdicts = [v for v in (row.get("accuracy") or {}).values() if isinstance(v, Mapping)]
    out = {
        rule: bool(v["correct"])
        for rule, v in (row.get("accuracy") or {}).items()
        if isinstance(v, Mapping) and v.get("correct") is not None
    }
    if view.benchmark_rule == OFFICIAL_VERDICT:
        recorded = next(
            (v["official_scorer_correct"] for v in verdicts if isinstance(v.get("official_scorer_correct"), bool)), None
        )
        if recorded is not None:
            return {OFFICIAL_VERDICT: recorded, **out}
        from audioreason.evaluation.sections import is_mcq, official_scorer_correct

        item = view.items.get(str(row.get("id")))
        if item and key in view.outputs and is_mcq(item) and item.get("answer") is not None:
            out = {OFFICIAL_VERDICT: official_scorer_correct(view.outputs[key].get("output"), item), **out}
    return out


def _correct(view: RunView, key: str) -> str:
    """Each rule's verdict, named ("official scorer yes, exact_letter no"); an anchor link's Chain verdict (see
    ``correct_legend``)."""
    verdicts = list(item_verdicts(view, key).items())
    row = _row(view, key)
    if not verdicts and isinstance(row.get("anchor_chain"), Mapping) and row["anchor_chain"].get("correct") is not None:
        verdicts = [("chain", row["anchor_chain"]["correct"])]
    return ", ".join(f"{rule} {'yes' if v else 'no'}" for rule, v in verdicts)


def _by_item(view: RunView) -> dict[tuple[str, Any], list[str]]:
    """A run's output keys by (item id, condition)."""
    out: dict[tuple[str, Any], list[str]] = {}
    for key in unique([*view.rows, *view.outputs]):
        row = _row(view, key)
        out.setdefault((str(row.get("id")), row.get("condition")), []).append(key)
    return out


def counterpart(
    row: Mapping[str, Any], other: RunView, index: Optional[Mapping[tuple[str, Any], list[str]]] = None
) -> Optional[str]:
    """The key of the same item in ``other``: same item id, condition and template, else the same item id and
    condition (two models' templates may differ); None when ``other`` has no such output."""
    same_item = (index if index is not None else _by_item(other)).get((str(row.get("id")), row.get("condition")), [])
    exact = [k for k in same_item if _row(other, k).get("template") == row.get("template")]
    return (exact or same_item or [None])[0]


def same_item(view: RunView, key: str, other: RunView) -> Optional[str]:
    """The key of ``view``'s output ``key``'s item in ``other`` (``counterpart``)."""
    return counterpart(_row(view, key), other)


def differing(view: RunView, key: str, other: RunView, other_key: str, scope: str = "benchmark") -> list[str]:
    """The verdicts on which two runs' outputs for one item disagree: ``scope`` "benchmark", the benchmark's own
    rule (when both runs are on one benchmark); "any", every rule both were scored with. A rule only one of
    them has is not a disagreement."""
    if scope not in DISAGREE:
        raise ValueError(f"unknown disagreement scope {scope!r}; choose {' or '.join(DISAGREE)}")
    mine, theirs = item_verdicts(view, key), item_verdicts(other, other_key)
    rules = [r for r in mine if r in theirs]
    if scope == "benchmark":
        rule = view.benchmark_rule
        rules = [rule] if rule in rules and rule == other.benchmark_rule else []
    return [r for r in rules if mine[r] != theirs[r]]


def _rubric(row: Mapping[str, Any]) -> str:
    if isinstance(row.get("mmar_rubrics"), Mapping):
        r = row["mmar_rubrics"]
        score = display(r.get("score"), "mmar_rubrics", "item.score") if r.get("score") is not None else ""
        return f"{r.get('status')} {score}".strip()
    if isinstance(row.get("audiospan_rubric"), Mapping):
        return display(row["audiospan_rubric"].get("rubric"), "audiospan_rubric", "item.rubric")
    return ""


def facet_values(views: Sequence[RunView]) -> dict[str, list[str]]:
    """The values each filter can take over the loaded runs."""
    out: dict[str, list[str]] = {f: [] for f in FILTERS}
    for view in views:
        modes = view.modes()
        for row in view.rows.values():
            for name, value in _item_facets(view, row, modes).items():
                if value and value not in out[name]:
                    out[name].append(value)
    return {k: sorted(v) for k, v in out.items()}


def item_rows(
    views: Sequence[RunView],
    filters: Optional[Mapping[str, Sequence[str]]] = None,
    second: Optional[int] = None,
    disagree: Optional[str] = None,
) -> list[ItemRow]:
    """One row per output; ``filters`` keep the rows whose facet is one of the values given (an empty selection
    keeps every row). ``second``: the index of a run to compare with: the other runs' rows each get that run's
    verdicts on the same item (``counterpart``), and ``disagree`` ("benchmark" or "any", ``differing``) keeps
    only the items on which they differ. The second run's own rows are then not listed (they are its column)."""
    filters = {k: set(v) for k, v in (filters or {}).items() if v}
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise ValueError(f"unknown filters {sorted(unknown)}; filters are {', '.join(FILTERS)}")
    if second is not None and not 0 <= second < len(views):
        raise ValueError(f"no run {second} to compare with ({len(views)} open)")
    if disagree is not None and second is None:
        raise ValueError("the disagreement filter needs a second run to compare with")
    table, index = [], _by_item(views[second]) if second is not None else {}
    for n, view in enumerate(views):
        if n == second:
            continue
        modes = view.modes()
        for key in unique([*view.rows, *view.outputs]):
            row = _row(view, key)
            facets = _item_facets(view, row, modes)
            if any(facets[name] not in allowed for name, allowed in filters.items()):
                continue
            other = counterpart(row, views[second], index) if second is not None else None
            differs = differing(view, key, views[second], other, "any") if other else []
            if disagree is not None and not (
                differs if disagree == "any" else other and differing(view, key, views[second], other, disagree)
            ):
                continue
            aria = row.get("aria") if isinstance(row.get("aria"), Mapping) else {}
            theirs = ("(not in it)" if other is None else _correct(views[second], other)) if second is not None else ""
            table.append(
                ItemRow(
                    n,
                    key,
                    [
                        view.name,
                        str(row.get("id")),
                        str(row.get("model")),
                        str(row.get("condition") or ""),
                        str(row.get("template") or ""),
                        facets["category"],
                        facets["duration_tier"],
                        facets["operation"],
                        facets["reasoning_mode"],
                        _correct(view, key),
                        display(aria.get("aria"), "aria", "aria", aria) if aria else "",
                        _rubric(row),
                        theirs,
                        ", ".join(differs),
                    ],
                    other,
                )
            )
    return table


def item_table(
    views: Sequence[RunView],
    filters: Optional[Mapping[str, Sequence[str]]] = None,
    second: Optional[int] = None,
    disagree: Optional[str] = None,
) -> list[list[str]]:
    """The cells of ``item_rows`` (``ITEM_COLUMNS``)."""
    return [r.cells for r in item_rows(views, filters, second, disagree)]


__all__ = [
    "DISAGREE",
    "FILTERS",
    "ITEM_COLUMNS",
    "ItemRow",
    "counterpart",
    "differing",
    "facet_values",
    "item_rows",
    "item_table",
    "item_verdicts",
    "same_item",
]
