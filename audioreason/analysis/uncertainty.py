"""Uncertainty of a headline number over the items it averages, and paired comparisons of two runs.

Every function returns a plain dict in the one schema `audioreason score` writes beside each headline::

    {"se": float | None, "ci95": [lo, hi] | None, "method": "wilson" | "bootstrap_percentile",
     "n": int, "resamples": int | None, "seed": int | None, "unavailable": str | None}

(``ci95`` is the interval at ``UncertaintyOptions.confidence``, 0.95 unless asked otherwise.) When the data
cannot support an interval (no items, one item, every value equal, the value itself undefined) ``unavailable``
says why and ``se`` and ``ci95`` are None: these functions never raise for that and never return a NaN.

Which interval, and why:

- A plain accuracy, k correct of n (``wilson``): the analytic Wilson score interval. It needs no resampling,
  is exact enough (its coverage stays near the nominal 95 % at small n and near 0 or 1, where the Wald
  interval p +- 1.96 se collapses to a point or leaves [0, 1]), and is what statsmodels'
  ``proportion_confint(method="wilson")`` gives. ``se`` is the binomial standard error sqrt(p (1 - p) / n);
  lm-evaluation-harness prints the sample standard error of the 0/1 scores, sqrt(p (1 - p) / (n - 1)),
  which is larger by sqrt(n / (n - 1)) (0.05 % at n = 1000).
- Any other per-item mean (an ARIA metric, a rubric score, a chain's k/3) or a statistic over items (a
  ratio of sums such as R_TP = sum None / sum Full, ARIA's mean of metric means) (``bootstrap_percentile``):
  ``scipy.stats.bootstrap`` resampling the items with replacement (paired across the columns of one item),
  ``resamples`` times from ``numpy.random.default_rng(seed)``, the percentile interval, ``se`` the standard
  deviation of the bootstrap distribution. Percentile rather than BCa: BCa's jackknife acceleration is
  undefined (NaN, with a warning) on the lumpy distributions of short 0/1 or k/3 data, and at the n of a
  benchmark (hundreds of items) the two agree to the third decimal; the percentile interval is also the one
  a reader can recompute with ten lines of numpy (the tests do).
- Two runs on the same items (``paired_difference``): the paired bootstrap of mean(a) - mean(b) over the
  shared items; for accuracy also McNemar's exact test on the discordant items (``mcnemar_exact``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Optional, Sequence

WILSON = "wilson"
PERCENTILE = "bootstrap_percentile"


@dataclass(frozen=True)
class UncertaintyOptions:
    """``confidence``: the interval's level; ``resamples``: bootstrap resamples; ``seed``: the bootstrap's
    numpy generator seed (the same seed and data give the same interval)."""

    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.confidence, bool) or not 0 < float(self.confidence) < 1:
            raise ValueError(
                f"confidence must be a number strictly between 0 and 1 (e.g. 0.95); got {self.confidence!r}"
            )
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 100:
            raise ValueError(f"resamples must be a whole number >= 100 (default 2000); got {self.resamples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0; got {self.seed!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "resamples": self.resamples, "seed": self.seed}


DEFAULT = UncertaintyOptions()


def unavailable(reason: str, method: str, n: int, options: Optional[UncertaintyOptions] = None) -> dict[str, Any]:
    """The schema's entry when no interval can be computed."""
    boot = method != WILSON
    return {
        "se": None,
        "ci95": None,
        "method": method,
        "n": int(n),
        "resamples": options.resamples if boot and options else None,
        "seed": options.seed if boot and options else None,
        "unavailable": reason,
    }


def _missing(values: Sequence[Any]) -> int:
    return sum(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in values)


def wilson(k: int, n: int, options: UncertaintyOptions = DEFAULT) -> dict[str, Any]:
    """The Wilson score interval of k successes in n trials (a plain accuracy). The normal quantile is the
    standard library's (``statistics.NormalDist``; it agrees with scipy's ``norm.ppf`` to 1e-15), so a plain
    accuracy's interval imports no scipy."""
    if n < 1:
        return unavailable("no items", WILSON, n)
    if not 0 <= k <= n:
        return unavailable(f"{k} correct of {n} items is not a count", WILSON, n)
    p = k / n
    z = NormalDist().inv_cdf(0.5 + options.confidence / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At k = 0 (k = n) the bound is exactly 0 (1): the float difference of centre and half leaves ~1e-17,
    # an interval that would not contain its own estimate.
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return {
        "se": math.sqrt(p * (1 - p) / n),
        "ci95": [lo, hi],
        "method": WILSON,
        "n": n,
        "resamples": None,
        "seed": None,
        "unavailable": None,
    }


def wilson_of(correct: Sequence[Any], options: UncertaintyOptions = DEFAULT) -> dict[str, Any]:
    """``wilson`` on per-item verdicts (True/False); a missing verdict makes it unavailable."""
    missing = _missing(correct)
    if missing:
        return unavailable(f"{missing} of {len(correct)} items have no verdict", WILSON, len(correct))
    return wilson(sum(bool(c) for c in correct), len(correct), options)


def bootstrap(
    columns: Sequence[Sequence[Any]],
    statistic: Callable[..., Any],
    options: UncertaintyOptions = DEFAULT,
    *,
    allow_missing: bool = False,
) -> dict[str, Any]:
    """The percentile bootstrap of ``statistic(*columns, axis=-1)`` over items (the columns' positions,
    resampled together). ``statistic`` is vectorized: it gets arrays of shape (resamples, n). A None or NaN
    value makes the interval unavailable unless ``allow_missing`` (the statistic then handles NaN)."""
    import numpy as np
    from scipy.stats import bootstrap as scipy_bootstrap

    n = len(columns[0]) if columns else 0
    if any(len(c) != n for c in columns):
        raise ValueError(f"the columns have different lengths {[len(c) for c in columns]}")
    missing = max((_missing(c) for c in columns), default=0)
    if missing and not allow_missing:
        return unavailable(f"{missing} of {n} items have no value", PERCENTILE, n, options)
    if n < 2:
        return unavailable(f"{n} item(s): a bootstrap needs at least 2", PERCENTILE, n, options)
    data = [np.array([np.nan if v is None else float(v) for v in c], dtype=float) for c in columns]
    if all(np.nanmax(d) == np.nanmin(d) if np.isfinite(d).any() else True for d in data):
        return unavailable(
            f"all {n} items have the same value: the bootstrap distribution is a single point", PERCENTILE, n, options
        )
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an undefined resample is reported below, not as scipy's warning
        res = scipy_bootstrap(
            tuple(data),
            statistic,
            n_resamples=options.resamples,
            paired=True,
            vectorized=True,
            confidence_level=options.confidence,
            method="percentile",
            rng=np.random.default_rng(options.seed),
        )
        dist = np.asarray(res.bootstrap_distribution)
    bad = int((~np.isfinite(dist)).sum())
    if bad:
        return unavailable(
            f"the statistic is undefined in {bad} of {options.resamples} resamples (e.g. a zero denominator)",
            PERCENTILE,
            n,
            options,
        )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {
        "se": float(res.standard_error),
        "ci95": [lo, hi],
        "method": PERCENTILE,
        "n": n,
        "resamples": options.resamples,
        "seed": options.seed,
        "unavailable": None,
    }


# The statistics get numpy arrays (numpy is imported in ``bootstrap``, not for a Wilson interval).
def _mean(x, axis=-1):
    return x.mean(axis=axis)


def _ratio(num, den, axis=-1):
    return num.sum(axis=axis) / den.sum(axis=axis)


def _difference(a, b, axis=-1):
    return a.mean(axis=axis) - b.mean(axis=axis)


def bootstrap_mean(values: Sequence[Any], options: UncertaintyOptions = DEFAULT) -> dict[str, Any]:
    """The bootstrap interval of the mean of per-item values."""
    return bootstrap([list(values)], _mean, options)


def bootstrap_ratio(
    numerator: Sequence[Any], denominator: Sequence[Any], options: UncertaintyOptions = DEFAULT
) -> dict[str, Any]:
    """The bootstrap interval of sum(numerator) / sum(denominator) over items (e.g. R_TP: per item its None
    and Full correctness); unavailable when a resample's denominator sums to 0."""
    return bootstrap([list(numerator), list(denominator)], _ratio, options)


def paired_difference(a: Sequence[Any], b: Sequence[Any], options: UncertaintyOptions = DEFAULT) -> dict[str, Any]:
    """mean(a) - mean(b) over items both have (a[i] and b[i] are one item's values), with the paired
    bootstrap interval: ``{"difference", "n", **the schema}``. Identical per-item values have difference 0
    and no interval (the schema's ``unavailable`` says so)."""
    import numpy as np

    if len(a) != len(b):
        raise ValueError(f"paired values need one of each per item; got {len(a)} and {len(b)}")
    missing = _missing(a) + _missing(b)
    difference = None if missing or not a else float(np.mean(np.asarray(a, float)) - np.mean(np.asarray(b, float)))
    diffs = [None if x is None or y is None else float(x) - float(y) for x, y in zip(a, b)]
    if missing:
        interval = unavailable(f"{missing} values missing", PERCENTILE, len(a), options)
    elif len(a) >= 2 and len(set(diffs)) == 1:
        interval = unavailable(
            f"the per-item difference is {diffs[0]:g} on all {len(a)} items: no spread to resample",
            PERCENTILE,
            len(a),
            options,
        )
    else:
        interval = bootstrap([list(a), list(b)], _difference, options)
    return {"difference": difference, **interval}


def mcnemar_exact(b: int, c: int) -> dict[str, Any]:
    """McNemar's exact test: of the items the two runs disagree on, b right in A only and c right in B only;
    the two-sided binomial test of b against Binomial(b + c, 1/2). No discordant item: p = 1."""
    from scipy.stats import binomtest

    p = 1.0 if b + c == 0 else float(binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue)
    return {"b": int(b), "c": int(c), "p_value": min(1.0, p), "test": "McNemar exact (two-sided binomial)"}


def rater_spread(per_item_rater_scores: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Beside a judged score: the mean over items of the standard deviation (population, ddof 0) of the
    raters' scores of that item, over items with at least two scoring raters; ``raters``: the most raters
    any item had. None when no item had two."""
    import numpy as np

    spreads, most = [], 0
    for scores in per_item_rater_scores:
        valid = [float(s) for s in scores if s is not None and math.isfinite(float(s))]
        most = max(most, len(valid))
        if len(valid) >= 2:
            spreads.append(float(np.std(valid)))
    return {"sd": float(np.mean(spreads)) if spreads else None, "raters": most}


__all__ = [
    "DEFAULT",
    "PERCENTILE",
    "WILSON",
    "UncertaintyOptions",
    "bootstrap",
    "bootstrap_mean",
    "bootstrap_ratio",
    "mcnemar_exact",
    "paired_difference",
    "rater_spread",
    "unavailable",
    "wilson",
    "wilson_of",
]
