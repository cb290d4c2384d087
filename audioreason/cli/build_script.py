"""The command line of ``datasets_scripts/<name>/build.py``: raw folder -> builder (validated) -> Hub-ready folder
with the card -> optionally the Hub. Its arguments and what it prints; the work is ``data.load``'s
(``build_for_export``, ``export_benchmark``) and ``data.hub_export``'s (``licence_notice``, ``push_folder``).

    python datasets_scripts/mmar/build.py RAW_DIR OUT_DIR [--on-missing-audio skip] [--push-to-hub ORG/NAME]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from audioreason.base.errors import describe_error
from audioreason.data.catalog import BenchmarkSpec, benchmark_spec
from audioreason.data.hub_export import licence_notice, push_folder
from audioreason.data.load import build_for_export, export_benchmark
from audioreason.data.scan import MISSING_AUDIO_POLICIES, REPEATED_ID_POLICIES
from audioreason.data.validation import ValidationReport


def run_build_script(
    name: str, card_path: Union[str, os.PathLike], argv: Optional[Sequence[str]] = None, *, api: Any = None
) -> int:
    """raw folder -> builder (validated) -> Hub-ready folder with the card -> optionally the Hub. Only audio
    inside the raw folder is ever exported (``export_benchmark(..., audio_root=raw)``).

    ``--push-to-hub ORG/NAME`` publishes a private dataset repo; ``--public`` publishes it openly, after
    printing the card's licence (it asks nothing: the flag is the decision). An error is one line on stderr
    and exit status 1 (2 for bad arguments); ``--debug`` shows the traceback instead. ``api``: the
    ``huggingface_hub.HfApi`` to push with (tests pass a stand-in)."""
    spec = benchmark_spec(name)
    prog = f"datasets_scripts/{spec.name}/build.py"
    parser = _build_parser(spec, prog)
    args = parser.parse_args(argv)
    if args.public and not args.push_to_hub:
        parser.error("--public goes with --push-to-hub ORG/NAME")
    try:
        return _build_and_export(spec, Path(card_path).read_text(encoding="utf-8"), args, api)
    except Exception as err:
        if args.debug:
            raise
        report = getattr(err, "report", None)
        if args.report and isinstance(report, ValidationReport):
            report.write_json(args.report)
        print(f"{prog}: error: {describe_error(err)}", file=sys.stderr)
        return 1


def _build_parser(spec: BenchmarkSpec, prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description=f"Build the Hub-ready {spec.name} folder from its raw folder."
    )
    parser.add_argument("raw", help=f"raw {spec.name} folder (with {' or '.join(spec.raw_markers)})")
    parser.add_argument("out", help="output folder (Hub-ready: README.md + data)")
    parser.add_argument("--on-missing-audio", choices=MISSING_AUDIO_POLICIES, default="raise")
    parser.add_argument("--on-repeated-id", choices=REPEATED_ID_POLICIES, default="raise")
    parser.add_argument("--audio-backend", choices=("auto", "torchcodec", "soundfile"), default="auto")
    parser.add_argument("--cache-dir", default=None, help="datasets cache for the build")
    parser.add_argument(
        "--report", default=None, help="also write the validation report here (JSON), also when validation fails"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace a non-empty output folder")
    parser.add_argument(
        "--push-to-hub",
        metavar="ORG/NAME",
        default=None,
        help="then upload the folder as this dataset repo, private (needs a token and network)",
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="with --push-to-hub: publish openly instead (the card's licence is printed first)",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return parser


def _build_and_export(spec: BenchmarkSpec, card: str, args: argparse.Namespace, api: Any) -> int:
    dataset, report = build_for_export(
        spec.name,
        args.raw,
        args.out,
        overwrite=args.overwrite,
        how="pass --overwrite",
        cache_dir=args.cache_dir,
        on_missing_audio=args.on_missing_audio,
        on_repeated_id=args.on_repeated_id,
        audio_backend=args.audio_backend,
    )
    print(report.summary())
    if args.report:
        report.write_json(args.report)
    out = export_benchmark(spec.name, dataset, args.out, card=card, overwrite=args.overwrite, audio_root=args.raw)
    print(f"wrote {out} ({len(dataset)} items); load it with datasets.load_dataset({str(out)!r})")
    if args.push_to_hub:
        if args.public:
            print(
                f"--public: {args.push_to_hub} will be readable by anyone. The card's licence "
                f"(read it: it is not asked again):\n{licence_notice(card)}"
            )
        url = push_folder(out, args.push_to_hub, private=not args.public, api=api)
        visibility = (
            "public" if args.public else "private: only you and your organisation see it; --public publishes openly"
        )
        print(f"published {url} ({visibility})")
    return 0


__all__ = ["run_build_script"]
