"""Answer extraction and matching for multiple-choice audio questions.

Three families, each documented in README.md ("Answer extraction"):

* ``extract_aria``: ARIA-Rubrics Appendix E (tag candidate, exact, substring, "the answer is X" regex,
  letter-to-index), with the paper's behaviour as the default.
* ``official_string_match``: the MMAR / MMAU official bag-of-words correctness rule, reproduced exactly,
  and ``strict_string_match``, which fixes its two known flaws; ``extract_string_match`` turns either
  into an extractor (which choices the rule accepts).
* ``extract_hybrid``: the "All That Glitters Is Not Audio" scorer: strip ``<think>``, letter regexes,
  content match, then an optional judge callable.

Every extractor returns an ``ExtractedAnswer`` whose ``method`` says how it decided, so unanswered rates
and the share of each rule can be reported with the score.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable, Iterable, Optional, Sequence

from audioreason.base.schema import ExtractedAnswer
from audioreason.text.cot import LETTERS, parse_cot, split_think

UNANSWERED = "unanswered"

# ---------------------------------------------------------------------------------------------
# The official MMAR / MMAU string match
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"\b\w+\b")


def official_tokens(text: str) -> set[str]:
    """The official scorers' tokenizer: the set of lower-cased ``\\b\\w+\\b`` words."""
    return set(_WORD.findall(text.lower()))


def official_string_match(answer: str, prediction: str, choices: Sequence[str]) -> bool:
    """MMAR/MMAU official correctness, reproduced exactly.

    Correct iff the prediction's word set is non-empty, contains every word of the gold answer, and
    contains no word that belongs to a choice whose word set differs from the gold's, unless the
    gold has that word too. Known flaws kept on purpose (see ``strict_string_match``): a bare letter
    is never correct, and a wrong choice with the gold's bag of words in another order is accepted.
    """
    predicted = official_tokens(prediction)
    if not predicted:
        return False
    gold = official_tokens(answer)
    forbidden: set[str] = set()
    for choice in choices:
        words = official_tokens(choice)
        if words != gold:
            forbidden |= words - gold
    return gold <= predicted and predicted.isdisjoint(forbidden)


_BARE_LETTER = re.compile(r"^[\s*_`\"'\[(]*([A-Z])[\s*_`\"'\])]*[.:]?[\s*_`\"']*$")


def bare_letter_index(prediction: str, n_choices: int) -> Optional[int]:
    """Index named by a prediction that is only an upper-case letter ("C", "(C)", "**C.**"), if in range."""
    m = _BARE_LETTER.match(prediction or "")
    if not m:
        return None
    index = LETTERS.index(m.group(1))
    return index if index < n_choices else None


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def strict_string_match(answer: str, prediction: str, choices: Sequence[str]) -> bool:
    """The official rule with its two flaws fixed.

    1. A bare letter ("C", "(C)") names the choice at that index and is correct iff that choice is the
       gold answer.
    2. When a wrong choice has the gold's bag of words in another order ("dog then cat" / "cat then
       dog"), the gold's word sequence must occur in the prediction and no such choice's sequence may.
    Otherwise the official rule applies unchanged.
    """
    letter = bare_letter_index(prediction, len(choices))
    if letter is not None:
        return choices[letter].strip() == answer.strip()
    if not official_string_match(answer, prediction, choices):
        return False
    gold_seq = _WORD.findall(answer.lower())
    reordered = [
        seq for seq in (_WORD.findall(c.lower()) for c in choices) if set(seq) == set(gold_seq) and seq != gold_seq
    ]
    if not reordered:
        return True
    predicted_seq = _WORD.findall(prediction.lower())
    return _contains_run(predicted_seq, gold_seq) and not any(_contains_run(predicted_seq, seq) for seq in reordered)


def extract_string_match(prediction: str, choices: Sequence[str], *, strict: bool = False) -> ExtractedAnswer:
    """The choice the (official or strict) string match accepts for this prediction.

    Each choice is tried as if it were the gold answer. Exactly one accepted text gives that choice
    (duplicated choice texts count as one); none gives "unanswered"; several give "ambiguous"
    (unanswered, counted: it happens with reordered bags of words under the official rule).
    """
    rule = strict_string_match if strict else official_string_match
    accepted = [i for i, c in enumerate(choices) if rule(c, prediction or "", choices)]
    texts = {choices[i].strip() for i in accepted}
    if len(texts) == 1:
        return ExtractedAnswer(
            accepted[0], "strict_match" if strict else "official_match", prediction, choices[accepted[0]]
        )
    return ExtractedAnswer(None, "ambiguous" if texts else UNANSWERED, prediction)


# ---------------------------------------------------------------------------------------------
# ARIA-Rubrics Appendix E
# ---------------------------------------------------------------------------------------------

_ANSWER_TAG = re.compile(r"\[\s*answer\s*\]", re.IGNORECASE)
_THINK_TAG = re.compile(r"</?think>", re.IGNORECASE)
_STRIP_CHARS = " \t\r\n.,;:!?*_`\"'()[]{}<>“”‘’。，；：！？（）【】"
_LETTER_PREFIX = re.compile(r"^[(\[]?\s*[A-Za-z]\s*[).:\]]\s*")
_ANSWER_IS = re.compile(r"(?i:answer\s*(?:is|:)|option|choice)\s*[(\[]?\s*([A-Z])\b(?![-'’])")
_SINGLE_LETTER = re.compile(r"^[(\[]?\s*([A-Za-z])\s*[)\]]?$")


def _letter_to_index(letter: str, n_choices: int) -> Optional[int]:
    index = LETTERS.index(letter.upper())
    return index if index < n_choices else None


def aria_candidate(output: str, tags: str = "bracket") -> Optional[str]:
    """Stage 1: the text after the last answer tag, to the end of its first line, stripped.

    ``tags="bracket"`` (the paper) looks for the literal ``[ANSWER]`` tag; ``tags="tolerant"`` uses the
    answer slot of ``parse_cot`` (``**Answer:**``, ``### Step 4: Answer``, ...). None when there is no tag.
    """
    if tags == "bracket":
        output = _THINK_TAG.sub("\n", output)  # "[ANSWER] B</think>" must give "B"
        found = list(_ANSWER_TAG.finditer(output))
        if not found:
            return None
        after = output[found[-1].end() :]
    elif tags == "tolerant":
        slots = parse_cot(output)
        if "answer" in slots.missing:
            return None
        after = slots.answer
    else:
        raise ValueError(f"tags must be 'bracket' or 'tolerant', got {tags!r}")
    # Leading whitespace goes first, so "[ANSWER]\n(B) ..." yields "(B) ...".
    first_line = after.strip().split("\n", 1)[0]
    return first_line.strip(_STRIP_CHARS)


def extract_aria(
    output: Any, choices: Sequence[str], *, tags: str = "bracket", substring: str = "first"
) -> ExtractedAnswer:
    """ARIA-Rubrics Appendix E answer extraction.

    Stage 1 takes the candidate after the last ``[ANSWER]`` tag (``aria_candidate``). Stage 2 compares it,
    without a letter prefix such as "(A)" or "A.", to each choice case-insensitively, both with edge
    whitespace, punctuation and brackets stripped (``exact``), then
    looks for a choice contained in it (``substring``: the first in choice order, the paper's rule; or
    ``substring="longest"``, so "a woman" picks "Woman" over "Man"). Before Stage 3 a regex takes the
    letter out of sentences such as "the answer is B" (``answer_regex``). Stage 3 maps a candidate that is a
    single letter, optionally bracketed, to its choice (``letter``; letters past the last choice are
    unanswered). Everything else is unanswered.
    """
    if substring not in ("first", "longest"):
        raise ValueError(f"substring must be 'first' or 'longest', got {substring!r}")
    if not isinstance(output, str):
        return ExtractedAnswer(None, UNANSWERED)
    candidate = aria_candidate(output, tags)
    if not candidate:
        return ExtractedAnswer(None, UNANSWERED, candidate)

    def found(index: int, method: str) -> ExtractedAnswer:
        return ExtractedAnswer(index, method, candidate, choices[index])

    # Choices get the same edge stripping as the candidate, so "... sounds." matches "... sounds".
    texts = [c.strip(_STRIP_CHARS).casefold() for c in choices]
    bare = _LETTER_PREFIX.sub("", candidate).strip(_STRIP_CHARS).casefold()
    for i, text in enumerate(texts):
        if text and text == bare:
            return found(i, "exact")
    low = candidate.casefold()
    contained = [i for i, text in enumerate(texts) if text and text in low]
    if contained:
        pick = contained[0] if substring == "first" else max(contained, key=lambda i: len(texts[i]))
        return found(pick, "substring")
    m = _ANSWER_IS.search(candidate)
    if m and (index := _letter_to_index(m.group(1), len(choices))) is not None:
        return found(index, "answer_regex")
    m = _SINGLE_LETTER.match(candidate)
    if m and (index := _letter_to_index(m.group(1), len(choices))) is not None:
        return found(index, "letter")
    return ExtractedAnswer(None, UNANSWERED, candidate)


# ---------------------------------------------------------------------------------------------
# "All That Glitters Is Not Audio": regex, content match, judge fallback
# ---------------------------------------------------------------------------------------------

# A letter that stands for an option: upper case, and "A" only when punctuation follows it, since
# "The answer is A dog barking" names a choice by its text, not by a letter.
_OPTION_LETTER = r"[(\[]?\s*\**\s*(?:([B-Z])\b(?![-'’])|(A)(?=\s*[).:\],;*]|\s*$))"
_STATEMENT = re.compile(
    r"(?i:(?:final\s+|correct\s+)?answer\s*(?:is|would\s+be|should\s+be|[:：=])|"
    r"(?:correct|right|best)\s+(?:option|choice)\s+is|I\s+(?:choose|select|pick)|"
    r"答案(?:是|为)?[:：]?|选择?)\s*[:：]?\s*(?i:option|choice)?\s*" + _OPTION_LETTER
)
_LEADING = re.compile(r"^\s*[*_`]*\s*(?:\(([A-Z])\)|([B-Z])[).:]|(A)[).:])")
_NORM = re.compile(r"\w+")


def _normalise(text: str) -> str:
    return " ".join(_NORM.findall(text.casefold()))


def _letter_in(text: str, n_choices: int) -> Optional[int]:
    m = _BARE_LETTER.match(text)
    if m:
        return _letter_to_index(m.group(1), n_choices)
    statements = list(_STATEMENT.finditer(text))
    if statements:
        last = statements[-1]
        return _letter_to_index(last.group(1) or last.group(2), n_choices)
    m = _LEADING.match(text)
    if m:
        return _letter_to_index(next(g for g in m.groups() if g), n_choices)
    return None


def _content_in(text: str, choices: Sequence[str]) -> Optional[int]:
    """The one choice whose words appear in text as a whole phrase, longer choices shadowing shorter."""
    norm_text = f" {_normalise(text)} "
    norm_choices = [_normalise(c) for c in choices]
    for i, c in enumerate(norm_choices):
        if c and norm_text.strip() == c:
            return i
    hits = {c for c in norm_choices if c and f" {c} " in norm_text}
    hits = {c for c in hits if not any(c != d and f" {c} " in f" {d} " for d in hits)}
    if len(hits) == 1:
        return norm_choices.index(hits.pop())
    return None


Judge = Callable[[str, str, Sequence[str]], Optional[int]]


def extract_hybrid(
    output: Any, choices: Sequence[str], *, question: str = "", judge: Optional[Judge] = None
) -> ExtractedAnswer:
    """Hybrid MCQ extraction of "All That Glitters Is Not Audio" (§3.3).

    ``<think>`` blocks are removed; then, first in the answer slot (when the output has one) and then in
    the whole visible text: a letter (a bare letter, the last "the answer is X"-style statement, or a
    leading "(B)" / "B."), then a content match (the output equals one choice, or exactly one choice's
    words appear in it as a phrase). When all fail and ``judge`` is given, ``judge(text, question,
    choices)`` returns a choice index or None (the paper used Claude 4.5 Haiku at temperature 0); a
    judge that raises or answers out of range is counted as ``judge_error`` / ``judge_invalid``.
    """
    if not isinstance(output, str):
        return ExtractedAnswer(None, UNANSWERED)
    visible, _ = split_think(output)
    visible = visible.strip()
    if not visible:
        return ExtractedAnswer(None, UNANSWERED, visible)
    slots = parse_cot(visible)
    regions = ([slots.answer] if "answer" not in slots.missing and slots.source == "output" else []) + [visible]
    for finder, method in (
        (lambda t: _letter_in(t, len(choices)), "letter_regex"),
        (lambda t: _content_in(t, choices), "content"),
    ):
        for region in regions:
            index = finder(region)
            if index is not None:
                return ExtractedAnswer(index, method, region, choices[index])
    if judge is None:
        return ExtractedAnswer(None, UNANSWERED, visible)
    try:
        index = judge(visible, question, list(choices))
    except Exception as err:  # noqa: BLE001 - a failed judge call is a counted outcome, never a crash or a guess
        return ExtractedAnswer(None, "judge_error", f"{type(err).__name__}: {err}")
    if index is None:
        return ExtractedAnswer(None, "judge_unanswered", visible)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(choices):
        return ExtractedAnswer(None, "judge_invalid", repr(index))
    return ExtractedAnswer(index, "judge", visible, choices[index])


# ---------------------------------------------------------------------------------------------
# Scoring helpers
# ---------------------------------------------------------------------------------------------


def is_gold(extracted: ExtractedAnswer, answer: str) -> bool:
    """Whether the extracted choice is the gold answer (compared by text, so a duplicated choice
    text, as in MMAU test-mini, counts whichever copy was chosen)."""
    return extracted.choice is not None and extracted.choice.strip() == answer.strip()


def summarize(extractions: Iterable[ExtractedAnswer]) -> dict[str, Any]:
    """Counts for reporting beside a score: answered, unanswered and how each answer was found."""
    extractions = list(extractions)
    n = len(extractions)
    unanswered = sum(not e.answered for e in extractions)
    return {
        "n": n,
        "answered": n - unanswered,
        "unanswered": unanswered,
        "unanswered_rate": unanswered / n if n else float("nan"),
        "methods": dict(Counter(e.method for e in extractions)),
    }


def as_correctness(value: Any) -> Optional[bool]:
    """True/False for a correctness value (a bool, a numpy bool, 0 or 1), None when ``value`` is not one
    (NaN, 2, "yes", None...). Shared by the scorers that take right/wrong flags."""
    if isinstance(value, bool):
        return value
    type_name = type(value).__name__
    if type_name in ("bool_", "bool"):  # numpy's bool (named "bool" since numpy 2), without importing numpy
        return bool(value)
    if isinstance(value, (int, float)) or type_name.startswith(("int", "uint", "float")):
        try:
            if value == 0 or value == 1:
                return bool(value == 1)
        except (TypeError, ValueError):
            return None
    return None
