"""Requests/s of the served-model adapter (``--adapter openai``) against a local server at concurrency 1, 8
and 32 on the same work, and the time each request costs outside the server's own time.

The server is tests/judge_server.py (a separate process, stdlib ThreadingHTTPServer) with a fixed artificial
latency per reply (``--delay-s``, the stand-in for a model's time). The work: ``--requests`` requests, each
one 3 s 16 kHz clip (base64 WAV, 96 kB) and a short prompt, built through the runner's factory
(``make_adapter("openai", ...)``) as a run builds it, sent as one batch (the runner's batch is the
concurrency). Per request outside the server: ``concurrency x wall / requests - delay`` (each of the
``concurrency`` slots spends ``wall`` on ``requests / concurrency`` replies): encoding, JSON, HTTP, the
event loop, the server's own parsing; at concurrency 1 it is the whole client and transport cost. The
client's CPU per request (this process's CPU time / requests) says how much of it is the client's own work.

    python benchmarks/hosted_throughput.py [--requests 256] [--delay-s 0.05] [--repeats 3]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from audioreason.inference import AudioInput, DecodingParams, GenerationRequest  # noqa: E402
from audioreason.inference.runner import make_adapter  # noqa: E402
from judge_server import running_server  # noqa: E402


def work(n: int) -> list[GenerationRequest]:
    rng = np.random.default_rng(0)
    clip = AudioInput(rng.uniform(-0.3, 0.3, 48000).astype(np.float32), 16000, 3.0)
    return [GenerationRequest(f"k{i}", [{"role": "user", "content": f"Question {i}: which sound comes first?"}],
                              clip) for i in range(n)]


def measure(base_url: str, concurrency: int, requests: list[GenerationRequest],
            repeats: int) -> tuple[float, float, int]:
    """(best wall seconds over ``repeats``, this process's CPU seconds in that repeat, failures)."""
    adapter = make_adapter("openai", "bench", base_url=base_url, api_key_env=None, concurrency=concurrency,
                           timeout_s=30.0)
    try:
        adapter.generate(requests[:concurrency], DecodingParams(max_new_tokens=8))  # connections warm
        best, cpu, failed = float("inf"), 0.0, 0
        for _ in range(repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            out = adapter.generate(requests, DecodingParams(max_new_tokens=8))
            wall = time.perf_counter() - started
            if wall < best:
                best, cpu = wall, time.process_time() - cpu_started
            failed += sum(1 for g in out if not g.ok)
        return best, cpu, failed
    finally:
        adapter.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--delay-s", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    script = {"delay_s": args.delay_s, "scenarios": {"bench": [{"reply": "The answer is (A).", "usage": [60, 6]}]}}
    requests = work(args.requests)
    with tempfile.TemporaryDirectory() as folder, running_server(script, Path(folder)) as server:
        print(f"{args.requests} requests (3 s WAV each), server latency {args.delay_s * 1000:.0f} ms, "
              f"best of {args.repeats}\n")
        print("| concurrency | wall s | requests/s | ideal requests/s | overhead per request ms | "
              "client CPU per request ms | failed |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for concurrency in (1, 8, 32):
            wall, cpu, failed = measure(server.base_url, concurrency, requests, args.repeats)
            overhead = concurrency * wall / args.requests - args.delay_s
            print(f"| {concurrency} | {wall:.2f} | {args.requests / wall:.1f} | {concurrency / args.delay_s:.1f} | "
                  f"{overhead * 1000:.1f} | {cpu / args.requests * 1000:.1f} | {failed} |")


if __name__ == "__main__":
    main()
