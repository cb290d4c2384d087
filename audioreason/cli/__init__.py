"""Command line: `audioreason demo` (the README's main job), `audioreason run`, `score` and `evaluate` (a model
over a benchmark, its outputs scored: audioreason.cli.run), `audioreason prompt` and
`audioreason anchor` (make, apply, verify and question: AudioSpan anchored audio from manifests).
Layer 12, the top (ARCHITECTURE.md): it may import every layer; nothing inside the package imports it."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional, Sequence

from audioreason.base.errors import DataError, UsageError, describe_error
from audioreason.base.jsonl import DataFileError
from audioreason.cli.quiet import quiet as _quiet


def _default_workdir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "audioreason" / "demo"


def _check_demo_paths(args: argparse.Namespace) -> None:
    """Refuse, before any work, a workdir that is a file and a --json target whose folder is missing."""
    workdir = Path(args.workdir).expanduser()
    if workdir.exists() and not workdir.is_dir():
        raise UsageError(f"--workdir {str(workdir)!r} is a file; give a folder (it is created if missing)")
    if args.json:
        target = Path(args.json).expanduser()
        if target.is_dir():
            raise UsageError(f"--json {str(target)!r} is a folder; give a file path")
        if not target.parent.is_dir():
            raise UsageError(f"--json {str(target)!r}: the folder {str(target.parent)!r} does not exist")


def _compare(args: argparse.Namespace) -> int:
    from audioreason.analysis.compare import compare_runs, format_comparison
    from audioreason.analysis.uncertainty import UncertaintyOptions
    from audioreason.evaluation.score import run_folder_file

    runs = (("RUN_A", args.run_a), ("RUN_B", args.run_b))
    if args.out and Path(args.out).expanduser().is_dir():
        raise UsageError(f"--out {args.out!r} is a folder; give a JSON file path")
    judges = _judge_folders(args)
    if judges:
        runs = (("RUN", args.run_a), ("A", judges[0]), ("B", judges[1]))
    for label, folder in runs:  # the comparison never goes over what a run folder's own machinery reads or writes
        own = run_folder_file(args.out, folder) if args.out else None
        if own:
            raise UsageError(f"--out {args.out!r} is {own} of {label} ({folder}), a run folder's own file; write the "
                             "comparison elsewhere")
    notes = [note for note in (_live_run_note(label, folder) for label, folder in runs) if note]
    try:
        options = UncertaintyOptions(confidence=args.confidence, resamples=args.resamples, seed=args.seed)
        if judges:
            from audioreason.analysis.judge_swap import format_judge_swap, judge_swap

            comparison = judge_swap(args.run_a, *judges, options, allow_protocol_diff=args.allow_protocol_diff)
            text = "\n".join([*(f"note: {n}" for n in notes), format_judge_swap(comparison)])
        else:
            comparison = compare_runs(args.run_a, args.run_b, options, notes,
                                      allow_protocol_diff=args.allow_protocol_diff)
            text = format_comparison(comparison)
    except DataFileError:  # a damaged results.json or items.jsonl: a data error, exit status 1 (main)
        raise
    except ValueError as err:  # not a scored run, two benchmarks, no shared item, a bad option
        raise UsageError(str(err)) from None
    print(text)
    if args.out:
        Path(args.out).expanduser().write_text(json.dumps(comparison, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"\ncomparison: {args.out}")
    return 0


def _live_run_note(label: str, folder: Any) -> Optional[str]:
    """A note when a run may still be writing ``folder`` (its lock is held): its scores may be older than its
    outputs. Names the holder by pid, host and start (never its command line, which may carry a URL's password)."""
    from audioreason.inference.processes import RunLock

    path = Path(folder).expanduser()
    holder = RunLock(path.parent if path.is_file() else path).live_holder()
    if holder is None:
        return None
    return (f"{label} ({folder}) is held by a run that may still be writing it (pid {holder.get('pid')} on host "
            f"{holder.get('host')!r}, started {holder.get('started')}): its results.json may not cover the outputs "
            "written since; compare again after that run has finished and the folder is scored again")


def _judge_folders(args: argparse.Namespace) -> list[str]:
    """`compare RUN --judges A,B`: the two results folders ([] for `compare RUN_A RUN_B`)."""
    from audioreason.cli.score_args import comma_list

    if args.judges is None:
        if args.run_b is None:
            raise UsageError("give two scored runs (RUN_A RUN_B), or one run and its two scorings (RUN --judges A,B)")
        return []
    folders = comma_list(args.judges)
    if args.run_b is not None or len(folders) != 2:
        raise UsageError(f"--judges {args.judges!r}: give RUN alone and two results folders of it, --judges A,B "
                         "(audioreason score RUN --out A --judge-model X, then --out B --judge-model Y)")
    return folders


def _add_compare_parser(sub: Any) -> None:
    compare = sub.add_parser("compare", help="two scored runs on their shared items: paired differences, McNemar, "
                                             "flipped items",
                             description="Compare two `audioreason score` run folders item by item (see "
                                         "docs/scoring.md, Comparing runs).")
    compare.add_argument("run_a", metavar="RUN_A", help="a scored run folder (results.json, items.jsonl); with "
                                                        "--judges, the run folder both judges scored")
    compare.add_argument("run_b", metavar="RUN_B", nargs="?",
                         help="another scored run folder of the same benchmark (not with --judges)")
    compare.add_argument("--judges", metavar="A,B",
                         help="judge against judge: RUN_A is a run folder, A and B two results folders of it scored "
                              "by different judges (score RUN --out A --judge-model X); agreement per item and per "
                              "criterion (Krippendorff's alpha, Cohen's kappa) with bootstrap intervals")
    compare.add_argument("--out", help="also write the comparison (flipped item ids included) to this JSON file "
                         "(refused inside a compared folder under a name of the run folder's own files)")
    compare.add_argument("--confidence", type=float, default=0.95, help="the intervals' level (default 0.95)")
    compare.add_argument("--resamples", type=int, default=2000, help="paired-bootstrap resamples (default 2000)")
    compare.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    compare.add_argument("--allow-protocol-diff", action="store_true",
                         help="compare runs whose protocols (results.json's protocol block) differ; without it they "
                              "are refused, naming the differing fields")
    compare.set_defaults(run=_compare)


def _demo(args: argparse.Namespace) -> int:
    _check_demo_paths(args)
    _quiet()
    from audioreason.apps.demo import format_table, run_demo

    result = run_demo(Path(args.workdir), progress=not args.no_progress)
    print(f"audioreason demo: {result['sample']}\n")
    print(format_table(result["rows"]))
    print("\nvalue = accuracy for answers/accuracy rows, mean metric for aria rows, the named rate or score "
          "elsewhere (n/a: unavailable, reason in the last column); unanswered = outputs from which no choice was "
          "extracted. outputs: the offline cascade's own outputs on the 12 items, or a labelled fixture where the "
          "scorer needs what a 135M model cannot give (several models and conditions, AudioSpan items, a capable "
          "judge).")
    if result["aria"].get("note"):
        print(f"aria: {result['aria']['note']}.")
    print("Offline backbones are substitutes for the paper's (ARIA: CLAP, all-mpnet-base-v2, "
          "Qwen2.5-1.5B-Instruct, roberta-large-mnli, word2vec-300): these numbers are not the paper's.")
    print(f"Outputs, results.json and items.jsonl: {result['run_folder']}")
    if args.json:
        from audioreason.evaluation.score import json_safe

        payload = {**result, "rows": [asdict(r) for r in result["rows"]]}
        Path(args.json).write_text(json.dumps(json_safe(payload), indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"per-item results written to {args.json}")
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from audioreason.text.cot import build_cot_prompt

    try:
        print(build_cot_prompt(args.question, args.choices))
    except ValueError as err:
        raise UsageError(str(err)) from None
    return 0


# ---------------------------------------------------------------------------------------------
# anchor: AudioSpan anchored audio (audioreason.audio.anchor_files)
# ---------------------------------------------------------------------------------------------

ANCHOR_EXIT_CODES = ("exit status: 0 done (verify: every check passed; apply: the file reproduced or made); "
                     "1 a check failed (verify FAILED, apply NOT reproduced: nothing written); 2 a usage error "
                     "(an option that cannot work, a file named here that does not exist); 3 a data error (a "
                     "manifest or audio file that cannot be used: a field out of range, a path leaving its "
                     "folder, a checksum that differs, positions that do not fit, no room to place)")


def _anchor_errors():
    from audioreason.audio.errors import AudioError
    from audioreason.audio.placement import PlacementError

    return (AudioError, PlacementError, ValueError)  # ManifestError is a ValueError


def _existing(**paths: Optional[str]) -> None:
    """UsageError for a file option that names nothing (checked before any work)."""
    for option, path in paths.items():
        if path is not None and not Path(path).is_file():
            raise UsageError(f"{option.replace('_', '-')} {path!r}: no such file")


def _parse_at(text: str) -> list:
    """--at START or START-END (seconds, MM:SS or HH:MM:SS)."""
    from audioreason.text.timestamps import parse_record_span, parse_record_time

    try:
        if "-" in text.strip()[1:]:
            return list(parse_record_span(text))
        return [parse_record_time(text), None]
    except ValueError as err:
        raise UsageError(f"--at {text!r}: {err}") from None


def _rules(pairs: Optional[Sequence[str]]):
    """PlacementRules from --rule NAME=VALUE options."""
    from dataclasses import fields, replace

    from audioreason.audio.placement import PlacementRules

    rules, known = PlacementRules(), {f.name: f.type for f in fields(PlacementRules)}
    for pair in pairs or []:
        name, _, value = pair.partition("=")
        if name not in known or not value:
            raise UsageError(f"--rule {pair!r}: give NAME=VALUE with NAME one of {sorted(known)}")
        try:
            rules = replace(rules, **{name: int(value) if name == "attempts" else float(value)})
        except ValueError:
            raise UsageError(f"--rule {pair!r}: {value!r} is not a number") from None
    return rules


def _relative(path: str, folder: Path) -> str:
    return os.path.relpath(Path(path).resolve(), folder.resolve())


def _anchor_make(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_files import apply_manifest, file_info
    from audioreason.audio.anchor_manifest import new_manifest, write_manifest
    from audioreason.audio.placement import Segment, place_windows, silero_speech

    op = args.operation
    _existing(source=args.source, __clip=args.clip, __segments=args.segments)
    manifest_path = Path(args.manifest or Path(args.output).with_suffix(".json"))
    if not Path(os.path.realpath(args.output)).is_relative_to(os.path.realpath(manifest_path.parent)):
        raise UsageError(f"--manifest {str(manifest_path)!r}: the anchored file {args.output!r} is not inside the "
                         "manifest's folder (apply writes a manifest's output only there)")
    fields = {"recording_id": args.recording_id, "seed": args.seed, "parameters": {}}
    if op == "addition":
        if not args.clip or not args.category:
            raise UsageError("addition needs --clip FILE and --category NAME")
        fields.update(event_category=args.category, snr_db=args.snr_db)
        fields["parameters"]["snr_measure"] = args.measure
    elif op == "deletion":
        fields["deletion_mode"] = args.mode
    elif (args.gain_db is None) == (args.speed is None):
        raise UsageError("modification needs exactly one of --gain-db DB and --speed FACTOR")
    elif args.gain_db is not None:
        fields.update(attribute="loudness", gain_db=args.gain_db)
    else:
        fields.update(attribute="speed", speed_factor=args.speed)
    positions = [_parse_at(a) for a in args.at] if args.at else None
    trial = positions or [[0.0, None if op == "addition" else 1.0]] * args.count  # placement's come later
    try:  # the plan comes from the options: what it refuses is a usage error
        new_manifest(op, trial, paper_ranges=not args.no_paper_ranges, **fields)
    except ValueError as err:
        raise UsageError(str(err)) from None
    try:
        info = file_info(args.source)
        segments = None
        if not positions:
            if args.segments:
                segments = _segments(args.segments, Segment)
            length = None
            if op == "addition":
                from audioreason.audio.io import load_audio

                length = len(load_audio(args.clip, sampling_rate=info.sampling_rate)[0]) / info.sampling_rate
            windows = place_windows(info.frames / info.sampling_rate, args.count, silero_speech(args.source),
                                    seed=args.seed, segments=segments, length=length, rules=_rules(args.rule))
            positions = [[w.start, w.end] for w in windows]
            fields["segments"] = [w.segment for w in windows]
        plan = new_manifest(op, positions, paper_ranges=not args.no_paper_ranges, **fields)
        done = apply_manifest(plan, source=args.source, output=args.output, clip=args.clip)
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    folder = manifest_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    done["source"]["path"] = _relative(args.source, folder)
    done["output"]["path"] = _relative(args.output, folder)
    if done["event_clip"]:
        done["event_clip"]["path"] = _relative(args.clip, folder)
    write_manifest(done, manifest_path)
    print(f"anchored {args.output} ({op}, {len(done['positions'])} positions); manifest {manifest_path}")
    for p in done["positions"]:
        print(f"  {p['original_start']:.3f}-{p['original_end']:.3f} s -> {p['start']:.3f}-{p['end']:.3f} s "
              f"(segment {p['segment']})")
    _warn_clipped(done)
    return 0


def _segments(path: str, segment) -> list:
    """--segments: a JSON list of {id, start, end}; DataError naming the file and entry otherwise."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError("not a JSON list")
    except (ValueError, UnicodeDecodeError) as err:
        raise DataError(f"--segments {path}: {err}") from None
    out = []
    for n, row in enumerate(rows):
        try:
            start, end = float(row["start"]), float(row["end"])
            if not (0 <= start < end < 1e7):
                raise ValueError(f"start {start} and end {end} are not 0 <= start < end")
            out.append(segment(str(row["id"]), start, end))
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(f"--segments {path}: entry {n} needs id, start and end seconds ({err})") from None
    return out


def _warn_clipped(manifest: dict) -> None:
    if manifest["output"]["clipped_samples"]:
        print(f"warning: {manifest['output']['clipped_samples']} samples of the edited spans hit full scale and "
              "were clipped (recorded in the manifest; verify will show the measured change)", file=sys.stderr)


def _anchor_apply(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_files import NotReproduced, apply_manifest
    from audioreason.audio.anchor_manifest import read_manifest, write_manifest

    _existing(manifest=args.manifest, __source=args.source, __clip=args.clip)
    try:
        recorded = read_manifest(args.manifest)
        done = apply_manifest(args.manifest, source=args.source, output=args.output, clip=args.clip)
    except NotReproduced as err:  # the existing file is untouched: the new bytes were written aside
        print(f"NOT reproduced: {err}", file=sys.stderr)
        return 1
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    if args.write_manifest:
        write_manifest(done, args.write_manifest)
    expected = (recorded["output"] or {}).get("sha256")
    _warn_clipped(done)
    if not expected:
        print(f"wrote {done['output']['path']} (sha256 {done['output']['sha256']}); the manifest gave no checksum")
        return 0
    print(f"reproduced {done['output']['path']} bit for bit (sha256 {expected})")
    return 0


def _anchor_verify(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_files import verify_anchored

    _existing(manifest=args.manifest, __anchored=args.anchored, __source=args.source, __clip=args.clip)
    try:
        report = verify_anchored(args.manifest, anchored=args.anchored, source=args.source, clip=args.clip)
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    rows = [("position", "quantity", "expected", "measured", "tolerance", "ok")]
    for c in report["checks"] + report["positions"]:
        rows.append((str(c["position"] or "file"), c["quantity"], _cell(c["expected"]), _cell(c["measured"]),
                     c["tolerance"], "ok" if c["ok"] else "FAIL"))
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    match = report["sha256_match"]
    print(f"sha256 {'matches' if match else 'differs from' if match is False else 'not in'} the manifest")
    for c in report["checks"] + report["positions"]:
        if not c["ok"] and c["detail"]:
            print(f"FAIL: {c['detail']}")
    for note in report["notes"]:
        print(f"note: {note}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print("verified" if report["ok"] else "VERIFY FAILED")
    return 0 if report["ok"] else 1


def _cell(value) -> str:
    """A table cell; a checksum is shown by its first 12 digits (the FAIL line and --json give it whole)."""
    text = str(value)
    return text[:12] + "..." if len(text) == 64 and all(ch in "0123456789abcdef" for ch in text) else text


def _anchor_question(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_questions import perception_item

    _existing(manifest=args.manifest)
    try:
        item = perception_item(args.manifest, seed=args.seed, occurrence=args.occurrence, chain_id=args.chain_id)
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    print(json.dumps(item, ensure_ascii=False))
    return 0


def _add_anchor_commands(sub) -> None:
    anchor = sub.add_parser("anchor", help="AudioSpan anchored audio: make, apply, verify a manifest; its P question",
                            epilog=ANCHOR_EXIT_CODES)
    commands = anchor.add_subparsers(dest="anchor_command", required=True)
    make = commands.add_parser("make", help="place and apply one operation, writing the audio and its manifest",
                               epilog=ANCHOR_EXIT_CODES)
    make.add_argument("source", help="the original recording (.wav or .flac)")
    make.add_argument("output", help="the anchored file (.wav or .flac)")
    make.add_argument("--operation", required=True, choices=("addition", "deletion", "modification"),
                      help="the edit (AudioSpan App. B.3)")
    make.add_argument("--clip", help="addition: the event clip")
    make.add_argument("--category", help="addition: the event's category")
    make.add_argument("--snr-db", type=float, default=8.0, help="addition: SNR in dB (default %(default)s)")
    make.add_argument("--measure", choices=("rms", "lufs"), default="rms", help="addition: SNR level measure")
    make.add_argument("--mode", choices=("silence", "noise"), default="silence", help="deletion mode")
    make.add_argument("--gain-db", type=float, help="modification: loudness change in dB")
    make.add_argument("--speed", type=float, help="modification: playback speed (>1 faster, <1 slower)")
    make.add_argument("--at", action="append", help="a position START or START-END (repeat); default: placement")
    make.add_argument("--count", type=int, default=3, help="positions placed when --at is absent (default 3)")
    make.add_argument("--segments", help="JSON list of {id, start, end} segments for placement")
    make.add_argument("--rule", action="append", help="a placement rule NAME=VALUE (repeat): min_seconds, "
                      "max_seconds, max_fraction, edge_seconds, edge_fraction, min_speech, attempts")
    make.add_argument("--seed", type=int, default=0, help="seed of the placement and of the noise bed "
                      "(default %(default)s; recorded in the manifest)")
    make.add_argument("--recording-id", help="the recording's id in the manifest (default: none)")
    make.add_argument("--manifest", help="where the manifest goes (default: OUTPUT with .json)")
    make.add_argument("--no-paper-ranges", action="store_true", help="allow values outside App. B.3's ranges")
    make.set_defaults(run=_anchor_make)
    apply = commands.add_parser("apply", help="re-create an anchored file from its manifest and the original",
                                description="Re-create an anchored file from its manifest and the original. The "
                                "manifest's output.path must lie inside the manifest's folder. The file is written "
                                "aside and compared with the manifest's sha256 before it replaces anything: a "
                                "file that differs is not written.", epilog=ANCHOR_EXIT_CODES)
    apply.add_argument("manifest", help="the manifest (JSON) of the anchored file")
    for name in ("--source", "--clip", "--output"):
        apply.add_argument(name, help=f"override the manifest's {name[2:]} path")
    apply.add_argument("--write-manifest", help="also write the completed manifest here")
    apply.set_defaults(run=_anchor_apply)
    verify = commands.add_parser("verify", help="check an anchored file against its manifest, per position",
                                 description="Check an anchored file against its manifest and the source: shape, "
                                 "sha256, every sample outside the spans, and per position the measured edit "
                                 "(speed measured from the audio). Any failed check is exit status 1, named with "
                                 "its file and position.", epilog=ANCHOR_EXIT_CODES)
    verify.add_argument("manifest", help="the completed manifest (JSON) of the anchored file")
    for name in ("--anchored", "--source", "--clip"):
        verify.add_argument(name, help="override the manifest's path")
    verify.add_argument("--json", help="also write the report as JSON")
    verify.set_defaults(run=_anchor_verify)
    question = commands.add_parser("question", help="print the chain's perception item (JSON) from a manifest")
    question.add_argument("manifest", help="the completed manifest (JSON) of the anchored file")
    question.add_argument("--seed", type=int, default=0, help="seed of the question's random draws, e.g. the "
                          "occurrence when --occurrence is absent (default %(default)s)")
    question.add_argument("--occurrence", type=int, help="the occurrence (1, 2, ...) whose start the question "
                          "asks (default: drawn with --seed)")
    question.add_argument("--chain-id", help="the chain's id in the item (default: the recording id)")
    question.set_defaults(run=_anchor_question)


def build_parser() -> argparse.ArgumentParser:
    """The `audioreason` parser with every subcommand (tests walk it: every option has help text)."""
    from audioreason.version import __version__

    parser = argparse.ArgumentParser(prog="audioreason", description=__doc__)
    parser.add_argument("--version", action="version", version=f"audioreason {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, show the Python traceback instead of the one-line message")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the offline cascade on the bundled sample, score it, print a table")
    demo.add_argument("--workdir", default=str(_default_workdir()),
                      help="where synthesized demo audio is written (default: %(default)s)")
    demo.add_argument("--json", help="also write rows and per-item results to this JSON file")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(run=_demo)
    from audioreason.cli.run import add_evaluate_parser, add_run_parser, add_score_parser

    add_run_parser(sub)       # `audioreason run`: a model over a benchmark
    add_score_parser(sub)     # `audioreason score RUN_DIR`: every scorer that fits, on a run folder
    add_evaluate_parser(sub)  # `audioreason evaluate`: run, then score
    from audioreason.cli.imports import add_import_parser

    add_import_parser(sub)    # `audioreason import FORMAT FILE`: predictions made elsewhere as a run folder
    prompt = sub.add_parser("prompt", help="print the ARIA four-step CoT prompt for a question")
    prompt.add_argument("question", help="the question text")
    prompt.add_argument("choices", nargs="+", help="the answer choices, lettered (A), (B), ... in this order")
    prompt.set_defaults(run=_prompt)
    _add_anchor_commands(sub)
    from audioreason.cli.report import add_report_parser
    from audioreason.apps.spaces import add_space_parser

    add_report_parser(sub)  # `audioreason report RESULTS... -o report.html`
    _add_compare_parser(sub)  # `audioreason compare RUN_A RUN_B`: paired differences on the shared items
    add_space_parser(sub)   # `audioreason space build NAME OUT`: a Hugging Face Space folder of an app
    from audioreason.cli.rubrics import add_rubrics_parser

    add_rubrics_parser(sub)  # `audioreason rubrics generate ITEMS -o OUT`: MMAR criteria from the gold CoT
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = " ".join(filter(None, [args.command, getattr(args, "anchor_command", None)]))
    try:
        return args.run(args)
    except UsageError as err:
        parser.exit(2, f"audioreason {command}: error: {err}\n")
    except DataError as err:
        parser.exit(3, f"audioreason {command}: error: {err}\n")
    except DataFileError as err:  # a damaged input file: its message names the file (and line); exit status 1
        parser.exit(1, f"audioreason {command}: error: {err}\n")
    except Exception as err:  # any other failure: one line and status 1; the traceback only when asked
        if args.debug:
            raise
        parser.exit(1, f"audioreason {command}: error: {describe_error(err)} (audioreason --debug {command} "
                       "... shows the traceback)\n")


if __name__ == "__main__":
    sys.exit(main())
