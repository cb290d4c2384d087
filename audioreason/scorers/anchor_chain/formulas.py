"""AudioSpan anchor-chain and native-MCQ formulas (pure functions, no parsing, no I/O).

* Eq. 3 Chain: ``chain_score(correct) = 1/3 * sum_k prod_{j<=k} 1[a_hat_j = a_j]`` over the links
  (perception, understanding, reasoning) of one anchor chain.
* Eq. 1 Accuracy: ``mean(correct)``.
* The random baseline of a chain (App. B.3): ``1/3 * sum_k prod_{j<=k} 1/n_j`` for per-link option
  counts n_1, n_2, n_3 (10.9375% for four options at every link).
* The grounding split of App. D.5: understanding and reasoning accuracy on chains whose perception link
  was correct ("located") vs wrong ("missed").

Exact arithmetic: every value is a ``fractions.Fraction`` in [0, 1] (k/3, products of 1/n, shares), so a
mean of chains scored 2/3 and 1 is exactly 5/6; callers turn values into floats only for output
(``audioreason.base.scale``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional, Sequence

LINKS = ("P", "U", "R")


def chain_score(correct: Sequence[bool]) -> Fraction:
    """Eq. 3 for one chain: credit for the longest correct prefix, k/3 for k leading correct links."""
    if len(correct) != 3:
        raise ValueError(f"a chain has exactly 3 links, got {len(correct)}")
    score, alive = 0, True
    for c in correct:
        alive = alive and bool(c)
        score += alive
    return Fraction(score, 3)


def random_chain_expectation(option_counts: Sequence[int]) -> Fraction:
    """E[Chain] for a uniform guesser: 1/3 * sum_k prod_{j<=k} 1/n_j."""
    if len(option_counts) != 3:
        raise ValueError(f"a chain has exactly 3 links, got {len(option_counts)} option counts")
    if any(int(n) != n or n < 1 for n in option_counts):
        raise ValueError(f"option counts must be positive integers, got {list(option_counts)}")
    total, prod = Fraction(0), Fraction(1)
    for n in option_counts:
        prod /= int(n)
        total += prod
    return total / 3


def mean(values: Sequence[Fraction]) -> Optional[Fraction]:
    """The exact mean, or None for an empty sequence (a rate over nothing is undefined, never 0)."""
    values = list(values)
    return sum(values, Fraction(0)) / len(values) if values else None


def accuracy(correct: Sequence[bool]) -> Optional[Fraction]:
    """Eq. 1: the share of correct answers."""
    return mean([Fraction(bool(c)) for c in correct])


def per_link_accuracy(chains: Sequence[Sequence[bool]]) -> dict[str, Optional[Fraction]]:
    """Accuracy of each link (P, U, R) over chains, each scored on its own (no truncation)."""
    return {name: accuracy([c[i] for c in chains]) for i, name in enumerate(LINKS)}


def grounding_split(chains: Sequence[Sequence[bool]]) -> dict[str, Optional[Fraction]]:
    """App. D.5: U and R accuracy split by whether the perception link of the same chain was correct.

    Returns ``U|located``, ``U|missed``, ``R|located``, ``R|missed`` (None where no chain falls in the
    group), the grounding premia ``U_premium`` / ``R_premium`` (located - missed) and the group sizes.
    """
    located = [c for c in chains if c[0]]
    missed = [c for c in chains if not c[0]]
    out: dict[str, Optional[Fraction]] = {}
    for i, name in ((1, "U"), (2, "R")):
        loc = accuracy([c[i] for c in located])
        mis = accuracy([c[i] for c in missed])
        out[f"{name}|located"], out[f"{name}|missed"] = loc, mis
        out[f"{name}_premium"] = None if loc is None or mis is None else loc - mis
    out["n_located"], out["n_missed"] = len(located), len(missed)
    return out
