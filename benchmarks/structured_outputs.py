"""Structured outputs on and off, on the same MMAR items and the same server: invalid replies, re-asks and
requests per verdict (MMAR-Rubrics' default mode: one rater per item, a wrong-format reply re-asked with the
validation error up to ``--max-reasks`` times; the gate is skipped, every item is judged).

By default the server is a real `transformers serve` (the pinned transformers) started here on 127.0.0.1 with
the packaged SmolLM2-135M-Instruct (tests/served_model.py); ``--base-url`` and ``--model`` measure another
OpenAI-compatible server instead (vLLM, llama.cpp's server, OpenAI), which may honour ``response_format``.
The order of the two runs alternates per item so neither gets a warmer server. No cache: each run pays.

    .venv/bin/python benchmarks/structured_outputs.py [--items 6] [--max-tokens 160] [--max-reasks 2]
    .venv/bin/python benchmarks/structured_outputs.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct

Columns: verdicts (items judged), valid (a verdict that validated), invalid (items with no valid reply after
the re-asks), invalid replies (every reply that failed validation), re-asks, requests per verdict (requests
sent / items), server-side ("ignored" when the server's log says it dropped response_format), seconds.
"""  # noqa: E501 - a command or table kept whole

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from audioreason.judges import JudgeRequest, JudgeRunner, OpenAICompatibleJudge, SamplingParams  # noqa: E402
from audioreason.scorers.mmar_rubrics.scorer import build_messages, schema_for  # noqa: E402

ITEMS = ROOT / "tests" / "fixtures" / "mmar_subset.jsonl"
IGNORED = "Ignoring unsupported fields in the request: {'response_format'}"


def requests(items):
    return [
        JudgeRequest(str(it["id"]), build_messages(it, it.get("thinking") or "", it["answer"]), schema_for(it))
        for it in items
    ]


def measure(base_url, model, items, structured, args):
    judge = OpenAICompatibleJudge(
        model,
        base_url=base_url,
        api_key_env=args.api_key_env,
        timeout_s=600.0,
        concurrency=args.concurrency,
        structured_outputs=structured,
    )
    runner = JudgeRunner(
        judge, sampling=SamplingParams(temperature=0, seed=42, max_tokens=args.max_tokens), max_reasks=args.max_reasks
    )
    started = time.perf_counter()
    results = runner.run(requests(items))
    seconds = time.perf_counter() - started
    s = runner.stats
    return {
        "structured outputs": "on" if structured else "off",
        "verdicts": s.requests,
        "valid": s.ok,
        "invalid": s.invalid,
        "call failed": s.call_failed,
        "invalid replies": sum(len(r.validation_errors) for r in results),
        "re-asks": s.reasks,
        "requests/verdict": s.calls / max(1, s.requests),
        "seconds": seconds,
        "replies": [r.replies for r in results],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=6, help="MMAR items from tests/fixtures/mmar_subset.jsonl")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--max-reasks", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--base-url", help="an OpenAI-compatible server (default: start transformers serve here)")
    parser.add_argument("--model", help="the model name the server expects (with --base-url)")
    parser.add_argument("--api-key-env", default=None, help="variable holding the key (default: no key)")
    parser.add_argument("--json", type=Path, help="also write the rows (with every reply) here")
    args = parser.parse_args()
    items = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line.strip()][: args.items]
    if args.base_url:
        if not args.model:
            parser.error("--base-url needs --model")
        rows, server_note = run_both(args.base_url, args.model, items, args), "not read (external server)"
    else:
        from served_model import served_smollm2

        with tempfile.TemporaryDirectory() as logs, served_smollm2(Path(logs)) as server:
            rows = run_both(server.base_url, server.model, items, args)
            server_note = "ignored (its log: response_format dropped)" if IGNORED in server.log_text() else "used"
            print(f"server: transformers serve, {Path(server.model).name}, ready in {server.start_s[0]:.0f} s")
    print(
        f"{len(items)} MMAR items, max_tokens {args.max_tokens}, max_reasks {args.max_reasks}, "
        f"response_format on the server: {server_note}"
    )
    same = rows[0]["replies"] == rows[1]["replies"]
    columns = [
        "structured outputs",
        "verdicts",
        "valid",
        "invalid",
        "call failed",
        "invalid replies",
        "re-asks",
        "requests/verdict",
        "seconds",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(f"{row[c]:.2f}" if isinstance(row[c], float) else str(row[c]) for c in columns) + " |")
    print(f"replies identical with and without response_format: {same}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


SUMMED = ("verdicts", "valid", "invalid", "call failed", "invalid replies", "re-asks", "seconds", "calls")


def run_both(base_url, model, items, args):
    """Both settings on each item, alternating which goes first; counts summed over the items."""
    totals = {
        flag: dict({k: 0 for k in SUMMED}, replies=[], **{"structured outputs": "on" if flag else "off"})
        for flag in (False, True)
    }
    for n, item in enumerate(items):
        for structured in (False, True) if n % 2 == 0 else (True, False):
            row = measure(base_url, model, [item], structured, args)
            row["calls"] = row["requests/verdict"] * row["verdicts"]
            total = totals[structured]
            for key in SUMMED:
                total[key] += row[key]
            total["replies"] += row["replies"]
    for total in totals.values():
        total["requests/verdict"] = total["calls"] / max(1, total["verdicts"])
    return [totals[False], totals[True]]


if __name__ == "__main__":
    main()
