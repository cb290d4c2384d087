"""Which replies lmms-eval's MMAR and MMAU tasks decide by a random guess.

lmms-eval scores a reply to these tasks with a letter parser (``parse_multi_choice_response`` in
lmms_eval/tasks/mmar/utils.py and lmms_eval/tasks/mmau/utils.py, EvolvingLMMs-Lab/lmms-eval) that looks for
candidate letters in the reply and, when it finds none, returns ``random.choice`` of the letters: that item's
score is then a coin flip, not the model's. The candidate search is deterministic, so whether an item was
guessed can be told from the reply alone. This module does that search (our own code, written from how the
parser behaves) and nothing else: it is not an answer extractor of audioreason.

The search, on the reply with ``, . ! ? ; : '`` stripped from both ends and one space added on each side:

1. ``(X)`` for each option letter X;
2. if none: MMAR: ``"X "`` (the letter followed by a space); MMAU: ``" X "`` (a space on both sides);
3. if none: ``"X."``;
4. MMAR only, if none and the reply has more than 5 words: an option's text inside the reply (case-insensitive).

MMAR's letters are those of the item's options (as many as it has); MMAU's are always A-D.
"""

from __future__ import annotations

from typing import Sequence

LMMS_TASK_VARIANTS = {"mmar": "mmar", "mmau_test_mini": "mmau"}
_STRIP = ",.!?;:'"


def _letters(n: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(n)]


def lmms_candidates(reply: str, choices: Sequence[str], variant: str) -> list[str]:
    """The option letters lmms-eval's parser finds in ``reply`` (empty: it guesses at random)."""
    if variant not in ("mmar", "mmau"):
        raise ValueError(f"unknown lmms-eval parser variant {variant!r}: mmar or mmau")
    letters = _letters(len(choices)) if variant == "mmar" else _letters(4)
    text = " " + (reply or "").strip(_STRIP) + " "
    found = [x for x in letters if f"({x})" in text]
    if not found:
        spaced = "{} " if variant == "mmar" else " {} "
        found = [x for x in letters if spaced.format(x) in text]
    if not found:
        found = [x for x in letters if f"{x}." in text]
    if not found and variant == "mmar" and len(text.split()) > 5:
        lowered = text.lower()
        found = [x for x, choice in zip(letters, choices) if str(choice).lower() in lowered]
    return found


def lmms_random_guess(reply: str, choices: Sequence[str], variant: str) -> bool:
    """True when lmms-eval's parser finds no candidate in ``reply`` and so scores a random letter."""
    return not lmms_candidates(reply, choices, variant)


__all__ = ["LMMS_TASK_VARIANTS", "lmms_candidates", "lmms_random_guess"]
