"""`audioreason construct RECORDINGS --out BENCH`: an AudioSpan-style benchmark built from long recordings
(``audioreason.construct``; AudioSpan, arXiv:2608.26431, §4). `--demo` builds one offline from synthesized
audio, then runs the offline cascade on it and scores it."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from audioreason.base.errors import UsageError
from audioreason.cli.quiet import quiet as _quiet


def _specs(args: argparse.Namespace) -> dict[str, Any]:
    from audioreason.construct.roles import load_roles, offline_roles

    if args.offline == bool(args.roles):
        raise UsageError("name the models with --roles ROLES.yaml, or run every role here with --offline")
    return offline_roles(args.offline_model) if args.offline else load_roles(args.roles)


def _settings(args: argparse.Namespace) -> Any:
    from audioreason.construct.pipeline import Settings

    return Settings(
        per_level=args.per_level,
        rollouts=args.rollouts,
        paths=tuple(p.strip() for p in args.paths.split(",") if p.strip()),
        concurrency=args.concurrency,
        limit_recordings=args.limit_recordings,
        max_cost=args.max_cost,
        event_clips=args.event_clips,
        language=args.language,
    )


def run_construction(recordings: Path, bench: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Check everything a construction needs before any work, run it, print its tables; the record."""
    from audioreason.construct.pipeline import Construction

    settings = _settings(args)
    specs = _specs(args)
    prices = None
    if args.prices:
        from audioreason.inference.hosted import load_prices

        try:
            prices = load_prices(args.prices)
        except ValueError as err:
            raise UsageError(str(err)) from None
    if args.event_clips and not Path(args.event_clips).is_dir():
        raise UsageError(f"--event-clips {args.event_clips!r} is not a folder")
    from audioreason.construct.calls import BudgetExceeded
    from audioreason.judges.base import JudgeUnavailable

    # Calls checks every endpoint's key first: a missing one is a UsageError before anything is written.
    construction = Construction(recordings, bench, specs, settings, prices=prices, progress=not args.no_progress)
    try:
        record = asyncio.run(construction.run())
    except JudgeUnavailable as err:  # a role's first request refused (401/403/404) or no connection
        raise UsageError(
            f"{err} (a configuration error: fix ROLES.yaml and run the command again; the replies already "
            "received are kept)"
        ) from None
    except BudgetExceeded as err:  # --max-cost reached: the message says how to continue
        raise UsageError(str(err)) from None
    print_summary(record, bench)
    return record


def print_summary(record: dict[str, Any], bench: Path) -> None:
    from audioreason.construct.gates import format_gate_table

    counts = record["recording_counts"]
    print(f"recordings: {counts['done']} built, {counts['skipped']} skipped, {counts['failed']} failed")
    for entry in record["recordings"]:
        if entry.get("status") in ("skipped", "failed"):
            print(f"  {entry['id']}: {entry['status']}: {entry.get('reason')}")
    for pipeline, c in record["counts"].items():
        if c["candidates"]:
            print(f"{pipeline}: {c['candidates']} candidates, {c['kept']} kept, {c['items']} items")
    for pipeline, table in record["gate_table"].items():
        print(f"\ngate table ({pipeline}):")
        print(format_gate_table(table))
    failures = record["call_failures"]
    if failures:
        print(f"\n{len(failures)} model calls failed or never fitted their schema (listed in construction.json)")
    if record["offline_stand_ins"]:
        print(f"offline stand-ins (no audio-language model): {', '.join(record['offline_stand_ins'])}")
    session = record["sessions"][-1]
    made = ", ".join(f"{role} {n}" for role, n in session["calls_made"].items())
    print(f"\nmodel calls made in this session: {made} ({sum(session['calls_made'].values())} in all)")
    cost = session["cost"]
    if any(v for v in cost["by_role"].values()):
        print(f"cost of this session: {cost['total']:.4f} {cost['currency']}")
    print(
        f"benchmark: {bench} (the AudioSpan builder loads it; review it item by item with "
        f"`python spaces/construction_review/app.py {bench}`: decisions go to review.jsonl)"
    )


def demo_command(args: argparse.Namespace) -> int:
    if args.recordings is not None or args.roles:
        raise UsageError("--demo builds from its own synthesized recording, offline: give no RECORDINGS or --roles")
    workdir = Path(args.out or Path.home() / ".cache" / "audioreason" / "construct-demo").expanduser()
    if workdir.exists() and not workdir.is_dir():
        raise UsageError(f"--out {str(workdir)!r} is a file; give a folder")
    _quiet()
    from audioreason.apps.construct_demo import run_construct_demo
    from audioreason.evaluation.table import format_table, result_rows

    result = run_construct_demo(
        workdir,
        progress=not args.no_progress,
        per_level=args.per_level,
        rollouts=args.rollouts,
        text_model=args.offline_model,
    )
    print(f"audioreason construct --demo: {result['recording']}\n")
    print_summary(result["construction"], Path(result["bench"]))
    if result["results"] is None:
        print("\nno item survived the gates, so there is nothing to run the cascade on")
        return 0
    print("\nthe offline cascade on the built benchmark:")
    print(format_table(result_rows(result["results"])))
    print(
        "\nEvery role ran here: a packaged 135M-0.5B language model wrote and solved the questions, and signal "
        "measurements stood in for the audio-language models; the numbers show the pipeline working, not a "
        "benchmark's quality."
    )
    return 0


def construct_command(args: argparse.Namespace) -> int:
    if args.demo:
        return demo_command(args)
    if args.recordings is None or args.out is None:
        raise UsageError("give RECORDINGS and --out BENCH (or --demo)")
    run_construction(Path(args.recordings), Path(args.out), args)
    return 0


def add_construct_parser(sub: Any) -> None:
    p = sub.add_parser(
        "construct",
        help="build an AudioSpan-style benchmark from long recordings (captions, questions, gates, critic)",
        description=__doc__,
    )
    p.add_argument("recordings", nargs="?", help="an audio file, or a folder of them (one recording per file)")
    p.add_argument("--out", help="the benchmark folder to write (a rerun continues it)")
    p.add_argument("--roles", help="ROLES.yaml naming the model of every role (see docs/construction.md)")
    p.add_argument("--offline", action="store_true", help="run every role on this machine (packaged models)")
    p.add_argument("--offline-model", help="with --offline: the local model of the text roles (default: chosen)")
    p.add_argument("--per-level", type=int, default=2, help="native candidates per cognitive level per recording")
    p.add_argument("--rollouts", type=int, default=3, help="solver rollouts per level (App. B.4: 3)")
    p.add_argument("--paths", default="native,anchor", help="which pipelines: native, anchor or both")
    p.add_argument("--concurrency", type=int, help="requests in flight per endpoint role (default 8)")
    p.add_argument("--limit-recordings", type=int, help="only the first K recordings by name")
    p.add_argument("--event-clips", help="a folder of event clips for addition anchors (file name = category)")
    p.add_argument("--language", help="the recordings' language, en or zh, recorded for each recording")
    p.add_argument("--prices", help="a prices file (JSON or YAML) for the cost per role")
    p.add_argument("--max-cost", type=float, help="stop sending requests once the construction has cost this much")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--demo", action="store_true", help="offline: synthesize a recording, build, run the cascade, score")
    p.set_defaults(run=construct_command)


__all__ = ["add_construct_parser", "construct_command", "demo_command", "run_construction"]
