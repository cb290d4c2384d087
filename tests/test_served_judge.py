"""The judge client, MMAR-Rubrics, the AudioSpan Rubric and the OpenAI adapter's text-only path against a real
OpenAI-compatible server: `transformers serve` on 127.0.0.1 serving the packaged SmolLM2-135M-Instruct
(conftest's session fixture ``served_lm``, tests/served_model.py). Real HTTP, real generation, real JSON.

A 135M model rarely writes a valid verdict list, so what is asserted is what must hold whatever it writes:
each request is judged with scores among the criterion's options, or counted invalid with the reason and
the reply it gave; the counts add up, and match the requests the server's log shows. max_tokens stays
small (a reply cut at the limit is an invalid one, counted as such)."""

import json
import threading
import time
from pathlib import Path

import pytest
from inference_fixtures import mmar_raw  # noqa: F401 (fixture)

from audioreason.judges import (
    INVALID,
    OK,
    JudgeRequest,
    JudgeRunner,
    OpenAICompatibleJudge,
    SamplingParams,
    VerdictCache,
    VerdictSchema,
)
from audioreason.scorers.mmar_rubrics.scorer import MMARRubricsScorer, build_messages

ROOT = Path(__file__).resolve().parents[1]
ITEMS = [
    json.loads(line)
    for line in (ROOT / "tests" / "fixtures" / "mmar_subset.jsonl").read_text().splitlines()
    if line.strip()
]
SAMPLING = SamplingParams(temperature=0, seed=42, max_tokens=24)


def judge(server, **options):
    options.setdefault("timeout_s", 300.0)
    return OpenAICompatibleJudge(server.model, base_url=server.base_url, api_key_env=None, **options)


def requests_for(items, reasoning="The clip has throat singing over wind, so the answer is open grassland."):
    return [
        JudgeRequest(
            str(it["id"]), build_messages(it, reasoning, it["answer"]), VerdictSchema.from_criteria(it["rubric"])
        )
        for it in items
    ]


def check_outcomes(results, items):
    """Each result judged with in-range scores, or invalid with its reason and the model's real reply."""
    for result, item in zip(results, items):
        assert result.status in (OK, INVALID), result.error
        assert result.replies and all(isinstance(r, str) for r in result.replies)
        if result.status == OK:
            allowed = [tuple(c.get("choices", (0, 1))) for c in item["rubric"]]
            assert [s.name for s in result.verdict.scores] == [c["name"] for c in item["rubric"]]
            assert all(s.score in a for s, a in zip(result.verdict.scores, allowed))
            assert 0.0 <= result.score <= 1.0
        else:
            assert result.error and len(result.validation_errors) == result.reasks + 1


def test_concurrent_requests_real_generation_and_counts(served_lm):
    items = ITEMS[:3]
    before_received, before_log = served_lm.received(), len(served_lm.log_text())
    runner = JudgeRunner(judge(served_lm, concurrency=3), sampling=SAMPLING, max_reasks=0)
    results = runner.run(requests_for(items))
    check_outcomes(results, items)
    stats = runner.stats
    assert stats.requests == 3 and stats.ok + stats.invalid == 3 and stats.call_failed == 0
    assert stats.calls == 3 and stats.retries == 0
    assert served_lm.received() - before_received == 3  # one request per item reached the server
    assert 0 < stats.completion_tokens <= 3 * SAMPLING.max_tokens and stats.prompt_tokens > 3 * 200
    # concurrency: the client sends the run's first request alone (its first contact), then the other two at
    # once; the server took both in before it answered either (it generates one at a time, the other queues)
    assert served_lm.most_in_flight(since=before_log) == 2


def test_a_server_killed_mid_batch_is_recovered_and_nothing_paid_is_lost(served_lm, tmp_path):
    """SIGKILL while a request is being generated, a new process on the same port: the client retries the
    cut request until the new one answers; every verdict returned before the kill stays in the cache and is
    never asked again (each request is answered exactly once over both processes)."""
    items = ITEMS[3:6]
    cache = VerdictCache(tmp_path / "cache.sqlite")
    client = judge(served_lm, concurrency=2, max_attempts=200, backoff_base_s=0.25, backoff_max_s=1.0)
    runner = JudgeRunner(client, sampling=SAMPLING, max_reasks=0, cache=cache)
    life = len(served_lm.lives) - 1
    base_received, base_answered = served_lm.received(life), served_lm.answered(life)
    out: dict = {}
    batch = threading.Thread(target=lambda: out.update(results=runner.run(requests_for(items))))
    batch.start()
    deadline = time.monotonic() + 300
    while True:  # kill once a verdict is stored and the next request is being generated
        stored = len(cache)
        answered = served_lm.answered(life) - base_answered
        if stored >= 1 and answered == stored and served_lm.received(life) - base_received > answered:
            break
        assert time.monotonic() < deadline and batch.is_alive(), "the batch ended before the server could be killed"
        time.sleep(0.05)
    served_lm.restart()
    batch.join(timeout=600)
    assert not batch.is_alive()
    results = out["results"]
    check_outcomes(results, items)
    answered_before = served_lm.answered(life) - base_answered
    assert answered_before == stored  # the log of the killed process, read after its end
    assert answered_before + served_lm.answered(life + 1) == len(items)  # each request answered once
    assert served_lm.received(life + 1) == served_lm.answered(life + 1) == len(items) - answered_before
    assert runner.stats.connection_errors >= 1 and runner.stats.call_failed == 0
    assert runner.stats.calls == len(items) + runner.stats.connection_errors + runner.stats.timeouts
    # a rerun is served from the cache: no request reaches the server (invalid verdicts too, when asked:
    # by default a rerun judges those again, so that a fixed deployment does not inherit a broken one's)
    again = JudgeRunner(judge(served_lm), sampling=SAMPLING, max_reasks=0, cache=cache, retry_invalid_cached=False)
    received = served_lm.received()
    rerun = again.run(requests_for(items))
    assert again.stats.cache_hits == len(items) and served_lm.received() == received
    assert [r.raw_reply for r in rerun] == [r.raw_reply for r in results]


def test_mmar_rubrics_scorer_on_the_served_model(served_lm):
    item, gated = ITEMS[7], ITEMS[8]
    wrong = next(c for c in gated["choices"] if c != gated["answer"])
    received = served_lm.received()
    scorer = MMARRubricsScorer(judge(served_lm), raters=1, sampling=SAMPLING, max_reasks=1)
    out = scorer.score(
        [item, gated], ["The sound is a bell, so the answer follows."] * 2, [item["answer"], wrong], return_items=True
    )
    stats = out["judge_stats"]
    assert (out["n"], out["n_gated"]) == (2, 1) and out["n_judged"] + out["n_failed"] == 1
    assert served_lm.received() - received == stats["calls"] == 1 + stats["reasks"]
    assert stats["ok"] + stats["invalid"] == 1
    row = next(r for r in out["items"] if r["status"] != "gated")
    if out["n_judged"]:
        assert row["score"] in [k / len(item["rubric"]) for k in range(len(item["rubric"]) + 1)]
        assert out["rubrics"] == pytest.approx(row["score"] / 2)
    else:
        assert out["failed_ids"] == [str(item["id"])] and out["rubrics"] == 0.0
        assert row["raters"][0]["error"]


def test_audiospan_rubric_evaluate_module_on_the_served_model(served_lm):
    import evaluate

    rubric = [
        {
            "text": "Names the instrument as a bell",
            "importance": "essential",
            "time_range": None,
            "localization": False,
        },
        {
            "text": "Says when the bell rings",
            "importance": "supporting",
            "time_range": [1.0, 2.0],
            "localization": True,
        },
    ]
    item = {
        "id": "bell-1",
        "question": "What rings, and when?",
        "rubric": rubric,
        "reference_answer": "A bell, at 0:01.",
        "duration_tier": "S",
        "language": "en",
        "cognitive_level": "P",
        "dimension": "localization",
    }
    metric = evaluate.load(str(ROOT / "metrics" / "audiospan_rubric"))
    received = served_lm.received()
    out = metric.compute(
        predictions=["A bell rings at 0:01."],
        references=[json.dumps(item)],
        judge_model=served_lm.model,
        base_url=served_lm.base_url,
        api_key_env=None,
        sampling=SAMPLING,
        max_reasks=0,
        timeout_s=300.0,
        return_items=True,
    )
    assert out["n"] == 1 and out["n_scored"] + out["n_failed"] == 1
    assert served_lm.received() - received == out["judge_stats"]["calls"] == 1
    assert 0.0 <= out["rubric"] <= 1.0
    if out["n_failed"]:
        assert out["rubric"] == 0.0 and out["warnings"]


def test_structured_outputs_are_sent_and_transformers_serve_ignores_them(served_lm):
    """transformers 5.24's serve lists response_format among the fields it ignores (it logs so and answers
    as without it): the request is accepted, the reply is the same greedy text."""
    items = ITEMS[:1]
    plain = JudgeRunner(judge(served_lm), sampling=SAMPLING, max_reasks=0).run(requests_for(items))[0]
    runner = JudgeRunner(judge(served_lm, structured_outputs=True), sampling=SAMPLING, max_reasks=0)
    structured = runner.run(requests_for(items))[0]
    assert "response_format" in runner.params(requests_for(items)[0])
    assert structured.status in (OK, INVALID) and structured.calls == 1
    assert "Ignoring unsupported fields in the request: {'response_format'}" in served_lm.log_text()
    assert structured.raw_reply == plain.raw_reply and structured.key != plain.key


def test_openai_adapter_text_only_tb_condition_records_the_real_reply(served_lm, mmar_raw, tmp_path):
    """The tb condition through OpenAIAudioAdapter(takes_audio=False): the reply in outputs.jsonl is what
    the same weights generate greedily in this process from the same chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from audioreason.inference import DecodingParams
    from audioreason.inference.openai_audio import OpenAIAudioAdapter
    from audioreason.inference.runner import RunConfig, run

    class Recording(OpenAIAudioAdapter):  # keeps the requests it was given, to rebuild the prompt below
        def generate(self, requests, decoding):
            self.seen = list(requests)
            return super().generate(requests, decoding)

    out = tmp_path / "run"
    with Recording(
        served_lm.model, base_url=served_lm.base_url, api_key_env=None, takes_audio=False, timeout_s=300.0
    ) as adapter:
        summary = run(
            RunConfig(
                model="served",
                benchmark="mmar",
                data=str(mmar_raw),
                out=str(out),
                conditions=["tb"],
                tb_model=served_lm.model,
                templates=["plain"],
                limit=1,
                decoding=DecodingParams(max_new_tokens=8),
                progress=False,
            ),
            {"tb": adapter},
        )
    assert summary["counts"]["ok"] == 1
    [record] = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert record["condition"] == "tb" and record["output"] and record["error"] is None
    [request] = adapter.seen
    assert request.audio is None and record["tokens"]["completion"] <= 8
    tokenizer = AutoTokenizer.from_pretrained(served_lm.model)
    model = AutoModelForCausalLM.from_pretrained(served_lm.model, dtype=torch.float32)
    ids = tokenizer.apply_chat_template(
        list(request.messages), add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    generated = model.generate(**ids, max_new_tokens=8, do_sample=False)
    expected = tokenizer.decode(generated[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    assert record["output"] == expected
