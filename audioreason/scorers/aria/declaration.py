"""ARIA's declaration (``scorers.declare``): its evaluate module's inputs and options, when it fits a run, its
sections of the results (``aria`` and the CoT perturbation checks, ``perturbations``), their printed rows and
their report tables and figures. Layer 9 (ARCHITECTURE.md): it builds results sections, so the scorer
(``scorer.py``, ``formulas.py``) never imports it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Optional, Sequence

from audioreason.evaluation.rows import Row
from audioreason.evaluation.rows import interval as _interval
from audioreason.evaluation.rows import mode as _mode
from audioreason.evaluation.rows import outputs_note as _outputs_note
from audioreason.evaluation.sections import OutputSet, Section, _uncertainty, is_mcq, not_applicable
from audioreason.scorers.declare import Declaration, Results

NAME = "aria"
CHECKS = "perturbations"  # the CoT checks' section, scored with ARIA


def fit(benchmark: str, items: Sequence[Mapping[str, Any]], sets: Sequence[OutputSet]) -> Optional[str]:
    if not any(is_mcq(it) for it in items):
        return "ARIA scores multiple-choice CoTs against a gold choice; the run has none"
    if not any(s.template == "aria_cot" for s in sets):
        used = ", ".join(sorted({s.template for s in sets}))
        return f"ARIA scores four-step CoT outputs (ARIA-Rubrics §3.2: the aria_cot template); this run used {used}"
    return None


ARIA_SUMMARY = (
    "M1",
    "M2",
    "M3",
    "M4",
    "M5",
    "M6",
    "aria",
    "aria_metrics",
    "aria_complete",
    "accuracy",
    "unanswered_rate",
    "reasoning_mode",
    "reasoning_mode_rule",
)


def aria_sets(sets: Sequence[OutputSet], items: Mapping[str, Mapping[str, Any]]) -> list[OutputSet]:
    """The sets ARIA scores: the aria_cot template, multiple-choice items only."""
    out = []
    for s in sets:
        if s.template == "aria_cot":
            kept = [r for r in s.records if is_mcq(items[r["id"]])]
            if kept:
                out.append(OutputSet(s.model, s.condition, s.template, s.template_hash, kept, s.missing))
    return out


def aria_inputs(output_set: OutputSet, items: Mapping[str, Mapping[str, Any]]) -> tuple[list, list, list]:
    """(gold answers, choices, audio) of a set's items; the audio is the item's clip whatever the condition
    (M1 compares the CoT's entities with the clip the question is about)."""
    chosen = [items[r["id"]] for r in output_set.records]
    return [it["answer"] for it in chosen], [list(it["choices"]) for it in chosen], [it.get("audio") for it in chosen]


def aria_section(
    scorer: Any,
    sets: Sequence[OutputSet],
    items: Mapping[str, Mapping[str, Any]],
    progress: Callable[[int], None],
    uncertainty: Any = None,
) -> Section:
    section = Section("ok")
    for output_set in aria_sets(sets, items):
        references, choices, audio = aria_inputs(output_set, items)
        result = scorer.score(output_set.texts(), references, choices, audio=audio, return_items=True)
        progress(len(output_set.records))
        per_item = result.pop("items")
        section.results.append(
            {
                **output_set.describe(),
                **result,
                "n": len(output_set.records),
                "failed": output_set.failed,
                "uncertainty": aria_uncertainty(result, per_item, uncertainty),
            }
        )
        for record, row in zip(output_set.records, per_item):
            section.items[record["key"]] = {
                k: row.get(k) for k in ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "correct")
            }
    return section


def aria_uncertainty(
    result: Mapping[str, Any], per_item: Sequence[Mapping[str, Any]], uncertainty: Any = None
) -> dict[str, dict[str, Any]]:
    """Bootstrap intervals over items of each metric's mean (its scored items, clipped to [0, 1], as the
    headline is computed), of ARIA (the mean of the metric means, recomputed in every resample) and the
    Wilson interval of the accuracy."""
    import math

    U = _uncertainty()
    uncertainty = uncertainty or U.DEFAULT
    finite = lambda v: v is not None and math.isfinite(float(v))  # noqa: E731
    out: dict[str, dict[str, Any]] = {}
    for m in ("M1", "M2", "M3", "M4", "M5", "M6"):
        values = [row.get(f"{m}_clipped") for row in per_item]
        if not finite(result.get(m)):
            out[m] = U.unavailable(f"{m} has no value", U.PERCENTILE, 0, uncertainty)
        else:
            out[m] = U.bootstrap_mean([float(v) for v in values if finite(v)], uncertainty)
    covered = list(result.get("aria_metrics") or [])
    if not finite(result.get("aria")) or not covered:
        out["aria"] = U.unavailable("ARIA has no value", U.PERCENTILE, len(per_item), uncertainty)
    else:
        columns = [[row.get(f"{m}_clipped") for row in per_item] for m in covered]
        columns = [[float(v) if finite(v) else None for v in c] for c in columns]
        out["aria"] = U.bootstrap(columns, _mean_of_nanmeans, uncertainty, allow_missing=True)
    out["accuracy"] = U.wilson_of([row.get("correct") for row in per_item], uncertainty)
    return out


def _mean_of_nanmeans(*columns, axis=-1):
    import numpy as np

    return np.mean([np.nanmean(c, axis=axis) for c in columns], axis=0)


def perturbation_section(
    scorer: Any,
    sets: Sequence[OutputSet],
    items: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
    seed: int,
    progress: Callable[[int], None],
) -> Section:
    """ARIA on each perturbation of each aria_cot set, beside the re-rendered originals (``rendered``): per
    perturbation the metric deltas (perturbed minus rendered), accuracy and unanswered rate (Table 7's Acc.
    and No Ans.), the answer-change rate (the ARIA App. E answer differs from the rendered original's, an
    answered/unanswered switch included) and the reasoning mode ARIA assigns (None when ARIA is incomplete or
    its profile matches none of the paper's modes: ``note`` says which)."""
    from audioreason.text.perturbations import PERTURBATIONS, perturb

    section = Section("ok")
    for output_set in aria_sets(sets, items):
        # An item with no wrong choice to point to cannot take the adversarial checks: it is left out of every
        # check of its set (so each delta compares the same items) and counted, never the whole set dropped.
        kept, texts, skipped = [], {name: [] for name in ["rendered", *names]}, []
        for record in output_set.records:
            try:
                perturbed = {name: perturb(name, record.get("output"), items[record["id"]], seed) for name in texts}
            except ValueError as err:
                skipped.append(f"{record['id']}: {err}")
                continue
            kept.append(record)
            for name, text in perturbed.items():
                texts[name].append(text)
        if skipped:
            section.notes.append(f"{output_set.label}: {len(skipped)} item(s) not perturbed: {'; '.join(skipped)}")
        if not kept:
            continue
        output_set = replace(output_set, records=kept)
        references, choices, audio = aria_inputs(output_set, items)
        scored = {}
        for name, perturbed in texts.items():
            scored[name] = scorer.score(perturbed, references, choices, audio=audio, return_items=True)
            progress(len(perturbed))
        base = scored["rendered"]
        base_answers = [row["extracted"]["index"] for row in base["items"]]
        rows = []
        for name in texts:
            result = scored[name]
            changed = [row["extracted"]["index"] != b for row, b in zip(result["items"], base_answers)]
            rows.append(
                {
                    "perturbation": name,
                    "paper_name": PERTURBATIONS[name].paper_name,
                    "kind": PERTURBATIONS[name].kind,
                    **{k: result.get(k) for k in ARIA_SUMMARY},
                    "delta": {
                        m: _delta(result.get(m), base.get(m))
                        for m in ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy")
                    },
                    "answer_change_rate": sum(changed) / len(changed),
                    "answer_changed": sum(changed),
                    "note": result.get("note"),
                }
            )
            for record, text, row, moved in zip(output_set.records, texts[name], result["items"], changed):
                section.items.setdefault(record["key"], {})[name] = {
                    "aria": row.get("aria"),
                    "choice": row["extracted"]["choice"],
                    "changed": moved,
                    "text": text,
                }
        section.results.append(
            {
                **output_set.describe(),
                "n": len(output_set.records),
                "not_perturbed": len(skipped),
                "seed": seed,
                "backbones": base.get("backbones"),
                "perturbations": rows,
            }
        )
    return section


def _delta(value: Any, base: Any) -> Optional[float]:
    if value is None or base is None:
        return None
    return float(value) - float(base)


def score(scoring: Any) -> dict[str, Section]:
    """``aria`` when asked and the perturbation checks when ``--perturbations`` names any, with one
    AriaScorer (its backbones loaded once) and one progress bar."""
    options, run = scoring.options, scoring.run
    out: dict[str, Section] = {}
    if options.perturbations and scoring.fits[NAME] is not None:
        out[CHECKS] = not_applicable(f"the perturbation checks score CoTs with ARIA: {scoring.fits[NAME]}")
    want_aria, want_checks = scoring.runs(NAME), bool(options.perturbations) and not out
    if not (want_aria or want_checks):
        return out
    from audioreason.scorers.aria.scorer import AriaScorer

    sets = aria_sets(run.sets, run.items)
    n = sum(len(s.records) for s in sets)
    passes = (1 if want_aria else 0) + (len(options.perturbations) + 1 if options.perturbations else 0)
    # An unreadable clip is that item's M1 (counted in audio_errors), unless the user's options say otherwise.
    scorer = AriaScorer(
        backbones=options.aria_backbones, **{"on_audio_error": "skip", **options.scorer_options.get(NAME, {})}
    )
    bar = scoring.bar(n * passes, NAME)
    try:
        if want_aria:
            out[NAME] = aria_section(scorer, run.sets, run.items, bar.update, scoring.uncertainty)
        if options.perturbations:
            out[CHECKS] = perturbation_section(
                scorer, run.sets, run.items, options.perturbations, options.seed, bar.update
            )
    finally:
        bar.close()
    return out


def aria_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    from audioreason.scorers.aria.formulas import METRIC_NAMES, METRICS

    rows = [
        Row(
            label(f"aria: {m} {METRIC_NAMES[m]}"),
            entry.get(m),
            entry["n"],
            entry["backbones"][m],
            interval=_interval(entry, m),
        )
        for m in METRICS
    ]
    covered = "+".join(entry.get("aria_metrics") or []) or "none"
    mode = _mode(entry)
    rows.append(
        Row(
            label(f"aria: ARIA (mean of {covered})"),
            entry.get("aria"),
            entry["n"],
            f"reasoning mode: {mode}; {_outputs_note(entry)}",
            interval=_interval(entry, "aria"),
        )
    )
    return rows


def perturbation_rows(entry: Mapping[str, Any], label: Callable[[str], str]) -> list[Row]:
    rows = []
    for p in entry["perturbations"]:
        mode = _mode(p)
        delta = p["delta"]["aria"]
        note = (
            f"{p['paper_name']}: accuracy {p['accuracy']:.4f}, answers changed "
            f"{p['answer_change_rate']:.4f}, ARIA delta "
            f"{'n/a' if delta is None else f'{delta:+.4f}'}; mode {mode}"
        )
        rows.append(
            Row(
                label(f"perturbation: {p['perturbation']}"),
                p.get("aria"),
                entry["n"],
                note,
                round(p["unanswered_rate"] * entry["n"]),
            )
        )
    return rows


def _config_fields() -> tuple[str, ...]:
    import dataclasses

    from audioreason.scorers.aria.scorer import AriaConfig

    return tuple(f.name for f in dataclasses.fields(AriaConfig))


def detect(result: Mapping[str, Any]) -> bool:
    return "aria_metrics" in result or any(f"M{i}" in result for i in range(1, 7))


DECLARATION = Declaration(
    name=NAME,
    folder="aria",
    inputs={"choices": "texts", "audio": "text", "model": "text", "condition": "text"},
    options=("return_items", "rows", "backbones"),
    more_options=_config_fields,  # and every AriaConfig field
    fit=fit,
    score=score,
    detect=detect,
    protocol=("backbones",),
    results=(
        Results(NAME, "ARIA-Rubrics", aria_rows, tables=("aria_table",), figures=("aria_radar", "aria_vs_accuracy")),
        Results(CHECKS, "CoT perturbations", perturbation_rows, tables=("perturbations_table",)),
    ),
)


__all__ = ["DECLARATION", "aria_inputs", "aria_section", "aria_sets", "aria_uncertainty", "perturbation_section"]
