"""ARIA formulas against values computed by hand (ARIA §3.3-3.4)."""

import math

import pytest

from audioreason.scorers.aria import formulas as F


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
    assert F.m4_step_causality(10.0, None, 12.0, absent="term_zero") == pytest.approx(0.5 * (0 + 1 / (1 + math.exp(2))))


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


# ARIA Table 1: (M1, M2, M3, M4, M5, M6, ARIA, accuracy) per model and benchmark; Table 4's mode of each model.
PROFILE_KEYS = ("M1", "M2", "M3", "M4", "M5", "M6", "aria", "accuracy")
TABLE1 = {
    "MMAR": {
        "Qwen2-Audio": (0.1963, 0.6169, 0.6967, 0.5220, 0.2015, 0.4326, 0.4443, 0.177),
        "Qwen2.5-Omni": (0.4344, 0.6815, 0.7561, 0.5887, 0.2873, 0.5215, 0.5449, 0.443),
        "Gemma-3n-E2B": (0.2861, 0.6442, 0.7362, 0.6315, 0.3215, 0.4356, 0.5092, 0.273),
        "R1-AQA": (0.2107, 0.5700, 0.6891, 0.5358, 0.1812, 0.4237, 0.4351, 0.216),
        "Audio-Reasoner": (0.2401, 0.6159, 0.6293, 0.6099, 0.2887, 0.4817, 0.4776, 0.201),
        "AudSemThinker": (0.3309, 0.4626, 0.5735, 0.5672, 0.2317, 0.6171, 0.4638, 0.311),
        "Phi-4": (0.3432, 0.5972, 0.6481, 0.5129, 0.2210, 0.6143, 0.4895, 0.271),
        "GPT-4o-audio": (0.3725, 0.7142, 0.7838, 0.7506, 0.4346, 0.4219, 0.5796, 0.676),
        "Gemini 2.5 Flash": (0.3808, 0.6776, 0.7729, 0.7426, 0.4021, 0.4375, 0.5689, 0.626),
    },
    "MMAU-mini": {
        "Qwen2-Audio": (0.1941, 0.6123, 0.6959, 0.5346, 0.2209, 0.4462, 0.4507, 0.241),
        "Qwen2.5-Omni": (0.1929, 0.6654, 0.7587, 0.6364, 0.3481, 0.4771, 0.5131, 0.584),
        "Gemma-3n-E2B": (0.3174, 0.6207, 0.7181, 0.6903, 0.3237, 0.4491, 0.5199, 0.365),
        "R1-AQA": (0.2670, 0.5847, 0.6926, 0.5536, 0.2056, 0.4490, 0.4588, 0.263),
        "Audio-Reasoner": (0.3032, 0.5774, 0.6186, 0.6877, 0.2860, 0.5097, 0.4971, 0.340),
        "AudSemThinker": (0.3637, 0.5237, 0.6178, 0.5476, 0.2616, 0.6046, 0.4865, 0.460),
        "Phi-4": (0.3443, 0.6507, 0.7300, 0.6255, 0.2744, 0.5521, 0.5295, 0.407),
        "GPT-4o-audio": (0.4035, 0.6836, 0.7780, 0.7491, 0.4161, 0.4502, 0.5801, 0.558),
        "Gemini 2.5 Flash": (0.4199, 0.6564, 0.7680, 0.7763, 0.4169, 0.4541, 0.5819, 0.518),
    },
}
PROFILES = {(b, m): dict(zip(PROFILE_KEYS, v)) for b, rows in TABLE1.items() for m, v in rows.items()}
TABLE4 = {
    "GPT-4o-audio": "Reasoning",
    "Gemini 2.5 Flash": "Reasoning",
    "Qwen2.5-Omni": "Reasoning",
    "Gemma-3n-E2B": "Scaffolding",
    "Phi-4": "Scaffolding",
    "Audio-Reasoner": "Scaffolding",
    "AudSemThinker": "Decoration",
    "R1-AQA": "Decoration",
    "Qwen2-Audio": "Decoration",
}
# The paper's profiles (§3.4) with the default cut-offs (the Table 1 column means), worked out by hand from
# the high(1)/low(0) pattern of M2, M3, M4, M5, ARIA, accuracy. None: the paper names no mode for the profile
# (low accuracy without the Scaffolding pattern). The card's table lists the same assignments.
PAPER_RULE = {
    ("MMAR", "Qwen2-Audio"): None,  # 000000
    ("MMAR", "Qwen2.5-Omni"): "Reasoning",  # 110011: high accuracy, high ARIA
    ("MMAR", "Gemma-3n-E2B"): None,  # 111110: everything high but accuracy
    ("MMAR", "R1-AQA"): None,
    ("MMAR", "Audio-Reasoner"): None,
    ("MMAR", "AudSemThinker"): None,  # low M2, M4, M5 but also low M3: not Scaffolding
    ("MMAR", "Phi-4"): None,
    ("MMAR", "GPT-4o-audio"): "Reasoning",
    ("MMAR", "Gemini 2.5 Flash"): "Reasoning",
    ("MMAU-mini", "Qwen2-Audio"): None,
    ("MMAU-mini", "Qwen2.5-Omni"): "Reasoning",
    ("MMAU-mini", "Gemma-3n-E2B"): None,
    ("MMAU-mini", "R1-AQA"): None,
    ("MMAU-mini", "Audio-Reasoner"): None,  # 001000
    ("MMAU-mini", "AudSemThinker"): "Decoration",  # 000001: high accuracy (0.460), low ARIA (0.4865)
    ("MMAU-mini", "Phi-4"): "Reasoning",  # 110011
    ("MMAU-mini", "GPT-4o-audio"): "Reasoning",
    ("MMAU-mini", "Gemini 2.5 Flash"): "Reasoning",
}


def test_profile_cutoffs_are_the_table1_column_means():
    means = F.ProfileThresholds.from_profiles(PROFILES.values())
    default = F.ProfileThresholds()
    for name in ("M2", "M3", "M4", "M5", "aria", "accuracy"):
        assert getattr(default, name) == pytest.approx(getattr(means, name), abs=5e-5), name
    assert default.M2 == 0.6197 and default.accuracy == 0.3850


@pytest.mark.parametrize("key", sorted(PROFILES))
def test_paper_rule_assigns_table1_profiles(key):
    assert F.reasoning_mode(PROFILES[key]) == PAPER_RULE[key]
    assert F.reasoning_mode(PROFILES[key], rule="paper") == PAPER_RULE[key]


@pytest.mark.parametrize("key", sorted(PROFILES))
def test_fitted_rule_reproduces_table4_from_table1(key):
    assert F.reasoning_mode(PROFILES[key], rule="fitted") == TABLE4[key[1]]


def test_paper_rule_profiles_by_hand():
    t = F.ProfileThresholds(M2=0.5, M3=0.5, M4=0.5, M5=0.5, aria=0.5, accuracy=0.5)
    base = dict(M2=0.6, M3=0.6, M4=0.6, M5=0.6, aria=0.6, accuracy=0.6)
    assert F.reasoning_mode(base, thresholds=t) == "Reasoning"
    assert F.reasoning_mode({**base, "aria": 0.4}, thresholds=t) == "Decoration"  # high accuracy, low ARIA
    # Scaffolding: low M2, M4, M5 with high M3, whatever the accuracy
    scaffold = {**base, "M2": 0.4, "M4": 0.4, "M5": 0.4}
    assert F.reasoning_mode(scaffold, thresholds=t) == "Scaffolding"
    assert F.reasoning_mode({**scaffold, "accuracy": 0.1}, thresholds=t) == "Scaffolding"
    # low M3 too: no longer the Scaffolding profile, so accuracy and ARIA decide
    assert F.reasoning_mode({**scaffold, "M3": 0.4}, thresholds=t) == "Reasoning"
    assert F.reasoning_mode({**scaffold, "M3": 0.4, "aria": 0.4}, thresholds=t) == "Decoration"
    # low accuracy and low ARIA: the paper names no mode (the fitted rule's extra Decoration case is not in it)
    assert F.reasoning_mode({**base, "aria": 0.4, "accuracy": 0.1}, thresholds=t) is None
    assert F.reasoning_mode({**base, "accuracy": 0.1}, thresholds=t) is None
    with pytest.raises(ValueError, match="rule"):
        F.reasoning_mode(base, rule="vibes")


def test_table1_aria_is_mean_of_metric_means():
    # Qwen2-Audio on MMAR: M1..M6 means from Table 1 average to its ARIA column.
    means = dict(zip(F.METRICS, TABLE1["MMAR"]["Qwen2-Audio"][:6]))
    assert F.aria_score(means) == pytest.approx(0.4443, abs=1e-4)


def test_fitted_thresholds_are_options():
    strict = F.FittedThresholds(accuracy=0.7, aria_reasoning=0.6, aria_scaffolding=0.55)
    profile = dict(aria=0.5796, accuracy=0.676)
    assert F.reasoning_mode(profile, rule="fitted", thresholds=strict) == "Scaffolding"  # accuracy now low
    assert F.reasoning_mode({**profile, "aria": 0.54}, rule="fitted", thresholds=strict) == "Decoration"
