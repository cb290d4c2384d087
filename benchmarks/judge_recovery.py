"""Judge throughput through a burst of timeouts and a burst of 429s, and back: verdicts/s and the client's
concurrency limit per time slice, against a local chat-completions server with a fixed delay.

The server is tests/judge_server.py (a separate process) answering every request after ``--delay`` seconds.
Items are real MMAR items, one rater each, built and validated as in benchmarks/judges.py (HTTP, JSON
extraction, validation against the item's rubric) but without a cache: cache look-ups and claims run in
worker threads and would let some requests reach the client late, blurring the bursts; benchmarks/judges.py
measures the cache path. Three runs of the same items, in the same order:

  * baseline: every request answered after the delay;
  * timeouts: the first request of ``--burst-timeouts`` consecutive items (from item ``--burst-at``) hangs
    past the client's ``--timeout`` (the server answers it later, to nobody); the retry is answered;
  * 429s: the first request of ``--burst-429`` consecutive items gets a 429 (no Retry-After); the retry is
    answered.

The client keeps its defaults (the limit halved by a 429 or 503, never by a timeout; +1/limit per success,
+1 per 5 s without a 429; 20 attempts; backoff 1 s base, full jitter) except ``timeout_s``, shortened so a
hang costs seconds.
A retried request goes to the back of the queue, so the burst's own verdicts come late; "t" is seconds
from the start of the run, "faults" the faulty requests the server received in the slice, "limit" the
lowest concurrency limit sampled in it (every 50 ms).

    .venv/bin/python benchmarks/judge_recovery.py [--items 1000] [--concurrency 16] [--slice 2]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_server import running_server  # noqa: E402
from judges import build_requests, load_items  # noqa: E402  (benchmarks/judges.py)

from audioreason.judges import JudgeRunner, OpenAICompatibleJudge, SamplingParams  # noqa: E402

HANG, THROTTLE = "@@HANG@@", "@@THROTTLE@@"  # words in a burst item's question that the server acts on
SAMPLE_S = 0.05


def server_script(delay: float, timeout: float) -> dict:
    answer = {"reply_from_marker": True}
    first = {
        "by_text": {
            HANG: {"hang_s": timeout + 0.5, "then": answer},
            THROTTLE: {"status": 429, "body": {"error": {"message": "rate limited (scripted)"}}},
        },
        "default": answer,
    }
    return {"delay_s": delay, "scenarios": {"*": [first, answer]}}  # step 0: the first request; then answers


def marked(items: list[dict], marker: str, start: int, count: int) -> list[dict]:
    return [
        dict(item, question=f"{marker} {item['question']}") if start <= k < start + count else item
        for k, item in enumerate(items)
    ]


async def timed_run(base_url: str, requests: list, concurrency: int, timeout: float) -> dict:
    judge = OpenAICompatibleJudge(
        "scripted", base_url=base_url, api_key_env=None, concurrency=concurrency, timeout_s=timeout
    )
    runner = JudgeRunner(judge, sampling=SamplingParams(temperature=0.0, seed=42))
    done_at: list[float] = [math.nan] * len(requests)  # seconds from the start, per request
    limits: list[tuple[float, float]] = []
    started = time.monotonic()
    wall_started = time.time()

    async def judged(k, request):
        result = await runner.ajudge(request)
        done_at[k] = time.monotonic() - started
        return result

    async def sample():
        while True:
            if judge.limiter is not None:
                limits.append((time.monotonic() - started, judge.limiter.limit))
            await asyncio.sleep(SAMPLE_S)

    sampler = asyncio.create_task(sample())
    try:
        results = await asyncio.gather(*(judged(k, r) for k, r in enumerate(requests)))
    finally:
        sampler.cancel()
        await judge.aclose()
    return {
        "elapsed": time.monotonic() - started,
        "wall_started": wall_started,
        "done_at": done_at,
        "limits": limits,
        "ok": sum(r.ok for r in results),
        "stats": runner.stats,
    }


def slices(run: dict, fault_times: list[float], width: float, n_slices: int, concurrency: int) -> list[tuple]:
    rows = []
    for k in range(n_slices):
        lo, hi = k * width, (k + 1) * width
        verdicts = sum(lo <= t < hi for t in run["done_at"])
        sampled = [limit for t, limit in run["limits"] if lo <= t < hi]
        rows.append(
            (
                verdicts / width,
                min(sampled) if sampled else float(concurrency) if lo < run["elapsed"] else None,
                sum(lo <= t < hi for t in fault_times),
            )
        )
    return rows


def rate_between(run: dict, lo: float, hi: float) -> float:
    return sum(lo <= t < hi for t in run["done_at"]) / (hi - lo) if hi > lo else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000, help="at most the items in --mmar")
    parser.add_argument("--burst-at", type=int, default=400, help="index of the first burst item")
    parser.add_argument("--burst-timeouts", type=int, default=64, help="items whose first request hangs")
    parser.add_argument("--burst-429", type=int, default=32, help="items whose first request gets a 429")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the server takes per reply")
    parser.add_argument("--timeout", type=float, default=1.0, help="the client's timeout_s")
    parser.add_argument("--slice", type=float, default=2.0, help="seconds per row")
    parser.add_argument("--mmar", type=Path, default=ROOT / "tests" / "data" / "MMAR-meta.jsonl")
    args = parser.parse_args()
    if not args.mmar.is_file():
        parser.error(f"--mmar {args.mmar}: no such file")
    available = sum(1 for line in args.mmar.read_text("utf-8").splitlines() if line.strip())
    if args.items > available:  # a cycled copy would be the same request, answered with its twin, not judged
        parser.error(f"--items {args.items}: {args.mmar.name} holds {available} items")
    items = load_items(args.mmar, args.items)
    scenarios = [
        ("baseline", items),
        ("timeouts", marked(items, HANG, args.burst_at, args.burst_timeouts)),
        ("429s", marked(items, THROTTLE, args.burst_at, args.burst_429)),
    ]
    runs = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(server_script(args.delay, args.timeout), Path(tmp) / "server") as server,
    ):
        for name, scenario_items in scenarios:
            seen = len(server.requests())
            run = asyncio.run(
                timed_run(server.base_url, build_requests(scenario_items, 1), args.concurrency, args.timeout)
            )
            marker = {"timeouts": HANG, "429s": THROTTLE}.get(name)
            run["faults"] = sorted(
                r["t"] - run["wall_started"]
                for r in server.requests()[seen:]
                if marker and r["step"] == 0 and marker in str(r["messages"][-1]["content"])
            )
            runs[name] = run

    n_slices = math.ceil(max(run["elapsed"] for run in runs.values()) / args.slice)
    table = {
        name: slices(run, run.get("faults", []), args.slice, n_slices, args.concurrency) for name, run in runs.items()
    }
    print(
        f"server: {args.delay * 1000:.0f} ms per reply; client: concurrency {args.concurrency}, timeout_s "
        f"{args.timeout:g}; {args.items} MMAR items x 1 rater; burst from item {args.burst_at}: "
        f"{args.burst_timeouts} hangs / {args.burst_429} 429s (first request of each)"
    )
    print(
        f"{'t (s)':>9} | {'baseline':>8} | {'timeouts: v/s':>13} {'limit':>5} {'faults':>6} | "
        f"{'429s: v/s':>9} {'limit':>5} {'faults':>6}"
    )

    def cell(row, width_rate, with_limit=True):
        rate, limit, faults = row
        if limit is None:
            return f"{'':>{width_rate}} {'':>5} {'':>6}" if with_limit else f"{'':>{width_rate}}"
        return f"{rate:>{width_rate}.1f} {limit:>5.1f} {faults or '':>6}" if with_limit else f"{rate:>{width_rate}.1f}"

    for k in range(n_slices):
        t = f"{k * args.slice:g}-{(k + 1) * args.slice:g}"
        print(
            f"{t:>9} | {cell(table['baseline'][k], 8, False)} | {cell(table['timeouts'][k], 13)} | "
            f"{cell(table['429s'][k], 9)}"
        )
    base = runs["baseline"]
    print(
        f"{'total':>9} | {base['elapsed']:>7.1f}s | {runs['timeouts']['elapsed']:>12.1f}s {'':>12} | "
        f"{runs['429s']['elapsed']:>8.1f}s"
    )
    for name in ("timeouts", "429s"):
        run, stats = runs[name], runs[name]["stats"]
        first, last = run["faults"][0], run["faults"][-1]
        before = rate_between(run, 0.0, first)
        # after: from the first slice boundary past the last fault to the last verdict of an item outside the
        # burst (the burst's retries queue behind every item; they come last)
        resume = math.ceil(last / args.slice) * args.slice
        burst = range(args.burst_at, args.burst_at + (args.burst_timeouts if name == "timeouts" else args.burst_429))
        others_done = max(t for k, t in enumerate(run["done_at"]) if k not in burst)
        after = rate_between(run, resume, others_done)
        back = next(
            (
                lo + args.slice
                for lo in (resume + k * args.slice for k in range(n_slices))
                if lo + args.slice <= others_done and rate_between(run, lo, lo + args.slice) >= 0.9 * before
            ),
            math.nan,
        )
        print(
            f"{name}: {run['ok']}/{len(run['done_at'])} verdicts; {stats.timeouts} timeouts, {stats.rate_limited} "
            f"429s, {stats.retries} retries; faults from {first:.1f} s to {last:.1f} s; {before:.1f} verdicts/s "
            f"before, {after:.1f} after (from {resume:g} s), back to 90% by {back:g} s; "
            f"lowest limit {min(limit for _, limit in run['limits']):g}; "
            f"total {run['elapsed']:.1f} s vs {base['elapsed']:.1f} s without the burst "
            f"(+{run['elapsed'] - base['elapsed']:.1f} s)"
        )


if __name__ == "__main__":
    main()
