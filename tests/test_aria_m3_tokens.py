"""M3 prompts reach the model as the whole prompt string tokenizes (ARIA §3.3.3): reusing the few-shot
prefix's key/value cache must not change a single token id, however the prompt is cut.

The tiny LM here has a tokenizer that merges "\\n\\n" (as SmolLM2's and Qwen's do), so the prefix alone
ends in one "\\n\\n" token while inside the whole prompt the same characters tokenize differently.
"""

import pytest
import torch
from tiny_models import BLANK_LINE_CORPUS, build_causal_lm

from audioreason.backends.lm import CausalLM
from audioreason.scorers.aria.scorer import M3_BODY, M3_PREFIX, M3_TAIL

BODIES = [
    M3_BODY.format(text=t)
    for t in (
        "A dog barks three times, then a car horn sounds twice.",
        "rain",
        "Steady rain then a low rumble. Score: 0.9",
        "the music has a fast tempo with drums\n\n",  # ends in a blank line: the tail's "\n" joins it
        "",
    )
]


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    folder = build_causal_lm(
        tmp_path_factory.mktemp("lm_blank_lines"), extra_corpus=tuple(BLANK_LINE_CORPUS), initializer_range=1.0
    )  # outputs that depend on every token
    model = CausalLM.load(str(folder), "tiny blank-line LM")
    model.model.to(torch.float64)  # batched and single rows then agree to rounding
    return model


def whole_ids(lm, body, tail=M3_TAIL):
    return lm.start_ids + lm.tokenizer(M3_PREFIX + body + tail, add_special_tokens=False).input_ids


def test_the_cut_really_changes_tokens_here(lm):
    # The premise of this file: pieces tokenized apart differ from the whole (the old behaviour).
    pieces = lm.start_ids + lm.ids(M3_PREFIX) + lm.ids(BODIES[0]) + lm.ids(M3_TAIL)
    assert pieces != whole_ids(lm, BODIES[0])


def test_prompt_ids_are_the_whole_prompt_tokenized(lm):
    for body in BODIES:
        assert lm.prompt_ids(M3_PREFIX, body, M3_TAIL) == whole_ids(lm, body)


@pytest.mark.parametrize("reuse_prefix", [True, False])
def test_generation_equals_whole_string_generation(lm, reuse_prefix):
    expected = []
    for body in BODIES:
        ids = whole_ids(lm, body)
        with torch.inference_mode():
            out = lm.model.generate(
                input_ids=torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=10,
                do_sample=False,
                pad_token_id=lm.pad_id,
            )
        expected.append(lm.tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True))
    got = lm.generate(M3_PREFIX, BODIES, M3_TAIL, max_new_tokens=10, batch_size=3, reuse_prefix=reuse_prefix)
    assert got == expected


@pytest.mark.parametrize("reuse_prefix", [True, False])
def test_logprob_scores_equal_a_whole_string_forward_pass(lm, reuse_prefix):
    digits = [lm.ids(str(d))[0] for d in range(10)]
    expected = []
    for body in BODIES:
        ids = whole_ids(lm, body, M3_TAIL + " 0.")
        with torch.inference_mode():
            logits = lm.model(torch.tensor([ids])).logits[0].double()
        first, tenths = torch.softmax(logits[-3], -1), torch.softmax(logits[-1][digits], -1)
        p0, p1 = float(first[digits[0]]), float(first[digits[1]])
        expected.append((p1 + p0 * float((tenths * torch.arange(10)).sum()) / 10) / (p0 + p1))
    got = lm.digit_scores(M3_PREFIX, BODIES, M3_TAIL, batch_size=3, reuse_prefix=reuse_prefix)
    assert got == pytest.approx(expected, abs=1e-9)


def test_a_long_body_is_cut_so_the_whole_prompt_fits(lm):
    lm_short = CausalLM(lm.model, lm.tokenizer, "short", max_input_tokens=700)
    body = M3_BODY.format(text="a dog barks and the rain falls " * 100)
    ids = lm_short.prompt_ids(M3_PREFIX, body, M3_TAIL)
    assert len(ids) <= 700
    assert ids[-len(lm.ids(M3_TAIL)) :] == lm.ids(M3_TAIL)  # the tail survives the cut
    # and the ids are still a whole-string tokenization: of the prefix, a cut body and the tail
    text = lm.tokenizer.decode(ids[len(lm.start_ids) :])
    assert text.startswith(M3_PREFIX + "Step: a dog barks") and text.endswith(M3_TAIL)
    assert lm.start_ids + lm.ids(text) == ids
