"""`audioreason compare RUN --judges A,B`: two scorings of one run's outputs by different judges, judge against
judge, item by item and criterion by criterion.

A and B are results folders of the same run folder RUN (``audioreason score RUN --out A --judge-model X`` and
``--out B --judge-model Y``: each holds results.json and items.jsonl). Both must name RUN as the run they
scored, and their protocols may differ only in their judges (``scoring.judges.*``); anything else is refused
naming the fields, unless ``allow_protocol_diff``. For each judged scorer both scored (mmar_rubrics,
audiospan_rubric), on the outputs both judged (matched by condition, template and item id):

- items: each output's score (MMAR-Rubrics: the item's Rubrics score, for the outputs the gate let through
  and the judge scored; the AudioSpan Rubric: the item's rubric score);
- criteria: each (output, criterion) both judged: MMAR-Rubrics' criterion score, the mean over the valid
  raters; the AudioSpan Rubric's verdict "semantic/temporal", the raters' most common one (a tie: the first
  in sorted order).

Per level: Krippendorff's alpha (``agreement.annotator_alpha``; interval level for scores, nominal for
AudioSpan's verdict labels) and Cohen's kappa (``agreement.cohens_kappa``, every distinct value a category),
each with a percentile bootstrap interval over outputs (``uncertainty.bootstrap``: an output's criteria are
resampled together), or the reason it is unavailable.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .agreement import annotator_alpha, cohens_kappa
from .compare import checked_protocols, read_scored_run
from .uncertainty import DEFAULT, UncertaintyOptions, bootstrap

JUDGED = ("mmar_rubrics", "audiospan_rubric")
Pair = tuple[Any, Any]


def item_judgements(scorer: str, value: Mapping[str, Any]) -> Optional[tuple[float, dict[str, Any]]]:
    """(the output's score, {criterion: value}) from an items.jsonl row's entry for ``scorer``, or None when
    the judge did not score it (gated, failed, dropped)."""
    if scorer == "mmar_rubrics":
        if value.get("status") != "judged" or not _finite(value.get("score")):
            return None
        scores: dict[str, list[float]] = {}
        for rater in value.get("raters") or []:
            for verdict in rater.get("verdicts") or []:
                if _finite(verdict.get("score")):
                    scores.setdefault(str(verdict["name"]), []).append(float(verdict["score"]))
        return float(value["score"]), {name: sum(v) / len(v) for name, v in scores.items()}
    if not _finite(value.get("rubric")):
        return None
    labels: dict[str, list[str]] = {}
    for rater in value.get("judge") or []:
        for entry in ((rater.get("verdict") or {}).get("criteria") or []) if rater.get("status") == "ok" else []:
            labels.setdefault(str(entry.get("index")), []).append(f"{entry.get('semantic')}/{entry.get('temporal')}")
    return float(value["rubric"]), {k: _most_common(v) for k, v in labels.items()}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _most_common(values: Sequence[str]) -> str:
    counts = Counter(values)
    top = max(counts.values())
    return sorted(v for v, n in counts.items() if n == top)[0]


def _judged(rows: Sequence[Mapping[str, Any]], scorer: str) -> dict[tuple, tuple[float, dict[str, Any]]]:
    out = {}
    for row in rows:
        found = item_judgements(scorer, row[scorer]) if isinstance(row.get(scorer), Mapping) else None
        if found is not None:
            out[(row.get("condition"), row.get("template"), str(row["id"]))] = found
    return out


def _alpha(pairs: Sequence[Pair], level: str) -> Any:
    """Krippendorff's alpha of the pairs (at the nominal level the labels are coded by their sorted order)."""
    if level == "nominal":
        codes = {label: float(n) for n, label in enumerate(sorted({v for p in pairs for v in p}, key=repr))}
        pairs = [(codes[x], codes[y]) for x, y in pairs]
    return annotator_alpha({"a": [x for x, _ in pairs], "b": [y for _, y in pairs]}, level)


def _kappa(pairs: Sequence[Pair]) -> Any:
    return cohens_kappa([x for x, _ in pairs], [y for _, y in pairs])


def _agreement(units: Sequence[Sequence[Pair]], level: str, options: UncertaintyOptions) -> dict[str, Any]:
    """Alpha and kappa over every pair of ``units`` (one list of pairs per output), each with the bootstrap
    interval over outputs, or the statistic's reason it is undefined."""
    pairs = [p for unit in units for p in unit]
    out: dict[str, Any] = {"n_outputs": len(units), "n_pairs": len(pairs), "level": level}
    for name, statistic in (("krippendorff_alpha", lambda ps: _alpha(ps, level)), ("cohens_kappa", _kappa)):
        found = statistic(pairs)
        if found.value is None:
            out[name] = {
                "value": None,
                "unavailable": found.unavailable,
                "ci95": None,
                "se": None,
                "interval_unavailable": None,
            }
            continue
        interval = _interval(units, lambda ps: _value(statistic(ps)), options)
        out[name] = {
            "value": found.value,
            "unavailable": None,
            "ci95": interval["ci95"],
            "se": interval["se"],
            "interval_unavailable": interval["unavailable"],
        }
    return out


def _value(found: Any) -> float:
    return math.nan if found.value is None else found.value


def _interval(
    units: Sequence[Sequence[Pair]], value_of: Callable[[Sequence[Pair]], float], options: UncertaintyOptions
) -> dict[str, Any]:
    """The percentile bootstrap over outputs: each resample draws outputs (their pairs together) and
    recomputes the statistic (``uncertainty.bootstrap`` over the outputs' positions)."""

    def statistic(positions: Any, axis: int = -1) -> Any:
        rows = np.atleast_2d(np.asarray(positions, dtype=int))
        values = [value_of([p for i in row for p in units[i]]) for row in rows]
        return np.asarray(values if np.ndim(positions) > 1 else values[0], dtype=float)

    return bootstrap([list(range(len(units)))], statistic, options)


def judge_swap(
    run: Any, folder_a: Any, folder_b: Any, options: UncertaintyOptions = DEFAULT, allow_protocol_diff: bool = False
) -> dict[str, Any]:
    """Judge A against judge B on RUN's outputs (the module docstring); ValueError says what is wrong."""
    run_folder = Path(run).expanduser().resolve()
    scored = {}
    for name, folder in (("A", folder_a), ("B", folder_b)):
        results, rows = read_scored_run(folder)
        named = results["run"].get("folder")
        if not named or Path(named).expanduser().resolve() != run_folder:
            raise ValueError(
                f"judge {name} ({folder}) scored {named or 'no named run'}, not {run}: --judges takes "
                f"two scorings of RUN's outputs (audioreason score {run} --out {folder} --judge-model ...)"
            )
        scored[name] = (results, rows)
    (results_a, rows_a), (results_b, rows_b) = scored["A"], scored["B"]
    protocol = checked_protocols(
        folder_a, folder_b, results_a, results_b, allow_protocol_diff, ignore=("scoring.judges", "scoring_hash")
    )
    scorers: dict[str, Any] = {}
    for scorer in JUDGED:
        a, b = _judged(rows_a, scorer), _judged(rows_b, scorer)
        shared = [k for k in a if k in b]
        if not shared:
            continue
        criteria = [[(a[k][1][c], b[k][1][c]) for c in a[k][1] if c in b[k][1]] for k in shared]
        scorers[scorer] = {
            "only_a": len(a) - len(shared),
            "only_b": len(b) - len(shared),
            "items": _agreement([[(a[k][0], b[k][0])] for k in shared], "interval", options),
            "criteria": _agreement(criteria, "interval" if scorer == "mmar_rubrics" else "nominal", options),
        }
    if not scorers:
        raise ValueError(
            f"{folder_a} and {folder_b} share no output both judges scored (mmar_rubrics or "
            "audiospan_rubric, matched by condition, template and item id)"
        )
    judges = {
        name: ((res.get("protocol") or {}).get("scoring") or {}).get("judges")
        for name, res in (("a", results_a), ("b", results_b))
    }
    return {
        "run": str(run),
        "a": {"folder": str(folder_a), "judges": judges["a"]},
        "b": {"folder": str(folder_b), "judges": judges["b"]},
        "protocol": protocol,
        "options": options.to_dict(),
        "scorers": scorers,
    }


def format_judge_swap(swap: Mapping[str, Any]) -> str:
    """The judge-swap comparison as plain text (4 decimals)."""

    def cell(stat: Mapping[str, Any]) -> str:
        if stat["value"] is None:
            return f"n/a ({stat['unavailable']})"
        ci = stat["ci95"]
        return f"{stat['value']:.4f}" + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else " (no interval)")

    level = f"{swap['options']['confidence'] * 100:g}%"
    lines = [
        f"judges on {swap['run']}: A {swap['a']['folder']}, B {swap['b']['folder']}",
        f"intervals: {level} percentile bootstrap over outputs",
    ]
    for scorer, entry in swap["scorers"].items():
        for unit in ("items", "criteria"):
            e = entry[unit]
            lines.append(
                f"{scorer} {unit}: {e['n_pairs']} pairs over {e['n_outputs']} outputs; Krippendorff's alpha "
                f"({e['level']}) {cell(e['krippendorff_alpha'])}; Cohen's kappa {cell(e['cohens_kappa'])}"
            )
    return "\n".join(lines)


__all__ = ["format_judge_swap", "item_judgements", "judge_swap"]
