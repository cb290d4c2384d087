"""`audioreason anchor make|apply|verify|question`: AudioSpan anchored audio from manifests
(``audio.anchor_files``, ``audio.anchor_manifest``, ``audio.anchor_questions``). Its arguments and their checks
(before any work), what it prints, and its exit statuses (``ANCHOR_EXIT_CODES``): a failed check is 1, a manifest
or audio it cannot use 3 (``DataError``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from audioreason.base.errors import DataError, UsageError

ANCHOR_EXIT_CODES = (
    "exit status: 0 done (verify: every check passed; apply: the file reproduced or made); "
    "1 a check failed (verify FAILED, apply NOT reproduced: nothing written); 2 a usage error "
    "(an option that cannot work, a file named here that does not exist); 3 a data error (a "
    "manifest or audio file that cannot be used: a field out of range, a path leaving its "
    "folder, a checksum that differs, positions that do not fit, no room to place)"
)


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


def make_command(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_files import apply_manifest, file_info
    from audioreason.audio.anchor_manifest import new_manifest, write_manifest
    from audioreason.audio.placement import Segment, place_windows, silero_speech

    op = args.operation
    _existing(source=args.source, __clip=args.clip, __segments=args.segments)
    manifest_path = Path(args.manifest or Path(args.output).with_suffix(".json"))
    if not Path(os.path.realpath(args.output)).is_relative_to(os.path.realpath(manifest_path.parent)):
        raise UsageError(
            f"--manifest {str(manifest_path)!r}: the anchored file {args.output!r} is not inside the "
            "manifest's folder (apply writes a manifest's output only there)"
        )
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
            windows = place_windows(
                info.frames / info.sampling_rate,
                args.count,
                silero_speech(args.source),
                seed=args.seed,
                segments=segments,
                length=length,
                rules=_rules(args.rule),
            )
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
        print(
            f"  {p['original_start']:.3f}-{p['original_end']:.3f} s -> {p['start']:.3f}-{p['end']:.3f} s "
            f"(segment {p['segment']})"
        )
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
        print(
            f"warning: {manifest['output']['clipped_samples']} samples of the edited spans hit full scale and "
            "were clipped (recorded in the manifest; verify will show the measured change)",
            file=sys.stderr,
        )


def apply_command(args: argparse.Namespace) -> int:
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


def verify_command(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_files import verify_anchored

    _existing(manifest=args.manifest, __anchored=args.anchored, __source=args.source, __clip=args.clip)
    try:
        report = verify_anchored(args.manifest, anchored=args.anchored, source=args.source, clip=args.clip)
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    rows = [("position", "quantity", "expected", "measured", "tolerance", "ok")]
    for c in report["checks"] + report["positions"]:
        rows.append(
            (
                str(c["position"] or "file"),
                c["quantity"],
                _cell(c["expected"]),
                _cell(c["measured"]),
                c["tolerance"],
                "ok" if c["ok"] else "FAIL",
            )
        )
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


def question_command(args: argparse.Namespace) -> int:
    from audioreason.audio.anchor_questions import perception_item

    _existing(manifest=args.manifest)
    try:
        item = perception_item(args.manifest, seed=args.seed, occurrence=args.occurrence, chain_id=args.chain_id)
    except _anchor_errors() as err:
        raise DataError(str(err)) from None
    print(json.dumps(item, ensure_ascii=False))
    return 0


def add_anchor_parser(sub: Any) -> None:
    anchor = sub.add_parser(
        "anchor",
        help="AudioSpan anchored audio: make, apply, verify a manifest; its P question",
        epilog=ANCHOR_EXIT_CODES,
    )
    commands = anchor.add_subparsers(dest="anchor_command", required=True)
    make = commands.add_parser(
        "make", help="place and apply one operation, writing the audio and its manifest", epilog=ANCHOR_EXIT_CODES
    )
    make.add_argument("source", help="the original recording (.wav or .flac)")
    make.add_argument("output", help="the anchored file (.wav or .flac)")
    make.add_argument(
        "--operation",
        required=True,
        choices=("addition", "deletion", "modification"),
        help="the edit (AudioSpan App. B.3)",
    )
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
    make.add_argument(
        "--rule",
        action="append",
        help="a placement rule NAME=VALUE (repeat): min_seconds, "
        "max_seconds, max_fraction, edge_seconds, edge_fraction, min_speech, attempts",
    )
    make.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the placement and of the noise bed (default %(default)s; recorded in the manifest)",
    )
    make.add_argument("--recording-id", help="the recording's id in the manifest (default: none)")
    make.add_argument("--manifest", help="where the manifest goes (default: OUTPUT with .json)")
    make.add_argument("--no-paper-ranges", action="store_true", help="allow values outside App. B.3's ranges")
    make.set_defaults(run=make_command)
    apply = commands.add_parser(
        "apply",
        help="re-create an anchored file from its manifest and the original",
        description="Re-create an anchored file from its manifest and the original. The "
        "manifest's output.path must lie inside the manifest's folder. The file is written "
        "aside and compared with the manifest's sha256 before it replaces anything: a "
        "file that differs is not written.",
        epilog=ANCHOR_EXIT_CODES,
    )
    apply.add_argument("manifest", help="the manifest (JSON) of the anchored file")
    for name in ("--source", "--clip", "--output"):
        apply.add_argument(name, help=f"override the manifest's {name[2:]} path")
    apply.add_argument("--write-manifest", help="also write the completed manifest here")
    apply.set_defaults(run=apply_command)
    verify = commands.add_parser(
        "verify",
        help="check an anchored file against its manifest, per position",
        description="Check an anchored file against its manifest and the source: shape, "
        "sha256, every sample outside the spans, and per position the measured edit "
        "(speed measured from the audio). Any failed check is exit status 1, named with "
        "its file and position.",
        epilog=ANCHOR_EXIT_CODES,
    )
    verify.add_argument("manifest", help="the completed manifest (JSON) of the anchored file")
    for name in ("--anchored", "--source", "--clip"):
        verify.add_argument(name, help="override the manifest's path")
    verify.add_argument("--json", help="also write the report as JSON")
    verify.set_defaults(run=verify_command)
    question = commands.add_parser("question", help="print the chain's perception item (JSON) from a manifest")
    question.add_argument("manifest", help="the completed manifest (JSON) of the anchored file")
    question.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the question's random draws, e.g. the "
        "occurrence when --occurrence is absent (default %(default)s)",
    )
    question.add_argument(
        "--occurrence",
        type=int,
        help="the occurrence (1, 2, ...) whose start the question asks (default: drawn with --seed)",
    )
    question.add_argument("--chain-id", help="the chain's id in the item (default: the recording id)")
    question.set_defaults(run=question_command)


__all__ = [
    "ANCHOR_EXIT_CODES",
    "add_anchor_parser",
    "apply_command",
    "make_command",
    "question_command",
    "verify_command",
]
