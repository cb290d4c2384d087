"""MMAR-Rubrics formulas ("The Interspeech 2026 Audio Reasoning Challenge", arXiv:2602.14224, §3.2, and the
official scorer's behaviour, MMAR repository ``code/evaluation_rubrics.py``): numbers in, numbers out. No
judge, no I/O.

* rater score of one instance = sum(criterion scores) / sum(each criterion's maximum option)
  (binary criteria: satisfied / k);
* instance score = the average of its raters with the highest and the lowest dropped (5 raters: the middle
  3), via ``audioreason.judges.aggregate(values, "trimmed_mean", trim=1)``; with fewer valid raters it
  drops one from each end only while at least one value remains (4: middle 2, 3: median, 2 or 1: mean);
* a wrong answer (the gate) scores 0 and is never judged;
* Total Score (``rubrics``) = mean instance score, Accuracy = correct / total, overall and per modality,
  category and sub-category, on the project's one scale: fractions in [0, 1] (``audioreason.base.scale``; the
  paper and the official scorer print 100 times these).

Items whose judging failed (fewer valid raters than ``min_valid_raters``; in compat any failed rater):
  * ``compat=True`` (the official scorer): dropped from every denominator, Accuracy included;
  * ``compat=False`` (default): kept in Accuracy (they are correct answers: only correct answers are
    judged) and counted (``n_failed``, ``failed_ids``); the headline ``rubrics`` counts them at the lowest
    score, 0, so a failure (a broken judge, a submission that makes the judge fail) can only lower it.
    Beside it: ``rubrics_judged_only`` (failed items left out) and ``rubrics_upper`` (failed items at full
    marks); the true score lies between the headline and the upper bound.

Exact arithmetic: rater scores, instance scores and the sums and shares over items are ``fractions.Fraction``
(a rater's k/5, a middle-3 mean of them), so equal submissions score equally whatever the order of the items;
``audioreason.scorers.mmar_rubrics.scorer`` turns them into the nearest floats for its result.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.judges import aggregate

JUDGED, GATED, FAILED = "judged", "gated", "failed"
GROUP_KEYS = ("modality", "category", "sub-category")


def rater_score(scores: Sequence[float], max_scores: Sequence[float]) -> Fraction:
    """sum(scores) / sum(max option of each criterion), exact (a float is read as the value it holds)."""
    if len(scores) != len(max_scores):
        raise ValueError(f"{len(scores)} scores for {len(max_scores)} criteria")
    denominator = sum((Fraction(m) for m in max_scores), Fraction(0))
    if denominator <= 0:
        raise ValueError("the criteria's maximum scores sum to 0")
    return sum((Fraction(x) for x in scores), Fraction(0)) / denominator


def instance_score(rater_scores: Sequence[Optional[Fraction]], trim: int = 1) -> Optional[Fraction]:
    """Drop-highest-and-lowest average over the valid raters (None marks a failed rater); None if none.
    Exact for Fraction rater scores."""
    return aggregate(list(rater_scores), "trimmed_mean", trim=trim).value


@dataclass
class ItemScore:
    """One item's outcome. ``score`` is 0 for a gated item, None for a failed one."""

    id: str
    correct: bool
    status: str  # "judged" | "gated" | "failed"
    score: Optional[Fraction] = None
    rater_scores: list[Optional[Fraction]] = field(default_factory=list)
    n_valid_raters: int = 0
    groups: dict[str, Any] = field(default_factory=dict)  # modality, category, sub-category

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _share(num: Fraction, den: int) -> Optional[Fraction]:
    return Fraction(num) / den if den else None


def summarize(items: Sequence[ItemScore], compat: bool = False) -> dict[str, Any]:
    """Rubrics and Accuracy (exact fractions in [0, 1]) and counts over ``items``. See the module docstring
    for failed items."""
    counted = [it for it in items if not (compat and it.status == FAILED)]
    scored = [it for it in counted if it.status != FAILED]
    failed = [it for it in items if it.status == FAILED]
    n_judged = sum(it.status == JUDGED for it in items)
    n_partial = sum(it.status == JUDGED and it.n_valid_raters < len(it.rater_scores) for it in items)
    total = sum((Fraction(it.score or 0) for it in scored), Fraction(0))
    n_failed_counted = len(counted) - len(scored)
    return {
        "rubrics": _share(total, len(counted)),
        "rubrics_judged_only": _share(total, len(scored)),
        "rubrics_upper": _share(total + n_failed_counted, len(counted)),
        "accuracy": _share(sum(bool(it.correct) for it in counted), len(counted)),
        "n": len(counted),
        "n_rubrics": len(counted),
        "n_correct": sum(bool(it.correct) for it in counted),
        "n_judged": n_judged,
        "n_gated": sum(it.status == GATED for it in items),
        "n_failed": len(failed),
        "n_partial": n_partial,
        "n_dropped": len(failed) if compat else 0,
    }


def summarize_groups(
    items: Sequence[ItemScore], compat: bool = False, keys: Iterable[str] = GROUP_KEYS
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{key: {group value: summarize(items of that group)}}`` for each grouping key (groups sorted)."""
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for key in keys:
        buckets: dict[str, list[ItemScore]] = {}
        for it in items:
            buckets.setdefault(str(it.groups.get(key)), []).append(it)
        tables[key] = {name: summarize(buckets[name], compat) for name in sorted(buckets)}
    return tables


def score_table(items: Sequence[ItemScore], compat: bool = False) -> dict[str, Any]:
    """Overall summary, per-group tables and the ids of failed items."""
    out = summarize(items, compat)
    out["failed_ids"] = [it.id for it in items if it.status == FAILED]
    out["partial_ids"] = [it.id for it in items if it.status == JUDGED and it.n_valid_raters < len(it.rater_scores)]
    out.update(summarize_groups(items, compat))
    return out


def preference_agreement(
    chosen: Sequence[Optional[float]], rejected: Sequence[Optional[float]], tol: float = 1e-9
) -> dict[str, int]:
    """Table 1's human alignment: per pair of a human-preferred (C) and a rejected (R) reasoning path, the
    judge's scores of each; counts of C>R (agrees), C<R (disagrees), C=R (|C-R| <= tol). Pairs with a
    missing score are counted in ``skipped``."""
    if len(chosen) != len(rejected):
        raise ValueError(f"{len(chosen)} chosen scores for {len(rejected)} rejected ones")
    out = {"C>R": 0, "C<R": 0, "C=R": 0, "skipped": 0}
    for c, r in zip(chosen, rejected):
        if c is None or r is None:
            out["skipped"] += 1
        elif abs(float(c) - float(r)) <= tol:
            out["C=R"] += 1
        else:
            out["C>R" if c > r else "C<R"] += 1
    return out


class StatisticUnavailable(ValueError):
    """A statistic that is undefined on these data; the message says why."""


def krippendorff_alpha(ratings: Mapping[str, Sequence[Optional[float]]], level: str = "interval") -> float:
    """Krippendorff's alpha (Table 1's reliability) with the maintained ``krippendorff`` package.

    ``ratings``: one sequence per rater (a judge model for inter-rater reliability, a repeated run of one
    judge for intra-rater reliability), aligned over the same reasoning paths; None marks a missing score
    (a failed call), which alpha handles as missing data. ``level``: "interval" (default, instance scores
    are fractions), "ordinal", "nominal" or "ratio".

    Raises ``StatisticUnavailable`` where alpha is undefined: fewer than two raters, no path scored by two
    raters, or a single value in all the pairable scores (alpha = 1 - observed / expected disagreement,
    and the expected disagreement is then 0: an all-pass or all-fail judge).
    """
    import krippendorff
    import numpy as np

    rows = list(ratings.values())
    if len({len(r) for r in rows}) > 1:
        raise ValueError(f"raters scored different numbers of paths: { {k: len(v) for k, v in ratings.items()} }")
    if len(rows) < 2:
        raise StatisticUnavailable("alpha needs at least two raters")
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in rows], dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if not pairable.any():
        raise StatisticUnavailable("no reasoning path was scored by two raters")
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if len(values) < 2:
        raise StatisticUnavailable(
            f"every pairable score is {values[0]:g}: with one value there is no expected "
            f"disagreement, so alpha is undefined"
        )
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def rater_reliability(
    rater_scores: Sequence[Sequence[Optional[float]]], n_raters: int, judges: Sequence[str], level: str = "interval"
) -> dict[str, Any]:
    """Krippendorff's alpha across a run's raters over the items that have rater scores (one row per item,
    one column per rater; None: no valid score). ``alpha`` is None, with the reason in ``unavailable``,
    whenever it cannot be computed; it never raises, so it cannot take the scores down with it.
    Inter-rater when the raters are different judge models, intra-rater when they are draws of one judge
    (at temperature 0 with one seed the draws usually agree, and alpha says little)."""
    rows = [list(r) for r in rater_scores if r]
    out: dict[str, Any] = {
        "alpha": None,
        "unavailable": None,
        "level": level,
        "items": len(rows),
        "kind": "inter-rater (judge models)" if len(set(judges)) > 1 else "intra-rater (draws of one judge)",
    }
    try:
        columns = {f"rater{r}": [row[r] if r < len(row) else None for row in rows] for r in range(n_raters)}
        out["alpha"] = krippendorff_alpha(columns, level)
    except Exception as err:  # noqa: BLE001 - undefined (StatisticUnavailable) or a library failure: report, never raise
        out["unavailable"] = str(err) if isinstance(err, StatisticUnavailable) else f"{type(err).__name__}: {err}"
    return out


def groups_of(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: item.get(k) for k in GROUP_KEYS}


__all__ = [
    "FAILED",
    "GATED",
    "GROUP_KEYS",
    "ItemScore",
    "JUDGED",
    "StatisticUnavailable",
    "groups_of",
    "instance_score",
    "krippendorff_alpha",
    "preference_agreement",
    "rater_reliability",
    "rater_score",
    "score_table",
    "summarize",
    "summarize_groups",
]
