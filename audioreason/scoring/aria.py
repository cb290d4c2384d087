"""ARIA-Rubrics formulas (ARIA §3.3-3.4), as pure functions of model outputs.

No model is loaded here: each function takes the numbers a backbone produced (cosines, perplexities,
probabilities) and returns a metric, so every formula is testable by hand. ``None`` marks an absent
slot; NaN marks a value that could not be computed (it propagates and is counted by the caller).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

METRICS = ("M1", "M2", "M3", "M4", "M5", "M6")
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


def m2_inter_step_coherence(cos_analysis_perception: Optional[float],
                            cos_reasoning_analysis: Optional[float]) -> float:
    """½[cos(f(A), f(P)) + cos(f(R), f(A))]; 0 when any of P, A, R is absent (given as None)."""
    if cos_analysis_perception is None or cos_reasoning_analysis is None:
        return 0.0
    return 0.5 * (cos_analysis_perception + cos_reasoning_analysis)


def m3_chain_coverage(sigma_perception: Optional[float], sigma_analysis: Optional[float],
                      sigma_reasoning: Optional[float], answer_present: bool) -> float:
    """Mean of the substantiveness scores of P, A, R (absent: 0) and 1 for a non-empty Answer."""
    sigmas = [0.0 if s is None else s for s in (sigma_perception, sigma_analysis, sigma_reasoning)]
    return (sum(sigmas) + (1.0 if answer_present else 0.0)) / 4


def causality_term(info: float) -> float:
    """1 / (1 + e^Info), computed without overflow for large |Info|."""
    if info >= 0:
        z = math.exp(-info)
        return z / (1 + z)
    return 1 / (1 + math.exp(info))


def m4_step_causality(ppl_p: float, ppl_pa: Optional[float], ppl_par: Optional[float],
                      absent: str = "info_zero") -> float:
    """RSC = ½ Σ_{i∈{A,R}} 1/(1+e^Info_i), Info_A = PPL(gold|P,A) − PPL(gold|P),
    Info_R = PPL(gold|P,A,R) − PPL(gold|P,A) (ARIA §3.3.4, Eq. 3). ``ppl_pa``/``ppl_par`` are None
    when A/R is absent.

    ``absent="info_zero"`` (default, the paper's text: "If a slot is absent, the corresponding score
    (Info_A/R) is 0"): an absent slot's term is 1/(1+e^0) = ½.
    ``absent="term_zero"`` (option): an absent slot's term is 0 instead.
    With A absent, Info_R compares PPL(gold|P,R) to PPL(gold|P): ``ppl_pa`` is then the P-only value.
    """
    if absent not in ("term_zero", "info_zero"):
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


@dataclass(frozen=True)
class ModeThresholds:
    """Thresholds of the reasoning-mode rule. The paper (§3.4, Table 4) names the modes but gives no
    numbers; these defaults assign all 18 model/benchmark profiles of its Table 1 to the mode its Table 4
    gives (tests/test_aria_formulas.py checks this)."""

    accuracy: float = 0.42  # "high accuracy"
    aria_reasoning: float = 0.50  # "high ARIA" for a model with high accuracy
    aria_scaffolding: float = 0.47  # structure that holds up, for a model with low accuracy


def reasoning_mode(aria: float, accuracy: float, thresholds: ModeThresholds = ModeThresholds()) -> str:
    """Reasoning / Scaffolding / Decoration from a model's mean ARIA and accuracy (both in [0, 1]).

    * high accuracy and high ARIA: **Reasoning** (the CoT supports the right answers);
    * high accuracy and low ARIA: **Decoration** (right answers the CoT does not support);
    * low accuracy, ARIA still ≥ ``aria_scaffolding``: **Scaffolding** (structure without substance);
    * low accuracy and low ARIA: **Decoration**.
    """
    if accuracy >= thresholds.accuracy:
        return "Reasoning" if aria >= thresholds.aria_reasoning else "Decoration"
    return "Scaffolding" if aria >= thresholds.aria_scaffolding else "Decoration"
