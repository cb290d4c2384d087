"""AudioSpan evaluation templates (App. C.1): the one-line instruction prepended to every question.

Multiple-choice items (native Accuracy and anchor Chain) use ``MCQ_INSTRUCTION``; open-ended items
(Rubric) use ``OEQ_INSTRUCTION``. ``build_prompt(item)`` writes the text prompt the runner sends with the
audio: the instruction, the question, then for an MCQ one option per line as ``A. text``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from audioreason.text.cot import LETTERS

MCQ_INSTRUCTION = "Listen carefully to the audio and answer the following question. Answer with ONLY the option letter."
OEQ_INSTRUCTION = (
    "Listen carefully to the audio and answer the following question. Cite audio timestamps in your analysis."
)
TEMPLATES = {"mcq": MCQ_INSTRUCTION, "oeq": OEQ_INSTRUCTION}


def format_options(choices: Sequence[str]) -> str:
    """One option per line, lettered A, B, C, ..."""
    if len(choices) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} options can be lettered, got {len(choices)}")
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))


def item_format(item: Mapping[str, Any]) -> str:
    """``"mcq"`` or ``"oeq"``: the item's ``format`` field when it names one, else MCQ when it has choices."""
    fmt = str(item.get("format") or "").lower()
    if "oeq" in fmt or "open" in fmt:
        return "oeq"
    if "mcq" in fmt or "multiple" in fmt or "choice" in fmt:
        return "mcq"
    return "mcq" if item.get("choices") else "oeq"


def build_prompt(item: Mapping[str, Any], fmt: str | None = None) -> str:
    """The C.1 prompt for one AudioSpan item (a dict with ``question`` and, for an MCQ, ``choices``)."""
    fmt = fmt or item_format(item)
    if fmt not in TEMPLATES:
        raise ValueError(f"fmt must be 'mcq' or 'oeq', got {fmt!r}")
    question = str(item.get("question") or "").strip()
    if not question:
        raise ValueError(f"item {item.get('id')!r} has no question")
    parts = [TEMPLATES[fmt], question]
    if fmt == "mcq":
        choices = item.get("choices") or []
        if len(choices) < 2:
            raise ValueError(f"MCQ item {item.get('id')!r} needs at least 2 choices, got {len(choices)}")
        parts.append(format_options(choices))
    return "\n".join(parts)
