"""Correlations: Pearson's r (ARIA §4, the component correlation matrix of Figure 4) and Spearman's rho
(ARIA §4 Human evaluation, Table 5: each metric against the human ratings), with scipy.

Both take two aligned sequences; a pair with a missing value (None or NaN) on either side is left out
and counted (``details["dropped_pairs"]``). p-values are two-sided, from Student's t with n - 2 degrees
of freedom (scipy's ``pearsonr`` and ``spearmanr``): the paper's Table 5 p-values follow from its rho at
n = 18 this way. The t approximation is rough for a handful of pairs (|rho| = 1 gives p = 0); it is kept
because it is the paper's. Pearson's r comes with the 95% Fisher-z interval (n >= 4); rho with none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

from .statistic import Statistic, StatisticUnavailable, as_vector

METHODS = ("pearson", "spearman")


def _pairs(x: Sequence[Any], y: Sequence[Any], names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray, int]:
    """The complete pairs of x and y and how many were dropped; raises when a correlation is undefined."""
    a, b = as_vector(x, names[0]), as_vector(y, names[1])
    if len(a) != len(b):
        raise ValueError(f"{names[0]} and {names[1]} must be aligned: {len(a)} values against {len(b)}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if len(a) < 3:
        raise StatisticUnavailable(f"a correlation with a p-value needs at least 3 pairs; {len(a)} are complete")
    for name, values in zip(names, (a, b)):
        if np.ptp(values) == 0:
            raise StatisticUnavailable(f"{name} is constant over the {len(values)} pairs: correlation undefined")
    return a, b, int((~keep).sum())


def _correlate(name: str, x: Sequence[Any], y: Sequence[Any], names: tuple[str, str]) -> Statistic:
    try:
        a, b, dropped = _pairs(x, y, names)
    except StatisticUnavailable as err:
        return Statistic(name, unavailable=str(err))
    details: dict[str, Any] = {"df": len(a) - 2, "dropped_pairs": dropped}
    if name == "spearman_rho":
        result = stats.spearmanr(a, b)
        return Statistic(name, float(result.statistic), float(result.pvalue), None, len(a), details=details)
    result = stats.pearsonr(a, b)
    ci = None
    if len(a) >= 4:
        interval = result.confidence_interval(0.95)
        ci = (float(interval.low), float(interval.high))
    else:
        details["ci_unavailable"] = "the Fisher-z interval needs n >= 4 pairs"
    return Statistic(name, float(result.statistic), float(result.pvalue), ci, len(a), details=details)


def pearson(x: Sequence[Any], y: Sequence[Any], names: tuple[str, str] = ("x", "y")) -> Statistic:
    """Pearson's r with its t-test p-value and 95% Fisher-z interval."""
    return _correlate("pearson_r", x, y, names)


def spearman(x: Sequence[Any], y: Sequence[Any], names: tuple[str, str] = ("x", "y")) -> Statistic:
    """Spearman's rho (ties get mid-ranks) with its t-approximation p-value (n - 2 df)."""
    return _correlate("spearman_rho", x, y, names)


def correlation_matrix(columns: Mapping[str, Sequence[Any]], method: str = "pearson") -> dict[str, Any]:
    """Every pair of the named columns (aligned over the same units, e.g. (model, benchmark) results).

    Returns ``names``, ``r``, ``p`` and ``n`` as square lists (None where a pair is unavailable; the
    diagonal is 1 for a column that is not constant) and ``pairs``: one ``Statistic`` per pair, named
    ``"A~B"`` in column order, each on the units where both columns have a value.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    compute = pearson if method == "pearson" else spearman
    names = list(columns)
    size = len(names)
    r: list[list[Any]] = [[None] * size for _ in range(size)]
    p: list[list[Any]] = [[None] * size for _ in range(size)]
    n: list[list[Any]] = [[None] * size for _ in range(size)]
    pairs = []
    for i, first in enumerate(names):
        self_corr = compute(columns[first], columns[first], (first, first))
        r[i][i] = 1.0 if self_corr.unavailable is None else None
        for j in range(i + 1, size):
            second = names[j]
            stat = replace(compute(columns[first], columns[second], (first, second)), measure=f"{first}~{second}")
            pairs.append(stat)
            r[i][j] = r[j][i] = stat.value
            p[i][j] = p[j][i] = stat.p_value
            n[i][j] = n[j][i] = stat.n
    return {"method": method, "names": names, "r": r, "p": p, "n": n, "pairs": pairs}


__all__ = ["METHODS", "correlation_matrix", "pearson", "spearman"]
