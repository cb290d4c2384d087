"""AudioSpan open-ended Rubric scoring, pure functions (paper §3.2 Eq. 2, App. C.2 Table 7, D.3 Eq. 5-6,
D.4 Eq. 4, Figure 14). No judge, no I/O.

Verdict vocabulary: semantic in {"correct", "partial", "wrong", "none"} (sigma = 1, 0.5, 0; "none" = no
claim demanded), temporal in {"correct", "wrong", "missing", "none"} (tau = 1, 0; "missing" = a timestamp
was due but omitted, falls back to sigma; "none" = no timing demanded).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, Optional, Sequence

SEMANTIC = {"correct": 1.0, "partial": 0.5, "wrong": 0.0, "none": None}
TEMPORAL = {"correct": 1.0, "wrong": 0.0, "missing": None, "none": None}
WEIGHTS = {"essential": 1.0, "supporting": 0.5}
PASS, FAIL = 0.8, 0.2
N_BINS = 10


def _check(value: str, allowed: Mapping, what: str) -> str:
    if value not in allowed:
        raise ValueError(f"unknown {what} verdict {value!r}; expected one of {sorted(allowed)}")
    return value


def criterion_score(importance: str, semantic: str, temporal: str, *, localization: bool = False) -> float:
    """s_c of Eq. 2 / Table 7.

    essential: tau for a localization criterion (missing / none -> 0: the timestamp is the answer),
    sigma otherwise (none -> 0). supporting: 1[sigma > 0] * (sigma + tau) / 2, with tau missing/none
    falling back to sigma (no penalty for not citing time)."""
    _check(semantic, SEMANTIC, "semantic")
    _check(temporal, TEMPORAL, "temporal")
    sigma, tau = SEMANTIC[semantic], TEMPORAL[temporal]
    if importance == "essential":
        value = tau if localization else sigma
        return float(value or 0.0)
    if importance != "supporting":
        raise ValueError(f"unknown importance {importance!r}; expected 'essential' or 'supporting'")
    if not sigma:  # wrong (0) or none: a timestamp cannot ground a false statement
        return 0.0
    if tau is None:
        tau = sigma
    return (sigma + tau) / 2


def rubric_score(criteria: Sequence[Mapping[str, Any]]) -> Optional[float]:
    """Eq. 2: importance-weighted mean of s_c. Each criterion: importance, semantic, temporal, localization.
    None for an empty list."""
    num = den = 0.0
    for c in criteria:
        w = WEIGHTS.get(c["importance"])
        if w is None:
            raise ValueError(f"unknown importance {c['importance']!r}")
        num += w * criterion_score(c["importance"], c["semantic"], c["temporal"],
                                   localization=bool(c.get("localization", False)))
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


def semantic_temporal(criteria: Iterable[Mapping[str, Any]]) -> dict[str, Optional[float]]:
    """Eq. 4: semantic% = (N(cor) + N(par)/2) / (N(cor)+N(par)+N(wro)); temporal% = N(cor)/(N(cor)+N(wro)),
    as fractions (None when the denominator is empty)."""
    n = axis_counts(criteria)
    s, t = n["semantic"], n["temporal"]
    sd = s.get("correct", 0) + s.get("partial", 0) + s.get("wrong", 0)
    td = t.get("correct", 0) + t.get("wrong", 0)
    return {"semantic": (s.get("correct", 0) + 0.5 * s.get("partial", 0)) / sd if sd else None,
            "temporal": t.get("correct", 0) / td if td else None,
            "n_semantic": sd, "n_temporal": td, "n_temporal_missing": t.get("missing", 0)}


def auc(positive: Sequence[float], negative: Sequence[float]) -> Optional[float]:
    """Eq. 6 by its pairwise definition (ties count 1/2); None if either group is empty."""
    if not positive or not negative:
        return None
    total = sum((1.0 if p > q else 0.5 if p == q else 0.0) for p in positive for q in negative)
    return total / (len(positive) * len(negative))


def mcq_oeq(mcq_correct: Sequence[bool], rubric: Sequence[float], *, pass_at: float = PASS,
            fail_at: float = FAIL) -> dict[str, Any]:
    """D.3 on matched items: Rubric+ / Rubric- (Eq. 5), AUC (Eq. 6), p and the four-cell split
    (pass: rubric >= 0.8, fail: rubric <= 0.2, the middle set aside)."""
    if len(mcq_correct) != len(rubric):
        raise ValueError(f"{len(mcq_correct)} MCQ outcomes but {len(rubric)} rubric scores")
    pos = [r for a, r in zip(mcq_correct, rubric) if a]
    neg = [r for a, r in zip(mcq_correct, rubric) if not a]
    cells = {"both_pass": 0, "both_fail": 0, "mcq_only": 0, "oeq_only": 0, "middle": 0}
    for a, r in zip(mcq_correct, rubric):
        if r >= pass_at:
            cells["both_pass" if a else "oeq_only"] += 1
        elif r <= fail_at:
            cells["mcq_only" if a else "both_fail"] += 1
        else:
            cells["middle"] += 1
    n = len(rubric)
    return {"n": n, "p": len(pos) / n if n else None,
            "rubric_plus": sum(pos) / len(pos) if pos else None,
            "rubric_minus": sum(neg) / len(neg) if neg else None,
            "auc": auc(pos, neg), "cells": cells}


def histogram(scores: Iterable[float], bins: int = N_BINS) -> list[int]:
    """Counts in ten equal bins over [0, 1]: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (the last bin closed, so
    1.0 lands in it). Bin index is computed on score*10 rounded to 9 decimals so 0.3 lands in [0.3, 0.4)."""
    counts = [0] * bins
    for s in scores:
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"score {s!r} outside [0, 1]")
        counts[min(int(round(s * bins, 9)), bins - 1)] += 1
    return counts


def breakdown(scores: Sequence[Optional[float]], groups: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Mean score per group value (None scores skipped and counted)."""
    acc: dict[str, list] = defaultdict(list)
    for s, g in zip(scores, groups):
        acc[str(g)].append(s)
    return {g: {"n": len(v), "n_scored": sum(x is not None for x in v),
                "mean": (sum(x for x in v if x is not None) / max(1, sum(x is not None for x in v)))
                if any(x is not None for x in v) else None} for g, v in sorted(acc.items())}
