"""The scoring options of `audioreason score`, `evaluate` and a sweep's `score:` mapping: one parser and one
check, so the three read them alike."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional


def comma_list(text: str) -> list[str]:
    """ "a, b,,c" -> ["a", "b", "c"]."""
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_aria_backbones(text: str) -> Any:
    """ "paper", "offline", or a preset and/or ROLE=SPEC pairs ("offline,lm=/models/qwen") as a dict."""
    from audioreason.backends.registry import resolve_backbones

    parts = comma_list(text)
    if parts in (["paper"], ["offline"]):
        return parts[0]
    spec: dict[str, str] = {}
    for part in parts:
        role, sep, value = part.partition("=")
        if not sep:
            if part not in ("paper", "offline") or "preset" in spec:
                raise ValueError(f"--aria-backbones {text!r}: {part!r} is not paper, offline or ROLE=SPEC")
            spec["preset"] = part
        elif not value:
            raise ValueError(f"--aria-backbones {text!r}: {role}= needs a spec")
        else:
            spec[role.strip()] = value.strip()
    resolve_backbones(spec)  # unknown roles fail here
    return spec


def add_score_arguments(parser: argparse.ArgumentParser, *, seed_option: str = "--seed") -> None:
    """The scoring options (`score`'s and `evaluate`'s). The perturbation and bootstrap seed is spelt
    --perturbation-seed everywhere; ``seed_option`` is an old spelling still accepted beside it (`score --seed`;
    `evaluate` passes "--perturbation-seed", since its --seed is the decoding seed)."""
    seeds = ["--perturbation-seed"] + ([seed_option] if seed_option != "--perturbation-seed" else [])
    from audioreason.scorers.registry import SCORERS

    parser.add_argument(
        "--scorers", default="auto", help=f"auto (every scorer that fits) or comma-separated: {', '.join(SCORERS)}"
    )
    parser.add_argument(
        "--extraction",
        default="auto",
        help="answer extraction: auto (each template's rule), all, or one of aria, aria_tolerant, "
        "official_slot, strict, hybrid, exact_letter (the official MMAR/MMAU scorer, on the "
        "whole reply, is reported for every set whatever the rule)",
    )
    parser.add_argument(
        "--aria-backbones",
        default="paper",
        help="paper (default), offline, or ROLE=SPEC pairs on a preset (offline,lm=/models/qwen)",
    )
    parser.add_argument(
        "--perturbations",
        default="none",
        help="ARIA's CoT checks scored beside the originals: none, all, or comma-separated: "
        "no_struct, ans_swap, irrelevant, wrong_perc, rand_hints, decoration, scaffolding",
    )
    parser.add_argument(
        *seeds,
        dest="perturbation_seed",
        type=int,
        default=0,
        help="seed of the perturbations and of the bootstrap intervals (default 0)"
        + (f"; {seed_option} is its old spelling" if len(seeds) > 1 else ""),
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="level of every headline's interval (default 0.95; results.json's key stays ci95)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=2000,
        help="bootstrap resamples over items for the intervals that are not Wilson's (default 2000)",
    )
    parser.add_argument(
        "--judge-model",
        help="judge model (default: gpt-4o-2024-11-20 for mmar_rubrics; none for "
        "audiospan_rubric); local:SPEC runs a local chat LM; none: no judge",
    )
    parser.add_argument("--judge-base-url", help="an OpenAI-compatible server (vLLM, ...); default: the OpenAI API")
    parser.add_argument("--judge-api-key-env", default="OPENAI_API_KEY", help="variable holding the judge's API key")
    parser.add_argument("--judge-cache", help="verdict cache (SQLite; default: <run>/judge-cache.sqlite)")
    parser.add_argument(
        "--judge-structured-outputs",
        action="store_true",
        help="send each verdict's JSON schema as response_format (OpenAI, vLLM); not with --compat",
    )
    parser.add_argument(
        "--judge-prices",
        help="a prices file (JSON or YAML, as run --prices): the judge card's cost of the judge's tokens",
    )
    parser.add_argument("--compat", action="store_true", help="mmar_rubrics: the official scorer's behaviour")
    parser.add_argument(
        "--official-scorer", help="mmar_rubrics: your copy of MMAR's evaluation_rubrics.py (its wording)"
    )


def score_options(args: argparse.Namespace, *, data: Optional[str] = None, out: Optional[str] = None) -> Any:
    """ScoreOptions from the parsed arguments, every value checked (ValueError says which is wrong)."""
    from audioreason.evaluation.score import JudgeOptions, ScoreOptions, check_extraction, parse_scorers
    from audioreason.judges.client import check_base_url
    from audioreason.text.perturbations import parse_perturbations

    scorers = parse_scorers(comma_list(args.scorers))
    check_extraction(args.extraction)
    if args.official_scorer and not Path(args.official_scorer).expanduser().is_file():
        raise ValueError(f"--official-scorer {args.official_scorer!r} is not a file")
    if args.judge_base_url:
        check_base_url(args.judge_base_url, "--judge-base-url")
    if args.judge_structured_outputs and args.compat:
        raise ValueError("--judge-structured-outputs: the official scorer (--compat) sends no response_format")
    if args.judge_structured_outputs and (args.judge_model or "").startswith("local:"):
        raise ValueError("--judge-structured-outputs is for an OpenAI-compatible judge, not a local: one")
    if args.judge_prices:
        from audioreason.inference.hosted import load_prices

        if not Path(args.judge_prices).expanduser().is_file():
            raise ValueError(f"--judge-prices {args.judge_prices!r} is not a file")
        load_prices(args.judge_prices)  # ValueError names the file and what is wrong, before any work
    judge = JudgeOptions(
        model=args.judge_model,
        base_url=args.judge_base_url,
        api_key_env=args.judge_api_key_env,
        cache=args.judge_cache,
        compat=args.compat,
        official_scorer=args.official_scorer,
        structured_outputs=args.judge_structured_outputs,
        prices=args.judge_prices,
    )
    return ScoreOptions(
        scorers=scorers,
        extraction=args.extraction,
        aria_backbones=parse_aria_backbones(args.aria_backbones),
        perturbations=parse_perturbations(args.perturbations),
        seed=args.perturbation_seed,
        judge=judge,
        data=data,
        out=out,
        progress=not args.no_progress,
        confidence=args.confidence,
        resamples=args.resamples,
    )


__all__ = ["add_score_arguments", "comma_list", "parse_aria_backbones", "score_options"]
