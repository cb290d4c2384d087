"""ARIA speed: the batched, cached scorer against a straightforward one-item-at-a-time loop.

Both run the same offline backbones (MiniLM, SmolLM2-135M, GloVe; CLAP and NLI have no offline
weights, so M1 and M5 are not timed) on the same items: four-slot CoTs built from MMAR's gold
reasoning (`thinking`) and cues. Prints, per metric, items per second for each path, the speed-up, the
largest per-item difference between the paths, then peak memory and how M3's logprob mode correlates
with the paper's generate mode.

    .venv/bin/python benchmarks/aria.py [--items 200] [--mmar tests/data/MMAR-meta.jsonl]
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import time
from pathlib import Path

import numpy as np

from audioreason.aria import AriaScorer
from audioreason.cot import parse_cot

TIMED = {"M2": "_m2", "M3": "_m3", "M4": "_m4", "M6": "_m6"}


def build_items(mmar: Path, n: int) -> tuple[list[str], list[str]]:
    """(CoT outputs, gold answers): Perception = cues + first sentence, Analysis = middle, Reasoning = last."""
    rows = [json.loads(line) for line in mmar.read_text("utf-8").splitlines() if line.strip()]
    outputs, golds = [], []
    for row in rows:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", row["thinking"]) if s.strip()]
        if len(sentences) < 3:  # a short gold CoT: three runs of words instead of sentences
            words = row["thinking"].split()
            if len(words) < 6:
                continue
            third = len(words) // 3
            sentences = [" ".join(words[:third]), " ".join(words[third:2 * third]), " ".join(words[2 * third:])]
        mid = len(sentences) // 2
        outputs.append(f"[PERCEPTION]\nEntities: {', '.join(row['cue'])}\nDescription: {sentences[0]}\n"
                       f"[ANALYSIS]\n{' '.join(sentences[1:mid + 1])}\n[REASONING]\n{' '.join(sentences[mid + 1:])}\n"
                       f"[ANSWER]\n{row['answer']}")
        golds.append(row["answer"])
        if len(outputs) == n:
            break
    return outputs, golds


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--mmar", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data" / "MMAR-meta.jsonl")
    args = parser.parse_args()
    outputs, golds = build_items(args.mmar, args.items)
    parsed = [parse_cot(o) for o in outputs]
    n = len(outputs)

    fast, slow = AriaScorer(backbones="offline"), AriaScorer(backbones="offline", batched=False)
    for role in ("embedder", "lm", "vectors"):  # load once, outside the timings
        fast.backend(role)
    print(f"ARIA benchmark: {n} MMAR-derived CoTs, offline backbones; models loaded, peak RSS {peak_rss_mb():.0f} MB\n")

    def run(scorer, metric):
        counts = {k: 0 for k in ("m2_items_missing_slot", "m3_retries", "m3_unparsed_slots",
                                 "m4_truncated_items", "m6_words", "m6_words_without_vector",
                                 "m6_items_without_words")}
        args_for = {"M2": (parsed, counts), "M3": (parsed, counts), "M4": (parsed, golds, counts),
                    "M6": (outputs, counts)}[metric]
        start = time.perf_counter()
        values = getattr(scorer, TIMED[metric])(*args_for)
        return values, time.perf_counter() - start

    print(f"{'metric':<6} {'batched it/s':>13} {'loop it/s':>10} {'speed-up':>9} {'max |diff|':>11}")
    total_fast = total_slow = 0.0
    results = {}
    for metric in TIMED:
        slow_values, slow_s = run(slow, metric)
        fast_values, fast_s = run(fast, metric)  # caches start empty: each text is computed once here
        diff = max(abs(a - b) for a, b in zip(fast_values, slow_values) if a == a and b == b)
        total_fast, total_slow = total_fast + fast_s, total_slow + slow_s
        results[metric] = fast_values
        print(f"{metric:<6} {n / fast_s:>13.2f} {n / slow_s:>10.2f} {slow_s / fast_s:>8.1f}x {diff:>11.2e}")
    print(f"{'ARIA':<6} {n / total_fast:>13.2f} {n / total_slow:>10.2f} {total_slow / total_fast:>8.1f}x"
          f"   (M2+M3+M4+M6; M1, M5: no offline weights)")

    lp = AriaScorer(backbones="offline", m3_mode="logprob")
    lp_values, lp_s = run(lp, "M3")
    g, l = np.asarray(results["M3"]), np.asarray(lp_values)
    ok = ~(np.isnan(g) | np.isnan(l))
    from scipy.stats import pearsonr, spearmanr

    print(f"\nM3 logprob mode: {n / lp_s:.2f} it/s; per-item correlation with generate mode: "
          f"Pearson {pearsonr(g[ok], l[ok])[0]:.3f}, Spearman {spearmanr(g[ok], l[ok])[0]:.3f} ({ok.sum()} items)")
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
