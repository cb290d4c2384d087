"""AriaScorer with tiny random backbones: every metric equals an independent computation with the
same models, the batched path equals the one-item-at-a-time loop, and models load once."""

import math

import numpy as np
import pytest
import torch

from audioreason.audio import load_audio, synthesize_clip
from audioreason.backends import load_backend
from audioreason.scorers.aria import formulas as F
from audioreason.scorers.aria.scorer import M3_BODY, M3_PREFIX, M3_TAIL, M4_CUE, AriaScorer
from audioreason.text.cot import parse_cot

COTS = [
    "[PERCEPTION]\nEntities: dog, car horn\nDescription: A dog barks twice, then a horn.\n[ANALYSIS]\n"
    "The bark is close and loud.\n[REASONING]\nThe main sound is the dog.\n[ANSWER]\n(A) Dog barking",
    "**Perception:** Entities: rain; thunder\nSteady rain, then a low rumble.\n**Analysis:** A storm.\n"
    "**Reasoning:** The rumble is thunder.\n**Answer:** Thunder",
    "[PERCEPTION] Entities: music [REASONING] Drums and a fast tempo. [ANSWER] B",  # no Analysis
    "[ANSWER] Rain",  # only an answer
]
REFS = ["Dog barking", "Thunder", "Music", "Rain"]
CHOICES = [["Dog barking", "Rain"], ["Rain", "Thunder"], ["Speech", "Music"], ["Rain", "Wind"]]


def audio_items():
    return [
        (synthesize_clip(m, 1.5, 16000, seed=str(i)), 16000)
        for i, m in enumerate(["sound", "mix-sound-music", "music", "speech"])
    ]


@pytest.fixture(scope="module")
def result(tiny_backbones_f64):
    scorer = AriaScorer(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog", "thunder"])
    return scorer.score(COTS, REFS, CHOICES, audio=audio_items(), return_items=True)


def clap_audio_vector(clap, processor, clip, truncation="rand_trunc"):
    """Unit CLAP embedding of one clip, computed here independently of the scorer (float64 model)."""
    np.random.seed(0)  # the scorer seeds CLAP's crops with AriaConfig.seed
    features = processor.feature_extractor(
        [clip], sampling_rate=48000, truncation=truncation, padding="repeatpad", return_tensors="pt"
    )
    with torch.no_grad():
        a = clap.model.get_audio_features(
            **{k: v.to(torch.float64) if v.is_floating_point() else v for k, v in features.items()}
        ).pooler_output[0]
    return (a / a.norm()).numpy()


def whole_audio_vector(clap, processor, clip, window=48000):
    """ARIA's "whole audio" for the tiny unfused CLAP (1-s windows): consecutive windows, each embedded,
    averaged with weights = seconds covered, normalised. The 1.5-s clips here: 1 s + 0.5 s."""
    parts = [clip[i : i + window] for i in range(0, len(clip), window)]
    total = sum(len(p) / window * clap_audio_vector(clap, processor, p) for p in parts)
    return total / np.linalg.norm(total)


def m1_by_hand(clap, processor, cot, a):
    cosines = []
    for e in parse_cot(cot).entities:
        with torch.no_grad():
            t = clap.model.get_text_features(**processor.tokenizer([e], return_tensors="pt")).pooler_output[0]
        cosines.append(float((t / t.norm()).numpy() @ a))
    return np.mean(cosines) if cosines else 0.0


def test_m1_is_mean_entity_cosine_with_the_whole_audio(tiny_backbones_f64, result):
    from transformers import ClapProcessor

    clap = load_backend("clap", tiny_backbones_f64["clap"])
    processor = ClapProcessor.from_pretrained(tiny_backbones_f64["clap"])
    for item, cot, source in zip(result["items"], COTS, audio_items()):
        clip, _ = load_audio(source, 48000)
        assert len(clip) == 72000  # 1.5 s: longer than the tiny CLAP's 1-s window
        a = whole_audio_vector(clap, processor, clip)
        # The scorer runs the audio tower on a batch of windows: HTSAT keeps some float32
        # intermediates even in a float64 model, so batching moves the cosine by ~1e-8.
        assert item["M1"] == pytest.approx(m1_by_hand(clap, processor, cot, a), abs=1e-6)


def test_m1_random_crop_option_is_one_seeded_crop(tiny_backbones_f64):
    from transformers import ClapProcessor

    clap = load_backend("clap", tiny_backbones_f64["clap"])
    processor = ClapProcessor.from_pretrained(tiny_backbones_f64["clap"])
    r = AriaScorer(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog"], m1_audio="random_crop").score(
        COTS, REFS, CHOICES, audio=audio_items(), return_items=True
    )
    for item, cot, source in zip(r["items"], COTS, audio_items()):
        a = clap_audio_vector(clap, processor, load_audio(source, 48000)[0])  # rand_trunc, seed 0
        assert item["M1"] == pytest.approx(m1_by_hand(clap, processor, cot, a), abs=1e-6)


def test_m2_is_half_sum_of_step_cosines(tiny_backbones_f64, result):
    embedder = load_backend("embedder", tiny_backbones_f64["embedder"]).model
    f = lambda text: embedder.encode([text], normalize_embeddings=True)[0]  # noqa: E731
    for item, cot in zip(result["items"], COTS):
        s = parse_cot(cot)
        if s.missing and set(s.missing) & {"perception", "analysis", "reasoning"}:
            assert item["M2"] == 0.0
        else:
            expected = 0.5 * (f(s.analysis) @ f(s.perception) + f(s.reasoning) @ f(s.analysis))
            assert item["M2"] == pytest.approx(float(expected), abs=1e-9)


def _ppl(model, tok, context: str, target: str) -> float:
    ids = tok(context, add_special_tokens=False).input_ids
    cue = tok(M4_CUE, add_special_tokens=False).input_ids
    tgt = tok(target, add_special_tokens=False).input_ids
    with torch.no_grad():
        logits = model(torch.tensor([ids + cue + tgt])).logits[0]
    start = len(ids) + len(cue) - 1
    nll = torch.nn.functional.cross_entropy(logits[start : start + len(tgt)], torch.tensor(tgt))
    return math.exp(float(nll))


def test_m4_from_direct_perplexities(tiny_backbones_f64, result):
    lm = load_backend("lm", tiny_backbones_f64["lm"])
    item, s = result["items"][0], parse_cot(COTS[0])
    p = f"Perception: {s.perception}\n"
    a = f"Analysis: {s.analysis}\n"
    r = f"Reasoning: {s.reasoning}\n"
    # Pieces are tokenized separately by the scorer; here too, by concatenating their ids.
    tok = lm.tokenizer

    def ppl(*parts):
        ids = [i for part in parts for i in tok(part, add_special_tokens=False).input_ids]
        cue = tok(M4_CUE, add_special_tokens=False).input_ids
        tgt = tok(" Dog barking", add_special_tokens=False).input_ids
        with torch.no_grad():
            logits = lm.model(torch.tensor([ids + cue + tgt])).logits[0]
        start = len(ids) + len(cue) - 1
        return math.exp(float(torch.nn.functional.cross_entropy(logits[start : start + len(tgt)], torch.tensor(tgt))))

    info_a, info_r = ppl(p, a) - ppl(p), ppl(p, a, r) - ppl(p, a)
    expected = 0.5 * (1 / (1 + math.exp(info_a)) + 1 / (1 + math.exp(info_r)))
    assert item["M4"] == pytest.approx(expected, abs=1e-9)
    # Only an answer: Info_A and Info_R "are 0" (§3.3.4), so each term is 1/(1+e^0) = 1/2.
    assert result["items"][3]["M4"] == 0.5


def test_m4_term_zero_option_scores_absent_terms_zero(tiny_backbones_f64):
    scorer = AriaScorer(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog"], m4_absent="term_zero")
    items = scorer.score(COTS[2:], REFS[2:], CHOICES[2:], return_items=True)["items"]
    assert items[1]["M4"] == 0.0  # only an answer
    paper = AriaScorer(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog"]).score(
        COTS[2:3], REFS[2:3], CHOICES[2:3], return_items=True
    )["items"][0]
    assert paper["M4"] == pytest.approx(items[0]["M4"] + 0.25)  # no Analysis: the A term is 1/2 vs 0


def test_m5_is_mean_of_entailment_probabilities(tiny_backbones_f64, result):
    nli = load_backend("nli", tiny_backbones_f64["nli"])

    def g(premise, hypothesis):
        batch = nli.tokenizer([premise], [hypothesis], truncation=True, max_length=512, return_tensors="pt")
        with torch.no_grad():
            return float(torch.softmax(nli.model(**batch).logits[0], -1)[2])

    s = parse_cot(COTS[0])
    expected = (g(s.perception, s.analysis) + g(s.analysis, s.reasoning) + g(s.reasoning, s.answer)) / 3
    assert result["items"][0]["M5"] == pytest.approx(expected, abs=1e-9)
    s = parse_cot(COTS[2])  # no Analysis: only g(R, Ans) remains
    assert result["items"][2]["M5"] == pytest.approx(g(s.reasoning, s.answer) / 3, abs=1e-9)


def test_m3_logprob_from_a_full_forward_pass(tiny_backbones_f64, result):
    lm = load_backend("lm", tiny_backbones_f64["lm"])
    tok = lm.tokenizer
    digits = [tok(str(d), add_special_tokens=False).input_ids[0] for d in range(10)]

    def sigma(text):
        # the whole prompt, tokenized as one string (tests/test_aria_m3_tokens.py)
        ids = (
            lm.start_ids
            + tok(M3_PREFIX + M3_BODY.format(text=text) + M3_TAIL + " 0.", add_special_tokens=False).input_ids
        )
        with torch.no_grad():
            logits = lm.model(torch.tensor([ids])).logits[0]
        first = torch.softmax(logits[-3], -1)
        tenths = torch.softmax(logits[-1][digits], -1)
        p0, p1 = float(first[digits[0]]), float(first[digits[1]])
        return (p1 + p0 * float((tenths * torch.arange(10)).sum()) / 10) / (p0 + p1)

    s = parse_cot(COTS[0])
    expected = (sigma(s.perception) + sigma(s.analysis) + sigma(s.reasoning) + 1) / 4
    assert result["items"][0]["M3"] == pytest.approx(expected, abs=1e-9)
    assert result["items"][3]["M3"] == 0.25  # only a non-empty answer


def test_m6_by_hand(tiny_backbones):
    # 2-d vectors at fixed angles (tests/tiny_models.py): dog 0°, bark 0°, stock 150°, market 135°;
    # vocabulary dog (0°) and thunder (90°). "loudly" has no vector and is counted, not scored.
    scorer = AriaScorer(
        backbones={"preset": "offline", "vectors": tiny_backbones["vectors"]}, vocabulary=["dog", "thunder"]
    )
    values = scorer._m6(
        ["Dogs bark loudly at the stock market."],
        counts := {"m6_words": 0, "m6_words_without_vector": 0, "m6_items_without_words": 0},
    )
    expected = (1 + 1 + max(math.cos(math.radians(150)), math.cos(math.radians(60))) + math.cos(math.radians(45))) / 4
    assert values[0] == pytest.approx(expected, abs=1e-6)
    assert counts == {
        "m6_words": 4,
        "m6_words_without_vector": 1,
        "m6_items_without_words": 0,
        "m6_vocabulary_without_vector": 0,
    }


def test_summary_aggregates_items(result):
    for metric in ("M1", "M2", "M3", "M4", "M5", "M6"):
        clipped = [min(1, max(0, it[metric])) for it in result["items"]]
        assert result[metric] == pytest.approx(np.mean(clipped))
        assert result[f"{metric}_std"] == pytest.approx(np.std(clipped))
    assert result["aria"] == pytest.approx(np.mean([result[m] for m in ("M1", "M2", "M3", "M4", "M5", "M6")]))
    assert result["aria_complete"]
    profile = {
        **{m: result[m] for m in ("M2", "M3", "M4", "M5")},
        "aria": result["aria"],
        "accuracy": result["accuracy"],
    }
    assert result["reasoning_mode_rule"] == "paper"
    assert result["reasoning_mode"] == F.reasoning_mode(profile)
    if result["reasoning_mode"] is None:
        assert "none of the paper's" in result["note"]
    assert result["accuracy"] == pytest.approx(3 / 4)  # 0 and 3 exact, "B" names Music; 1 has no [ANSWER]
    assert result["answer_methods"] == {"exact": 2, "letter": 1, "unanswered": 1}
    assert result["counts"]["m2_items_missing_slot"] == 2


@pytest.mark.parametrize("mode", ["logprob", "generate"])
def test_batched_equals_one_at_a_time(tiny_backbones_f64, mode):
    kwargs = dict(backbones=tiny_backbones_f64, m3_mode=mode, vocabulary=["dog", "thunder"])
    fast = AriaScorer(**kwargs).score(COTS, REFS, CHOICES, audio=audio_items(), return_items=True)
    slow = AriaScorer(batched=False, **kwargs).score(COTS, REFS, CHOICES, audio=audio_items(), return_items=True)
    for a, b in zip(fast["items"], slow["items"]):
        for metric in ("M1", "M2", "M3", "M4", "M5", "M6"):
            if math.isnan(a[metric]):
                assert math.isnan(b[metric])
            else:  # M1: see test_m1_is_mean_entity_audio_cosine (batched audio tower)
                assert a[metric] == pytest.approx(b[metric], abs=1e-6 if metric == "M1" else 1e-9), metric
    assert fast["counts"] == slow["counts"]


def test_mode_rule_and_thresholds_are_options(tiny_backbones_f64):
    kwargs = dict(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog", "thunder"])
    low = F.FittedThresholds(accuracy=0.0, aria_reasoning=0.0, aria_scaffolding=0.0)
    r = AriaScorer(mode_rule="fitted", mode_thresholds=low, **kwargs).score(COTS, REFS, CHOICES, audio=audio_items())
    assert (r["reasoning_mode"], r["reasoning_mode_rule"]) == ("Reasoning", "fitted")
    every_high = F.ProfileThresholds(M2=0, M3=0, M4=0, M5=0, aria=0, accuracy=0)
    r = AriaScorer(mode_thresholds=every_high, **kwargs).score(COTS, REFS, CHOICES, audio=audio_items())
    assert (r["reasoning_mode"], r["reasoning_mode_rule"]) == ("Reasoning", "paper")
    with pytest.raises(ValueError, match="mode_rule"):
        AriaScorer(mode_rule="vibes", **kwargs)


def test_m2_loop_embeds_each_items_three_slots_in_one_call(tiny_backbones_f64, monkeypatch):
    embedder = load_backend("embedder", tiny_backbones_f64["embedder"])
    calls = []
    real = type(embedder)._encode
    monkeypatch.setattr(
        type(embedder), "_encode", lambda self, texts, bs: calls.append(len(texts)) or real(self, texts, bs)
    )
    AriaScorer(backbones=tiny_backbones_f64, batched=False)._m2(
        [parse_cot(c) for c in COTS], {"m2_items_missing_slot": 0}
    )
    assert calls == [3, 3]  # the two items with P, A and R; one encode call each


def test_clear_caches_forgets_computed_values_but_keeps_models(tiny_backbones_f64):
    scorer = AriaScorer(backbones=tiny_backbones_f64, m3_mode="logprob", vocabulary=["dog", "thunder"])
    first = scorer.score(COTS, REFS, CHOICES, audio=audio_items())
    embedder, clap = scorer.backend("embedder"), scorer.backend("clap")
    assert len(embedder.cache) and clap.whole_cache and scorer.backend("nli").cache
    scorer.clear_caches()
    assert not len(embedder.cache) and not clap.whole_cache and not scorer.backend("nli").cache
    assert not scorer.backend("vectors")._best
    assert scorer.backend("embedder") is embedder  # still loaded
    again = scorer.score(COTS, REFS, CHOICES, audio=audio_items())
    assert again["aria"] == pytest.approx(first["aria"], abs=1e-9)


def test_generate_mode_counts_unparsed_replies(tiny_backbones_f64):
    # A random tiny LM never answers with a number: every slot is retried 3 times, then counted.
    r = AriaScorer(backbones=tiny_backbones_f64, m3_mode="generate").score(COTS[:1], REFS[:1], CHOICES[:1])
    assert r["counts"]["m3_unparsed_slots"] == 3 and r["counts"]["m3_retries"] == 9
    assert r["M3"] is None and r["counts"]["M3_items_not_scored"] == 1


def test_backbones_load_once_per_process(tiny_backbones):
    first = load_backend("embedder", tiny_backbones["embedder"])
    AriaScorer(backbones=tiny_backbones).score(COTS[:1], REFS[:1], CHOICES[:1])
    assert load_backend("embedder", tiny_backbones["embedder"]) is first
    assert len(first.cache) > 0  # and texts embedded once are remembered


def test_unavailable_roles_are_reported_not_zero(tiny_backbones):
    r = AriaScorer(
        backbones={"preset": "offline", "embedder": tiny_backbones["embedder"], "lm": None, "vectors": None}
    ).score(COTS[:2], REFS[:2], CHOICES[:2])
    assert r["M2"] is not None
    for metric in ("M1", "M3", "M4", "M5", "M6"):
        assert r[metric] is None and r["backbones"][metric].startswith("unavailable")
    assert r["aria"] == r["M2"] and r["aria_metrics"] == ["M2"] and not r["aria_complete"]
    assert r["reasoning_mode"] is None and "not comparable" in r["note"]


def test_missing_hub_model_is_unavailable_offline():
    r = AriaScorer(
        backbones={"embedder": "no-such-org/no-such-model", "clap": None, "lm": None, "nli": None, "vectors": None}
    ).score(COTS[:1], REFS[:1], CHOICES[:1])
    assert "not in the local Hugging Face cache" in r["backbones"]["M2"]
