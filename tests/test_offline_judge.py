"""The constrained offline judge (audioreason.judges.constrained, LocalJudge(constrained=True)): the verdict
grammar as a regex, enforced by llguidance inside transformers' generate. A tiny random Llama built from a
config (its replies are noise, so only the constraint can make them valid JSON) and the packaged SmolLM2-135M
on real MMAR items (tests/data/MMAR-meta.jsonl, CC BY-NC 4.0)."""

import json
import re
from pathlib import Path

import pytest

from audioreason.judges import JudgeRequest, JudgeRunner, LocalJudge, SamplingParams, VerdictSchema, parse_verdict
from audioreason.judges.base import judges_metadata, offline_judge_label
from audioreason.judges.constrained import rubric_pattern, token_budget, verdict_pattern
from audioreason.scorers.mmar_rubrics.generation import validate_rubric
from audioreason.scorers.mmar_rubrics.scorer import build_messages, schema_for

llguidance = pytest.importorskip("llguidance")
META = Path(__file__).parent / "data" / "MMAR-meta.jsonl"


def mmar_items(n):
    with open(META, encoding="utf-8") as f:
        return [json.loads(line) for _, line in zip(range(n), f)]


def test_the_pattern_is_exactly_the_verdict_json():
    schema = VerdictSchema.from_criteria([('Cue: "Throat" Singing', (0, 1)), ("Final Choice", (0, 0.5, 1))])
    pattern = re.compile(verdict_pattern(schema, justification_chars=10))
    good = (
        '[{"name": "Cue: \\"Throat\\" Singing", "score": 1, "justification": "heard it"}, '
        '{"name": "Final Choice", "score": 0.5, "justification": "half"}]'
    )
    assert pattern.fullmatch(good)
    assert parse_verdict(good, schema).verdict.total == 1.5
    assert not pattern.fullmatch(good.replace('"score": 1,', '"score": 2,'))  # not an option
    assert not pattern.fullmatch(good.replace("heard it", "heard it, loud"))  # 14 > 10 characters
    assert not pattern.fullmatch(good.replace('"justification": "half"', '"justification": ""'))  # empty
    swapped = json.dumps(list(reversed(json.loads(good))))
    assert not pattern.fullmatch(swapped)  # names in the schema's order only
    one = re.compile(verdict_pattern(VerdictSchema.single_score((1, 2, 3)), 5))
    assert one.fullmatch('{"score": 3, "justification": "ok"}') and not one.fullmatch(
        '{"score": 4, "justification": "ok"}'
    )
    rubric = re.compile(rubric_pattern(2, 10, 10, 10))
    assert (
        rubric.fullmatch(
            '[{"name": "A", "scoring_point": "B", "note": "C"}, {"name": "D", "scoring_point": "E", "note": ""}]'
        )
        is None
    )  # a note needs one character
    assert rubric.fullmatch(
        '[{"name": "A", "scoring_point": "B", "note": "C"}, {"name": "D", "scoring_point": "E", "note": "F"}]'
    )


@pytest.fixture(scope="module")
def smollm2():
    from audioreason.backends import BackendUnavailable, load_backend

    try:
        return load_backend("lm", "packaged:SmolLM2-135M-Instruct")
    except BackendUnavailable as err:
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def tiny_random(smollm2):
    """A 2-layer Llama with random weights over SmolLM2's real tokenizer (llguidance needs a real vocabulary)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from audioreason.backends.lm import CausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(smollm2.tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=smollm2.tokenizer.bos_token_id,
        eos_token_id=smollm2.tokenizer.eos_token_id,
    )
    return CausalLM(LlamaForCausalLM(config), smollm2.tokenizer, "tiny random Llama (test)")


def test_a_random_model_under_the_constraint_writes_valid_verdicts(tiny_random):
    items = mmar_items(2)
    judge = LocalJudge(backend=tiny_random, constrained=True, justification_chars=12, batch_size=2)
    free = LocalJudge(backend=tiny_random, max_new_tokens=40)
    requests = [
        JudgeRequest(it["id"], build_messages(it, it["thinking"], it["answer"]), schema_for(it)) for it in items
    ]
    sampling = SamplingParams(temperature=0.0, seed=42, max_tokens=8)  # too few: the judge raises it to the grammar's
    results = JudgeRunner(judge, sampling=sampling, max_reasks=0).run(requests)
    for it, result in zip(items, results):
        assert result.status == "ok" and result.reasks == 0, result.error
        reply = json.loads(result.raw_reply)
        assert [o["name"] for o in reply] == [c["name"] for c in it["rubric"]]
        assert all(o["score"] in c["choices"] for o, c in zip(reply, it["rubric"]))
        assert all(1 <= len(o["justification"]) <= 12 for o in reply)
        # Within the grammar's token budget, and it stopped (the end token), never cut off.
        assert result.completion_tokens <= token_budget(schema_for(it), tiny_random.tokenizer, 12)
    # Decoding freely, the same random weights write no verdict at all.
    loose = JudgeRunner(free, sampling=sampling, max_reasks=0).run(requests[:1])
    assert loose[0].status == "invalid"
    assert "[constrained: llguidance regex, justification <= 12 chars]" in judge.name and free.constraint is None
    # A sampled (temperature 1) constrained draw is valid too.
    hot = JudgeRunner(judge, sampling=SamplingParams(temperature=1.0, seed=7), max_reasks=0).run(requests[:1])
    assert hot[0].status == "ok"


def test_the_judge_and_its_constraint_are_recorded_and_labelled(tiny_random):
    judge = LocalJudge(backend=tiny_random, constrained=True, justification_chars=12)
    (meta,) = judges_metadata([judge, judge])
    assert meta == {
        "name": judge.name,
        "model": "tiny random Llama (test)",
        "offline": True,
        "constraint": "llguidance regex, justification <= 12 chars",
    }
    assert offline_judge_label({"judge_metadata": [meta]}) == (
        "(offline judge: tiny random Llama (test), constrained: llguidance regex, justification <= 12 chars)"
    )
    assert offline_judge_label({"judge_metadata": [{"name": "gpt-4o", "offline": False}]}) == ""


def test_rubric_generation_under_the_constraint_gives_a_valid_criterion_set(tiny_random):
    from audioreason.scorers.mmar_rubrics.generation import generate_rubrics

    judge = LocalJudge(backend=tiny_random, constrained=True)
    (out,) = generate_rubrics(
        mmar_items(1),
        judge,
        k=3,
        max_reasks=1,
        sampling=SamplingParams(temperature=1.0, seed=3),
        field_chars=(8, 12, 8),
    )
    # A random model may repeat a name (the grammar cannot forbid it): then it is re-asked, and counted.
    if out["status"] == "ok":
        assert len(out["rubric"]) == 3 and validate_rubric(out["rubric"], 3) == out["rubric"]
    else:
        assert out["status"] == "invalid" and "distinct" in out["error"]
    assert all(json.loads(reply) for reply in out["replies"])  # every reply is JSON


def test_smollm2_constrained_judges_real_mmar_items(smollm2):
    items = mmar_items(2)
    judge = LocalJudge(backend=smollm2, constrained=True, justification_chars=12)
    requests = [
        JudgeRequest(it["id"], build_messages(it, it["thinking"], it["answer"]), schema_for(it)) for it in items
    ]
    results = JudgeRunner(judge, max_reasks=0).run(requests)
    for it, result in zip(items, results):
        assert result.status == "ok" and result.calls == 1, result.error
        assert [s.name for s in result.verdict.scores] == [c["name"] for c in it["rubric"]]
        assert all(s.score in c["choices"] and s.justification for s, c in zip(result.verdict.scores, it["rubric"]))
        assert result.score == result.verdict.total / 5


def test_offline_spec_builds_the_constrained_judge():
    from audioreason.evaluation.score import JudgeOptions, build_judge

    judge, why = build_judge("mmar_rubrics", JudgeOptions(model="offline:packaged:SmolLM2-135M-Instruct"))
    assert why is None and judge.constrained and judge.metadata()["model"].startswith("HuggingFaceTB/SmolLM2-135M")
    judge, why = build_judge("mmar_rubrics", JudgeOptions(model="offline:packaged:NoSuchModel"))
    assert judge is None and "unknown packaged weights 'NoSuchModel'" in why
