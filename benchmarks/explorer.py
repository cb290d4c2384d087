"""The explorer's `open_runs` on large scored runs: seconds to open a run of N items (2,000 to 300,000).

Work: a scored run folder written here for each size (run.json, outputs.jsonl, results.json and items.jsonl
in the schema `audioreason run` and `audioreason score` write; no benchmark items, so no audio is read),
one set (one model, condition full, template plain), each item scored by one extraction rule with the
official scorer's verdict beside it. Two benchmarks per size: ``mmar`` (the explorer knows its rule, the
official scorer) and ``custom`` (a benchmark it does not know: its one rule is found in items.jsonl). The time
is ``runs.open_runs([folder])``, which reads the four files and builds the leaderboard, the item table and
the filters' values once (as the explorer Space does when a run is opened); writing the files is not timed.

    python benchmarks/explorer.py [--items 2000,8000,32000,300000] [--benchmarks mmar,custom] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
MODEL, RULE = "bench-model", "official_slot"
CHOICES = ["a dog", "a cat", "a bird", "a car"]


def write_run(folder: Path, n: int, benchmark: str) -> None:
    """A scored run of ``n`` items: the model is right on every third item."""
    folder.mkdir(parents=True)
    template = {"name": "plain", "hash": "0123abcd"}
    correct = 0
    with (
        open(folder / "outputs.jsonl", "w", encoding="utf-8") as outputs,
        open(folder / "items.jsonl", "w", encoding="utf-8") as items,
    ):
        for i in range(n):
            item_id, right = f"item-{i:06d}", i % 3 == 0
            correct += right
            key = json.dumps([MODEL, "full", "plain@0123abcd", item_id])
            choice = CHOICES[0] if right else CHOICES[1 + i % 3]
            outputs.write(
                json.dumps(
                    {
                        "key": key,
                        "id": item_id,
                        "index": i,
                        "model": MODEL,
                        "adapter": "bench",
                        "condition": "full",
                        "template": template,
                        "output": f"Answer: {choice}",
                        "error": None,
                    }
                )
                + "\n"
            )
            items.write(
                json.dumps(
                    {
                        "key": key,
                        "id": item_id,
                        "model": MODEL,
                        "condition": "full",
                        "template": "plain",
                        "failed": False,
                        "accuracy": {
                            RULE: {
                                "choice": choice,
                                "method": "exact",
                                "correct": right,
                                "official_scorer_correct": right,
                            }
                        },
                    }
                )
                + "\n"
            )
    entry = {
        "model": MODEL,
        "condition": "full",
        "template": "plain",
        "template_hash": template["hash"],
        "missing": 0,
        "rule": RULE,
        "rule_description": "the official string match on the Answer slot",
        "accuracy": correct / n,
        "official_scorer_accuracy": correct / n,
        "n": n,
        "correct": correct,
        "unanswered": 0,
        "failed": 0,
    }
    run = {"model": MODEL, "benchmark": benchmark, "status": "finished"}
    (folder / "run.json").write_text(json.dumps({"config": {"model": MODEL, "benchmark": benchmark}}), "utf-8")
    (folder / "results.json").write_text(
        json.dumps(
            {
                "run": run,
                "scale": "0-1",
                "sets": [{"model": MODEL, "condition": "full", "template": "plain", "n": n, "failed": 0}],
                "scorers": {"accuracy": {"status": "ok", "results": [entry]}},
            }
        ),
        "utf-8",
    )


def timed_open(folder: Path) -> float:
    from audioreason.report import runs

    start = time.perf_counter()
    views, errors = runs.open_runs([folder])
    seconds = time.perf_counter() - start
    if errors or len(views) != 1:
        raise SystemExit(f"{folder}: did not open: {errors}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="2000,8000,32000,300000", help="run sizes, comma-separated")
    parser.add_argument("--benchmarks", default="mmar,custom", help="benchmark names, comma-separated")
    parser.add_argument("--keep", help="write the run folders here (default: a temporary folder, removed)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.items.split(",")]
    benchmarks = args.benchmarks.split(",")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    try:
        print(f"{'items':>8}  " + "  ".join(f"{b + ' s':>10}" for b in benchmarks) + "  per 1,000 items")
        for n in sizes:
            seconds = []
            for benchmark in benchmarks:
                folder = work / f"{benchmark}-{n}"
                write_run(folder, n, benchmark)
                seconds.append(timed_open(folder))
                if not args.keep:
                    shutil.rmtree(folder)
            per = "  ".join(f"{1000 * s / n:.3f}" for s in seconds)
            print(f"{n:>8}  " + "  ".join(f"{s:>10.2f}" for s in seconds) + f"  {per}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
