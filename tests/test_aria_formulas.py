"""ARIA formulas against values computed by hand (ARIA §3.3-3.4)."""
import math

import pytest

from audioreason.scoring import aria as F


def test_m1_mean_of_entity_cosines_and_zero_without_entities():
    assert F.m1_acoustic_grounding([0.2, 0.4, -0.1]) == pytest.approx(0.5 / 3)
    assert F.m1_acoustic_grounding([]) == 0.0


def test_m2_half_sum_of_two_cosines():
    assert F.m2_inter_step_coherence(0.8, 0.6) == pytest.approx(0.7)
    assert F.m2_inter_step_coherence(None, 0.6) == 0.0


def test_m3_mean_of_four_slot_scores():
    assert F.m3_chain_coverage(0.5, 1.0, None, True) == pytest.approx((0.5 + 1.0 + 0 + 1) / 4)
    assert F.m3_chain_coverage(None, None, None, True) == 0.25
    assert math.isnan(F.m3_chain_coverage(float("nan"), 1.0, 1.0, True))


def test_causality_term_is_a_stable_sigmoid():
    assert F.causality_term(0.0) == 0.5
    assert F.causality_term(math.log(3)) == pytest.approx(0.25)
    assert F.causality_term(-math.log(3)) == pytest.approx(0.75)
    assert F.causality_term(1000.0) == pytest.approx(0.0) and F.causality_term(-1000.0) == 1.0


def test_m4_step_causality_by_hand():
    # Info_A = 8 - 10 = -2, Info_R = 9 - 8 = 1
    expected = 0.5 * (1 / (1 + math.exp(-2)) + 1 / (1 + math.exp(1)))
    assert F.m4_step_causality(10.0, 8.0, 9.0) == pytest.approx(expected)
    assert expected == pytest.approx(0.574869, abs=1e-6)
    # A absent: Info_R = PPL(gold|P,R) - PPL(gold|P) = 12 - 10 = 2; Info_A "is 0" (§3.3.4), so its term is 1/2
    assert F.m4_step_causality(10.0, None, 12.0) == pytest.approx(0.5 * (0.5 + 1 / (1 + math.exp(2))))
    assert F.m4_step_causality(10.0, None, 12.0, absent="term_zero") == pytest.approx(
        0.5 * (0 + 1 / (1 + math.exp(2))))


def test_m4_absent_slots_default_to_the_papers_info_zero():
    # "If a slot is absent, the corresponding score (Info_A/R) is 0": 1/(1+e^0) = 1/2 per absent term.
    assert F.m4_step_causality(float("nan"), None, None) == 0.5
    assert F.m4_step_causality(float("nan"), None, None, absent="info_zero") == 0.5
    assert F.m4_step_causality(float("nan"), None, None, absent="term_zero") == 0.0
    with pytest.raises(ValueError):
        F.m4_step_causality(1.0, 1.0, 1.0, absent="zero")


def test_m5_third_of_entailments():
    assert F.m5_reasoning_progress(0.9, None, 0.3) == pytest.approx(0.4)
    assert F.m5_reasoning_progress(None, None, None) == 0.0


def test_m6_mean_of_word_maxima():
    assert F.m6_audio_lexical_density([0.5, 1.0]) == 0.75
    assert F.m6_audio_lexical_density([]) == 0.0


def test_clip_and_aria_mean():
    assert F.clip01(-0.2) == 0.0 and F.clip01(1.3) == 1.0 and F.clip01(0.4) == 0.4
    assert math.isnan(F.clip01(float("nan")))
    assert F.aria_score({"M1": 0.2, "M2": 0.4, "M3": 0.9}) == pytest.approx(0.5)
    assert math.isnan(F.aria_score({}))


# ARIA Table 1 (ARIA, accuracy) per model, and Table 4's mode of each model.
TABLE1 = {
    "MMAR": {"Qwen2-Audio": (0.4443, 0.177), "Qwen2.5-Omni": (0.5449, 0.443), "Gemma-3n-E2B": (0.5092, 0.273),
             "R1-AQA": (0.4351, 0.216), "Audio-Reasoner": (0.4776, 0.201), "AudSemThinker": (0.4638, 0.311),
             "Phi-4": (0.4895, 0.271), "GPT-4o-audio": (0.5796, 0.676), "Gemini 2.5 Flash": (0.5689, 0.626)},
    "MMAU-mini": {"Qwen2-Audio": (0.4507, 0.241), "Qwen2.5-Omni": (0.5131, 0.584),
                  "Gemma-3n-E2B": (0.5199, 0.365), "R1-AQA": (0.4588, 0.263), "Audio-Reasoner": (0.4971, 0.340),
                  "AudSemThinker": (0.4865, 0.460), "Phi-4": (0.5295, 0.407), "GPT-4o-audio": (0.5801, 0.558),
                  "Gemini 2.5 Flash": (0.5819, 0.518)},
}
TABLE4 = {"GPT-4o-audio": "Reasoning", "Gemini 2.5 Flash": "Reasoning", "Qwen2.5-Omni": "Reasoning",
          "Gemma-3n-E2B": "Scaffolding", "Phi-4": "Scaffolding", "Audio-Reasoner": "Scaffolding",
          "AudSemThinker": "Decoration", "R1-AQA": "Decoration", "Qwen2-Audio": "Decoration"}


@pytest.mark.parametrize("benchmark", sorted(TABLE1))
def test_default_thresholds_reproduce_table4_from_table1(benchmark):
    for model, (aria, accuracy) in TABLE1[benchmark].items():
        assert F.reasoning_mode(aria, accuracy) == TABLE4[model], (benchmark, model)


def test_table1_aria_is_mean_of_metric_means():
    # Qwen2-Audio on MMAR: M1..M6 means from Table 1 average to its ARIA column.
    means = dict(zip(F.METRICS, (0.1963, 0.6169, 0.6967, 0.5220, 0.2015, 0.4326)))
    assert F.aria_score(means) == pytest.approx(0.4443, abs=1e-4)


def test_thresholds_are_options():
    strict = F.ModeThresholds(accuracy=0.7, aria_reasoning=0.6, aria_scaffolding=0.55)
    assert F.reasoning_mode(0.5796, 0.676, strict) == "Scaffolding"  # accuracy now counts as low
    assert F.reasoning_mode(0.5400, 0.676, strict) == "Decoration"
