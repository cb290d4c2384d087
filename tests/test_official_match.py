"""The official MMAR/MMAU string match against an independent reading of its stated rule, on every MMAR
item, and the measured size of its two known flaws (the numbers quoted in README.md)."""

import json
import re
from pathlib import Path

import pytest

from audioreason.text.answers import extract_string_match, official_string_match, official_tokens, strict_string_match
from audioreason.text.cot import LETTERS

MMAR = Path(__file__).parent / "data" / "MMAR-meta.jsonl"  # the full release, shipped (tests/data/README.md)


@pytest.fixture(scope="module")
def mmar():
    return [json.loads(line) for line in MMAR.read_text("utf-8").splitlines() if line.strip()]


def stated_rule(answer, prediction, choices):
    """The official MMAR-Rubrics scorer (the MMAR repository's code/evaluation_rubrics.py): the prediction's bag
    of lower-cased words contains every word of the
    gold answer and none of the words that appear only in wrong choices (and is not empty)."""
    words = lambda s: re.findall(r"\w+", s.lower())  # noqa: E731
    predicted = words(prediction)
    gold = words(answer)
    only_in_wrong = [w for c in choices if c != answer for w in words(c) if w not in gold]
    return bool(predicted) and all(w in predicted for w in gold) and not any(w in only_in_wrong for w in predicted)


def predictions_for(item):
    choices = item["choices"]
    yield ""
    yield " ".join(choices)
    for i, c in enumerate(choices):
        yield c
        yield LETTERS[i]
        yield f"({LETTERS[i]}) {c}"
        yield f"The answer is {c}."
        yield f"{c.upper()} and also {choices[(i + 1) % len(choices)]}"


def test_agrees_with_stated_rule_on_every_mmar_item(mmar):
    assert len(mmar) == 1000
    checked = 0
    for item in mmar:
        for prediction in predictions_for(item):
            expected = stated_rule(item["answer"], prediction, item["choices"])
            assert official_string_match(item["answer"], prediction, item["choices"]) is expected, (
                item["id"],
                prediction,
            )
            checked += 1
    assert checked > 20000


def test_tokenizer_is_lowercased_word_set():
    assert official_tokens("The Dog's  bark, 3:1!") == {"the", "dog", "s", "bark", "3", "1"}
    assert official_tokens("打雷 and 下雨") == {"打雷", "and", "下雨"}


def test_measured_flaws_on_mmar(mmar):
    """Golden numbers for README.md: how many MMAR items each official-match flaw touches."""
    reordered_items, wrong_texts_accepted, bare_gold_letter_wrong = set(), 0, 0
    strict_fixes = 0
    for item in mmar:
        choices, gold = item["choices"], item["answer"]
        for choice in choices:
            if choice != gold and official_string_match(gold, choice, choices):
                reordered_items.add(item["id"])
                wrong_texts_accepted += 1
                assert official_tokens(choice) == official_tokens(gold)
                strict_fixes += not strict_string_match(gold, choice, choices)
        letter = LETTERS[choices.index(gold)]
        bare_gold_letter_wrong += not official_string_match(gold, letter, choices)
        assert strict_string_match(gold, letter, choices)
    assert len(reordered_items) == 20
    assert wrong_texts_accepted == 28
    assert strict_fixes == 28
    assert bare_gold_letter_wrong == 1000


def test_extractor_view_flags_reordered_choices_as_ambiguous():
    choices = ["From near to far", "From far to near", "Remain unchanged"]
    official = extract_string_match("From near to far", choices)
    assert (official.index, official.method) == (None, "ambiguous")
    strict = extract_string_match("From near to far", choices, strict=True)
    assert (strict.index, strict.method) == (0, "strict_match")
    letter = extract_string_match("(C)", choices, strict=True)
    assert (letter.index, letter.choice) == (2, "Remain unchanged")
    assert extract_string_match("(C)", choices).method == "unanswered"


def test_duplicate_choice_texts_count_once():
    choices = ["Man", "Woman", "Man", "Robot"]  # MMAU test-mini has duplicated choices
    got = extract_string_match("a man", choices)
    assert (got.index, got.method) == (0, "official_match")
