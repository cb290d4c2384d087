"""ARIA-Rubrics formulas (ARIA §3.3-3.4), as pure functions of model outputs.

No model is loaded here: each function takes the numbers a backbone produced (cosines, perplexities,
probabilities) and returns a metric, so every formula is testable by hand. ``None`` marks an absent
slot; NaN marks a value that could not be computed (it propagates and is counted by the caller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

import numpy as np

METRICS = ("M1", "M2", "M3", "M4", "M5", "M6")
M4_ABSENT = ("info_zero", "term_zero")  # what an absent slot's M4 term is (see m4_step_causality)
METRIC_NAMES = {
    "M1": "Acoustic Grounding",
    "M2": "Inter-step Coherence",
    "M3": "Reasoning Chain Coverage",
    "M4": "Reasoning Step Causality",
    "M5": "Reasoning Progress",
    "M6": "Audio Lexical Density",
}


def clip01(x: float) -> float:
    """Clip to [0, 1]; NaN stays NaN."""
    return x if math.isnan(x) else min(1.0, max(0.0, x))


def m1_acoustic_grounding(entity_audio_cosines: Sequence[float]) -> float:
    """Mean CLAP cosine between each listed entity and the whole audio; 0 when no entity is listed."""
    return float(np.mean(entity_audio_cosines)) if len(entity_audio_cosines) else 0.0


def m2_inter_step_coherence(cos_analysis_perception: Optional[float], cos_reasoning_analysis: Optional[float]) -> float:
    """½[cos(f(A), f(P)) + cos(f(R), f(A))]; 0 when any of P, A, R is absent (given as None)."""
    if cos_analysis_perception is None or cos_reasoning_analysis is None:
        return 0.0
    return 0.5 * (cos_analysis_perception + cos_reasoning_analysis)


def m3_chain_coverage(
    sigma_perception: Optional[float],
    sigma_analysis: Optional[float],
    sigma_reasoning: Optional[float],
    answer_present: bool,
) -> float:
    """Mean of the substantiveness scores of P, A, R (absent: 0) and 1 for a non-empty Answer."""
    sigmas = [0.0 if s is None else s for s in (sigma_perception, sigma_analysis, sigma_reasoning)]
    return (sum(sigmas) + (1.0 if answer_present else 0.0)) / 4


def causality_term(info: float) -> float:
    """1 / (1 + e^Info), computed without overflow for large |Info|."""
    if info >= 0:
        z = math.exp(-info)
        return z / (1 + z)
    return 1 / (1 + math.exp(info))


def m4_step_causality(
    ppl_p: float, ppl_pa: Optional[float], ppl_par: Optional[float], absent: str = "info_zero"
) -> float:
    """RSC = ½ Σ_{i∈{A,R}} 1/(1+e^Info_i), Info_A = PPL(gold|P,A) − PPL(gold|P),
    Info_R = PPL(gold|P,A,R) − PPL(gold|P,A) (ARIA §3.3.4, Eq. 3). ``ppl_pa``/``ppl_par`` are None
    when A/R is absent.

    ``absent="info_zero"`` (default, the paper's text: "If a slot is absent, the corresponding score
    (Info_A/R) is 0"): an absent slot's term is 1/(1+e^0) = ½.
    ``absent="term_zero"`` (option): an absent slot's term is 0 instead.
    With A absent, Info_R compares PPL(gold|P,R) to PPL(gold|P): ``ppl_pa`` is then the P-only value.
    """
    if absent not in M4_ABSENT:
        raise ValueError(f"absent must be 'info_zero' or 'term_zero', got {absent!r}")
    missing = 0.0 if absent == "term_zero" else 0.5
    term_a = missing if ppl_pa is None else causality_term(ppl_pa - ppl_p)
    base_r = ppl_p if ppl_pa is None else ppl_pa
    term_r = missing if ppl_par is None else causality_term(ppl_par - base_r)
    return clip01(0.5 * (term_a + term_r))


def m5_reasoning_progress(g_pa: Optional[float], g_ar: Optional[float], g_rans: Optional[float]) -> float:
    """⅓[g(P,A) + g(A,R) + g(R,Ans)], g = entailment probability; an absent pair (None) scores 0."""
    return sum(0.0 if g is None else g for g in (g_pa, g_ar, g_rans)) / 3


def m6_audio_lexical_density(word_max_similarities: Sequence[float]) -> float:
    """Mean over the CoT's words (with a vector) of their max cosine to the audio vocabulary; 0 if none."""
    return float(np.mean(word_max_similarities)) if len(word_max_similarities) else 0.0


def aria_score(metrics: Mapping[str, float]) -> float:
    """Unweighted mean of the given (already clipped) metrics; NaN if any is NaN or none is given."""
    values = list(metrics.values())
    return float(np.mean(values)) if values else float("nan")


MODES = ("Reasoning", "Scaffolding", "Decoration")
MODE_RULES = ("paper", "fitted")


@dataclass(frozen=True)
class ProfileThresholds:
    """Cut-offs of the paper's mode profiles (ARIA §3.4): a value at or above its cut-off is "high".

    The paper names the profiles but gives no numbers. The defaults are the mean of each column over the
    18 rows of its Table 1 (nine models on MMAR and MMAU-mini), i.e. "high" means above the average of
    the models the paper evaluated; they are not fitted to Table 4. ``from_profiles`` builds the same
    kind of cut-offs from any set of model profiles (for instance the models a user compares).
    """

    M2: float = 0.6197
    M3: float = 0.7035
    M4: float = 0.6257
    M5: float = 0.2957
    aria: float = 0.5072
    accuracy: float = 0.3850

    @classmethod
    def from_profiles(cls, profiles: Iterable[Mapping[str, float]]) -> "ProfileThresholds":
        """Cut-offs = the mean of each field over the given profiles."""
        rows = list(profiles)
        if not rows:
            raise ValueError("from_profiles needs at least one profile")
        return cls(**{f: float(np.mean([r[f] for r in rows])) for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class FittedThresholds:
    """Thresholds of the ``rule="fitted"`` option, which reads ARIA and accuracy only. They were chosen
    so that all 18 model/benchmark profiles of the paper's Table 1 land in the mode its Table 4 gives
    (margins down to 0.007 ARIA); they are not the paper's rule."""

    accuracy: float = 0.42  # "high accuracy"
    aria_reasoning: float = 0.50  # "high ARIA" for a model with high accuracy
    aria_scaffolding: float = 0.47  # for a model with low accuracy


RULE_THRESHOLDS = {"paper": ProfileThresholds, "fitted": FittedThresholds}  # the thresholds each rule reads


def reasoning_mode(
    profile: Mapping[str, float],
    rule: str = "paper",
    thresholds: Union[ProfileThresholds, FittedThresholds, None] = None,
) -> Optional[str]:
    """Reasoning / Scaffolding / Decoration for a model's mean scores (``profile``: M2..M5, ``aria``,
    ``accuracy``, all in [0, 1]); None when the rule names no mode for the profile.

    ``rule="paper"`` (default), the profiles as ARIA §3.4 states them, "high" meaning ≥ the cut-off of
    ``ProfileThresholds``:
      * low M2, M4 and M5 with high M3: **Scaffolding** ("primarily identified through low scores on
        M2, M4, and M5 ... a model may maintain structural coherence (high M3)");
      * otherwise high accuracy and high ARIA: **Reasoning**;
      * high accuracy and low ARIA: **Decoration**;
      * anything else (low accuracy without the Scaffolding profile): None, the paper names no mode.
    ``rule="fitted"`` (option), ARIA and accuracy only, with ``FittedThresholds``: high accuracy →
    Reasoning if ARIA ≥ ``aria_reasoning`` else Decoration; low accuracy → Scaffolding if ARIA ≥
    ``aria_scaffolding`` else Decoration (a case the paper does not have).
    """
    if rule == "paper":
        t = thresholds if thresholds is not None else ProfileThresholds()
        if not isinstance(t, ProfileThresholds):
            raise ValueError("rule='paper' takes ProfileThresholds")
        high = lambda name: profile[name] >= getattr(t, name)  # noqa: E731
        if high("M3") and not (high("M2") or high("M4") or high("M5")):
            return "Scaffolding"
        if high("accuracy"):
            return "Reasoning" if high("aria") else "Decoration"
        return None
    if rule == "fitted":
        f = thresholds if thresholds is not None else FittedThresholds()
        if not isinstance(f, FittedThresholds):
            raise ValueError("rule='fitted' takes FittedThresholds")
        if profile["accuracy"] >= f.accuracy:
            return "Reasoning" if profile["aria"] >= f.aria_reasoning else "Decoration"
        return "Scaffolding" if profile["aria"] >= f.aria_scaffolding else "Decoration"
    raise ValueError(f"mode rule must be one of {MODE_RULES}, got {rule!r}")
