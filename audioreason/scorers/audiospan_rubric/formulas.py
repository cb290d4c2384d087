"""AudioSpan open-ended Rubric scoring, pure functions (AudioSpan, arXiv:2608.26431: §3.2 Eq. 2, App. C.2
Table 7 and Eq. 4, D.3 Eq. 5-6, Figure 14). No judge, no I/O.

Verdict vocabulary: semantic in {"correct", "partial", "wrong", "none"} (sigma = 1, 1/2, 0; "none" = no
claim demanded), temporal in {"correct", "wrong", "missing", "none"} (tau = 1, 0; "missing" = a timestamp
was due but omitted, falls back to sigma; "none" = no timing demanded).

Exact arithmetic: every value here is a ``fractions.Fraction`` (verdict values, weights, criterion and item
scores, means, the D.3 thresholds and AUC), so equal scores stay equal whatever the order of the sums (three
raters at 3/5, 4/5 and 1 average exactly 4/5, which passes; in floats it is 0.7999999999999999 in some
orders). Numbers passed in are read with ``audioreason.text.timestamps.as_fraction`` (a float as the decimal it
prints as); callers convert to float only for output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.text.timestamps import as_fraction

SEMANTIC = {"correct": Fraction(1), "partial": Fraction(1, 2), "wrong": Fraction(0), "none": None}
TEMPORAL = {"correct": Fraction(1), "wrong": Fraction(0), "missing": None, "none": None}
WEIGHTS = {"essential": Fraction(1), "supporting": Fraction(1, 2)}
PASS, FAIL = Fraction(4, 5), Fraction(1, 5)
N_BINS = 10
TIERS = ("S", "M", "L")


def _check(value: str, allowed: Mapping, what: str) -> str:
    if value not in allowed:
        raise ValueError(f"unknown {what} verdict {value!r}; expected one of {sorted(allowed)}")
    return value


def criterion_score(importance: str, semantic: str, temporal: str, *, localization: Optional[bool] = None) -> Fraction:
    """s_c of Eq. 2 / Table 7.

    essential: graded on one dimension, chosen by the judge (C.3): semantic "none" means it was graded on
    tau (missing -> 0: the timestamp is the answer), temporal "none" means it was graded on sigma. Any other
    pair (both graded, or both "none") is refused unless ``localization`` decides: True takes tau, False
    sigma, whatever the labels. supporting: 1[sigma > 0] * (sigma + tau) / 2, with tau missing/none falling
    back to sigma (no penalty for not citing time)."""
    _check(semantic, SEMANTIC, "semantic")
    _check(temporal, TEMPORAL, "temporal")
    sigma, tau = SEMANTIC[semantic], TEMPORAL[temporal]
    if importance == "essential":
        if localization is None:
            localization = essential_graded_on_time(semantic, temporal)
        value = tau if localization else sigma
        return value if value is not None else Fraction(0)
    if importance != "supporting":
        raise ValueError(f"unknown importance {importance!r}; expected 'essential' or 'supporting'")
    if not sigma:  # wrong (0) or none: a timestamp cannot ground a false statement
        return Fraction(0)
    if tau is None:
        tau = sigma
    return (sigma + tau) / 2


def essential_graded_on_time(semantic: str, temporal: str) -> bool:
    """The judge's choice of dimension for an essential criterion, read from its labels (C.3): True for
    temporal only (semantic "none"), False for semantic only (temporal "none"). ValueError otherwise."""
    if (semantic == "none") == (temporal == "none"):
        raise ValueError(
            f"an essential criterion is graded on exactly one dimension: semantic {semantic!r} "
            f"with temporal {temporal!r} grades {'none' if semantic == 'none' else 'both'}"
        )
    return semantic == "none"


def rubric_score(criteria: Sequence[Mapping[str, Any]]) -> Optional[Fraction]:
    """Eq. 2: importance-weighted mean of s_c. Each criterion: importance, semantic, temporal and optionally
    localization (see ``criterion_score``; absent or None: the judge's choice). None for an empty list."""
    num = den = Fraction(0)
    for c in criteria:
        w = WEIGHTS.get(c["importance"])
        if w is None:
            raise ValueError(f"unknown importance {c['importance']!r}")
        num += w * criterion_score(c["importance"], c["semantic"], c["temporal"], localization=c.get("localization"))
        den += w
    return num / den if den else None


def axis_counts(criteria: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """N_sigma and N_tau with the C.2 conditioning: supporting temporal verdicts count only where sigma is
    correct; essential temporal verdicts count unconditioned."""
    ns: dict[str, int] = defaultdict(int)
    nt: dict[str, int] = defaultdict(int)
    for c in criteria:
        sem, tem = _check(c["semantic"], SEMANTIC, "semantic"), _check(c["temporal"], TEMPORAL, "temporal")
        ns[sem] += 1
        if c["importance"] == "supporting" and sem != "correct":
            continue
        nt[tem] += 1
    return {"semantic": dict(ns), "temporal": dict(nt)}


def semantic_temporal(criteria: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Eq. 4: semantic% = (N(cor) + N(par)/2) / (N(cor)+N(par)+N(wro)); temporal% = N(cor)/(N(cor)+N(wro)),
    as exact fractions in [0, 1] (None when the denominator is empty)."""
    n = axis_counts(criteria)
    s, t = n["semantic"], n["temporal"]
    sd = s.get("correct", 0) + s.get("partial", 0) + s.get("wrong", 0)
    td = t.get("correct", 0) + t.get("wrong", 0)
    return {
        "semantic": (s.get("correct", 0) + Fraction(s.get("partial", 0), 2)) / sd if sd else None,
        "temporal": Fraction(t.get("correct", 0), td) if td else None,
        "n_semantic": sd,
        "n_temporal": td,
        "n_temporal_missing": t.get("missing", 0),
    }


def _mean(values: Sequence[Fraction]) -> Optional[Fraction]:
    return sum(values, Fraction(0)) / len(values) if values else None


def auc(positive: Sequence[Any], negative: Sequence[Any]) -> Optional[Fraction]:
    """Eq. 6 by its pairwise definition: a pair where the MCQ-right item scores higher counts 1, an exact tie
    1/2 (scores compared as exact fractions, so equal Rubric values tie); None if either group is empty."""
    if not positive or not negative:
        return None
    pos, neg = [as_fraction(p) for p in positive], [as_fraction(q) for q in negative]
    total = sum((Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0)) for p in pos for q in neg)
    return total / (len(pos) * len(neg))


def mcq_oeq(
    mcq_correct: Sequence[bool], rubric: Sequence[Any], *, pass_at: Any = PASS, fail_at: Any = FAIL
) -> dict[str, Any]:
    """D.3 on matched items: Rubric+ / Rubric- (Eq. 5), AUC (Eq. 6), p and the four-cell split
    (pass: rubric >= 4/5, fail: rubric <= 1/5, the middle set aside), all exact fractions in [0, 1]."""
    if len(mcq_correct) != len(rubric):
        raise ValueError(f"{len(mcq_correct)} MCQ outcomes but {len(rubric)} rubric scores")
    scores = [as_fraction(r) for r in rubric]
    pass_at, fail_at = as_fraction(pass_at), as_fraction(fail_at)
    pos = [r for a, r in zip(mcq_correct, scores) if a]
    neg = [r for a, r in zip(mcq_correct, scores) if not a]
    cells = {"both_pass": 0, "both_fail": 0, "mcq_only": 0, "oeq_only": 0, "middle": 0}
    for a, r in zip(mcq_correct, scores):
        if r >= pass_at:
            cells["both_pass" if a else "oeq_only"] += 1
        elif r <= fail_at:
            cells["mcq_only" if a else "both_fail"] += 1
        else:
            cells["middle"] += 1
    n = len(scores)
    return {
        "n": n,
        "p": Fraction(len(pos), n) if n else None,
        "rubric_plus": _mean(pos),
        "rubric_minus": _mean(neg),
        "auc": auc(pos, neg),
        "cells": cells,
    }


def histogram(scores: Iterable[Any], bins: int = N_BINS) -> list[int]:
    """Counts in ten equal bins over [0, 1]: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (the last bin closed, so
    1.0 lands in it). Exact: 3/10 lands in [0.3, 0.4), 0.7999999999999999 in [0.7, 0.8)."""
    counts = [0] * bins
    for s in scores:
        x = as_fraction(s)
        if not 0 <= x <= 1:
            raise ValueError(f"score {s!r} outside [0, 1]")
        counts[min(math.floor(x * bins), bins - 1)] += 1
    return counts


def breakdown(scores: Sequence[Optional[Any]], groups: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Mean score (exact) per group value. A None score (an item whose judging failed) counts as 0 in
    ``mean``, so a failure can only lower it, and is left out of ``mean_judged_only``; ``n_failed`` counts
    them. Groups without items do not appear; ``mean_judged_only`` is None for a group whose items all failed."""
    acc: dict[str, list] = defaultdict(list)
    for s, g in zip(scores, groups):
        acc[str(g)].append(s)
    out = {}
    for g, values in sorted(acc.items()):
        scored = [as_fraction(x) for x in values if x is not None]
        out[g] = {
            "n": len(values),
            "n_scored": len(scored),
            "n_failed": len(values) - len(scored),
            "mean": sum(scored, Fraction(0)) / len(values),
            "mean_judged_only": _mean(scored),
        }
    return out


def tier_average(tier_means: Mapping[str, Optional[Any]]) -> tuple[Optional[Fraction], list[str]]:
    """Table 3's Avg: the unweighted mean of the S, M and L tier means (each tier weighs 1/3 whatever its
    size), with the tiers that have no mean. None while any tier is missing: an average over fewer tiers is
    not Table 3's."""
    missing = [t for t in TIERS if tier_means.get(t) is None]
    if missing:
        return None, missing
    return sum((as_fraction(tier_means[t]) for t in TIERS), Fraction(0)) / len(TIERS), []
