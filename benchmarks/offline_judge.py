"""The offline judge: invalid replies, re-asks, verdicts/s and peak memory, for SmolLM2-135M and
Qwen2.5-Coder-0.5B (packaged), constrained (llguidance, ``LocalJudge(constrained=True)``) and free, on the
same MMAR items. Prints a table (docs/offline-judge.md shows one).

Items: tests/data/MMAR-meta.jsonl (1000 real MMAR items with their released rubrics), every 14th line from
the first (lines 0, 14, ..., 952: 69 items); ``--n`` takes the first n of those. The submission judged is the
item's own gold chain of thought and gold answer, so every item has a real, fixed text to grade.

Each configuration runs in its own process (``--one``), so its peak resident memory (``ru_maxrss``) is the
judge's own: model load included. Judging is greedy (temperature 0, seed 42), one rater, up to
``--max-reasks`` re-asks with the validation error (the runner's default policy), batches of 4.
verdicts/s counts valid verdicts per second of judging (model load excluded, shown apart). The items are
judged in chunks of ``--chunk`` (12): after each, the configuration's row so far is written to
``$TMPDIR/offline_judge-CONFIG.json``, so a run stopped early keeps what it measured (its ``n`` says how far).

    python benchmarks/offline_judge.py                  # all 4 configurations on the 69 items
    python benchmarks/offline_judge.py --n 8 --configs smollm2-constrained,smollm2-free
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
META = ROOT / "tests" / "data" / "MMAR-meta.jsonl"
MODELS = {"smollm2": "packaged:SmolLM2-135M-Instruct", "qwen0.5b": "packaged:Qwen2.5-Coder-0.5B-Instruct"}
CONFIGS = [f"{m}-{c}" for m in MODELS for c in ("constrained", "free")]
EVERY = 14


def items(n: int) -> list[dict]:
    with open(META, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return rows[::EVERY][:n]


def run_one(
    config: str, n: int, max_reasks: int, justification_chars: int, free_max_tokens: int, chunk: int = 12
) -> dict:
    sys.path.insert(0, str(ROOT))
    from audioreason.judges import JudgeRequest, JudgeRunner, LocalJudge, SamplingParams
    from audioreason.scorers.mmar_rubrics.scorer import build_messages, schema_for

    model, mode = config.rsplit("-", 1)
    started = time.perf_counter()
    judge = LocalJudge(
        MODELS[model],
        constrained=mode == "constrained",
        justification_chars=justification_chars,
        max_new_tokens=free_max_tokens,
        batch_size=4,
    )
    load_s = time.perf_counter() - started
    chosen = items(n)
    requests = [
        JudgeRequest(it["id"], build_messages(it, it["thinking"], it["answer"]), schema_for(it)) for it in chosen
    ]
    runner = JudgeRunner(judge, sampling=SamplingParams(temperature=0.0, seed=42), max_reasks=max_reasks)
    results, judge_s = [], 0.0
    progress = Path(tempfile.gettempdir()) / f"offline_judge-{config}.json"
    for start in range(0, len(requests), chunk):
        started = time.perf_counter()
        results += runner.run(requests[start : start + chunk])
        judge_s += time.perf_counter() - started
        progress.write_text(json.dumps(row(config, judge.name, results, load_s, judge_s)))
    return row(config, judge.name, results, load_s, judge_s)


def row(config: str, judge: str, results: list, load_s: float, judge_s: float) -> dict:
    replies = sum(len(r.replies) for r in results)
    invalid_replies = sum(len(r.validation_errors) for r in results)
    ok = sum(r.ok for r in results)
    return {
        "config": config,
        "judge": judge,
        "n": len(results),
        "replies": replies,
        "invalid_replies": invalid_replies,
        "invalid_rate": invalid_replies / replies if replies else None,
        "reasks": sum(r.reasks for r in results),
        "ok": ok,
        "failed": len(results) - ok,
        "completion_tokens": sum(r.completion_tokens for r in results),
        "load_s": load_s,
        "judge_s": judge_s,
        "verdicts_per_s": ok / judge_s if judge_s else None,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "mean_score": (sum(r.score for r in results if r.ok) / ok) if ok else None,
    }


def table(rows: list[dict]) -> str:
    head = [
        "config",
        "n",
        "replies",
        "invalid replies",
        "re-asks",
        "verdicts ok/failed",
        "verdicts/s",
        "load s",
        "peak RSS GB",
        "mean score",
    ]
    body = [
        [
            r["config"],
            str(r["n"]),
            str(r["replies"]),
            f"{r['invalid_replies']} ({r['invalid_rate']:.1%})",
            str(r["reasks"]),
            f"{r['ok']}/{r['failed']}",
            f"{r['verdicts_per_s']:.3f}",
            f"{r['load_s']:.0f}",
            f"{r['peak_rss_gb']:.2f}",
            "n/a" if r["mean_score"] is None else f"{r['mean_score']:.3f}",
        ]
        if "error" not in r
        else [r["config"], "-", "-", "-", "-", "-", "-", "-", "-", r["error"][:60]]
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(b, widths)) + " |" for b in body]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=69, help="items (the first n of the 69 chosen; default 69)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {CONFIGS}")
    parser.add_argument("--max-reasks", type=int, default=2)
    parser.add_argument(
        "--justification-chars",
        type=int,
        default=48,
        help="longest justification a constrained reply may write (the demo's 48)",
    )
    parser.add_argument(
        "--free-max-tokens",
        type=int,
        default=384,
        help="token budget of unconstrained replies (the constrained budget is about 350 here)",
    )
    parser.add_argument("--chunk", type=int, default=12, help="items judged between progress files (module doc)")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one configuration
    args = parser.parse_args()
    if args.one:
        print(
            json.dumps(
                run_one(args.one, args.n, args.max_reasks, args.justification_chars, args.free_max_tokens, args.chunk)
            )
        )
        return 0
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}; choose from {CONFIGS}")
    rows = []
    for config in configs:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                config,
                "--n",
                str(args.n),
                "--max-reasks",
                str(args.max_reasks),
                "--justification-chars",
                str(args.justification_chars),
                "--free-max-tokens",
                str(args.free_max_tokens),
                "--chunk",
                str(args.chunk),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        if proc.returncode:
            rows.append({"config": config, "error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"})
        else:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"{config}: done", file=sys.stderr, flush=True)
        if args.json:  # after each configuration: a long run interrupted keeps what it measured
            Path(args.json).write_text(json.dumps(rows, indent=2))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
