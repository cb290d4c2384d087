"""`audioreason prompt QUESTION CHOICE...`: print the ARIA four-step CoT prompt (``text.cot``) for a question."""

from __future__ import annotations

import argparse
from typing import Any

from audioreason.base.errors import UsageError


def prompt_command(args: argparse.Namespace) -> int:
    from audioreason.text.cot import build_cot_prompt

    try:
        print(build_cot_prompt(args.question, args.choices))
    except ValueError as err:
        raise UsageError(str(err)) from None
    return 0


def add_prompt_parser(sub: Any) -> None:
    prompt = sub.add_parser("prompt", help="print the ARIA four-step CoT prompt for a question")
    prompt.add_argument("question", help="the question text")
    prompt.add_argument("choices", nargs="+", help="the answer choices, lettered (A), (B), ... in this order")
    prompt.set_defaults(run=prompt_command)


__all__ = ["add_prompt_parser", "prompt_command"]
