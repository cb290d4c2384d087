"""The text-prior decomposition's declaration (``scorers.declare``): its evaluate module's inputs and options,
when it fits a run, its section of the results (one entry per template over the model's conditions), its
printed rows and its report table and figures. Layer 9 (ARCHITECTURE.md): the scorer (``scorer.py``,
``formulas.py``) never imports it."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.evaluation.rows import Row
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.sections import OutputSet, Section, _uncertainty, is_mcq
from audioreason.scorers.declare import Declaration, Results

NAME = "text_prior_decomposition"
TEXT_PRIOR_CONDITIONS = ("none", "tb")  # with "frag:N:k": the conditions text_prior compares to "full"


def text_prior_sets(sets: Sequence[OutputSet]) -> dict[str, list[OutputSet]]:
    """Template -> its sets, for the templates run under ``full`` and at least one other text-prior condition."""
    by_template: dict[str, list[OutputSet]] = {}
    for s in sets:
        by_template.setdefault(s.template, []).append(s)
    return {
        t: group
        for t, group in by_template.items()
        if any(s.condition == "full" for s in group)
        and any(s.condition in TEXT_PRIOR_CONDITIONS or s.condition.startswith("frag:") for s in group)
    }


def fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    if not any(is_mcq(it) for it in items):
        return "the text-prior tables need multiple-choice items; the run has none"
    if not text_prior_sets(sets):
        conditions = ", ".join(sorted({s.condition for s in sets}))
        return (
            f"the text-prior decomposition compares one model's full condition with none, tb or frag:N:k "
            f"(All That Glitters Is Not Audio, §2); this run has {conditions}"
        )
    return None


def text_prior_section(
    sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]], model: str, uncertainty: Any = None
) -> Section:
    """One ``score_text_prior`` per template over its conditions; every condition's outputs are the run's main
    model's (the tb outputs come from its text backbone). Raw outputs are scored with the hybrid extractor (the
    paper's); a failed output is an errored prediction. Items whose gold answer is not among the choices and
    outputs under a condition the paper does not define (``anchored``) are left out and counted."""
    from audioreason.scorers.text_prior.scorer import score_text_prior

    section = Section("ok")
    for template, group in text_prior_sets(sets).items():
        records, left_out = [], {"conditions_not_in_the_paper": 0, "gold_not_a_choice": 0}
        for output_set in group:
            if output_set.condition not in ("full", *TEXT_PRIOR_CONDITIONS) and not output_set.condition.startswith(
                "frag:"
            ):
                left_out["conditions_not_in_the_paper"] += len(output_set.records)
                continue
            for record in output_set.records:
                item = items[record["id"]]
                if not is_mcq(item):
                    continue
                if str(item["answer"]).strip() not in {str(c).strip() for c in item["choices"]}:
                    left_out["gold_not_a_choice"] += 1
                    continue
                category = item.get("category")
                records.append(
                    {
                        "model": model,
                        "item_id": str(record["id"]),
                        "condition": output_set.condition,
                        "prediction": record.get("output") if record.get("error") is None else None,
                        "reference": str(item["answer"]),
                        "choices": [str(c) for c in item["choices"]],
                        "category": category if isinstance(category, str) else None,
                        "question": str(item.get("question") or ""),
                    }
                )
        if not records:
            continue
        result = score_text_prior(records, return_items=True)
        rows = result.pop("items")
        result["text_prior"]["uncertainty"] = text_prior_uncertainty(result["text_prior"], rows, uncertainty)
        section.results.append(
            {
                "model": model,
                "template": template,
                "conditions": sorted({r["condition"] for r in records}),
                "left_out": left_out,
                **result,
            }
        )
        labels = {str(row["item_id"]): row["label"] for row in rows}
        for output_set in group:
            for record in output_set.records:
                if str(record["id"]) in labels:
                    section.items[record["key"]] = {"label": labels[str(record["id"])]}
    return section


def text_prior_uncertainty(
    text_prior: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], uncertainty: Any = None
) -> dict[str, dict[str, Any]]:
    """Over the items with both a Full and a None prediction (the ones R_TP is computed on; one model): the
    Wilson intervals of the Full and None accuracies and the bootstrap interval of R_TP = sum None / sum Full."""
    from audioreason.scorers.text_prior.records import CORRECT

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    matched = [r for r in rows if r.get("full") is not None and r.get("none") is not None]
    full = [r["full"] == CORRECT for r in matched]
    none = [r["none"] == CORRECT for r in matched]
    if not matched:
        why = "no item has both a Full and a None prediction"
        return {
            "full_mean": U.unavailable(why, U.WILSON, 0),
            "none_mean": U.unavailable(why, U.WILSON, 0),
            "R_TP": U.unavailable(why, U.PERCENTILE, 0, uncertainty),
        }
    r_tp = (
        U.bootstrap_ratio([int(x) for x in none], [int(x) for x in full], uncertainty)
        if text_prior.get("R_TP") is not None
        else U.unavailable("R_TP is undefined (no Full answer is correct)", U.PERCENTILE, len(matched), uncertainty)
    )
    return {
        "full_mean": U.wilson(sum(full), len(full), uncertainty),
        "none_mean": U.wilson(sum(none), len(none), uncertainty),
        "R_TP": r_tp,
    }


def score(scoring: Any) -> dict[str, Section]:
    if not scoring.runs(NAME):
        return {}
    run = scoring.run
    return {NAME: text_prior_section(run.sets, run.items, run.model, scoring.uncertainty)}


def text_prior_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    tp, decomposition = entry["text_prior"], entry["decomposition"]
    n = entry["counts"]["items"]
    note = f"{entry['model']}, conditions {', '.join(entry['conditions'])}"
    suffix = f" [{entry['template']}]"
    values = [
        ("text prior: Full accuracy", "full_mean"),
        ("text prior: None accuracy", "none_mean"),
        ("text prior: R_TP = sum None / sum Full", "R_TP"),
        ("text prior: TB - chance", "tb_minus_chance_mean"),
    ]
    rows = [
        Row(name + suffix, tp.get(key), n, note, interval=_interval(tp, key))
        for name, key in values
        if tp.get(key) is not None
    ]
    xs_an = decomposition["XS_over_AN"].get("mean")
    return rows + ([Row("decomposition: XS / AN" + suffix, xs_an, n, note)] if xs_an is not None else [])


DECLARATION = Declaration(
    name=NAME,
    folder="text_prior",
    inputs={
        "model": "text",
        "item_id": "text",
        "condition": "text",
        "choices": "texts",
        "category": "text",
        "question": "text",
    },
    options=("judge", "errored_fragments", "chance", "zero_an_models", "return_items", "rows"),
    fit=fit,
    score=score,
    detect=lambda result: "text_prior" in result and "decomposition" in result,
    per_template=True,  # one result over every condition of a template
    results=(
        Results(
            NAME,
            "Text prior and audio reliance",
            text_prior_rows,
            tables=("text_prior_table",),
            figures=("retention_curves", "decomposition_bars"),
        ),
    ),
)


__all__ = ["DECLARATION", "text_prior_section", "text_prior_sets", "text_prior_uncertainty"]
