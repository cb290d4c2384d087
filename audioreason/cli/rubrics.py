"""`audioreason rubrics generate`: MMAR-Rubrics instance-level criteria written from each item's gold chain of
thought (``mmar_rubrics.generation.generate_rubrics``) by the constrained offline judge, one JSON line per item.

    audioreason rubrics generate tests/data/MMAR-meta.jsonl --n 2 -k 5 -o rubrics.jsonl

Each line: ``id``, ``status`` (ok | invalid | call_failed), ``rubric`` (MMAR's schema: name, scoring_point,
note, choices [0, 1]; validated like any criterion set), ``error``, ``calls``, ``replies``, ``judge`` (the
judge's metadata: model and constraint) and ``released_rubric`` (the item's own, when it has one), so the
two can be compared. Items are MMAR metadata lines (``question``, ``choices``, ``answer``, ``thinking``); a
file with an item lacking its question, answer or gold CoT (``thinking``) is refused, naming the items, and
nothing is written: criteria are written from the reference reasoning, never invented without one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def add_rubrics_parser(sub: Any) -> None:
    rubrics = sub.add_parser("rubrics", help="MMAR-Rubrics: write instance-level criteria from the gold CoT")
    commands = rubrics.add_subparsers(dest="rubrics_command", required=True)
    generate = commands.add_parser("generate", help="criteria for each item, by the constrained offline judge")
    generate.add_argument("items", help="MMAR metadata as JSON Lines (question, choices, answer, thinking)")
    generate.add_argument("-o", "--out", required=True, help="write one JSON line per item here")
    generate.add_argument("-k", type=int, default=5, help="criteria per item (MMAR's released rubrics have 5)")
    generate.add_argument("--n", type=int, help="only the first N items")
    generate.add_argument(
        "--judge-model",
        default="offline",
        help="offline (Qwen2.5-Coder-0.5B where it fits, else SmolLM2-135M) or offline:SPEC "
        "(e.g. offline:packaged:SmolLM2-135M-Instruct)",
    )
    generate.add_argument(
        "--max-reasks",
        type=int,
        default=2,
        help="times an invalid criterion set is asked again (default 2; each counted)",
    )
    generate.set_defaults(run=run_generate)


def run_generate(args: Any) -> int:
    from audioreason.base.errors import DataError, UsageError
    from audioreason.base.jsonl import read_json_lines
    from audioreason.cli.quiet import quiet as _quiet

    if args.k < 1 or (args.n is not None and args.n < 1) or args.max_reasks < 0:
        raise UsageError("-k and --n must be at least 1, --max-reasks at least 0")
    if args.judge_model != "offline" and not args.judge_model.startswith("offline:"):
        raise UsageError(
            f"--judge-model {args.judge_model!r}: rubric generation runs the offline judge (offline or offline:SPEC)"
        )
    path = Path(args.items)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    items = list(read_json_lines(path))[: args.n]
    from audioreason.scorers.mmar_rubrics.generation import check_rubric_sources, generate_rubrics

    try:  # before the judge loads; nothing is written
        check_rubric_sources(items)
    except ValueError as err:
        raise DataError(f"{path}: {err}") from None
    _quiet()
    from audioreason.judges import offline_judge
    from audioreason.judges.base import judge_metadata

    judge = offline_judge(args.judge_model.split(":", 1)[1] if ":" in args.judge_model else None)
    meta = judge_metadata(judge)
    results = generate_rubrics(items, judge, k=args.k, max_reasks=args.max_reasks)
    with open(args.out, "w", encoding="utf-8") as f:
        for item, result in zip(items, results):
            f.write(
                json.dumps({**result, "judge": meta, "released_rubric": item.get("rubric")}, ensure_ascii=False) + "\n"
            )
    ok = sum(r["status"] == "ok" for r in results)
    print(
        f"{ok} of {len(results)} rubrics valid ({meta['model']}, constrained: {meta['constraint']}); wrote {args.out}"
    )
    return 0 if ok == len(results) else 1
