"""Judge-layer throughput: verdicts per second against a local chat-completions server with a fixed delay.

The server is tests/judge_server.py (a separate process, stdlib ThreadingHTTPServer) answering every
request after ``--delay`` seconds, at most ``--capacity`` at once (further requests queue, like a busy
inference server). Items are real MMAR items (question, gold answer, gold reasoning, their 5-criterion
rubric; the gold reasoning doubles as the submission), each judged by ``--raters`` raters (rater index =
cache key). The scripted server echoes a valid verdict that the prompt carries after a "REPLY:" marker,
so every verdict goes through the real path: HTTP, JSON extraction, validation against that item's
rubric, and a committed cache write. Each timed run starts with an empty cache, except the last, which
re-runs the largest run on its cache and must make no call.

    .venv/bin/python benchmarks/judges.py [--items 1000] [--serial-items 100] [--concurrency 1 8 32 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from judge_server import running_server  # noqa: E402

from audioreason.judges import (
    JudgeRequest,
    JudgeRunner,
    OpenAICompatibleJudge,
    SamplingParams,  # noqa: E402
    VerdictCache,
    VerdictSchema,
)

SYSTEM = (
    "You are a strict grader of audio reasoning. For each criterion decide whether the submitted reasoning "
    "satisfies it, and reply with a JSON list only."
)


def load_items(mmar: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in mmar.read_text("utf-8").splitlines() if line.strip()]
    if len(rows) < n:  # fewer real items than asked: cycle them under new ids (stated in the table)
        rows = [dict(r, id=f"{r['id']}#{k}") for k in range(n // len(rows) + 1) for r in rows]
    return rows[:n]


def build_requests(items: list[dict], raters: int) -> list[JudgeRequest]:
    requests = []
    for item in items:
        schema = VerdictSchema.from_criteria(item["rubric"])
        criteria = "\n".join(f"- {c['name']}: {c['scoring_point']} Options: {c['choices']}" for c in item["rubric"])
        expected = json.dumps(
            [
                {"name": c["name"], "score": (k + len(item["id"])) % 2, "justification": "scripted"}
                for k, c in enumerate(item["rubric"])
            ]
        )
        user = (
            f"Question: {item['question']}\nChoices: {item['choices']}\nCorrect answer: {item['answer']}\n"
            f"Reference reasoning (for reference only): {item['thinking']}\n\nCriteria:\n{criteria}\n\n"
            f"Submission:\n{item['thinking']}\nThe answer is {item['answer']}.\n\n"
            f"Reply with {schema.format_instructions()}\nREPLY:{expected}"
        )
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
        requests += [JudgeRequest(item["id"], messages, schema, rater) for rater in range(raters)]
    return requests


def timed_run(base_url: str, server, requests: list[JudgeRequest], concurrency: int, cache: VerdictCache) -> dict:
    judge = OpenAICompatibleJudge(
        "scripted", base_url=base_url, api_key_env=None, concurrency=concurrency, timeout_s=30, backoff_base_s=0.05
    )
    runner = JudgeRunner(judge, sampling=SamplingParams(temperature=0.0, seed=42), cache=cache)
    calls_before = len(server.requests())
    started = time.perf_counter()
    results = runner.run(requests)
    elapsed = time.perf_counter() - started
    stats = runner.stats
    errors = {
        k: v
        for k, v in stats.to_dict().items()
        if k in ("rate_limited", "timeouts", "server_errors", "connection_errors", "bad_responses") and v
    }
    return {
        "elapsed": elapsed,
        "calls": len(server.requests()) - calls_before,
        "ok": sum(r.ok for r in results),
        "cached": stats.cache_hits,
        "retries": stats.retries,
        "errors": errors,
        "failed": stats.invalid + stats.call_failed,
        "lowest_limit": judge.limiter.lowest_limit if judge.limiter else float(concurrency),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000, help="items for the concurrent runs and the cached re-run")
    parser.add_argument("--serial-items", type=int, default=100, help="items at concurrency 1 (0.2 s per call)")
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--capacity", type=int, default=32, help="requests the server serves at once")
    parser.add_argument("--mmar", type=Path, default=ROOT / "tests" / "data" / "MMAR-meta.jsonl")
    args = parser.parse_args()
    if not args.mmar.is_file():
        parser.error(f"--mmar {args.mmar}: no such file")
    items = load_items(args.mmar, max(args.items, args.serial_items))
    script = {"delay_s": args.delay, "capacity": args.capacity, "scenarios": {"*": [{"reply_from_marker": True}]}}
    rows = []
    with tempfile.TemporaryDirectory() as tmp, running_server(script, Path(tmp) / "server") as server:
        last_cache = None
        for concurrency in args.concurrency:
            n = args.serial_items if concurrency == 1 else args.items
            cache = VerdictCache(Path(tmp) / f"cache-c{concurrency}.sqlite")
            requests = build_requests(items[:n], args.raters)
            run = timed_run(server.base_url, server, requests, concurrency, cache)
            rows.append((f"c={concurrency}", n, concurrency, len(requests), run))
            if concurrency == 1 or n >= (last_cache[1] if last_cache else 0):
                last_cache = (cache, n)
        cache, n = last_cache
        requests = build_requests(items[:n], args.raters)
        run = timed_run(server.base_url, server, requests, max(args.concurrency), cache)
        rows.append(("cached re-run", n, max(args.concurrency), len(requests), run))
    serial = next((r[4]["ok"] / r[4]["elapsed"] for r in rows if r[2] == 1), None)
    print(
        f"server: {args.delay * 1000:.0f} ms per reply, {args.capacity} at once; {args.raters} raters per item; "
        f"items from {args.mmar.name}"
    )
    print(
        f"{'run':<14} {'items x raters':>14} {'conc.':>5} {'calls':>6} {'ok':>6} {'cached':>6} {'retries':>7} "
        f"{'seconds':>8} {'verdicts/s':>10} {'speed-up':>8} {'ideal/s':>8}"
    )
    for name, n, concurrency, total, run in rows:
        rate = run["ok"] / run["elapsed"]
        ideal = "-" if run["calls"] == 0 else f"{min(concurrency, args.capacity) / args.delay:.1f}"
        speedup = f"{rate / serial:.1f}x" if serial else "-"
        print(
            f"{name:<14} {f'{n} x {args.raters}':>14} {concurrency:>5} {run['calls']:>6} {run['ok']:>6} "
            f"{run['cached']:>6} {run['retries']:>7} {run['elapsed']:>8.2f} {rate:>10.1f} {speedup:>8} {ideal:>8}"
        )
    for name, _, _, _, run in rows:
        if run["errors"] or run["failed"]:
            print(f"{name}: retried errors {run['errors']}, failed verdicts {run['failed']}")
    print(
        "calls: requests the server received; ideal: min(concurrency, capacity) / delay. "
        "Every run validates each verdict and commits it to an SQLite cache (WAL) as it arrives."
    )


if __name__ == "__main__":
    main()
