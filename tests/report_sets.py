"""A hand-built scored run with many sets (8 models with long names x 2 conditions) for every figure of the
report, each headline carrying the shared uncertainty schema (``D["uncertainty"][F]``) with known intervals.
Read by tests/test_report_figures.py (the drawn error bars equal these intervals) and tests/test_browser.py
(no text of a figure overlaps another or leaves its figure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

MODELS = [f"org-{k}/Qwen2-Audio-7B-Instruct-finetuned-checkpoint-{1000 * (k + 1)}" for k in range(8)]
CONDITIONS = ("full", "none")
MODALITIES = ("sound", "music", "speech", "sound-music", "sound-speech", "music-speech", "sound-music-speech")
CATEGORIES = ("Signal Layer", "Perception Layer", "Semantic Layer", "Cultural Layer")
METRICS = ("M1", "M2", "M3", "M4", "M5", "M6")


def interval(value: Optional[float], half: float, n: int = 40) -> dict[str, Any]:
    """The schema's entry for ``value``: [value - half, value + half] clipped to [0, 1]; unavailable for None."""
    if value is None:
        return {
            "se": None,
            "ci95": None,
            "method": "bootstrap_percentile",
            "n": n,
            "resamples": 2000,
            "seed": 0,
            "unavailable": "the value itself is n/a",
        }
    return {
        "se": half / 1.96,
        "ci95": [max(0.0, value - half), min(1.0, value + half)],
        "method": "bootstrap_percentile",
        "n": n,
        "resamples": 2000,
        "seed": 0,
        "unavailable": None,
    }


def with_intervals(values: dict[str, Any], half: float, fields) -> dict[str, Any]:
    return {**values, "uncertainty": {f: interval(values.get(f), half) for f in fields}}


def _share(k: int, c: int, base: float, step: float) -> float:
    return round(min(1.0, max(0.0, base + step * k - 0.15 * c)), 4)


def sets() -> dict[str, list[dict[str, Any]]]:
    """scorer -> its results, one per (model, condition); deterministic values and intervals."""
    out: dict[str, list[dict[str, Any]]] = {
        s: [] for s in ("accuracy", "aria", "mmar_rubrics", "anchor_chain", "audiospan_rubric")
    }
    for k, model in enumerate(MODELS):
        for c, condition in enumerate(CONDITIONS):
            base = {"model": model, "condition": condition, "template": "aria_cot"}
            half = 0.02 + 0.01 * (k % 3)
            acc = _share(k, c, 0.3, 0.1)
            if (k, c) == (7, 1):
                acc = None  # an n/a accuracy: a labelled mark, no bar, no error bar
            out["accuracy"].append(
                with_intervals(
                    {
                        **base,
                        "rule": "official_slot",
                        "rule_description": "the slot rule",
                        "accuracy": acc,
                        "n": 40,
                        "unanswered": 2 + k % 3,
                        "correct": None if acc is None else round(40 * acc),
                    },
                    half,
                    ["accuracy"],
                )
            )
            metrics = {m: _share(k, c, 0.2 + 0.05 * i, 0.08) for i, m in enumerate(METRICS)}
            if k % 4 == 3:
                metrics["M1"] = None  # no CLAP backbone: a gap in the polygon
            aria_value = 0.0 if (k, c) == (0, 1) else round(sum(v for v in metrics.values() if v is not None) / 6, 4)
            aria_acc = 1.0 if (k, c) == (7, 0) else acc  # points at the plane's edges (0 and 1) must be whole
            aria = {
                **base,
                **metrics,
                "aria": aria_value,
                "accuracy": aria_acc,
                "aria_metrics": [m for m, v in metrics.items() if v is not None],
                "aria_complete": metrics["M1"] is not None,
                "reasoning_mode": None,
                "reasoning_mode_rule": "paper",
                "n": 40,
            }
            out["aria"].append(with_intervals(aria, half, [*METRICS, "aria", "accuracy"]))
            groups = {}
            for group, names in (("modality", MODALITIES), ("category", CATEGORIES)):
                groups[group] = {}
                for j, name in enumerate(names):
                    row = {
                        "rubrics": _share(k, c, 0.1 + 0.04 * j, 0.07),
                        "accuracy": _share(k, c, 0.2 + 0.03 * j, 0.08),
                        "n": 10,
                        "n_judged": 6,
                        "n_failed": 0,
                        "n_gated": 4,
                    }
                    if (k, j) == (2, 1):
                        row.update(n_judged=0, n_failed=3)  # every item of the row sent to the judge failed: n/a
                    groups[group][name] = with_intervals(row, half, ["rubrics", "accuracy"])
            out["mmar_rubrics"].append(
                with_intervals(
                    {
                        **base,
                        "rubrics": _share(k, c, 0.15, 0.07),
                        "accuracy": acc,
                        "n": 40,
                        "n_judged": 25,
                        "n_gated": 15,
                        "n_failed": 0,
                        "judges": ["judge-model"],
                        "raters": 3,
                        **groups,
                    },
                    half,
                    ["rubrics", "accuracy"],
                )
            )
            links = [[k % 2 == 0, k % 3 == 0, False], [True, k % 2 == 0, k % 4 == 0]]
            per_link = {name: sum(chain[i] for chain in links) / 2 for i, name in enumerate("PUR")}
            chain = {
                "chain": round(sum(sum(all(chain[:r]) for chain in links) / 2 for r in (1, 2, 3)) / 3, 4),
                "random_chain": (1 / 4 + 1 / 16 + 1 / 64) / 3,
                **per_link,
                "n": 2,
                "unparsed": 0,
                "chains": [{"chain_id": f"c{i}", "links": chain} for i, chain in enumerate(links)],
            }
            out["anchor_chain"].append({**base, "chain": with_intervals(chain, half, ["chain", "P", "U", "R"])})
            tiers = {
                t: with_intervals(
                    {"n": 4, "n_scored": 4, "n_failed": 0, "mean": _share(k, c, 0.3 + 0.1 * i, 0.05)}, half, ["mean"]
                )
                for i, t in enumerate("SML")
            }
            importance = {
                imp: with_intervals(
                    {"semantic": _share(k, c, 0.4 + 0.1 * i, 0.05), "temporal": _share(k, c, 0.3 + 0.1 * i, 0.06)},
                    half,
                    ["semantic", "temporal"],
                )
                for i, imp in enumerate(("essential", "supporting"))
            }
            out["audiospan_rubric"].append(
                with_intervals(
                    {
                        **base,
                        "rubric": _share(k, c, 0.4, 0.05),
                        "rubric_avg": _share(k, c, 0.4, 0.05),
                        "semantic": _share(k, c, 0.45, 0.05),
                        "temporal": _share(k, c, 0.35, 0.06),
                        "n": 12,
                        "n_scored": 12,
                        "n_failed": 0,
                        "histogram": [(k + b) % 3 for b in range(10)],
                        "judges": ["judge-model"],
                        "by_importance": importance,
                        "by": {"duration_tier": tiers},
                    },
                    half,
                    ["rubric", "semantic", "temporal"],
                )
            )
    return out


def text_prior() -> dict[str, Any]:
    """One text prior result over the 8 models: R_N for N = 2..5 with intervals, and the decomposition."""
    retention, decomposition, prior = {}, {}, {}
    for k, model in enumerate(MODELS):
        retention[model] = {
            str(n): with_intervals({"R_N": round(0.95 - 0.08 * n + 0.02 * k, 4)}, 0.05, ["R_N"]) for n in (2, 3, 4, 5)
        }
        decomposition[model] = {"counts": {"TS": 4 + k, "FS": 6, "XS": 10 - k, "AH": 2, "UN": 18}, "n_items": 40}
        prior[model] = with_intervals({"full": 0.6, "none": 0.3, "tb": 0.25, "R_TP": 0.5}, 0.05, ["R_TP"])
    return {
        "model": "8 models",
        "template": "aria_cot",
        "text_prior": {"per_model": prior},
        "retention": {"per_model": retention},
        "decomposition": {"per_model": decomposition},
    }


def write_many_sets_run(folder: Path) -> Path:
    """A results.json (with run.json and an empty items.jsonl) of every scorer's results for the 16 sets."""
    folder.mkdir(parents=True, exist_ok=True)
    scorers = {name: {"status": "ok", "results": results} for name, results in sets().items()}
    scorers["text_prior_decomposition"] = {"status": "ok", "results": [text_prior()]}
    (folder / "results.json").write_text(
        json.dumps(
            {
                "run": {"model": MODELS[0], "benchmark": "mmar"},
                "scale": "0-1",
                "scorers": scorers,
                "uncertainty_options": {"confidence": 0.95, "resamples": 2000, "seed": 0},
            }
        )
    )
    (folder / "run.json").write_text(json.dumps({"config": {"benchmark": "mmar"}}))
    (folder / "items.jsonl").write_text("")
    return folder
