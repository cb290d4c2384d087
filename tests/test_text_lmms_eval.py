"""Which replies lmms-eval's MMAR and MMAU letter parsers decide by a random guess: golden cases worked by hand from
the search order (parenthesised letter; MMAR "X " / MMAU " X "; "X."; MMAR only, more than 5 words: option text)."""

import pytest

from audioreason.text.lmms_eval import lmms_candidates, lmms_random_guess

CHOICES = ["United States", "United Kingdom", "Canada", "Australia"]


@pytest.mark.parametrize(
    "reply, variant, expected",
    [
        ("(B)", "mmar", ["B"]),
        ("The answer is (C), not (A).", "mmar", ["A", "C"]),  # every parenthesised letter is a candidate
        ("B", "mmar", ["B"]),  # " B " after padding holds "B "
        ("B.", "mmar", ["B"]),  # the trailing "." is stripped first
        ("Answer: D.", "mmau", ["D"]),  # stripped: " Answer: D " holds " D "
        ("I think B is right", "mmau", ["B"]),
        ("Option:B", "mmau", []),  # MMAU needs a space before the letter: a guess
        ("Option:B", "mmar", ["B"]),  # MMAR takes "B " (padding) without one
        ("United Kingdom", "mmar", []),  # 2 words: no content search, a guess
        ("It sounds to me like the speaker is from Canada", "mmar", ["C"]),
        ("It sounds to me like the speaker is from Canada", "mmau", []),  # MMAU has no content search
        ("", "mmar", []),
    ],
)
def test_candidates(reply, variant, expected):
    assert lmms_candidates(reply, CHOICES, variant) == expected
    assert lmms_random_guess(reply, CHOICES, variant) is (not expected)


def test_letters_follow_the_options_for_mmar_only():
    # MMAR: two options give letters A-B only, so "C" is no candidate; MMAU always uses A-D
    assert lmms_candidates("C", ["Yes", "No"], "mmar") == [] and lmms_candidates("C", ["Yes", "No"], "mmau") == ["C"]
    with pytest.raises(ValueError, match="unknown lmms-eval parser variant"):
        lmms_candidates("A", CHOICES, "mmmu")
