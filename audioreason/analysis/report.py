"""``validity_report``: every validity statistic of ARIA §4 that applies to a set of per-model, per-benchmark
results, each with its inputs named.

The unit of analysis is the (model, benchmark) result, as in the paper: its analyses run on the per-model
means of Table 1 (the Table 5 p-values follow from rho at n = 18 = 9 models x 2 benchmarks).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping, Optional, Sequence

from .agreement import LEVELS, annotator_alpha, kendalls_w
from .anova import icc_2_1, two_way_anova
from .correlation import METHODS, correlation_matrix, spearman
from .statistic import Statistic, as_number

# Scores read from a scorer's result, in this order: the aria metric means, ARIA and accuracy (aria), the
# MMAR-Rubrics Total Score and accuracy (mmar_rubrics), or an accuracy alone.
MEASURES = ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy", "rubrics")
# ARIA Table 5's metric groups, each scored per result as the mean of its two metrics.
HUMAN_GROUPS = {"M1+M6": ("M1", "M6"), "M2+M3": ("M2", "M3"), "M4+M5": ("M4", "M5")}


def _scorer(scores: Mapping[str, Any]) -> str:
    if "rubrics" in scores:
        return "mmar_rubrics"
    if "aria" in scores or any(m in scores for m in MEASURES[:6]):
        return "aria"
    return "accuracy"


def _read(
    results: Sequence[Mapping[str, Any]],
) -> tuple[list[tuple[str, str]], list[dict[str, float]], list[Mapping[str, Any]], str]:
    """(model, benchmark) keys, their measures (NaN: missing), the raw scorer outputs and the scorer."""
    if isinstance(results, Mapping) or not isinstance(results, Sequence) or not results:
        raise ValueError("results must be a non-empty list of {'model', 'benchmark', ...scores} mappings")
    keys, rows, outputs, scorers = [], [], [], set()
    for i, entry in enumerate(results):
        if not isinstance(entry, Mapping):
            raise ValueError(f"results[{i}] is {type(entry).__name__}, not a mapping")
        key = (entry.get("model"), entry.get("benchmark"))
        if not all(isinstance(k, str) and k for k in key):
            raise ValueError(f"results[{i}] needs a non-empty 'model' and 'benchmark' (strings); got {key}")
        if key in keys:
            raise ValueError(f"results[{i}] repeats ({key[0]}, {key[1]}) (first at results[{keys.index(key)}])")
        scores = entry.get("result", entry)
        if not isinstance(scores, Mapping):
            raise ValueError(f"results[{i}]['result'] is {type(scores).__name__}, not a scorer's result mapping")
        row = {m: as_number(scores[m], f"results[{i}] ({key[0]}, {key[1]}) {m}") for m in MEASURES if m in scores}
        if not row:
            raise ValueError(f"results[{i}] ({key[0]}, {key[1]}) has none of {', '.join(MEASURES)}")
        keys.append(key)
        rows.append(row)
        outputs.append(scores)
        scorers.add(_scorer(scores))
    if len(scorers) > 1:
        raise ValueError(
            f"results mix scorer outputs ({', '.join(sorted(scorers))}): their measures differ (aria's "
            f"accuracy follows ARIA's answer extraction, mmar_rubrics' the official MMAR string match); "
            f"give one scorer's results per report"
        )
    return keys, rows, outputs, scorers.pop()


def _aria_coverage(outputs: list[Mapping[str, Any]]) -> Optional[str]:
    """Why the ARIA values cannot be compared, when they average different metrics."""
    covered = {tuple(out["aria_metrics"]) for out in outputs if "aria_metrics" in out}
    if len(covered) > 1:
        return (
            f"ARIA averages different metrics across results ({'; '.join('+'.join(c) for c in sorted(covered))}):"
            " its values are not comparable"
        )
    return None


def _backbone_warnings(outputs: list[Mapping[str, Any]]) -> list[str]:
    warnings = []
    for metric in MEASURES[:6]:
        used = sorted(
            {
                str(out["backbones"].get(metric))
                for out in outputs
                if isinstance(out.get("backbones"), Mapping) and metric in out["backbones"]
            }
        )
        if len(used) > 1:
            warnings.append(f"{metric} was computed with different backbones across results: {' | '.join(used)}")
    return warnings


def _human_ratings(human: Mapping[Any, Any], keys: list[tuple[str, str]]) -> list[float]:
    """The human rating of each result, NaN where none is given."""
    if not isinstance(human, Mapping):
        raise ValueError("human must map (model, benchmark) to the mean human rating of that result")
    unknown = [k for k in human if k not in keys]
    if unknown:
        raise ValueError(f"human ratings for results that are not in results: {unknown}")
    return [as_number(human.get(k), f"human[{k!r}]") for k in keys]


def _table_inputs(measure: str, models: list[str], benchmarks: list[str], rows_are: str, columns_are: str) -> str:
    return (
        f"{measure} of {len(models)} models (rows: {rows_are}) x {len(benchmarks)} benchmarks (columns: "
        f"{columns_are}; {', '.join(benchmarks)}), one score per cell"
    )


def _named(stat: Statistic, measure: str, inputs: str) -> dict[str, Any]:
    return replace(stat, measure=measure, inputs=inputs).to_dict()


def _correlations(column: dict[str, list[float]], method: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Figure 4: every pair of measures over the (model, benchmark) results, and the matrix for plotting."""
    matrix = correlation_matrix(column, method)
    pairs = [
        _named(
            stat,
            stat.measure,
            f"{stat.measure.replace('~', ' and ')} of {stat.n or 'the'} (model, benchmark) results with both",
        )
        for stat in matrix.pop("pairs")
    ]
    return pairs, matrix


def _across_benchmarks(
    m: str, cells: dict[tuple[str, str], float], models: list[str], benchmarks: list[str]
) -> list[dict[str, Any]]:
    """Figures 2 and 3: eta^2 of model and dataset, Kendall's W and ICC(2,1) of one measure's
    models x benchmarks table."""
    table = [[cells.get((model, bench)) for bench in benchmarks] for model in models]
    factors = _table_inputs(m, models, benchmarks, "factor model", "factor dataset")
    out = [_named(stat, m, factors) for stat in two_way_anova(table, ("model", "dataset"), models, benchmarks).values()]
    out.append(
        _named(
            kendalls_w(table, models, benchmarks), m, _table_inputs(m, models, benchmarks, "ranked objects", "raters")
        )
    )
    out.append(_named(icc_2_1(table, models, benchmarks), m, _table_inputs(m, models, benchmarks, "targets", "raters")))
    return out


def _human_alignment(column: dict[str, list[float]], ratings: list[float]) -> list[dict[str, Any]]:
    """Table 5: Spearman's rho of each measure, and of each metric group, with the human ratings."""
    scored = dict(column)
    for group, (a, b) in HUMAN_GROUPS.items():
        if a in column and b in column:
            scored[group] = [(x + y) / 2 for x, y in zip(column[a], column[b])]
    out = []
    for m, values in scored.items():
        stat = spearman(values, ratings, (m, "human rating"))
        out.append(
            _named(
                stat,
                f"{m}~human",
                f"{m} against the mean human rating of {stat.n or 'the'} (model, benchmark) results rated",
            )
        )
    return out


def _judge_reliability(model: str, bench: str, rel: Mapping[str, Any]) -> dict[str, Any]:
    """The Krippendorff's alpha an mmar_rubrics result carries (its ``reliability``), as a statistic."""
    alpha = rel.get("alpha")
    stat = Statistic(
        "krippendorff_alpha",
        alpha,
        n=rel.get("items"),
        unavailable=None if alpha is not None else rel.get("unavailable") or "the result carries no alpha",
        details={"level": rel.get("level"), "kind": rel.get("kind"), "model": model, "benchmark": bench},
    )
    return _named(
        stat,
        "rubrics raters",
        f"MMAR-Rubrics rater scores of {model} on {bench} ({rel.get('kind')}, {rel.get('items')} items)",
    )


def validity_report(
    results: Sequence[Mapping[str, Any]],
    human: Optional[Mapping[Any, Any]] = None,
    annotations: Optional[Mapping[str, Sequence[Any]]] = None,
    correlation: str = "pearson",
    alpha_level: str = "interval",
) -> dict[str, Any]:
    """Every ARIA §4 validity statistic that applies to ``results``, each with its inputs named.

    ``results``: one mapping per (model, benchmark): ``{"model": ..., "benchmark": ..., "result": <a scorer's
    result>}``, or the result's keys inline beside model and benchmark. Read from it: M1..M6, aria and
    accuracy (``aria``), rubrics and accuracy (``mmar_rubrics``), or accuracy alone; None or NaN is a
    missing value; all results must come from one scorer.
    ``human``: optional ``{(model, benchmark): mean human rating}`` (ARIA Table 5).
    ``annotations``: optional ``{annotator: [rating per instance, None where not rated]}`` (ARIA §4's
    inter-annotator agreement), scored at ``alpha_level``. ``correlation``: "pearson" (Figure 4's r) or
    "spearman".

    Returns ``models``, ``benchmarks``, ``measures``, ``scorer``, ``statistics`` (each a ``Statistic`` as a
    dict with ``measure`` and ``inputs``; unavailable ones say why), ``correlation_matrix`` (names, r, p,
    n; None with fewer than two measures), ``not_applicable`` (statistics not computed, with the reason)
    and ``warnings``.
    """
    if correlation not in METHODS:
        raise ValueError(f"correlation method must be one of {METHODS}, not {correlation!r}")
    if alpha_level not in LEVELS:
        raise ValueError(f"alpha level must be one of {LEVELS}, not {alpha_level!r}")
    keys, rows, outputs, scorer = _read(results)
    models = list(dict.fromkeys(k[0] for k in keys))
    benchmarks = list(dict.fromkeys(k[1] for k in keys))
    not_applicable: list[dict[str, str]] = []
    measures = []
    for m in MEASURES:
        if any(not math.isnan(row.get(m, math.nan)) for row in rows):
            measures.append(m)
        elif any(m in row for row in rows):  # e.g. an aria metric whose backbone was unavailable everywhere
            not_applicable.append({"statistic": f"every statistic of {m}", "reason": f"{m} has no value in any result"})
    incomparable = _aria_coverage(outputs)
    if incomparable and "aria" in measures:
        measures.remove("aria")
        not_applicable.append({"statistic": "every statistic of aria", "reason": incomparable})
    column = {m: [row.get(m, math.nan) for row in rows] for m in measures}
    statistics: list[dict[str, Any]] = []

    matrix = None
    if len(measures) >= 2:
        pairs, matrix = _correlations(column, correlation)
        statistics += pairs
    else:
        not_applicable.append({"statistic": "correlation_matrix", "reason": "needs at least two measures"})
    if len(benchmarks) >= 2:
        for m in measures:
            statistics += _across_benchmarks(m, dict(zip(keys, column[m])), models, benchmarks)
    else:
        not_applicable.append(
            {
                "statistic": "two-way ANOVA, Kendall's W, ICC(2,1)",
                "reason": f"need results on at least two benchmarks; got {benchmarks}",
            }
        )
    if human is not None:
        statistics += _human_alignment(column, _human_ratings(human, keys))
    else:
        not_applicable.append({"statistic": "spearman_rho with human ratings", "reason": "no human= ratings given"})
    if annotations is not None:
        stat = annotator_alpha(annotations, alpha_level)
        statistics.append(
            _named(
                stat,
                "human ratings",
                f"{len(annotations)} annotators' ratings of the same "
                f"instances (missing ratings handled natively), "
                f"{alpha_level} level",
            )
        )
    else:
        not_applicable.append({"statistic": "krippendorff_alpha of annotators", "reason": "no annotations= given"})
    if scorer == "mmar_rubrics":
        statistics += [
            _judge_reliability(model, bench, out["reliability"])
            for (model, bench), out in zip(keys, outputs)
            if isinstance(out.get("reliability"), Mapping)
        ]

    return {
        "models": models,
        "benchmarks": benchmarks,
        "measures": measures,
        "scorer": scorer,
        "statistics": statistics,
        "correlation_matrix": matrix,
        "not_applicable": not_applicable,
        "warnings": _backbone_warnings(outputs),
    }


__all__ = ["HUMAN_GROUPS", "MEASURES", "validity_report"]
