"""Ensembles of judges (several models, or several draws of one) and their named aggregations.

Aggregations, over the raters whose verdict validated (failed raters are excluded and counted):
  * "mean": the arithmetic mean;
  * "trimmed_mean": sort, drop ``trim`` values from each end, average the rest (MMAR-Rubrics: 5 raters,
    trim=1, the middle 3). With fewer than 2*trim + 1 valid raters, as many are dropped from each end as
    still leave at least one value (4 valid: the middle 2; 3: the median; 2 or 1: the mean) and
    ``Aggregate.trimmed`` says how many were dropped;
  * "majority": the most frequent value; a tie goes to the *lowest* tied value (a conservative,
    deterministic choice: a criterion split 2-2 is not satisfied) and sets ``Aggregate.tie``.
No valid rater at all gives ``value=None``, never 0.

Each item is judged on its own: its raters run concurrently, or in rater order with
``stop_at_first_failure=True`` (the official MMAR-Rubrics scorer: an item whose rater fails for good is
dropped, so the raters after it are never paid for; ``EnsembleResult.skipped`` counts them). An item's raters
share one ``TimeBudget`` of ``item_timeout_s`` seconds, counted from its first request's slot; a run may
also have a budget (``run_timeout_s``, from its start): once spent, what is left fails as "deadline".
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from .base import Judge, SamplingParams, TimeBudget
from .cache import VerdictCache
from .runner import DEFAULT_MAX_REASKS, JudgeRequest, JudgeResult, JudgeRunner, JudgeStats
from .verdicts import ReplySchema

DEFAULT_ITEM_TIMEOUT_S = 900.0

AGGREGATIONS = ("mean", "trimmed_mean", "majority")


@dataclass(frozen=True)
class Aggregate:
    value: Optional[float]
    method: str
    n_valid: int  # raters with a value
    n_failed: int  # raters without one (failed call or invalid verdict)
    n_used: int  # values that entered the final average (after trimming)
    trimmed: int = 0  # values dropped from each end
    tie: bool = False  # majority only: several values shared the top count

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "method": self.method,
            "n_valid": self.n_valid,
            "n_failed": self.n_failed,
            "n_used": self.n_used,
            "trimmed": self.trimmed,
            "tie": self.tie,
        }


def aggregate(values: Sequence[Optional[float]], method: str = "mean", trim: int = 1) -> Aggregate:
    """Aggregate rater values; None marks a failed rater."""
    if method not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {method!r}; choose one of {AGGREGATIONS}")
    if trim < 0:
        raise ValueError("trim must be >= 0")
    # Exact fractions stay exact (audiospan_rubric averages them); everything else is read as a float.
    valid = [
        v if isinstance(v, Fraction) else float(v)
        for v in values
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    failed = len(values) - len(valid)
    if not valid:
        return Aggregate(None, method, 0, failed, 0)
    if method == "mean":
        return Aggregate(sum(valid) / len(valid), method, len(valid), failed, len(valid))
    if method == "trimmed_mean":
        cut = min(trim, (len(valid) - 1) // 2)
        kept = sorted(valid)[cut : len(valid) - cut]
        return Aggregate(sum(kept) / len(kept), method, len(valid), failed, len(kept), trimmed=cut)
    counts = Counter(valid)
    top = max(counts.values())
    winners = sorted(v for v, n in counts.items() if n == top)
    return Aggregate(winners[0], method, len(valid), failed, top, tie=len(winners) > 1)


@dataclass(frozen=True)
class Rater:
    """One member of an ensemble: a judge and a draw index (the cache key's rater index)."""

    judge: Judge
    index: int = 0
    sampling: Optional[SamplingParams] = None  # None: the ensemble's


@dataclass(frozen=True)
class EnsembleItem:
    item_id: str
    messages: Sequence[Mapping[str, Any]]
    schema: ReplySchema


@dataclass
class EnsembleResult:
    """Per item: every called rater's result (in rater order), the aggregate of their normalized scores, and
    one aggregate per criterion (same method) over the raters' criterion scores. ``skipped``: raters never
    called because an earlier one failed (``stop_at_first_failure``)."""

    item_id: str
    results: list[JudgeResult]
    score: Aggregate
    criteria: dict[str, Aggregate] = field(default_factory=dict)
    skipped: int = 0

    @property
    def n_valid(self) -> int:
        return sum(r.ok for r in self.results)

    @property
    def n_failed(self) -> int:
        return len(self.results) - self.n_valid

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "score": self.score.to_dict(),
            "criteria": {k: a.to_dict() for k, a in self.criteria.items()},
            "results": [r.to_dict() for r in self.results],
            "skipped": self.skipped,
        }


class JudgeEnsemble:
    """Judges each item with every rater (concurrently, one runner per judge, one shared cache) and
    aggregates. ``JudgeEnsemble.draws(judge, 5, aggregation="trimmed_mean")`` is the MMAR set-up.

    item_timeout_s: the time budget of one item (all its raters, retries and back-offs; None: unbounded).
    run_timeout_s: the time budget of one ``run`` (None: unbounded).
    stop_at_first_failure: judge an item's raters one after another and stop at the first that fails.
    max_reasks, on_invalid, retry_invalid_cached: passed to each ``JudgeRunner``.
    """

    def __init__(
        self,
        raters: Sequence[Rater],
        *,
        aggregation: str = "mean",
        trim: int = 1,
        sampling: SamplingParams = SamplingParams(),
        cache: Union[VerdictCache, str, Path, None] = None,
        max_reasks: int = DEFAULT_MAX_REASKS,
        on_invalid: str = "reask",
        retry_invalid_cached: bool = True,
        item_timeout_s: Optional[float] = DEFAULT_ITEM_TIMEOUT_S,
        run_timeout_s: Optional[float] = None,
        stop_at_first_failure: bool = False,
    ):
        if not raters:
            raise ValueError("an ensemble needs at least one rater")
        for name, value in (("item_timeout_s", item_timeout_s), ("run_timeout_s", run_timeout_s)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value)
            ):
                raise ValueError(f"{name} must be a positive number of seconds, or None; got {value!r}")
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {AGGREGATIONS}")
        seen = [(r.judge.name, r.index) for r in raters]
        if len(set(seen)) != len(seen):
            raise ValueError("two raters share a judge and an index: they would share cached verdicts")
        self.raters = list(raters)
        self.aggregation, self.trim = aggregation, trim
        self.item_timeout_s, self.run_timeout_s = item_timeout_s, run_timeout_s
        self.stop_at_first_failure = stop_at_first_failure
        self.cache = VerdictCache(cache) if isinstance(cache, (str, Path)) else cache
        # One runner per (judge, sampling): they share the cache and each judge's concurrency limit.
        self._runners: dict[tuple[int, int], JudgeRunner] = {}
        for r in self.raters:
            params = r.sampling or sampling
            slot = (id(r.judge), id(params))
            if slot not in self._runners:
                self._runners[slot] = JudgeRunner(
                    r.judge,
                    sampling=params,
                    cache=self.cache,
                    max_reasks=max_reasks,
                    on_invalid=on_invalid,
                    retry_invalid_cached=retry_invalid_cached,
                )
        self._rater_runner = [self._runners[(id(r.judge), id(r.sampling or sampling))] for r in self.raters]

    @classmethod
    def draws(cls, judge: Judge, n: int, **kwargs: Any) -> "JudgeEnsemble":
        """n draws of one judge (rater indices 0..n-1)."""
        return cls([Rater(judge, i) for i in range(n)], **kwargs)

    @classmethod
    def models(cls, judges: Sequence[Judge], **kwargs: Any) -> "JudgeEnsemble":
        """One draw from each of several judges."""
        return cls([Rater(j, 0) for j in judges], **kwargs)

    def rater_params(self) -> list[dict[str, Any]]:
        """The sampling fields each rater sends (temperature, seed, ...), in rater order: what a result's
        protocol records."""
        return [runner.sampling.for_rater(r.index) for r, runner in zip(self.raters, self._rater_runner)]

    @property
    def stats(self) -> dict[str, JudgeStats]:
        """Per judge name (runners of one judge with different sampling are summed)."""
        out: dict[str, JudgeStats] = {}
        for runner in self._runners.values():
            name = runner.judge.name
            out[name] = out[name].merge(runner.stats) if name in out else runner.stats
        return out

    @property
    def total_stats(self) -> JudgeStats:
        total = JudgeStats()
        for s in self.stats.values():
            total = total.merge(s)
        return total

    def run(self, items: Sequence[EnsembleItem]) -> list[EnsembleResult]:
        async def main() -> list[EnsembleResult]:
            try:
                return await self.arun(items)
            finally:
                for judge in {id(r.judge): r.judge for r in self.raters}.values():
                    await judge.aclose()

        return asyncio.run(main())

    async def arun(self, items: Sequence[EnsembleItem]) -> list[EnsembleResult]:
        run_budget = None
        if self.run_timeout_s is not None:
            run_budget = TimeBudget(self.run_timeout_s, what="run")
            run_budget.start()
        return list(await asyncio.gather(*(self._judge_item(item, run_budget) for item in items)))

    async def _judge_item(self, item: EnsembleItem, run_budget: Optional[TimeBudget] = None) -> EnsembleResult:
        budget = run_budget
        if self.item_timeout_s is not None:
            budget = TimeBudget(self.item_timeout_s, parent=run_budget)
        calls = [
            (runner, JudgeRequest(item.item_id, item.messages, item.schema, rater.index))
            for rater, runner in zip(self.raters, self._rater_runner)
        ]
        if not self.stop_at_first_failure:
            results = list(await asyncio.gather(*(runner.ajudge(request, budget) for runner, request in calls)))
            return self._combine(item, results)
        results = []
        for runner, request in calls:
            results.append(await runner.ajudge(request, budget))
            if not results[-1].ok:
                break
        return self._combine(item, results, skipped=len(calls) - len(results))

    def _combine(self, item: EnsembleItem, results: list[JudgeResult], skipped: int = 0) -> EnsembleResult:
        score = aggregate([r.score for r in results], self.aggregation, self.trim)
        criteria: dict[str, Aggregate] = {}
        if item.schema.kind == "criteria":
            for c in item.schema.criteria:
                criteria[c.name] = aggregate(
                    [r.verdict.score_of(c.name) if r.verdict is not None else None for r in results],
                    self.aggregation,
                    self.trim,
                )
        return EnsembleResult(item.item_id, results, score, criteria, skipped)
