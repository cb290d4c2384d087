"""Agreement between raters: Kendall's W over rankings (ARIA §4, Figure 3: do the benchmarks rank the models
alike?) and Krippendorff's alpha over an annotation matrix (ARIA §4 Human evaluation; the MMAR-Rubrics
judges' reliability, arXiv:2602.14224 §3.2).

Kendall's W: rows are the ranked objects (models), columns the raters (benchmarks); each column is
ranked (ties get mid-ranks) and W = 12 S / (m^2 (n^3 - n) - m sum(t^3 - t)), corrected for ties, with S
the sum of squared deviations of the row rank sums from their mean, n rows, m columns and t the size of
each tie group. It is computed from scipy's Friedman test, chi^2 = m (n - 1) W (tie-corrected in both),
whose chi^2 p-value on n - 1 df (a large-sample approximation) comes with it. With m = 2 raters,
W = (1 + Spearman's rho) / 2.

Cohen's kappa (``cohens_kappa``): two raters' labels of the same units, unweighted (the judge-swap comparison,
``analysis.judge_swap``).

Krippendorff's alpha: the maintained ``krippendorff`` package through
``audioreason.scorers.mmar_rubrics.formulas.krippendorff_alpha`` (one implementation for the whole project);
missing ratings are handled natively, as ARIA §4 describes.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np
from scipy import stats

from audioreason.scorers.mmar_rubrics.formulas import krippendorff_alpha

from .statistic import Statistic, StatisticUnavailable, as_table, as_vector, labels, require_complete

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def kendalls_w(
    table: Sequence[Sequence[Any]],
    row_labels: Optional[Sequence[str]] = None,
    column_labels: Optional[Sequence[str]] = None,
) -> Statistic:
    """Kendall's W (tie-corrected) of a objects (rows) x raters (columns) table of scores or ranks."""
    values = as_table(table)
    n, m = values.shape
    try:
        if n < 3:
            raise StatisticUnavailable(
                f"Kendall's W with Friedman's test needs at least 3 rows (ranked objects); the table has {n}"
            )
        if m < 2:
            raise StatisticUnavailable(f"concordance needs at least 2 columns (raters); the table has {m}")
        require_complete(values, labels(row_labels, n, "r", "row"), labels(column_labels, m, "c", "column"))
        if all(np.ptp(values[:, j]) == 0 for j in range(m)):
            raise StatisticUnavailable("every column has all its rows tied: there is no ranking to agree on")
    except StatisticUnavailable as err:
        return Statistic("kendalls_w", unavailable=str(err))
    friedman = stats.friedmanchisquare(*values)  # each row is a treatment, each column a block
    chi2 = float(friedman.statistic)
    return Statistic(
        "kendalls_w",
        chi2 / (m * (n - 1)),
        float(friedman.pvalue),
        None,
        n,
        details={"chi2": chi2, "df": n - 1, "raters": m, "ties_corrected": True},
    )


def annotator_alpha(ratings: Mapping[str, Sequence[Any]], level: str = "interval") -> Statistic:
    """Krippendorff's alpha of ``{rater: [rating per unit, None where not rated]}``.

    ``level``: "interval" (default: the ``krippendorff`` package's default; ARIA does not name one),
    "ordinal" (Likert ratings as ranks), "nominal" or "ratio". ``n`` counts the units rated at least
    twice (the pairable ones alpha rests on).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    columns = {str(rater): as_vector(values, f"ratings[{rater!r}]") for rater, values in ratings.items()}
    try:
        value = krippendorff_alpha({r: list(v) for r, v in columns.items()}, level)
    except StatisticUnavailable as err:
        return Statistic("krippendorff_alpha", unavailable=str(err))
    data = np.array(list(columns.values()))
    pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    return Statistic(
        "krippendorff_alpha",
        value,
        None,
        None,
        pairable,
        details={"level": level, "raters": len(columns), "units": data.shape[1]},
    )


def cohens_kappa(a: Sequence[Any], b: Sequence[Any]) -> Statistic:
    """Cohen's (1960) kappa of two raters' labels of the same units, unweighted (every distinct label is a
    category): (p_o - p_e) / (1 - p_e), p_o the share of units labelled alike, p_e the sum over labels of the
    product of the two raters' shares of it. Unavailable without a unit, or when p_e = 1 (both give every
    unit one same label: no disagreement was possible). sklearn's ``cohen_kappa_score`` gives the same."""
    if len(a) != len(b):
        raise ValueError(f"kappa pairs one label of each rater per unit; got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return Statistic("cohens_kappa", unavailable="no unit rated by both raters", n=0)
    categories = sorted(set(a) | set(b), key=repr)
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in categories)
    details = {"observed": observed, "expected": expected, "categories": len(categories)}
    if expected >= 1:
        return Statistic(
            "cohens_kappa",
            n=n,
            details=details,
            unavailable=f"both raters give all {n} units the label {categories[0]!r}: kappa is undefined",
        )
    return Statistic("cohens_kappa", (observed - expected) / (1 - expected), None, None, n, details=details)


__all__ = ["LEVELS", "annotator_alpha", "cohens_kappa", "kendalls_w"]
