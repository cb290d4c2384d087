"""Requests/s and client CPU of the served-model adapter (``--adapter openai``) against a local server, beside
a minimal aiohttp client sending the same requests to the same server.

The work: ``--requests`` requests, each one 3 s 16 kHz clip (base64 WAV, 125 kB of JSON) and a short
prompt, built through the runner's factory (``make_adapter("openai", ...)``) as a run builds it and sent as
one batch (the runner's batch is the concurrency). The server answers every request after a fixed
``--delay-s`` (the stand-in for a model's time), so ``concurrency / delay`` requests/s is the ideal.

Servers, each a separate process:
  * ``fast``: an aiohttp server that reads each body and sends a fixed reply (this script, ``--serve``);
  * ``judge``: tests/judge_server.py (stdlib ThreadingHTTPServer; it parses, logs and measures every clip,
    which costs it more CPU than the client spends: at concurrency 32 it is what limits both clients).

Baseline: ``baseline_client`` below, 60 lines of aiohttp: numpy + ``wave`` WAV, base64, ``json.dumps``,
one shared session; no retries, no limiter, no scrubbing. Each round runs the adapter and the baseline
back to back (alternating which goes first); the table gives the median over ``--rounds`` rounds, and the
ratio of the two medians. "CPU ms/request" is this process's CPU time (all threads) / requests: the
client's own work, the server's is in its own process. Needs aiohttp (``pip install aiohttp``); it is
not a dependency of the package.

    python benchmarks/hosted_throughput.py [--requests 256] [--delay-s 0.05] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

REPLY = {
    "id": "bench",
    "object": "chat.completion",
    "created": 0,
    "model": "bench",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "The answer is (A)."}}
    ],
    "usage": {"prompt_tokens": 60, "completion_tokens": 6, "total_tokens": 66},
}


def clip() -> np.ndarray:
    return np.random.default_rng(0).uniform(-0.3, 0.3, 48000).astype(np.float32)


def prompt(i: int) -> str:
    return f"Question {i}: which sound comes first?"


# ------------------------------------------------------------------------------------------ the baseline
def baseline_client(base_url: str, n: int, concurrency: int, samples: np.ndarray) -> list[str]:
    """n requests at ``concurrency`` with aiohttp, the same JSON as the adapter sends; the reply texts."""
    import aiohttp

    def wav(x: np.ndarray, rate: int) -> bytes:
        pcm = (np.clip(x, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(rate)
            out.writeframes(pcm)
        return buffer.getvalue()

    async def one(session: "aiohttp.ClientSession", slots: asyncio.Semaphore, i: int) -> str:
        async with slots:
            data = base64.b64encode(wav(samples, 16000)).decode("ascii")
            content = [
                {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
                {"type": "text", "text": prompt(i)},
            ]
            body = {
                "model": "bench",
                "messages": [{"role": "user", "content": content}],
                "temperature": 0.0,
                "top_p": 1.0,
                "max_tokens": 8,
            }
            async with session.post(
                f"{base_url}/chat/completions",
                data=json.dumps(body),
                headers={"Content-Type": "application/json", "Authorization": "Bearer EMPTY"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as response:
                response.raise_for_status()
                reply = await response.json()
                return reply["choices"][0]["message"]["content"]

    async def run() -> list[str]:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            slots = asyncio.Semaphore(concurrency)
            return list(await asyncio.gather(*(one(session, slots, i) for i in range(n))))

    return asyncio.run(run())


# ------------------------------------------------------------------------------------------ the servers
def serve(port_file: Path, delay_s: float) -> None:
    """The fast server: read the body, wait ``delay_s``, send the fixed reply."""
    from aiohttp import web

    reply = json.dumps(REPLY).encode()

    async def handle(request: "web.BaseRequest") -> "web.Response":
        await request.read()
        await asyncio.sleep(delay_s)
        return web.Response(body=reply, content_type="application/json")

    async def main() -> None:
        runner = web.ServerRunner(web.Server(handle))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = runner.addresses[0][1]
        port_file.with_suffix(".tmp").write_text(str(port))
        port_file.with_suffix(".tmp").rename(port_file)
        await asyncio.Event().wait()

    asyncio.run(main())


@contextmanager
def fast_server(folder: Path, delay_s: float) -> Iterator[str]:
    port_file = folder / "fast-port.txt"
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file), "--delay-s", str(delay_s)])
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the benchmark server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


# ------------------------------------------------------------------------------------------ measuring
def timed(work: Callable[[], int]) -> tuple[float, float, int]:
    """(wall s, this process's CPU s, failures) of one call."""
    started, cpu_started = time.perf_counter(), time.process_time()
    failed = work()
    return time.perf_counter() - started, time.process_time() - cpu_started, failed


class Adapter:
    """The served-model adapter as a run makes it, its connections warmed by one batch."""

    def __init__(self, base_url: str, concurrency: int, n: int):
        from audioreason.inference import AudioInput, DecodingParams, GenerationRequest
        from audioreason.inference.runner import make_adapter

        audio = AudioInput(clip(), 16000, 3.0)
        self.requests = [GenerationRequest(f"k{i}", [{"role": "user", "content": prompt(i)}], audio) for i in range(n)]
        self.decoding = DecodingParams(max_new_tokens=8)
        self.adapter = make_adapter(
            "openai", "bench", base_url=base_url, api_key_env=None, concurrency=concurrency, timeout_s=30.0
        )
        self.adapter.generate(self.requests[:concurrency], self.decoding)

    def __call__(self) -> int:
        return sum(1 for g in self.adapter.generate(self.requests, self.decoding) if not g.ok)

    def close(self) -> None:
        self.adapter.close()


def baseline(base_url: str, concurrency: int, n: int) -> Callable[[], int]:
    samples = clip()
    return lambda: sum(1 for text in baseline_client(base_url, n, concurrency, samples) if text != "The answer is (A).")


def compare(base_url: str, n: int, concurrency: int, rounds: int) -> dict[str, list[tuple[float, float, int]]]:
    adapter = Adapter(base_url, concurrency, n)
    baseline(base_url, concurrency, concurrency)()  # the baseline's imports, outside the timing
    runs: dict[str, list] = {"adapter": [], "aiohttp baseline": []}
    try:
        for k in range(rounds):
            order = [("adapter", adapter), ("aiohttp baseline", baseline(base_url, concurrency, n))]
            for name, work in order if k % 2 == 0 else order[::-1]:
                runs[name].append(timed(work))
    finally:
        adapter.close()
    return runs


def row(label: str, runs: list[tuple[float, float, int]], n: int) -> tuple[str, float, float]:
    rate = statistics.median(n / wall for wall, _, _ in runs)
    cpu = statistics.median(cpu / n * 1000 for _, cpu, _ in runs)
    return label, rate, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--delay-s", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # run as the fast server
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.delay_s)
        return
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        sys.exit("this benchmark needs aiohttp for its server and baseline: pip install aiohttp")
    from judge_server import running_server

    n = args.requests
    print(f"{n} requests (3 s WAV each), server latency {args.delay_s * 1000:.0f} ms, median of {args.rounds} rounds\n")
    print(
        "| server | concurrency | client | requests/s | ideal requests/s | CPU ms/request | "
        "vs baseline requests/s | vs baseline CPU | failed |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    script = {
        "delay_s": args.delay_s,
        "scenarios": {"bench": [{"reply": REPLY["choices"][0]["message"]["content"], "usage": [60, 6]}]},
    }
    with tempfile.TemporaryDirectory() as folder:
        with fast_server(Path(folder), args.delay_s) as fast, running_server(script, Path(folder) / "judge") as judge:
            for server, base_url, levels in (("fast", fast, (1, 8, 32)), ("judge", judge.base_url, (32,))):
                for concurrency in levels:
                    count = n if concurrency > 1 else n // 4  # concurrency 1 at 20 requests/s: fewer
                    runs = compare(base_url, count, concurrency, args.rounds)
                    ours, base = row("adapter", runs["adapter"], count), row("aiohttp", runs["aiohttp baseline"], count)
                    failed = {name: sum(f for _, _, f in r) for name, r in runs.items()}
                    for (label, rate, cpu), fails in ((ours, failed["adapter"]), (base, failed["aiohttp baseline"])):
                        ratios = f"{ours[1] / base[1]:.2f}x | {ours[2] / base[2]:.2f}x" if label == "adapter" else " | "
                        print(
                            f"| {server} | {concurrency} | {label} | {rate:.1f} | {concurrency / args.delay_s:.0f} | "
                            f"{cpu:.2f} | {ratios} | {fails} |",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
