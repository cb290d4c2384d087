"""Text prior and audio reliance ("All That Glitters Is Not Audio", arXiv:2604.24401, §2), as pure functions.

Numbers and booleans in, numbers and labels out: no extraction, no I/O. The orchestration layer
(``audioreason.scorers.text_prior.scorer``) turns model outputs into the per-item outcomes these functions read.

Conventions: accuracies, shares, the text-prior rate and the retention rate R_N are fractions in [0, 1],
the project's one scale (``audioreason.base.scale``; the paper prints them x 100), computed exactly as
``fractions.Fraction`` (a share of correct answers, a ratio of two) so no sum of rounded floats shows in a
result; callers turn them into floats for output. ``None`` marks a value that cannot be computed (an empty
set, a zero denominator); callers report why.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping, Optional, Sequence

# Item categories of Table 1: the five partition the items of a model with fragment conditions. A model
# evaluated without any fragment condition keeps its audio-needed items unsplit (FS/XS undefined).
TS, AH, UN, FS, XS = "TS", "AH", "UN", "FS", "XS"
AN_UNSPLIT = "AN"  # audio-needed, for a model evaluated without any fragment condition
CATEGORIES = (TS, FS, XS, AH, UN)
LABELS = CATEGORIES + (AN_UNSPLIT,)

# How an errored fragment prediction enters the FS/XS split (the caller decides what is errored):
# "separate" (default): not correct, and the XS items it leaves unverified are counted separately;
# "sufficient": correct, as the public analysis code counts a fragment whose run errored.
ERRORED_FRAGMENT_MODES = ("separate", "sufficient")

# How a model with fragments and items (both Full and None) but no audio-needed item among them (|AN| = 0,
# XS/AN undefined) enters the XS/AN model mean: "as_zero" (default): as 0, as the public analysis code
# averages it; "exclude": left out. A model with no item at all has no decomposition and is left out in
# both modes (the public code's decompose_model returns None for it): callers never pass it here.
ZERO_AN_MODES = ("as_zero", "exclude")


def accuracy(correct: Sequence[bool]) -> Optional[Fraction]:
    """Share of True; None for an empty sequence."""
    return Fraction(sum(bool(c) for c in correct), len(correct)) if len(correct) else None


def text_prior_rate(acc_none: Optional[Fraction], acc_full: Optional[Fraction]) -> Optional[Fraction]:
    """R_TP = Acc_none / Acc_full (§2.1); None when either is unknown or Acc_full is 0."""
    if acc_none is None or acc_full is None or acc_full == 0:
        return None
    return Fraction(acc_none) / Fraction(acc_full)


def pooled_text_prior_rate(acc_none: Sequence[Fraction], acc_full: Sequence[Fraction]) -> Optional[Fraction]:
    """R_TP across models as the paper's table computes its average row: Σ_m Acc_none / Σ_m Acc_full
    (a ratio of sums, equal to the ratio of the model-averaged accuracies, not the mean of ratios)."""
    if len(acc_none) != len(acc_full):
        raise ValueError(f"pooled_text_prior_rate: {len(acc_none)} None accuracies but {len(acc_full)} Full ones")
    total_full = sum(acc_full, Fraction(0))
    return sum(acc_none, Fraction(0)) / total_full if acc_full and total_full > 0 else None


def chance_level(n_choices: Sequence[int]) -> Optional[Fraction]:
    """Expected accuracy of a uniform guess: the mean over items of 1 / (number of choices)."""
    if any(n < 1 for n in n_choices):
        raise ValueError(f"chance_level: every item needs at least one choice, got {list(n_choices)}")
    return sum((Fraction(1, n) for n in n_choices), Fraction(0)) / len(n_choices) if len(n_choices) else None


def fragment_accuracy(fragment_correct: Sequence[Sequence[bool]]) -> Optional[Fraction]:
    """Mean over items of the mean over that item's N fragments of c_{q,k} (the numerator of Eq. 1)."""
    if not fragment_correct:
        return None
    per_item = []
    for k_values in fragment_correct:
        if not k_values:
            raise ValueError("fragment_accuracy: an item has no fragment outcomes")
        per_item.append(Fraction(sum(bool(c) for c in k_values), len(k_values)))
    return sum(per_item, Fraction(0)) / len(per_item)


def retention_rate(fragment_correct: Sequence[Sequence[bool]], acc_full: Optional[Fraction]) -> Optional[Fraction]:
    """R_N (Eq. 1) as a fraction of Full accuracy: [(1/|Q|) Σ_q (1/N) Σ_k c_{q,k}^{(N)}] / Acc_full (the paper
    prints it x 100).

    ``fragment_correct`` holds, per item, the N fragment outcomes; ``acc_full`` is the Full accuracy
    over the same items. None when there is no item or Acc_full is 0.
    """
    frag = fragment_accuracy(fragment_correct)
    if frag is None or acc_full is None or acc_full == 0:
        return None
    return frag / Fraction(acc_full)


def categorize_item(
    full_correct: bool,
    none_correct: bool,
    fragment_outcomes: Optional[Sequence[Optional[bool]]] = None,
    *,
    missing_fragments: int = 0,
    errored_fragments: str = "separate",
) -> tuple[str, Optional[str]]:
    """(Table 1 category, why it is unverified) of one item for one model.

    ``fragment_outcomes``: one entry per fragment prediction of the item, over every N and k the model
    was evaluated on: True (correct), False (wrong) or None (errored; which predictions count as errored
    under each mode is the caller's choice, see ``audioreason.scorers.text_prior.scorer``). Pass None when the model has
    no fragment condition at all: an audio-needed item is then labelled ``AN`` (not split).
    ``missing_fragments``: how many of the model's fragment conditions have no row for this item.

    Full ✓ None ✓ → TS; ✗ ✓ → AH; ✗ ✗ → UN; ✓ ✗ → audio-needed, then FS when some fragment is correct,
    else XS. An errored fragment is correct under ``errored_fragments="sufficient"`` (the public analysis
    code) and not correct under "separate" (default). The second value is None except for an XS item
    whose evidence is incomplete: "errored" (some fragment errored; takes precedence) or "missing" (some
    fragment row absent), since the unseen answer might have been correct.
    """
    if errored_fragments not in ERRORED_FRAGMENT_MODES:
        raise ValueError(f"errored_fragments must be one of {ERRORED_FRAGMENT_MODES}, got {errored_fragments!r}")
    if missing_fragments < 0:
        raise ValueError(f"missing_fragments must be >= 0, got {missing_fragments}")
    if full_correct and none_correct:
        return TS, None
    if none_correct:
        return AH, None
    if not full_correct:
        return UN, None
    if fragment_outcomes is None:
        return AN_UNSPLIT, None
    errored = any(o is None for o in fragment_outcomes)
    if any(o is True for o in fragment_outcomes) or (errored and errored_fragments == "sufficient"):
        return FS, None
    # No fragment answered correctly: XS, flagged when an errored or absent answer might have been correct.
    return XS, ("errored" if errored else "missing" if missing_fragments else None)


def count_labels(labels: Iterable[str]) -> dict[str, int]:
    """Counts of every label (zeros included), plus AN_total = FS + XS + unsplit AN."""
    counts = {label: 0 for label in LABELS}
    for label in labels:
        if label not in counts:
            raise ValueError(f"unknown item category {label!r}; expected one of {LABELS}")
        counts[label] += 1
    counts["AN_total"] = counts[FS] + counts[XS] + counts[AN_UNSPLIT]
    return counts


def global_dependency(fs: int, xs: int) -> Optional[Fraction]:
    """|XS| / |AN| (Table 4), |AN| = |FS| + |XS|; None without audio-needed items."""
    return Fraction(xs, fs + xs) if fs + xs else None


def xs_over_an_for_mean(fs: int, xs: int, zero_an: str = "as_zero") -> Optional[Fraction]:
    """A model's term in the across-model XS/AN (Table 4): |XS| / |AN|; for a model with no audio-needed
    item, 0 under ``zero_an="as_zero"`` (the public analysis code) or None (left out) under "exclude"."""
    if zero_an not in ZERO_AN_MODES:
        raise ValueError(f"zero_an_models must be one of {ZERO_AN_MODES}, got {zero_an!r}")
    if fs + xs:
        return global_dependency(fs, xs)
    return Fraction(0) if zero_an == "as_zero" else None


def global_dependency_bounds(fs: int, xs: int, xs_unverified: int) -> Optional[tuple[Fraction, Fraction]]:
    """The range |XS|/|AN| would take if every unverified XS item turned out FS (low) or stayed XS (high)."""
    if not 0 <= xs_unverified <= xs:
        raise ValueError(f"xs_unverified must be between 0 and xs={xs}, got {xs_unverified}")
    return (Fraction(xs - xs_unverified, fs + xs), Fraction(xs, fs + xs)) if fs + xs else None


def stats(values: Sequence[Fraction]) -> dict[str, Optional[Fraction]]:
    """mean, min, max and n of a list of per-model values (None entries must be filtered out first)."""
    if any(v is None for v in values):
        raise ValueError("stats: filter out unavailable (None) values before aggregating")
    if not values:
        return {"mean": None, "min": None, "max": None, "n": 0}
    return {"mean": mean_or_none(values), "min": min(values), "max": max(values), "n": len(values)}


def mean_or_none(values: Sequence[Fraction]) -> Optional[Fraction]:
    """The exact mean (None for no values)."""
    return sum(values, Fraction(0)) / len(values) if values else None


def shares(counts: Mapping[str, int], total: int) -> dict[str, Optional[Fraction]]:
    """Each count as a fraction of ``total`` (None when total is 0)."""
    return {k: (Fraction(v, total) if total else None) for k, v in counts.items()}
