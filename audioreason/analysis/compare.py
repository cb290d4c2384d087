"""`audioreason compare RUN_A RUN_B`: two scored runs on the items they share, headline by headline.

Reads each run's ``results.json`` and ``items.jsonl`` (``audioreason score``) and matches outputs by item id
within each (condition, template) set, whatever the models. For every headline with per-item values:

- accuracy (each rule's, and the official MMAR/MMAU scorer's), MMAR-Rubrics' gate Accuracy, AudioSpan's native
  MCQ Accuracy: both accuracies on the shared items, the paired difference A - B with its paired-bootstrap
  interval, McNemar's exact test (b: right in A only, c: right in B only) and the ids that flipped;
- ARIA's M1-M6 (clipped to [0, 1], items where both runs have the metric) and the per-item ARIA, MMAR-Rubrics'
  Rubrics and the AudioSpan Rubric (a failed item at 0, as the headline counts it): both means and the paired
  difference with its interval.

Runs made with different protocols (``base.protocol``: the results' ``protocol`` blocks differ in anything,
the model aside) are refused with the differing fields named, unless ``allow_protocol_diff``; a run scored
before protocols were recorded is "protocol unknown" and compared (the comparison says so).

Chain (Eq. 3) and the text-prior ratios are not compared (results.json holds them per chain or per model
table, not per output). A folder that is not a scored run, two benchmarks, or no shared item is a
``ValueError`` with one line saying which; an items.jsonl row without its item id, condition or template is a
``DataFileError`` naming the file and line.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from audioreason.base.protocol import protocol_difference

from .uncertainty import DEFAULT, UncertaintyOptions, mcnemar_exact, paired_difference

RESULTS_FILE, ITEMS_FILE = "results.json", "items.jsonl"  # as audioreason.evaluation.score writes them
ARIA_FIELDS = ("M1", "M2", "M3", "M4", "M5", "M6", "aria")


def read_scored_run(folder: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(results, item rows) of a scored run folder (or of its results.json)."""
    from audioreason.base.jsonl import DataFileError, read_json_file, read_json_objects

    path = Path(folder).expanduser()
    if path.is_file() and path.name == RESULTS_FILE:
        path = path.parent
    results_file, items_file = path / RESULTS_FILE, path / ITEMS_FILE
    if not results_file.is_file() or not items_file.is_file():
        raise ValueError(
            f"{folder} is not a scored run: no {RESULTS_FILE} and {ITEMS_FILE} (run `audioreason score {folder}` first)"
        )
    results = read_json_file(results_file)
    if not isinstance(results, dict) or not isinstance(results.get("run"), dict):
        raise DataFileError(f'{results_file}: not the results.json of `audioreason score` (no "run" object)')
    rows = read_json_objects(items_file)[0]
    for line, row in rows:
        problem = _row_problem(row)
        if problem:
            raise DataFileError(
                f"{items_file}: line {line}: {problem} (each row of `audioreason score` names its "
                "item id, condition and template)"
            )
    return results, [row for _, row in rows]


def _row_problem(row: Mapping[str, Any]) -> Optional[str]:
    """What keeps an items.jsonl row from being matched to its set and item (None: nothing)."""
    for key, kinds in (("id", (str, int)), ("condition", str), ("template", str)):
        if key not in row:
            return f"no {key!r}"
        if not isinstance(row[key], kinds) or isinstance(row[key], bool):
            return f"{key!r} is a {type(row[key]).__name__}, not a {'string' if kinds is str else 'string or number'}"
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _clip(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def item_values(row: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, Any]]:
    """{(scorer, headline): (kind, value)} of one items.jsonl row; kind "correct" (a verdict) or "mean"."""
    out: dict[tuple[str, str], tuple[str, Any]] = {}
    for rule, verdict in (row.get("accuracy") or {}).items():
        if isinstance(verdict, Mapping) and isinstance(verdict.get("correct"), bool):
            out[("accuracy", f"accuracy ({rule})")] = ("correct", verdict["correct"])
            if isinstance(verdict.get("official_scorer_correct"), bool):
                out[("accuracy", "official_scorer_accuracy")] = ("correct", verdict["official_scorer_correct"])
    aria = row.get("aria") or {}
    for name in ARIA_FIELDS:
        if _finite(aria.get(name)):
            out[("aria", name)] = ("mean", _clip(aria[name]))
    mmar = row.get("mmar_rubrics") or {}
    if isinstance(mmar.get("correct"), bool):
        out[("mmar_rubrics", "accuracy")] = ("correct", mmar["correct"])
        out[("mmar_rubrics", "rubrics")] = ("mean", float(mmar.get("score") or 0))  # failed or gated: 0
    span = row.get("audiospan_rubric") or {}
    if "rubric" in span:
        out[("audiospan_rubric", "rubric")] = ("mean", float(span.get("rubric") or 0))  # failed: 0
    chain = row.get("anchor_chain") or {}
    if isinstance(chain.get("correct"), bool):
        out[("anchor_chain", "native_mcq accuracy")] = ("correct", chain["correct"])
    return out


def _by_set(rows: Iterable[Mapping[str, Any]]) -> dict[tuple, dict[str, dict]]:
    """{(condition, template, scorer, headline): {item id: (kind, value)}}."""
    out: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        for (scorer, headline), value in item_values(row).items():
            out.setdefault((row["condition"], row["template"], scorer, headline), {})[str(row["id"])] = value
    return out


def compare_runs(
    folder_a: Any,
    folder_b: Any,
    options: UncertaintyOptions = DEFAULT,
    notes: Sequence[str] = (),
    allow_protocol_diff: bool = False,
) -> dict[str, Any]:
    """Every headline both runs have, on their shared items (see the module docstring); ``notes``: what the
    caller found about the runs (a run still being written), recorded in the comparison and printed."""
    (results_a, rows_a), (results_b, rows_b) = read_scored_run(folder_a), read_scored_run(folder_b)
    bench_a, bench_b = results_a["run"].get("benchmark"), results_b["run"].get("benchmark")
    if bench_a != bench_b:
        raise ValueError(f"{folder_a} scored {bench_a}, {folder_b} scored {bench_b}: compare runs of one benchmark")
    protocol = checked_protocols(folder_a, folder_b, results_a, results_b, allow_protocol_diff)
    sets_a, sets_b = _by_set(rows_a), _by_set(rows_b)
    comparisons, not_compared = [], []
    for key in sorted(set(sets_a) | set(sets_b)):
        condition, template, scorer, headline = key
        if key not in sets_a or key not in sets_b:
            not_compared.append(
                {
                    "condition": condition,
                    "template": template,
                    "scorer": scorer,
                    "headline": headline,
                    "reason": f"only in run {'A' if key in sets_a else 'B'}",
                }
            )
            continue
        a, b = sets_a[key], sets_b[key]
        shared = [i for i in a if i in b]  # run A's item order
        if not shared:
            not_compared.append(
                {
                    "condition": condition,
                    "template": template,
                    "scorer": scorer,
                    "headline": headline,
                    "reason": "no shared item",
                }
            )
            continue
        kind = a[shared[0]][0]
        va, vb = [float(a[i][1]) for i in shared], [float(b[i][1]) for i in shared]
        entry: dict[str, Any] = {
            "condition": condition,
            "template": template,
            "scorer": scorer,
            "headline": headline,
            "kind": "accuracy" if kind == "correct" else "mean",
            "n_shared": len(shared),
            "only_a": len(a) - len(shared),
            "only_b": len(b) - len(shared),
            "a": sum(va) / len(va),
            "b": sum(vb) / len(vb),
        }
        entry["paired"] = paired_difference(va, vb, options)
        if kind == "correct":
            right_to_wrong = [i for i in shared if a[i][1] and not b[i][1]]
            wrong_to_right = [i for i in shared if b[i][1] and not a[i][1]]
            entry["mcnemar"] = mcnemar_exact(len(right_to_wrong), len(wrong_to_right))
            entry["flips"] = {"right_to_wrong": right_to_wrong, "wrong_to_right": wrong_to_right}
        comparisons.append(entry)
    if not comparisons:
        raise ValueError(
            f"{folder_a} and {folder_b} share no scored item (matched by item id within each condition and template)"
        )
    return {
        "a": _describe(folder_a, results_a),
        "b": _describe(folder_b, results_b),
        "benchmark": bench_a,
        "options": options.to_dict(),
        "protocol": protocol,
        "comparisons": comparisons,
        "not_compared": not_compared,
        "notes": list(notes),
    }


def checked_protocols(
    folder_a: Any,
    folder_b: Any,
    results_a: Mapping[str, Any],
    results_b: Mapping[str, Any],
    allow_protocol_diff: bool = False,
    ignore: Iterable[str] = (),
) -> dict[str, Any]:
    """``base.protocol.protocol_difference`` of two results (fields starting with one of ``ignore`` left out);
    a ValueError naming the differing fields when the protocols differ and ``allow_protocol_diff`` is off.
    A results.json without a protocol is "protocol unknown": compared, never refused."""
    protocol = protocol_difference(results_a, results_b)
    ignore = tuple(ignore)
    protocol["differs"] = [f for f in protocol["differs"] if not any(f == i or f.startswith(i + ".") for i in ignore)]
    if protocol["same"] is not None:
        protocol["same"] = not protocol["differs"]
    if protocol["same"] is False and not allow_protocol_diff:
        raise ValueError(
            f"{folder_a} and {folder_b} were made with different protocols ({', '.join(protocol['differs'])} "
            "differ); pass --allow-protocol-diff (allow_protocol_diff=True) to compare them anyway"
        )
    return protocol


def protocol_line(protocol: Mapping[str, Any]) -> str:
    """One line saying how the two protocols compare."""
    if protocol["unknown"]:
        return f"protocol unknown for {' and '.join(protocol['unknown']).upper()}: not checked"
    if protocol["same"]:
        return f"protocol: the same ({protocol['a']})"
    return f"protocols differ ({protocol['a']} vs {protocol['b']}), compared as asked: {', '.join(protocol['differs'])}"


def _describe(folder: Any, results: Mapping[str, Any]) -> dict[str, Any]:
    return {"folder": str(folder), "model": results["run"].get("model")}


def format_comparison(comparison: Mapping[str, Any]) -> str:
    """The comparison as a plain-text table (0-1, 4 decimals; p to 4 significant digits)."""
    header = (
        "headline",
        "set",
        "n shared",
        "A",
        "B",
        "A - B",
        f"{comparison['options']['confidence'] * 100:g}% CI",
        "McNemar b/c p",
        "flips A->B",
    )
    body = []
    for c in comparison["comparisons"]:
        ci = c["paired"].get("ci95")
        m = c.get("mcnemar")
        flips = c.get("flips")
        body.append(
            (
                f"{c['scorer']}: {c['headline']}",
                f"{c['condition']}/{c['template']}",
                str(c["n_shared"]),
                f"{c['a']:.4f}",
                f"{c['b']:.4f}",
                f"{c['paired']['difference']:+.4f}",
                "-" if not ci else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]",
                "-" if m is None else f"{m['b']}/{m['c']} p={m['p_value']:.4g}",
                "-"
                if flips is None
                else f"{len(flips['right_to_wrong'])} right->wrong, {len(flips['wrong_to_right'])} wrong->right",
            )
        )
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    fmt = lambda line: "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()  # noqa: E731
    title = (
        f"A: {comparison['a']['model']} ({comparison['a']['folder']})\nB: {comparison['b']['model']} "
        f"({comparison['b']['folder']})\n{protocol_line(comparison['protocol'])}"
    )
    notes = [f"note: {note}" for note in comparison.get("notes") or []]
    return "\n".join([title, *notes, "", fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])


__all__ = ["checked_protocols", "compare_runs", "format_comparison", "item_values", "read_scored_run"]
