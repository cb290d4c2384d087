"""Two-way ANOVA eta squared (ARIA §4, Figure 2) and ICC(2,1) (Figure 3) on a rows x columns table with one
score per cell: in ARIA, each model's mean score (rows) on each benchmark (columns), one table per metric.

The ANOVA is additive (score ~ row + column), fitted with statsmodels (OLS, ``anova_lm``): with one score
per cell the row x column interaction cannot be separated from error, so it is the residual.
eta^2 of a factor = SS_factor / SS_total (the share of all score variance it explains, the paper's
"model identity accounts for 91.9-96.4% of score variance"); the partial eta^2 SS_factor / (SS_factor +
SS_residual) is in ``details``. Each factor's F test (F = MS_factor / MS_residual) gives its p-value.

ICC(2,1) (Shrout & Fleiss 1979; McGraw & Wong 1996's ICC(A,1)): two-way random effects, absolute
agreement, one rater, from the same mean squares (rows = targets, columns = raters):
    ICC(2,1) = (BMS - EMS) / (BMS + (k - 1) EMS + k (JMS - EMS) / n)
with BMS, JMS, EMS the row, column and residual mean squares, n rows and k columns. Its p-value is the
F test of BMS / EMS on (n - 1, (n - 1)(k - 1)) df; its 95% interval is Shrout & Fleiss' approximation
(an F quantile with Satterthwaite degrees of freedom).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from scipy import stats

from .statistic import Statistic, StatisticUnavailable, as_table, labels, require_complete

DESIGN = "additive two-way ANOVA, one score per cell (the interaction is the residual)"
ICC_FORM = (
    "ICC(2,1): two-way random effects, absolute agreement, single rater (Shrout & Fleiss 1979; "
    "McGraw & Wong 1996 ICC(A,1))"
)
NO_RESIDUAL = "the residual sum of squares is 0 (the scores are exactly additive): the F test is undefined"


@dataclass(frozen=True)
class _Anova:
    n_rows: int
    n_cols: int
    ss_rows: float
    ss_cols: float
    ss_residual: float
    f_rows: Optional[float]
    f_cols: Optional[float]
    p_rows: Optional[float]
    p_cols: Optional[float]

    @property
    def df_rows(self) -> int:
        return self.n_rows - 1

    @property
    def df_cols(self) -> int:
        return self.n_cols - 1

    @property
    def df_residual(self) -> int:
        return (self.n_rows - 1) * (self.n_cols - 1)

    @property
    def ss_total(self) -> float:
        return self.ss_rows + self.ss_cols + self.ss_residual

    def ms(self, source: str) -> float:
        return getattr(self, f"ss_{source}") / getattr(self, f"df_{source}")


def _anova(
    table: Sequence[Sequence[Any]], row_labels: Optional[Sequence[str]], column_labels: Optional[Sequence[str]]
) -> _Anova:
    """The additive two-way ANOVA of a complete table; raises StatisticUnavailable when undefined."""
    values = as_table(table)
    n_rows, n_cols = values.shape
    rows, cols = labels(row_labels, n_rows, "r", "row"), labels(column_labels, n_cols, "c", "column")
    if n_rows < 2:
        raise StatisticUnavailable(f"a two-way design needs at least 2 rows; the table has {n_rows}")
    if n_cols < 2:
        raise StatisticUnavailable(f"a two-way design needs at least 2 columns; the table has {n_cols}")
    require_complete(values, rows, cols)
    if np.ptp(values) == 0:
        raise StatisticUnavailable(
            f"all {values.size} scores are {values.flat[0]:g}: there is no variance to decompose"
        )
    import pandas as pd  # statsmodels' formula interface reads a DataFrame; imported late (slow to import)
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    frame = pd.DataFrame(
        {
            "score": values.ravel(),
            "row": np.repeat(np.arange(n_rows), n_cols),
            "col": np.tile(np.arange(n_cols), n_rows),
        }
    )
    result = anova_lm(smf.ols("score ~ C(row) + C(col)", data=frame).fit(), typ=2)
    ss_rows, ss_cols, ss_residual = (float(result.loc[t, "sum_sq"]) for t in ("C(row)", "C(col)", "Residual"))
    if ss_residual <= 1e-12 * (ss_rows + ss_cols + ss_residual):  # rounding noise of an exact fit
        return _Anova(n_rows, n_cols, ss_rows, ss_cols, 0.0, None, None, None, None)
    return _Anova(
        n_rows,
        n_cols,
        ss_rows,
        ss_cols,
        ss_residual,
        float(result.loc["C(row)", "F"]),
        float(result.loc["C(col)", "F"]),
        float(result.loc["C(row)", "PR(>F)"]),
        float(result.loc["C(col)", "PR(>F)"]),
    )


def two_way_anova(
    table: Sequence[Sequence[Any]],
    factors: tuple[str, str] = ("model", "dataset"),
    row_labels: Optional[Sequence[str]] = None,
    column_labels: Optional[Sequence[str]] = None,
) -> dict[str, Statistic]:
    """eta^2 of the row factor and of the column factor, each with its F-test p-value.

    ``table``: rows x columns, one score per cell (None or NaN: a missing cell, which makes both
    unavailable). Returns ``{factors[0]: Statistic("eta_squared_<row factor>"), factors[1]: ...}``;
    ``details`` holds ss, df, ms, F, partial_eta_squared and the residual and total sums of squares.
    """
    if len(factors) != 2 or factors[0] == factors[1]:
        raise ValueError(f"factors must name two different factors (rows, columns), not {factors!r}")
    try:
        fit = _anova(table, row_labels, column_labels)
    except StatisticUnavailable as err:
        return {f: Statistic(f"eta_squared_{f}", unavailable=str(err)) for f in factors}
    out = {}
    for factor, source, f_value, p_value in (
        (factors[0], "rows", fit.f_rows, fit.p_rows),
        (factors[1], "cols", fit.f_cols, fit.p_cols),
    ):
        ss = getattr(fit, f"ss_{source}")
        details: dict[str, Any] = {
            "ss": ss,
            "df": getattr(fit, f"df_{source}"),
            "ms": fit.ms(source),
            "F": f_value,
            "partial_eta_squared": ss / (ss + fit.ss_residual) if ss + fit.ss_residual > 0 else None,
            "ss_residual": fit.ss_residual,
            "df_residual": fit.df_residual,
            "ms_residual": fit.ms("residual"),
            "ss_total": fit.ss_total,
            "design": DESIGN,
        }
        if f_value is None:
            details["test_unavailable"] = NO_RESIDUAL
        out[factor] = Statistic(
            f"eta_squared_{factor}", ss / fit.ss_total, p_value, None, fit.n_rows * fit.n_cols, details=details
        )
    return out


def _icc_2_1_interval(
    icc: float, bms: float, jms: float, ems: float, n: int, k: int, level: float = 0.95
) -> tuple[float, float]:
    """Shrout & Fleiss' (1979) approximate interval for ICC(2,1): F quantiles on Satterthwaite df v."""
    f_j = jms / ems
    a = k * icc * f_j + n * (1 + (k - 1) * icc) - k * icc
    v = (k - 1) * (n - 1) * a * a / ((n - 1) * (k * icc * f_j) ** 2 + (n * (1 + (k - 1) * icc) - k * icc) ** 2)
    tail = (1 + level) / 2
    f_lower, f_upper = stats.f.ppf(tail, n - 1, v), stats.f.ppf(tail, v, n - 1)
    spread = k * jms + (k * n - k - n) * ems
    lower = n * (bms - f_lower * ems) / (f_lower * spread + n * bms)
    upper = n * (f_upper * bms - ems) / (spread + n * f_upper * bms)
    return float(lower), float(upper)


def icc_2_1(
    table: Sequence[Sequence[Any]],
    row_labels: Optional[Sequence[str]] = None,
    column_labels: Optional[Sequence[str]] = None,
) -> Statistic:
    """ICC(2,1) of a targets (rows) x raters (columns) table, with its F-test p-value and 95% interval."""
    try:
        fit = _anova(table, row_labels, column_labels)
    except StatisticUnavailable as err:
        return Statistic("icc_2_1", unavailable=str(err))
    n, k = fit.n_rows, fit.n_cols
    bms, jms, ems = fit.ms("rows"), fit.ms("cols"), fit.ms("residual")
    value = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    details: dict[str, Any] = {
        "bms": bms,
        "jms": jms,
        "ems": ems,
        "raters": k,
        "df": (n - 1, fit.df_residual),
        "F": None,
        "form": ICC_FORM,
    }
    if ems == 0:
        details["test_unavailable"] = NO_RESIDUAL
        return Statistic("icc_2_1", value, None, None, n, details=details)
    details["F"] = bms / ems
    p_value = float(stats.f.sf(details["F"], n - 1, fit.df_residual))
    return Statistic("icc_2_1", value, p_value, _icc_2_1_interval(value, bms, jms, ems, n, k), n, details=details)


__all__ = ["icc_2_1", "two_way_anova"]
