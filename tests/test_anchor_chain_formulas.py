"""AudioSpan Chain (Eq. 3), per-link accuracy, the D.5 grounding split and the random baseline,
against hand-computed values and exhaustive enumeration."""

import itertools
from fractions import Fraction

import pytest

from audioreason.scorers.anchor_chain.formulas import (
    accuracy,
    chain_score,
    grounding_split,
    per_link_accuracy,
    random_chain_expectation,
)
from audioreason.scorers.anchor_chain.scorer import score_anchor_chain


@pytest.mark.parametrize(
    "links, expected",
    [
        ((1, 1, 1), 1.0),
        ((1, 1, 0), 2 / 3),
        ((1, 0, 1), 1 / 3),
        ((1, 0, 0), 1 / 3),
        ((0, 1, 1), 0.0),
        ((0, 0, 1), 0.0),
        ((0, 1, 0), 0.0),
        ((0, 0, 0), 0.0),
    ],
)
def test_chain_score_all_eight_patterns(links, expected):
    assert chain_score([bool(x) for x in links]) == pytest.approx(expected)


def test_chain_needs_three_links():
    with pytest.raises(ValueError, match="exactly 3"):
        chain_score([True, True])


def test_random_baseline_four_options_is_10_9375_percent():
    assert random_chain_expectation([4, 4, 4]) == pytest.approx(0.109375)
    assert random_chain_expectation([4, 4, 4]) == pytest.approx((0.25 + 0.0625 + 0.015625) / 3)


def _enumerate(option_counts):
    """Average Chain over every (answer, gold) combination: all guesses, gold fixed at option 0."""
    total, count = Fraction(0), 0
    for guess in itertools.product(*(range(n) for n in option_counts)):
        links = [g == 0 for g in guess]
        total += Fraction(sum(all(links[: k + 1]) for k in range(3)), 3)
        count += 1
    return total / count


@pytest.mark.parametrize("counts", [(4, 4, 4), (2, 3, 5), (5, 4, 2), (3, 3, 4), (1, 4, 4)])
def test_random_baseline_matches_exhaustive_enumeration(counts):
    enumerated = _enumerate(counts)
    assert random_chain_expectation(counts) == pytest.approx(float(enumerated), abs=1e-15)
    if counts == (4, 4, 4):
        assert enumerated == Fraction(7, 64)  # 0.109375 exactly


def test_random_baseline_distribution_four_options():
    # B.3: 0 three quarters of the time, a full 1 once in 64.
    outcomes = [
        sum(all(g == 0 for g in guess[: k + 1]) for k in range(3)) for guess in itertools.product(range(4), repeat=3)
    ]
    assert outcomes.count(0) == 48 and outcomes.count(3) == 1
    assert outcomes.count(1) == 12 and outcomes.count(2) == 3


def test_random_baseline_rejects_bad_counts():
    with pytest.raises(ValueError):
        random_chain_expectation([4, 0, 4])
    with pytest.raises(ValueError):
        random_chain_expectation([4, 4])


CHAINS = [(1, 1, 1), (1, 0, 1), (0, 1, 0), (0, 1, 1), (1, 1, 0)]


def test_per_link_accuracy_hand_computed():
    got = per_link_accuracy([[bool(x) for x in c] for c in CHAINS])
    assert got == {"P": pytest.approx(3 / 5), "U": pytest.approx(4 / 5), "R": pytest.approx(3 / 5)}


def test_grounding_split_hand_computed():
    got = grounding_split([[bool(x) for x in c] for c in CHAINS])
    # located (P correct): (1,1,1), (1,0,1), (1,1,0) -> U 2/3, R 2/3
    # missed (P wrong): (0,1,0), (0,1,1) -> U 2/2, R 1/2
    assert got["n_located"] == 3 and got["n_missed"] == 2
    assert got["U|located"] == pytest.approx(2 / 3) and got["U|missed"] == pytest.approx(1.0)
    assert got["R|located"] == pytest.approx(2 / 3) and got["R|missed"] == pytest.approx(0.5)
    assert got["U_premium"] == pytest.approx(2 / 3 - 1) and got["R_premium"] == pytest.approx(2 / 3 - 0.5)


def test_grounding_split_empty_group_is_none():
    got = grounding_split([[True, True, False]])
    assert got["U|missed"] is None and got["R|missed"] is None and got["U_premium"] is None
    assert got["U|located"] == 1.0 and got["R|located"] == 0.0


def test_accuracy_eq1():
    assert accuracy([True, False, True, True]) == pytest.approx(0.75)
    assert accuracy([]) is None


def test_scores_are_exact_fractions_and_the_output_is_the_nearest_float():
    """Chains scored 2/3 and 1 average exactly 5/6: in floats (2/3 + 1) / 2 prints 0.8333333333333333, one
    unit below the float nearest 5/6 (the project's one scale is 0-1, computed exactly; audioreason.base.scale)."""
    assert chain_score([True, True, False]) == Fraction(2, 3)
    assert random_chain_expectation([4, 4, 4]) == Fraction(7, 64)
    assert accuracy([True, False, True]) == Fraction(2, 3)
    items = [
        {"id": f"{c}{k}", "chain_id": c, "link_position": k, "choices": ["x", "y"], "answer": "x"}
        for c in ("a", "b")
        for k in (1, 2, 3)
    ]
    result = score_anchor_chain(items, ["A", "A", "B", "A", "A", "A"])
    assert result["chain"] == float(Fraction(5, 6)) == 0.8333333333333334
    assert result["random_chain"] == float(Fraction(1, 3) * (Fraction(1, 2) + Fraction(1, 4) + Fraction(1, 8)))
    assert type(result["chain"]) is float and type(result["grounding"]["U|located"]) is float
