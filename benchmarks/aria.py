"""ARIA speed: the batched, cached scorer against a straightforward one-item-at-a-time loop.

Both run the same offline backbones (all-mpnet-base-v2 or MiniLM, SmolLM2-135M, GloVe; CLAP and NLI have
no offline weights, so M1 and M5 are not timed) on the same items: four-slot CoTs built from MMAR's gold
reasoning (`thinking`) and cues.

Fair by construction: models are loaded before timing; each path is run once on a few warm-up items
first (so neither pays one-time costs such as lemminflect's data load or the M3 prefix pass); every
timed run of either path starts from empty caches (`AriaScorer.clear_caches`, which also empties the
process-wide lemma cache the loop would otherwise inherit); the two paths
alternate which runs first, and the median of `--repeats` runs is reported. Prints, per metric, items
per second for each path, the speed-up, the largest per-item difference between the paths; then the
whole batched scorer's CoTs per second at each `--throughput` size, peak memory, and how M3's logprob
mode correlates with the paper's generate mode.

    .venv/bin/python benchmarks/aria.py [--items 50] [--repeats 3] [--throughput 50,200,800]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import time
from pathlib import Path
from typing import Callable

import numpy as np

from audioreason.scorers.aria.scorer import AriaScorer
from audioreason.text.cot import parse_cot

TIMED = {"M2": "_m2", "M3": "_m3", "M4": "_m4", "M6": "_m6"}
WARMUP_ITEMS = 4


def build_items(mmar: Path, n: int) -> tuple[list[str], list[str], list[list[str]]]:
    """(CoT outputs, gold answers, choices): Perception = cues + first sentence, Analysis = middle,
    Reasoning = last."""
    rows = [json.loads(line) for line in mmar.read_text("utf-8").splitlines() if line.strip()]
    outputs, golds, choices = [], [], []
    for row in rows:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", row["thinking"]) if s.strip()]
        if len(sentences) < 3:  # a short gold CoT: three runs of words instead of sentences
            words = row["thinking"].split()
            if len(words) < 6:
                continue
            third = len(words) // 3
            sentences = [" ".join(words[:third]), " ".join(words[third : 2 * third]), " ".join(words[2 * third :])]
        mid = len(sentences) // 2
        outputs.append(
            f"[PERCEPTION]\nEntities: {', '.join(row['cue'])}\nDescription: {sentences[0]}\n"
            f"[ANALYSIS]\n{' '.join(sentences[1 : mid + 1])}\n[REASONING]\n{' '.join(sentences[mid + 1 :])}\n"
            f"[ANSWER]\n{row['answer']}"
        )
        golds.append(row["answer"])
        choices.append(list(row["choices"]))
        if len(outputs) == n:
            break
    return outputs, golds, choices


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def compare(
    fast: Callable[[], object],
    slow: Callable[[], object],
    repeats: int,
    warm: Callable[[], None],
    reset: Callable[[], None],
) -> tuple[float, float, object, object]:
    """(median fast seconds, median slow seconds, last fast result, last slow result).

    ``warm`` runs both paths once, untimed; ``reset`` empties the caches before every timed run (the
    batched path's own, and process-wide ones such as the lemma cache that the loop would otherwise
    inherit); round r runs the slow path first when r is even, the fast one first when r is odd."""
    warm()
    times: dict[str, list[float]] = {"fast": [], "slow": []}
    results: dict[str, object] = {}
    for r in range(repeats):
        order = [("slow", slow), ("fast", fast)] if r % 2 == 0 else [("fast", fast), ("slow", slow)]
        for name, run in order:
            reset()
            start = time.perf_counter()
            results[name] = run()
            times[name].append(time.perf_counter() - start)
    return statistics.median(times["fast"]), statistics.median(times["slow"]), results["fast"], results["slow"]


def _counts() -> dict[str, int]:
    return {
        k: 0
        for k in (
            "m2_items_missing_slot",
            "m3_retries",
            "m3_unparsed_slots",
            "m4_truncated_items",
            "m6_words",
            "m6_words_without_vector",
            "m6_items_without_words",
        )
    }


def _metric_call(scorer: AriaScorer, metric: str, outputs: list[str], golds: list[str]) -> Callable[[], list[float]]:
    parsed = [parse_cot(o) for o in outputs]
    args = {"M2": (parsed,), "M3": (parsed,), "M4": (parsed, golds), "M6": (outputs,)}[metric]
    return lambda: getattr(scorer, TIMED[metric])(*args, _counts())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50, help="items for the batched-vs-loop comparison")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each path (median reported)")
    parser.add_argument("--throughput", default="50,200,800", help="item counts for the whole-scorer CoTs/s")
    parser.add_argument(
        "--mmar", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data" / "MMAR-meta.jsonl"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.throughput.split(",") if x]
    outputs, golds, choices = build_items(args.mmar, max([args.items] + sizes) + WARMUP_ITEMS)
    warm_out, warm_gold = outputs[-WARMUP_ITEMS:], golds[-WARMUP_ITEMS:]  # items no timed run includes
    n = args.items

    fast, slow = AriaScorer(backbones="offline"), AriaScorer(backbones="offline", batched=False)
    for role in ("embedder", "lm", "vectors"):  # load once, outside the timings
        fast.backend(role)
    print(
        f"ARIA benchmark: {n} MMAR-derived CoTs, offline backbones ({fast.backend('embedder').description}); "
        f"median of {args.repeats} runs, warmed up, alternating order; models loaded, peak RSS "
        f"{peak_rss_mb():.0f} MB\n"
    )
    print(f"{'metric':<6} {'batched it/s':>13} {'loop it/s':>10} {'speed-up':>9} {'max |diff|':>11}")
    total_fast = total_slow = 0.0
    results = {}
    for metric in TIMED:

        def warm() -> None:
            _metric_call(slow, metric, warm_out, warm_gold)()
            _metric_call(fast, metric, warm_out, warm_gold)()

        fast_s, slow_s, fast_values, slow_values = compare(
            _metric_call(fast, metric, outputs[:n], golds[:n]),
            _metric_call(slow, metric, outputs[:n], golds[:n]),
            args.repeats,
            warm,
            fast.clear_caches,
        )
        diff = max(abs(a - b) for a, b in zip(fast_values, slow_values) if a == a and b == b)
        total_fast, total_slow = total_fast + fast_s, total_slow + slow_s
        results[metric] = fast_values
        print(f"{metric:<6} {n / fast_s:>13.2f} {n / slow_s:>10.2f} {slow_s / fast_s:>8.1f}x {diff:>11.2e}")
    print(
        f"{'ARIA':<6} {n / total_fast:>13.2f} {n / total_slow:>10.2f} {total_slow / total_fast:>8.1f}x"
        f"   (M2+M3+M4+M6; M1, M5: no offline weights)"
    )

    print("\nwhole batched scorer (AriaScorer.score, empty caches, one run each):")
    for size in sizes:
        fast.clear_caches()
        start = time.perf_counter()
        fast.score(outputs[:size], golds[:size], choices[:size])
        seconds = time.perf_counter() - start
        print(f"  {size:>5} items: {size / seconds:7.2f} CoTs/s ({seconds:.0f} s)")

    lp = AriaScorer(backbones="offline", m3_mode="logprob")
    _metric_call(lp, "M3", warm_out, warm_gold)()
    start = time.perf_counter()
    lp_values = _metric_call(lp, "M3", outputs[:n], golds[:n])()
    lp_s = time.perf_counter() - start
    gen, lpv = np.asarray(results["M3"]), np.asarray(lp_values)
    ok = ~(np.isnan(gen) | np.isnan(lpv))
    from scipy.stats import pearsonr, spearmanr

    print(
        f"\nM3 logprob mode: {n / lp_s:.2f} it/s; per-item correlation with generate mode: "
        f"Pearson {pearsonr(gen[ok], lpv[ok])[0]:.3f}, Spearman {spearmanr(gen[ok], lpv[ok])[0]:.3f} ({ok.sum()} items)"
    )
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
