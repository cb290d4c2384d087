"""The explorer's leaderboard: one row per run, model, condition and template with each scorer's headline and
the 95% interval results.json records for it (``scale.interval``; a judged score's rater spread,
``scale.rater_spread``), the accuracy by the benchmark's own rule (``load.BENCHMARK_ACCURACY``), and the
legends that say what is shown (``correct_legend``, ``interval_legend``). A sweep's table of every run's
headlines is another one, ``evaluation.leaderboard``'s."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from .load import BENCHMARK_ACCURACY, Entry, benchmark_key, unique
from .run_view import RunView
from .scale import display, interval, judged, rater_spread

LEADERBOARD_COLUMNS = [
    "run",
    "benchmark",
    "model",
    "condition",
    "template",
    "n",
    "accuracy (rule)",
    "ARIA",
    "reasoning mode",
    "MMAR Rubrics",
    "AudioSpan Rubric",
    "Chain",
    "R_TP",
]


def _accuracy_headline(entries: Sequence[Entry], benchmark: Optional[str]) -> str:
    """The accuracy of one set by its benchmark's own rule, naming the rule. A benchmark the table does not
    know shows the one rule it was scored with; several rules and no benchmark rule: n/a, naming them."""
    by_rule = {e.result.get("rule"): e for e in entries}
    known = BENCHMARK_ACCURACY.get(benchmark_key(benchmark))
    if known is None:
        if len(by_rule) != 1:
            return f"n/a (no rule of its own for benchmark {benchmark!r}; scored with {', '.join(map(str, by_rule))})"
        rule, entry = next(iter(by_rule.items()))
        return f"{_valued(entry.result, 'accuracy', 'accuracy')} ({rule})"
    rule, field_name, shown = known
    entry = by_rule.get(rule) if rule else next((e for e in entries if field_name in e.result), None)
    if entry is None or field_name not in entry.result:
        how = f"score with --extraction {rule} or all" if rule else "score it again with this version"
        return f"n/a ({shown} not scored: this set was scored with {', '.join(map(str, by_rule))}; {how})"
    return f"{_valued(entry.result, field_name, 'accuracy')} ({shown})"


def _valued(values: Mapping[str, Any], field_name: str, scorer: str, value: Any = ...) -> str:
    """A headline's text: its value, its 95% interval when recorded (none beside an n/a)."""
    text = display(values.get(field_name) if value is ... else value, scorer, field_name, values)
    return text if text == "n/a" else text + interval(values, field_name)


def correct_legend(views: Sequence[RunView]) -> str:
    """What the item table's "correct" column and the leaderboard's accuracy mean for the open runs."""
    benchmarks = unique(benchmark_key(e.benchmark or v.benchmark) for v in views for e in v.results.of("accuracy"))
    rules = "; ".join(
        f"{b}: {BENCHMARK_ACCURACY[b][2]}"
        if b in BENCHMARK_ACCURACY
        else f"{b or 'no benchmark'}: the one rule it was scored with"
        for b in benchmarks
    )
    return (
        "**correct**: for each answer-extraction rule the output was scored with, whether the choice that "
        "rule extracts is the gold answer (`rule yes|no`; on MMAR and MMAU also the `official scorer`'s "
        "string match on the whole reply; an anchor link: the Chain scorer's verdict). "
        "**accuracy (rule)** on the leaderboard is each benchmark's own rule"
        + (f" ({rules})" if rules else "")
        + "; `audioreason score --extraction all` scores every rule."
    )


METHODS = {
    "wilson": "the Wilson score interval of a binomial proportion (a plain accuracy)",
    "bootstrap_percentile": "percentile bootstrap over items",
    "bootstrap_bca": "bias-corrected and accelerated (BCa) bootstrap over items",
}


def _uncertainties(entry: Entry) -> list[Mapping[str, Any]]:
    """The uncertainty records of an entry's headlines (its own, its chain's, its text prior's)."""
    r = entry.result
    holders = [r, r.get("chain"), r.get("text_prior")]
    return [
        u
        for h in holders
        if isinstance(h, Mapping) and isinstance(h.get("uncertainty"), Mapping)
        for u in h["uncertainty"].values()
        if isinstance(u, Mapping)
    ]


def interval_legend(views: Sequence[RunView]) -> str:
    """What the brackets beside the leaderboard's headlines are: each interval method the open runs used, with
    its resamples and seed; "" when no run carries intervals (nothing is shown then)."""
    found = unique(
        (u.get("method"), u.get("resamples"), u.get("seed"))
        for v in views
        for e in v.results.entries
        for u in _uncertainties(e)
        if u.get("method")
    )
    spread = any(isinstance(e.result.get("rater_spread"), Mapping) for v in views for e in v.results.entries)
    if not found and not spread:
        return ""
    how = "; ".join(
        f"`{m}`: {METHODS.get(m, m)}" + (f" ({resamples} resamples, seed {seed})" if resamples else "")
        for m, resamples, seed in found
    )
    return (
        "**[lo, hi]** beside a headline: its 95% interval over the items, as `audioreason score` recorded it"
        + (f" ({how})" if how else "")
        + "; `[no interval: why]` where none could be computed."
        + (" **rater sd**: the mean over items of the standard deviation of the raters' scores." if spread else "")
    )


def _headline(entry: Entry) -> tuple[str, str]:
    """(column, value text) of a scorer's headline for the leaderboard (accuracy: ``_accuracy_headline``)."""
    r = entry.result
    if entry.scorer == "aria":
        return "ARIA", _valued(r, "aria", "aria") + (
            "" if r.get("aria_complete", True) else f" (of {'+'.join(r.get('aria_metrics') or [])})"
        )
    if entry.scorer in ("mmar_rubrics", "audiospan_rubric"):
        from ..judges.base import offline_judge_label

        label = offline_judge_label(r)  # a score from an in-process judge says so beside the number
        field = "rubrics" if entry.scorer == "mmar_rubrics" else "rubric"
        return (
            "MMAR Rubrics" if field == "rubrics" else "AudioSpan Rubric",
            _valued(r, field, entry.scorer, judged(r, field)) + rater_spread(r) + (f" {label}" if label else ""),
        )
    if entry.scorer == "anchor_chain" and isinstance(r.get("chain"), Mapping):
        c = r["chain"]
        random = display(c.get("random_chain"), entry.scorer, "random_chain", c)
        return "Chain", f"{_valued(c, 'chain', entry.scorer)} (random {random})"
    if entry.scorer == "text_prior_decomposition":
        tp = r.get("text_prior") if isinstance(r.get("text_prior"), Mapping) else {}
        return "R_TP", _valued({"scale": r.get("scale"), **tp}, "R_TP", entry.scorer)
    return "", ""


def _count_of(entry: Entry) -> Any:
    return entry.result.get("n") or (entry.result.get("counts") or {}).get("items")


def leaderboard(views: Sequence[RunView]) -> list[list[str]]:
    """One row per (run, model, condition, template), each scorer's headline in its column."""
    rows: dict[tuple, dict[str, str]] = {}
    accuracy: dict[tuple, list[Entry]] = {}  # one accuracy entry per rule: the benchmark's rule is chosen below
    for view in views:
        for entry in view.results.entries:
            conditions = [entry.condition] if entry.scorer != "text_prior_decomposition" else ["(all)"]
            key = (
                view.name,
                entry.benchmark or view.benchmark or "",
                entry.model,
                conditions[0] or "",
                entry.template or "",
            )
            row = rows.setdefault(key, {"n": ""})
            if entry.scorer == "accuracy":
                accuracy.setdefault(key, []).append(entry)
            column, value = _headline(entry)
            if column:
                row[column] = value
            if entry.scorer == "aria":
                row["reasoning mode"] = entry.result.get("reasoning_mode") or "none"
            n = _count_of(entry)
            if n and not row["n"]:
                row["n"] = str(n)
    for key, entries in accuracy.items():
        rows[key]["accuracy (rule)"] = _accuracy_headline(entries, key[1])
    return [[*key, *(row.get(c, "") for c in LEADERBOARD_COLUMNS[5:])] for key, row in rows.items()]


def filled_columns(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    """The table without the columns that are empty in every row (a scorer no open run was scored with): an
    empty column squeezed by the others wraps its header into a tall column of letters."""
    keep = [n for n in range(len(headers)) if any(str(r[n]).strip() for r in rows)] if rows else range(len(headers))
    return [headers[n] for n in keep], [[r[n] for n in keep] for r in rows]


__all__ = ["LEADERBOARD_COLUMNS", "METHODS", "correct_legend", "filled_columns", "interval_legend", "leaderboard"]
